//! Providers: how each CLI is run headless for one turn.
//!
//! Every provider turns a [`Turn`] (prompt, session, mode, model) into a
//! [`CommandSpec`] and names the output format its decoder reads. The prompt always goes
//! through stdin or a single argv element, never through a shell.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::{AgentConfig, OutputFormat, PromptVia, ProviderKind};
use crate::process::CommandSpec;
use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

/// Variables that make a CLI believe it runs inside another CLI session (set when
/// codecrew itself is run from Claude Code); they break headless runs.
const CLAUDE_MARKERS: [&str; 4] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_SESSION_ID",
];

/// One turn to run.
#[derive(Debug, Clone)]
pub struct Turn<'a> {
    pub prompt: &'a str,
    /// The session to continue, when the CLI can resume one.
    pub session: Option<&'a str>,
    pub mode: Mode,
    pub model: Option<&'a str>,
}

/// An agent's CLI.
#[derive(Debug, Clone)]
pub struct Provider {
    pub agent_id: String,
    pub agent: AgentConfig,
}

impl Provider {
    pub fn new(agent_id: &str, agent: AgentConfig) -> Self {
        Provider {
            agent_id: agent_id.to_owned(),
            agent,
        }
    }

    pub fn kind(&self) -> ProviderKind {
        self.agent.provider
    }

    /// The program to look up on PATH.
    pub fn program(&self) -> String {
        match self.kind() {
            ProviderKind::Claude => "claude".to_owned(),
            ProviderKind::Gemini => "gemini".to_owned(),
            ProviderKind::Codex => "codex".to_owned(),
            ProviderKind::Copilot => "copilot".to_owned(),
            ProviderKind::Command => self
                .agent
                .command
                .as_ref()
                .and_then(|command| command.argv.first().cloned())
                .unwrap_or_default(),
        }
    }

    /// How to install the CLI, for the "not installed" message.
    pub fn install_hint(&self) -> String {
        match self.kind() {
            ProviderKind::Claude => "npm install -g @anthropic-ai/claude-code".to_owned(),
            ProviderKind::Gemini => "npm install -g @google/gemini-cli".to_owned(),
            ProviderKind::Codex => "npm install -g @openai/codex".to_owned(),
            ProviderKind::Copilot => "npm install -g @github/copilot".to_owned(),
            ProviderKind::Command => format!(
                "install {:?} or fix `agents.{}.command.argv` in codecrew.toml",
                self.program(),
                self.agent_id
            ),
        }
    }

    /// The output format of this CLI as codecrew runs it.
    pub fn format(&self) -> Format {
        match self.kind() {
            ProviderKind::Claude => Format::Claude,
            ProviderKind::Gemini => Format::Gemini,
            ProviderKind::Codex => Format::Codex,
            ProviderKind::Copilot => Format::Copilot,
            ProviderKind::Command => match self.agent.command.as_ref().map(|c| c.output) {
                Some(OutputFormat::Claude) => Format::Claude,
                Some(OutputFormat::Gemini) => Format::Gemini,
                Some(OutputFormat::Codex) => Format::Codex,
                Some(OutputFormat::Copilot) => Format::Copilot,
                Some(OutputFormat::Text) | None => Format::Text,
            },
        }
    }

    /// Whether a follow-up turn can continue the CLI's own session; otherwise codecrew
    /// sends the transcript so far.
    pub fn can_resume(&self) -> bool {
        matches!(
            self.kind(),
            ProviderKind::Claude
                | ProviderKind::Gemini
                | ProviderKind::Codex
                | ProviderKind::Copilot
        )
    }

    /// Whether the job keeps one CLI process for its whole tool loop in `mode`: where the
    /// CLI has a long-lived mode (Claude's stream-json input, `codex app-server`), unless
    /// the agent sets `keep_alive = false`. Extra Codex arguments are `codex exec` flags,
    /// which the app server does not take: such an agent starts per turn.
    pub fn keeps_alive(&self, mode: Mode) -> bool {
        let extra = match mode {
            Mode::Query => &self.agent.args.query,
            Mode::Execute => &self.agent.args.execute,
        };
        self.agent.keep_alive.unwrap_or(true)
            && match self.kind() {
                ProviderKind::Claude => true,
                // Extra arguments are written for the CLI's headless mode.
                ProviderKind::Codex | ProviderKind::Gemini => extra.is_empty(),
                ProviderKind::Copilot | ProviderKind::Command => false,
            }
    }

