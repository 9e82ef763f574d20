//! `codecrew mcp --http` end to end: the real Claude Code, Gemini CLI and Codex as its MCP
//! clients over Streamable HTTP, each configured as the README tells users to, and a real
//! CLI as the agent behind `query_agent`; every model is the fake.
//!
//! The file the model asks for lives only in codecrew's workspace, not in the CLI's
//! working directory: its content can reach the model only through codecrew's read_file.

use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResult};

use super::*;
use crate::support::clis::{CLI_TIMEOUT, Cli};
use crate::support::fake_model::LoggedRequest;
use crate::support::http_server::{Served, TOKEN};

const NOTE: &str = "The launch code is MCP-HTTP-4242.";
const UNIQUE: &str = "MCP-HTTP-4242";
const PROMPT: &str = "read notes.txt through codecrew";
const ANSWER: &str = "Over HTTP, the notes say the launch code is MCP-HTTP-4242.";

/// How one CLI reaches codecrew over HTTP and what it calls codecrew's read_file.
#[derive(Clone, Copy)]
enum Setup {
    /// Claude Code with `--mcp-config` naming the server (`type: http`, `headers`).
    ClaudeFlag,
    /// Claude Code after `claude mcp add --transport http ... --header ...`.
    ClaudeAdded,
    /// Gemini CLI with the server in `~/.gemini/settings.json` (`httpUrl`, `headers`).
    Gemini,
    /// Codex with the server in `$CODEX_HOME/config.toml` (`url`, `bearer_token_env_var`).
    Codex,
}

impl Setup {
    fn cli(self) -> Cli {
        match self {
            Setup::ClaudeFlag | Setup::ClaudeAdded => Cli::Claude,
            Setup::Gemini => Cli::Gemini,
            Setup::Codex => Cli::Codex,
        }
    }

    /// The model's call of codecrew's read_file, as this CLI names the tool: Claude
    /// `mcp__<server>__<tool>`, Gemini `mcp_<server>_<tool>`, Codex the tool's own name
    /// in the Responses namespace `mcp__<server>`.
    fn call(self) -> Reply {
        let input = json!({"path": "notes.txt"});
        let reply = Reply::text("Reading it through codecrew.");
        match self {
            Setup::ClaudeFlag | Setup::ClaudeAdded => {
                reply.with_tool_call("mcp__codecrew__read_file", input)
            }
            Setup::Gemini => reply.with_tool_call("mcp_codecrew_read_file", input),
            Setup::Codex => reply.with_namespaced_tool_call("mcp__codecrew", "read_file", input),
        }
    }

    /// Whether `request` offered the model codecrew's read_file under this CLI's name.
    fn offers_read_file(self, request: &LoggedRequest) -> bool {
        let tools = request.body["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match self {
            Setup::ClaudeFlag | Setup::ClaudeAdded => tools
                .iter()
                .any(|tool| tool["name"] == "mcp__codecrew__read_file"),
            Setup::Gemini => tools
                .iter()
                .flat_map(|tool| tool["functionDeclarations"].as_array().cloned())
                .flatten()
                .any(|function| function["name"] == "mcp_codecrew_read_file"),
            Setup::Codex => tools
                .iter()
                .filter(|tool| tool["type"] == "namespace" && tool["name"] == "mcp__codecrew")
                .flat_map(|tool| tool["tools"].as_array().cloned())
                .flatten()
                .any(|function| function["name"] == "read_file"),
        }
    }
}

/// One CLI's run with codecrew as its MCP server over HTTP. (Fields drop in order: the
/// server stops before its workspace, in the home, is removed.)
struct Over {
    served: Served,
    model: FakeModel,
    output: CliRun,
    _home: TestHome,
}

