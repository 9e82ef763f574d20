//! The fake model server on its own (wire formats, scripting, prompt extraction on recorded
//! requests) and the real `claude`, `gemini` and `codex` CLIs run directly against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clis::{CLI_TIMEOUT, Cli, CliEnv, CliRun, Clis, TestHome, run};
use crate::support::fake_model::{
    Api, Extracted, FakeModel, LoggedRequest, Reply, Rule, Script, chunk_text, extract_anthropic,
    extract_gemini, extract_openai, is_gemini_structured, schema_instance,
};

const HELLO: &str = "Hello! I am the fake model. How can I help?";
const TOOL_DONE: &str = "The tool printed fake-tool-output.";
const FAIL: &str = "scripted failure from fake server";

fn envelope_reply_text() -> String {
    "Sure, calling the helper tool:\n\n```json\n\
     {\"type\":\"tool_use\",\"name\":\"codecrew:help\",\"input\":{}}\n```\n"
        .to_string()
}

/// The script every real-CLI test uses; only the native tool call differs per CLI.
fn script(cli: Cli) -> Script {
    let tool = match cli {
        Cli::Claude => Reply::text("I'll run that command.").with_tool_call(
            "Bash",
            json!({"command": "echo fake-tool-output", "description": "Echo a test string"}),
        ),
        Cli::Gemini => Reply::text("Running it.").with_tool_call(
            "run_shell_command",
            json!({"command": "echo fake-tool-output", "description": "echo"}),
        ),
        Cli::Codex => Reply::text("Running it.")
            .with_tool_call("exec_command", json!({"cmd": "echo fake-tool-output"})),
        Cli::Copilot => Reply::text("Running it.").with_tool_call(
            "bash",
            json!({"command": "echo fake-tool-output", "description": "echo", "mode": "sync", "initial_wait": 10}),
        ),
        Cli::Opencode => Reply::text("Running it.").with_tool_call(
            "bash",
            json!({"command": "echo fake-tool-output", "description": "echo"}),
        ),
        Cli::Qwen => Reply::text("Running it.").with_tool_call(
            "run_shell_command",
            json!({"command": "echo fake-tool-output", "description": "echo"}),
        ),
        // llm has no tools of its own.
        Cli::Llm => Reply::text("fake-tool-output is what I would print."),
    };
    Script::new()
        .rule(Rule::on_tool_result("fake-tool-output", Reply::text(TOOL_DONE)).named("tool-done"))
        .rule(Rule::on_prompt("hello", Reply::text(HELLO)).named("hello"))
        .rule(Rule::on_prompt("codecrew", Reply::text(envelope_reply_text())).named("envelope"))
        .rule(
            Rule::on_prompt(
                "remember the number",
                Reply::text("Got it: I will remember 42."),
            )
            .named("turn-1"),
        )
        .rule(
            Rule::on_prompt("what number", Reply::text("You asked me to remember 42."))
                .named("turn-2"),
        )
        .rule(Rule::on_prompt("fail please", Reply::error(400, FAIL)).named("fail"))
        .rule(Rule::on_prompt("run echo", tool).named("tool-call"))
}

fn fixture(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/requests/{name}.requests.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

mod claude;
mod codex;
mod copilot;
mod extraction;
mod gemini;
mod http;
mod rig;
mod scripting;
mod wire;

use extraction::*;
use http::*;
use rig::*;