    /// The command line of a CLI kept for the whole loop ([`Self::keeps_alive`]): Claude's
    /// turn command reading its user messages from stdin as stream-json; `codex
    /// app-server` (the thread's model, sandbox and session go in its requests); `gemini
    /// --acp` with the model and approval mode of a run per turn.
    pub fn resident_command(&self, program: &Path, turn: &Turn<'_>, cwd: &Path) -> CommandSpec {
        let mut spec = self.command(program, turn, cwd);
        spec.stdin = None;
        match self.kind() {
            ProviderKind::Claude => {
                let at = spec
                    .args
                    .iter()
                    .position(|a| a == "-p")
                    .map_or(0, |p| p + 1);
                spec.args
                    .splice(at..at, ["--input-format".into(), "stream-json".into()]);
            }
            ProviderKind::Codex => {
                // Without this, a model server that refuses connections makes Codex retry
                // forever instead of failing the turn.
                spec.args = ["app-server", "--disable", "unbounded_connection_retries"]
                    .map(OsString::from)
                    .to_vec();
            }
            ProviderKind::Gemini => {
                let mut args = vec![OsString::from("--acp")];
                if let Some(model) = self.model(turn.model) {
                    args.extend([OsString::from("-m"), OsString::from(model)]);
                }
                if turn.mode == Mode::Execute {
                    args.extend(["--approval-mode", "auto_edit"].map(OsString::from));
                }
                spec.args = args;
            }
            ProviderKind::Copilot | ProviderKind::Command => {}
        }
        spec
    }

    /// One user message for a kept CLI: a stream-json `user` line.
    pub fn resident_message(&self, prompt: &str) -> Vec<u8> {
        let line = serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": prompt},
        });
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        bytes
    }

    /// Whether the usage the CLI reports at the end of a run counts its whole session,
    /// earlier resumed runs included (Codex's `turn.completed`), rather than this run alone.
    pub fn reports_session_usage(&self) -> bool {
        self.kind() == ProviderKind::Codex
    }

    /// What to do about a failed turn, when the CLI's stderr says it is not signed in.
    pub fn failure_hint(&self, stderr: &str) -> Option<&'static str> {
        match self.kind() {
            ProviderKind::Copilot if stderr.contains("authenticate") => Some(
                "sign in with `copilot login` (or set COPILOT_GITHUB_TOKEN), or run Copilot \
                 offline against a local model with COPILOT_OFFLINE=true and \
                 COPILOT_PROVIDER_BASE_URL (see `codecrew query --help`)",
            ),
            ProviderKind::Claude
            | ProviderKind::Gemini
            | ProviderKind::Codex
            | ProviderKind::Copilot
            | ProviderKind::Command => None,
        }
    }

    /// The model a job runs with: the one its mention chose (`@agent:model`), else the
    /// agent's configured one, else the CLI's own default (`None`).
    pub fn model<'a>(&'a self, chosen: Option<&'a str>) -> Option<&'a str> {
        chosen.or(self.agent.model.as_deref())
    }

    /// The command line for one turn.
    pub fn command(&self, program: &Path, turn: &Turn<'_>, cwd: &Path) -> CommandSpec {
        let model = self.model(turn.model);
        let extra = match turn.mode {
            Mode::Query => &self.agent.args.query,
            Mode::Execute => &self.agent.args.execute,
        };
        let mut spec = CommandSpec {
            program: program.to_path_buf(),
            cwd: Some(cwd.to_path_buf()),
            ..CommandSpec::default()
        };
        let mut args: Vec<String> = Vec::new();
        match self.kind() {
            ProviderKind::Claude => {
                args.extend(
                    ["-p", "--output-format", "stream-json", "--verbose"].map(String::from),
                );
                if let Some(model) = model {
                    args.extend(["--model".to_owned(), model.to_owned()]);
                }
                if let Some(session) = turn.session {
                    args.extend(["--resume".to_owned(), session.to_owned()]);
                }
                match turn.mode {
                    // Claude's own tools, read-only: headless runs deny what needs approval,
                    // and these never get it.
                    Mode::Query => args
                        .extend(["--disallowedTools", "Edit,Write,NotebookEdit"].map(String::from)),
                    Mode::Execute => {
                        args.extend(["--permission-mode", "acceptEdits"].map(String::from))
                    }
                }
                args.extend(extra.iter().cloned());
                spec.stdin = Some(turn.prompt.as_bytes().to_vec());
                spec.env_remove = CLAUDE_MARKERS.iter().map(OsString::from).collect();
            }
            ProviderKind::Gemini => {
                args.extend(["--output-format", "stream-json"].map(String::from));
                if let Some(model) = model {
                    args.extend(["-m".to_owned(), model.to_owned()]);
                }
                if let Some(session) = turn.session {
                    args.extend(["--resume".to_owned(), session.to_owned()]);
                }
                if turn.mode == Mode::Execute {
                    args.extend(["--approval-mode", "auto_edit"].map(String::from));
                }
                args.extend(extra.iter().cloned());
                // Headless Gemini reads the whole prompt from stdin when there is no -p.
                spec.stdin = Some(turn.prompt.as_bytes().to_vec());
            }
            ProviderKind::Codex => {
                args.extend(["exec", "--json", "--skip-git-repo-check"].map(String::from));
                if let Some(model) = model {
                    args.extend(["-m".to_owned(), model.to_owned()]);
                }
                let sandbox = match turn.mode {
                    Mode::Query => "read-only",
                    Mode::Execute => "workspace-write",
                };
                args.extend(["--sandbox".to_owned(), sandbox.to_owned()]);
                args.extend(extra.iter().cloned());
                // Exec options come before `resume`; `-` reads the prompt from stdin.
                if let Some(session) = turn.session {
                    args.extend(["resume".to_owned(), session.to_owned()]);
                }
                args.push("-".to_owned());
                spec.stdin = Some(turn.prompt.as_bytes().to_vec());
            }
            ProviderKind::Copilot => {
                // The prompt goes on stdin (piped stdin is Copilot's non-interactive mode,
                // like -p), so no prompt size hits the argv limit and none reads as a flag.
                args.extend(["--output-format", "json", "--no-auto-update"].map(String::from));
                args.extend(["-C".to_owned(), cwd.display().to_string()]);
                if let Some(model) = model {
                    args.extend(["--model".to_owned(), model.to_owned()]);
                }
                if let Some(session) = turn.session {
                    // `=`: --resume takes an optional value.
                    args.push(format!("--resume={session}"));
                }
                match turn.mode {
                    // Copilot's own tools, read-only: only these exist for the model.
                    Mode::Query => args.extend(
                        [
                            "--available-tools=view,grep,glob",
                            "--deny-tool=write,shell",
                        ]
                        .map(String::from),
                    ),
                    // As for Claude (acceptEdits): its file edits run, its shell does not
                    // (headless, what needs approval is denied).
                    Mode::Execute => {
                        args.extend(["--allow-tool=write", "--deny-tool=shell"].map(String::from))
                    }
                }
                let secrets = copilot_secret_names(std::env::vars_os());
                if !secrets.is_empty() {
                    args.push(format!("--secret-env-vars={}", secrets.join(",")));
                }
                args.extend(extra.iter().cloned());
                spec.stdin = Some(turn.prompt.as_bytes().to_vec());
            }
            ProviderKind::Command => {
                if let Some(command) = &self.agent.command {
                    for arg in command.argv.iter().skip(1) {
                        if arg == "{model}" && model.is_none() {
                            continue;
                        }
                        let mut value = arg.replace("{model}", model.unwrap_or(""));
                        if command.prompt == PromptVia::Arg {
                            value = value.replace("{prompt}", turn.prompt);
                        }
                        args.push(value);
                    }
                    if command.prompt == PromptVia::Stdin {
                        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
                    }
                }
                args.extend(extra.iter().cloned());
            }
        }
        spec.args = args.into_iter().map(OsString::from).collect();
        spec
    }
}