impl Over {
    /// Serves a workspace holding notes.txt, points the CLI at it as `setup` says, and runs
    /// the CLI on [`PROMPT`]; the fake model calls read_file and answers [`ANSWER`] once it
    /// sees the file's content.
    fn run(setup: Setup, test: &str) -> Option<Over> {
        let clis = Clis::require(test)?;
        let home = TestHome::new(test);
        let workspace = home.root().join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("notes.txt"), format!("{NOTE}\n")).unwrap();
        let script = Script::new()
            .rule(Rule::on_tool_result(UNIQUE, Reply::text(ANSWER)).named("answer"))
            .rule(Rule::on_prompt(PROMPT, setup.call()).named("call"));
        let model = FakeModel::start(script);
        let cli = setup.cli();
        let mut env = clis.env_for(cli, &home, &model.url());
        // The server too gets the test HOME, so that nothing of the developer's is read.
        let mut server = Served::command(&workspace, &[], &[]);
        env.apply(&mut server);
        let served = Served::start(server, &[]);
        let bearer = format!("Bearer {TOKEN}");
        let mut args: Vec<String> = Vec::new();
        match setup {
            Setup::ClaudeFlag | Setup::ClaudeAdded => {
                // Its MCP tools in `tools` (not behind its tool search), to see their names.
                env = env.with("ENABLE_TOOL_SEARCH", "false");
                if let Setup::ClaudeFlag = setup {
                    let config = home.root().join("mcp.json");
                    let servers = json!({"mcpServers": {"codecrew": {
                        "type": "http", "url": served.url(), "headers": {"Authorization": bearer}
                    }}});
                    std::fs::write(&config, servers.to_string()).unwrap();
                    args.extend(["--mcp-config".into(), config.display().to_string()]);
                    // Only that file's servers, whatever the HOME holds.
                    args.push("--strict-mcp-config".into());
                } else {
                    let mut add = clis.command(cli, &env);
                    add.args(["mcp", "add", "--transport", "http", "codecrew"])
                        .arg(served.url())
                        .args(["--header", &format!("Authorization: {bearer}")]);
                    run(&mut add, CLI_TIMEOUT).assert_code(0);
                }
                args.extend(
                    [
                        "-p",
                        PROMPT,
                        "--allowedTools",
                        "mcp__codecrew__read_file",
                        "--output-format",
                        "stream-json",
                        "--verbose",
                    ]
                    .map(String::from),
                );
            }
            Setup::Gemini => {
                let path = home.home().join(".gemini").join("settings.json");
                let mut settings: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                // The token by variable, as the README shows (Gemini expands `${VAR}` in its
                // settings). `trust`: headless (`-p`), Gemini denies, and hides from the
                // model, every MCP tool it would otherwise ask about; codecrew's own policy
                // still decides each call.
                settings["mcpServers"] = json!({"codecrew": {
                    "httpUrl": served.url(),
                    "headers": {"Authorization": "Bearer ${CODECREW_MCP_TOKEN}"},
                    "trust": true
                }});
                std::fs::write(&path, settings.to_string()).unwrap();
                env = env.with("CODECREW_MCP_TOKEN", TOKEN);
                args.extend(["-p", PROMPT, "--output-format", "stream-json"].map(String::from));
            }
            Setup::Codex => {
                let path = home.home().join(".codex").join("config.toml");
                let mut config = std::fs::read_to_string(&path).unwrap();
                config.push_str(&format!(
                    "\n[mcp_servers.codecrew]\nurl = \"{}\"\nbearer_token_env_var = \"CODECREW_MCP_TOKEN\"\n",
                    served.url()
                ));
                std::fs::write(&path, config).unwrap();
                env = env.with("CODECREW_MCP_TOKEN", TOKEN);
                // A model Codex's catalog does not know: with one it knows (gpt-5.5) Codex
                // defers MCP tools behind its client-run `tool_search`, which the fake model
                // cannot call; without, it offers them in `tools` (and notes, once, that it
                // falls back to default metadata).
                args.extend(
                    [
                        "exec",
                        "--skip-git-repo-check",
                        "--json",
                        "--model",
                        "fake-codex",
                        PROMPT,
                    ]
                    .map(String::from),
                );
            }
        }
        let mut command = clis.command(cli, &env);
        command.args(&args);
        let output = run(&mut command, CLI_TIMEOUT);
        eprintln!(
            "{test}: {} exit {:?} in {:.2?}",
            cli.bin_name(),
            output.code(),
            output.elapsed
        );
        Some(Over {
            served,
            model,
            output,
            _home: home,
        })
    }

    /// What the fake model and codecrew saw, for a failure message.
    fn log(&self) -> String {
        let requests: Vec<String> = self
            .model
            .requests()
            .iter()
            .map(LoggedRequest::summary)
            .collect();
        format!(
            "--- model requests\n{}\n--- stdout\n{}\n--- stderr\n{}\n--- codecrew\n{}",
            requests.join("\n"),
            self.output.stdout,
            self.output.stderr,
            self.served.stderr()
        )
    }

    /// The checks every CLI shares: it offered the model codecrew's read_file by its name,
    /// codecrew's answer (its output shape, the file's content) went back to the model,
    /// and the CLI ended well.
    fn assert_read_through_codecrew(&self, setup: Setup) {
        self.output.assert_code(0);
        let requests = self.model.model_requests();
        assert!(
            requests.iter().any(|r| setup.offers_read_file(r)),
            "codecrew's read_file was never offered:\n{}",
            self.log()
        );
        let answered = requests
            .iter()
            .find(|r| r.answered_by == "answer")
            .unwrap_or_else(|| panic!("no request carried the file's content:\n{}", self.log()));
        let result = answered.tool_result.as_deref().unwrap_or_default();
        assert!(result.contains(UNIQUE), "{result}");
        assert!(result.contains("\"lines_returned\":1"), "{result}");
    }
}

