//! Running one real CLI against the fake: the rig and its helpers.

use super::*;

/// One test's setup: the located CLIs, a fake model, a HOME and the environment.
pub(super) struct Rig {
    pub(super) clis: Clis,
    pub(super) server: FakeModel,
    pub(super) _home: TestHome,
    pub(super) env: CliEnv,
    pub(super) cli: Cli,
}

impl Rig {
    pub(super) fn new(cli: Cli, test: &str) -> Option<Rig> {
        let clis = Clis::require(test)?;
        let server = FakeModel::start(script(cli));
        let home = TestHome::new(test);
        let env = clis.env_for(cli, &home, &server.url());
        Some(Rig {
            clis,
            server,
            _home: home,
            env,
            cli,
        })
    }

    pub(super) fn run(&self, args: &[&str]) -> CliRun {
        let mut command = self.clis.command(self.cli, &self.env);
        command.args(args);
        let result = run(&mut command, CLI_TIMEOUT);
        eprintln!(
            "{} {:?}: exit {:?} in {:.2?}, {} request(s) logged so far",
            self.cli.bin_name(),
            args,
            result.code(),
            result.elapsed,
            self.server.requests().len()
        );
        result
    }
}

impl Drop for Rig {
    /// On a failed assertion, show what the CLI sent.
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("fake model request log:");
            for request in self.server.requests() {
                eprintln!("  {}", request.summary());
            }
        }
    }
}

pub(super) fn claude_args(prompt: &str) -> Vec<&str> {
    vec![
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "haiku",
    ]
}

pub(super) fn gemini_args(prompt: &str) -> Vec<&str> {
    vec!["-p", prompt, "--output-format", "stream-json"]
}

pub(super) fn codex_args(prompt: &str) -> Vec<&str> {
    vec!["exec", "--skip-git-repo-check", "--json", prompt]
}

/// Claude's final text (the `result` event, checked for success).
pub(super) fn claude_result(run: &CliRun) -> String {
    let result = run.events("result").pop().expect("a result event");
    assert_eq!(result["is_error"], false, "{result}");
    result["result"].as_str().unwrap().to_string()
}

/// Gemini's assistant text: the concatenated `message` deltas.
pub(super) fn gemini_text(run: &CliRun) -> String {
    run.events("message")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// Codex's agent messages.
pub(super) fn codex_messages(run: &CliRun) -> Vec<String> {
    run.events("item.completed")
        .iter()
        .filter(|e| e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap().to_string())
        .collect()
}

pub(super) fn copilot_args(prompt: &str) -> Vec<&str> {
    vec!["-p", prompt, "--output-format", "json", "--no-auto-update"]
}

/// Copilot's whole assistant messages (`assistant.message`, text only).
pub(super) fn copilot_messages(run: &CliRun) -> Vec<String> {
    run.events("assistant.message")
        .iter()
        .map(|e| e["data"]["content"].as_str().unwrap().to_string())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The assistant turns replayed in a request's history, whatever the protocol.
pub(super) fn replayed_assistant_text(request: &LoggedRequest) -> Vec<String> {
    let texts = |items: &Value, role: &str, parts: &str| -> Vec<String> {
        items
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .flat_map(|m| match &m[parts] {
                Value::String(s) => vec![s.clone()],
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string))
                    .collect(),
                _ => vec![],
            })
            .collect()
    };
    match request.api {
        Api::Anthropic => texts(&request.body["messages"], "assistant", "content"),
        Api::Gemini => texts(&request.body["contents"], "model", "parts"),
        Api::OpenAi => texts(&request.body["input"], "assistant", "content"),
        Api::OpenAiChat => texts(&request.body["messages"], "assistant", "content"),
        Api::Other => vec![],
    }
}