/// The secret variables (by codecrew's rule) Copilot should strip from the environment of
/// its own shell and MCP servers and redact from its output.
///
/// Copilot redacts every occurrence of a listed variable's value in everything it prints,
/// its JSON included: a short value such as `1` would corrupt the JSON lines codecrew
/// reads (`"exitCode":1`), so values shorter than a credential are left out.
fn copilot_secret_names(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<String> {
    const SHORTEST_SECRET: usize = 8;
    let mut names: Vec<String> = vars
        .filter(|(_, value)| value.len() >= SHORTEST_SECRET)
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| codecrew_policy::secrets::is_secret(name) && !name.contains(','))
        .collect();
    names.sort();
    names
}

/// The user-facing name of a provider's program when it is missing.
pub fn describe_missing(provider: &Provider) -> String {
    format!(
        "the {} CLI ({}) is not installed or not on PATH; install it with: {}",
        provider.kind().name(),
        provider.program(),
        provider.install_hint()
    )
}

/// Looks the provider's program up on PATH.
pub fn locate(provider: &Provider) -> Option<PathBuf> {
    let program = provider.program();
    if program.is_empty() {
        return None;
    }
    crate::process::find_program(&program, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandProvider, Config};

    fn provider(kind: &str) -> Provider {
        let config = Config::default();
        Provider::new(kind, config.agents[kind].clone())
    }

    fn args(spec: &CommandSpec) -> Vec<String> {
        spec.args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn turn(session: Option<&'static str>, mode: Mode) -> Turn<'static> {
        Turn {
            prompt: "the prompt",
            session,
            mode,
            model: Some("haiku"),
        }
    }

    #[test]
    fn claude_command_line() {
        let spec = provider("claude").command(
            Path::new("claude"),
            &turn(Some("s1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "haiku",
                "--resume",
                "s1",
                "--disallowedTools",
                "Edit,Write,NotebookEdit"
            ]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
        assert!(spec.env_remove.contains(&OsString::from("CLAUDECODE")));
    }

    #[test]
    fn codex_puts_exec_options_before_resume() {
        let spec = provider("codex").command(
            Path::new("codex"),
            &turn(Some("t1"), Mode::Execute),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-m",
                "haiku",
                "--sandbox",
                "workspace-write",
                "resume",
                "t1",
                "-"
            ]
        );
    }

    #[test]
    fn gemini_reads_the_prompt_from_stdin() {
        let spec = provider("gemini").command(
            Path::new("gemini"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            ["--output-format", "stream-json", "-m", "haiku"]
        );
        assert!(spec.stdin.is_some());
    }

    #[test]
    fn copilot_reads_the_prompt_from_stdin_and_limits_its_own_tools() {
        let cwd = Path::new("/work/space");
        let query =
            provider("copilot").command(Path::new("copilot"), &turn(Some("s1"), Mode::Query), cwd);
        let args = args(&query);
        assert_eq!(
            args[..10],
            [
                "--output-format",
                "json",
                "--no-auto-update",
                "-C",
                "/work/space",
                "--model",
                "haiku",
                "--resume=s1",
                "--available-tools=view,grep,glob",
                "--deny-tool=write,shell",
            ]
        );
        assert!(!args.iter().any(|arg| arg.contains("the prompt")));
        assert_eq!(query.stdin.as_deref(), Some(&b"the prompt"[..]));

        let execute =
            provider("copilot").command(Path::new("copilot"), &turn(None, Mode::Execute), cwd);
        let args = self::args(&execute);
        assert!(args.contains(&"--allow-tool=write".to_owned()), "{args:?}");
        assert!(args.contains(&"--deny-tool=shell".to_owned()), "{args:?}");
        assert!(!args.iter().any(|arg| arg.starts_with("--resume")));
        assert!(!args.iter().any(|arg| arg.contains("allow-all")));
        assert_eq!(provider("copilot").format(), Format::Copilot);
        assert!(provider("copilot").can_resume());
    }

    #[test]
    fn copilot_not_signed_in_is_told_both_ways_in() {
        let stderr = "To authenticate, you can use any of the following methods:";
        let hint = provider("copilot").failure_hint(stderr).unwrap();
        assert!(
            hint.contains("copilot login") && hint.contains("COPILOT_OFFLINE"),
            "{hint}"
        );
        assert_eq!(provider("copilot").failure_hint("boom"), None);
        assert_eq!(provider("claude").failure_hint(stderr), None);
    }

    #[test]
    fn copilot_is_told_only_secrets_long_enough_to_redact() {
        let vars = [
            ("GITHUB_TOKEN", "ghp_0123456789abcdef"),
            ("COPILOT_PROVIDER_API_KEY", "sk-local-0123456789"),
            ("SOME_AUTH", "1"),
            ("HOME", "/home/someone/for/long/enough"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        assert_eq!(
            copilot_secret_names(vars.into_iter()),
            ["COPILOT_PROVIDER_API_KEY", "GITHUB_TOKEN"]
        );
    }

    #[test]
    fn command_provider_template() {
        let mut agent = Config::default().agents["claude"].clone();
        agent.provider = ProviderKind::Command;
        agent.command = Some(CommandProvider {
            argv: vec![
                "llm".into(),
                "-m".into(),
                "{model}".into(),
                "--".into(),
                "{prompt}".into(),
            ],
            prompt: PromptVia::Arg,
            output: OutputFormat::Text,
        });
        let provider = Provider::new("mine", agent);
        let spec = provider.command(
            Path::new("/usr/bin/llm"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(args(&spec), ["-m", "haiku", "--", "the prompt"]);
        assert!(spec.stdin.is_none());
        let mut no_model = turn(None, Mode::Query);
        no_model.model = None;
        let spec = provider.command(Path::new("/usr/bin/llm"), &no_model, Path::new("."));
        assert_eq!(args(&spec), ["-m", "--", "the prompt"]);
        assert_eq!(provider.format(), Format::Text);
        assert!(!provider.can_resume());
    }
}