#[test]
fn claude_reads_a_file_through_codecrew_over_http_with_an_mcp_config() {
    let setup = Setup::ClaudeFlag;
    let Some(over) = Over::run(setup, "e2e-mcp-http-claude") else {
        return;
    };
    over.assert_read_through_codecrew(setup);
    assert_claude_read_it(&over);
}

#[test]
fn claude_reads_a_file_through_codecrew_over_http_after_mcp_add() {
    let setup = Setup::ClaudeAdded;
    let Some(over) = Over::run(setup, "e2e-mcp-http-claude-add") else {
        return;
    };
    over.assert_read_through_codecrew(setup);
    assert_claude_read_it(&over);
}

/// Claude's own record: codecrew connected, one tool result with the file, the answer.
fn assert_claude_read_it(over: &Over) {
    let output = &over.output;
    let init = output
        .events("system")
        .into_iter()
        .find(|e| e["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init event:\n{}", over.log()));
    assert!(
        init["mcp_servers"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| s["name"] == "codecrew" && s["status"] == "connected"),
        "codecrew did not connect: {}\n{}",
        init["mcp_servers"],
        over.log()
    );
    let tool_results: Vec<Value> = output
        .events("user")
        .into_iter()
        .filter(|e| e["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(tool_results.len(), 1, "{}", over.log());
    assert_ne!(tool_results[0]["message"]["content"][0]["is_error"], true);
    assert!(tool_results[0].to_string().contains(UNIQUE));
    let result = output.events("result").pop().unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["result"], ANSWER, "{result}");
    assert_eq!(result["permission_denials"], json!([]), "{result}");
}

/// Gemini CLI 0.61's MCP client `JSON.parse`s every SSE event's data: an empty "priming"
/// event (rmcp's default, for resumption) made it drop the server with its tools ("Tool
/// \"mcp_codecrew_read_file\" not found"). The server sends none; this test failed before.
#[test]
fn gemini_reads_a_file_through_codecrew_over_http() {
    let setup = Setup::Gemini;
    let Some(over) = Over::run(setup, "e2e-mcp-http-gemini") else {
        return;
    };
    over.assert_read_through_codecrew(setup);
    let output = &over.output;
    let tool_use = output
        .events("tool_use")
        .pop()
        .unwrap_or_else(|| panic!("no tool_use event:\n{}", over.log()));
    assert_eq!(
        tool_use["tool_name"], "mcp_codecrew_read_file",
        "{tool_use}"
    );
    let tool_result = output.events("tool_result").pop().unwrap();
    assert_eq!(tool_result["status"], "success", "{tool_result}");
    let text: String = output
        .events("message")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(text.ends_with(ANSWER), "{text}");
    assert_eq!(output.events("result")[0]["status"], "success");
}

#[test]
fn codex_reads_a_file_through_codecrew_over_http() {
    let setup = Setup::Codex;
    let Some(over) = Over::run(setup, "e2e-mcp-http-codex") else {
        return;
    };
    over.assert_read_through_codecrew(setup);
    let items: Vec<Value> = over
        .output
        .events("item.completed")
        .into_iter()
        .map(|e| e["item"].clone())
        .collect();
    let call = items
        .iter()
        .find(|item| item["type"] == "mcp_tool_call")
        .unwrap_or_else(|| panic!("no mcp_tool_call item:\n{}", over.log()));
    assert_eq!(
        (&call["server"], &call["tool"], &call["status"]),
        (&json!("codecrew"), &json!("read_file"), &json!("completed")),
        "{call}"
    );
    assert!(call["result"].to_string().contains(UNIQUE), "{call}");
    let messages: Vec<&str> = items
        .iter()
        .filter(|item| item["type"] == "agent_message")
        .filter_map(|item| item["text"].as_str())
        .collect();
    assert_eq!(messages.last(), Some(&ANSWER), "{}", over.log());
}

const AGENT_TASK: &str = "MCP-HTTP-AGENT-7319 what is the state of the build?";
const AGENT_ANSWER: &str = "The build is green (MCP-HTTP-ANSWER-5150).";

/// An SDK client asks `query_agent` for `@claude` over HTTP: the server runs the real
/// Claude Code as `codecrew query @claude` would (its environment is the one every e2e
/// query gets), and Claude's answer from the fake model comes back as the tool's result.
#[tokio::test]
async fn query_agent_over_http_runs_claude_and_returns_its_answer() {
    let script = Script::new()
        .rule(Rule::on_prompt("MCP-HTTP-AGENT-7319", Reply::text(AGENT_ANSWER)).named("agent"));
    let Some(world) = World::new("e2e-mcp-http-agent", script) else {
        return;
    };
    let mut command = Served::command(&world.workspace(), &[], &[]);
    world.env.apply(&mut command);
    let served = Served::start(command, &[]);
    let client = served.client().await;
    let started = Instant::now();
    let arguments = json!({"task": format!("@claude {AGENT_TASK}")});
    let Value::Object(arguments) = arguments else {
        unreachable!("a JSON object")
    };
    let call =
        client.call_tool(CallToolRequestParams::new("query_agent").with_arguments(arguments));
    let result: CallToolResult = tokio::time::timeout(TIMEOUT, call)
        .await
        .unwrap_or_else(|_| panic!("query_agent took over {TIMEOUT:?}:\n{}", served.stderr()))
        .unwrap_or_else(|error| panic!("query_agent failed: {error}\n{}", served.stderr()));
    eprintln!("query_agent @claude over HTTP: {:.2?}", started.elapsed());
    let log: Vec<String> = world
        .server
        .requests()
        .iter()
        .map(LoggedRequest::summary)
        .collect();
    let text: String = result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        result.is_error,
        Some(false),
        "{text}\n{log:#?}\n{}",
        served.stderr()
    );
    assert!(text.contains(AGENT_ANSWER), "{text}\n{log:#?}");
    let structured = result.structured_content.clone().unwrap_or_default();
    assert_eq!(structured["success"], true, "{structured}");
    assert_eq!(structured["agent"], "claude", "{structured}");
    assert_eq!(structured["provider"], "claude", "{structured}");
    assert_eq!(structured["answer"], AGENT_ANSWER, "{structured}");
    // Claude asked the fake model, with the task as given.
    assert!(
        world
            .server
            .model_requests()
            .iter()
            .any(|r| r.answered_by == "agent"
                && r.prompt.as_deref().is_some_and(|p| p.contains(AGENT_TASK))),
        "{log:#?}"
    );
    client.cancel().await.unwrap();
}
