// Drives `codecrew acp` with the Agent Client Protocol's own TypeScript SDK, for what
// acpx does not exercise: two agents on one prompt, the agent option, a second prompt
// while one runs, the protocol's errors, the mode, closing a session. Prints one JSON
// object: what each step gave.
//
// usage: node acp_sdk_client.mjs <the SDK's entry (acp.js)> <codecrew> <workspace>
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkEntry, codecrew, workspace] = process.argv.slice(2);
const acp = await import(pathToFileURL(sdkEntry).href);

const child = spawn(codecrew, ["acp"], { stdio: ["pipe", "pipe", "inherit"], cwd: workspace });
// Every line codecrew wrote, in order: which came first, an answer or an update.
let written = "";
child.stdout.on("data", (chunk) => {
  written += chunk;
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
const app = acp
  .client({ name: "codecrew-sdk-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, () => ({
    outcome: { outcome: "cancelled" },
  }));

const out = {};
const error = async (promise) => {
  try {
    await promise;
    return null;
  } catch (e) {
    return { code: e.code, message: e.message, data: e.data };
  }
};
// Waits (at most 5 s) for an update `test` accepts, among those from `from` on.
const updateAfter = async (from, test) => {
  for (let waited = 0; waited < 5000; waited += 50) {
    const found = updates.slice(from).find(test);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
};
const ofKind = (kind) => (update) => update.sessionUpdate === kind;
// Where, among the lines codecrew wrote, the last answer `answered` accepts came, and the
// last available_commands_update for `sessionId` (-1: none).
const orderOf = (sessionId, answered) => {
  const lines = written
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
  return {
    answer: lines.findLastIndex(answered),
    commands: lines.findLastIndex(
      (line) =>
        line.method === "session/update" &&
        line.params.sessionId === sessionId &&
        line.params.update.sessionUpdate === "available_commands_update",
    ),
  };
};
// The agents whose text a turn's chunks carry, in order, and each one's text.
const spoken = (from) => {
  const agents = [];
  const text = {};
  for (const update of updates.slice(from)) {
    if (update.sessionUpdate !== "agent_message_chunk") continue;
    const agent = update._meta?.codecrew?.agent ?? "codecrew";
    if (!agents.includes(agent)) agents.push(agent);
    text[agent] = (text[agent] ?? "") + update.content.text;
  }
  return { agents, text };
};

try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { auth: { terminal: true } },
      clientInfo: { name: "codecrew-sdk-test", version: "0" },
    });
    out.capabilities = init.agentCapabilities;
    out.authMethods = init.authMethods;
    const made = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    const sessionId = made.sessionId;
    out.sessionId = sessionId;
    out.modes = made.modes;
    out.configOptions = made.configOptions;
    out.commands = (await updateAfter(0, ofKind("available_commands_update")))?.availableCommands;
    out.newOrder = orderOf(sessionId, (line) => line.result?.sessionId === sessionId);

    let from = updates.length;
    const both = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "@claude @gemini SDK-BOTH compare" }],
    });
    out.both = {
      stopReason: both.stopReason,
      usage: both.usage,
      usageUpdates: updates.slice(from).filter(ofKind("usage_update")),
      ...spoken(from),
    };

    const chosen = await ctx.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "agent",
      value: "gemini",
    });
    out.chosenOptions = chosen.configOptions;
    from = updates.length;
    const alone = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "SDK-CHOSEN who answers" },
        {
          type: "resource",
          resource: { uri: `file://${workspace}/attached.txt`, text: "SDK-ATTACHED-CONTEXT" },
        },
      ],
    });
    out.chosen = { stopReason: alone.stopReason, ...spoken(from) };

    // A CLI's own tool (Claude's Read), shown as codecrew's are.
    from = updates.length;
    const native = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "@claude SDK-NATIVE read the notes" }],
    });
    out.native = {
      stopReason: native.stopReason,
      calls: updates
        .slice(from)
        .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update"),
      // Addressed alone, claude is now who a prompt without a mention goes to.
      followed: updates.slice(from).filter(ofKind("config_option_update")),
      ...spoken(from),
    };

    // Claude's model chosen: the next prompt (no mention) runs it.
    out.modelOptions = (
      await ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "haiku" })
    ).configOptions;
    from = updates.length;
    const modelled = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "SDK-MODEL which model" }],
    });
    out.modelled = { stopReason: modelled.stopReason, ...spoken(from) };

    // The mode as an option, and the legacy set_mode telling the editor's list.
    out.modeOptions = (
      await ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "execute" })
    ).configOptions;
    from = updates.length;
    await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "query" });
    out.afterSetMode = (await updateAfter(from, ofKind("config_option_update")))?.configOptions;

    // The chat's commands, run when a prompt is one.
    out.slash = {};
    for (const command of ["/mode", "/agents", "/usage", "/new"]) {
      from = updates.length;
      const ran = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: command }],
      });
      out.slash[command] = { stopReason: ran.stopReason, ...spoken(from) };
    }

    // A second prompt while one runs is refused; the first, cancelled, says so.
    const slow = ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "@claude SDK-SLOW wait" }],
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    out.second = await error(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "SDK-BOTH again" }],
      }),
    );
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    out.cancelled = (await slow).stopReason;

    out.unknownSession = await error(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId: "0123456789abcdef",
        prompt: [{ type: "text", text: "hello" }],
      }),
    );
    out.badMode = await error(ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "nope" }));
    out.badAgent = await error(
      ctx.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "agent", value: "nobody" }),
    );
    out.goodMode = await error(ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "execute" }));
    out.huge = await error(
      ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "x".repeat(2 * 1024 * 1024) }],
      }),
    );
    out.closed = await error(ctx.request(acp.methods.agent.session.close, { sessionId }));
    out.afterClose = await error(
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] }),
    );

    // Resumed: its options and commands, nothing replayed, and it answers again.
    from = updates.length;
    const resumed = await ctx.request(acp.methods.agent.session.resume, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    out.resumed = {
      configOptions: resumed.configOptions,
      commands: (await updateAfter(from, ofKind("available_commands_update")))?.availableCommands,
      replayed: updates.slice(from).filter((u) => u.sessionUpdate === "user_message_chunk").length,
      order: orderOf(sessionId, (line) => line.result?.configOptions && !line.result.sessionId && line.result.modes),
    };
    from = updates.length;
    const again = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "@claude SDK-RESUMED go on" }],
    });
    out.resumed.answer = { stopReason: again.stopReason, ...spoken(from) };
  });
} catch (e) {
  out.failed = String(e?.stack ?? e);
} finally {
  child.stdin.end();
}
const code = await new Promise((resolve) => child.on("exit", (c) => resolve(c)));
out.exitCode = code;
process.stdout.write(JSON.stringify(out) + "\n");
