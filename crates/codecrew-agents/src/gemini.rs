//! Gemini CLI (`gemini`): `--output-format stream-json`, the whole prompt on stdin (no
//! `-p`); `--resume <id>` continues a session; kept for the loop as an ACP agent
//! (`gemini --acp`, see [`super::drive::acp`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::drive::process::CommandSpec;
use crate::identifiers::SessionShape;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Gemini;

impl Cli for Gemini {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Gemini)
    }

    fn program(&self) -> &str {
        "gemini"
    }

    fn install_hint(&self) -> String {
        "npm install -g @google/gemini-cli".to_owned()
    }

    /// Gemini CLI's aliases (`auto` lets it route between them).
    fn model_aliases(&self) -> &'static [&'static str] {
        &["auto", "pro", "flash", "flash-lite"]
    }

    /// Started on its own, it asks how to sign in (Google, an API key, Vertex AI).
    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn session_shape(&self) -> SessionShape {
        SessionShape::Uuid
    }

    /// `~/.gemini` (or `$GEMINI_CLI_HOME/.gemini`) written whole: Gemini locks and
    /// renames its project registry at the top of it, and waits for ever when it
    /// cannot. What makes it run programs later there is held as it was and put back
    /// after each command: the MCP servers, hooks, tool commands and trust of its
    /// settings, its trusted folders, extensions, commands, agents, skills and policies.
    fn state(&self) -> Option<wall::State> {
        let home = gemini_home()?;
        let mut guarded: Vec<wall::Guarded> = HELD
            .iter()
            .map(|name| wall::Guarded {
                path: home.join(name),
                hold: wall::Hold::Whole,
            })
            .collect();
        guarded.push(wall::Guarded {
            path: home.join("settings.json"),
            hold: wall::Hold::Keys(HELD_SETTINGS),
        });
        Some(wall::State {
            write: vec![home],
            guarded,
            ..wall::State::default()
        })
    }

    /// Its workspace settings (MCP servers, hooks, tool commands), commands, agents,
    /// skills and policies.
    fn project_files(&self) -> &'static [&'static str] {
        PROJECT_FILES
    }

    fn failure_hint(&self, said: &str) -> Option<&'static str> {
        said.contains("not running in a trusted directory")
            .then_some(
                "this checkout ships Gemini settings (.gemini/) and you have not trusted the \
             project, so codecrew runs Gemini as in a folder it does not trust, where it \
             answers only kept for the loop (not when a stored session goes on, or with \
             keep_alive = false); add the project to trusted_projects in your user config \
             to load its settings",
            )
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["--output-format", "stream-json"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(session) = turn.session {
            args.push(format!("--resume={session}"));
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        // Headless Gemini reads the whole prompt from stdin when there is no -p.
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        distrust_untrusted_checkout(&mut spec, command);
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `gemini --acp` in its default approval mode, where its edits, its shell and its
    /// fetches ask codecrew first ([`super::drive::acp`]); a policy of codecrew's makes every
    /// shell command ask, the ones Gemini deems safe included (`cat .env` would not).
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args = vec![OsString::from("--acp")];
        if let Some(model) = command.model {
            args.push(OsString::from(format!("--model={model}")));
        }
        let mut spec = command.spec();
        match policy_file() {
            Ok(file) => {
                args.extend([OsString::from("--policy"), file.as_os_str().to_owned()]);
                spec.files.push(Arc::new(file));
            }
            // Its shell's "safe" commands then run without asking, inside its wall.
            Err(error) => tracing::warn!("cannot write gemini's policy file: {error}"),
        }
        spec.args = args;
        distrust_untrusted_checkout(&mut spec, command);
        spec
    }

    /// `gemini --acp` records a chat of its own at start-up, before codecrew opens its
    /// session: a file holding only the session context, which then shows in the user's
    /// session list. It goes once the agent has ended (see [`startup_record`]).
    fn after_kept(&self, started: SystemTime, session: Option<&str>) {
        let Some(session) = session else { return };
        let Some(home) = gemini_home() else { return };
        for path in startup_records(&home, started, session) {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "removed gemini --acp's start-up chat record")
                }
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "could not remove gemini --acp's start-up chat record")
                }
            }
        }
    }
}

const PROJECT_FILES: &[&str] = &[".gemini"];

/// In a project the user has not trusted that ships Gemini settings, Gemini runs as in a
/// folder it does not trust (`GEMINI_CLI_TRUST_WORKSPACE=false`, which a workspace
/// `.env` cannot set back): it then loads nothing of the workspace's — settings, MCP
/// servers, hooks, commands, agents, skills, nor its `GEMINI.md` — and none of the
/// user's MCP servers and hooks either. Gemini stops at a settings file it cannot read,
/// so its wall cannot keep them out of reach instead; a checkout without them changes
/// nothing.
fn distrust_untrusted_checkout(spec: &mut CommandSpec, command: &TurnCommand<'_>) {
    if !command.trusted
        && PROJECT_FILES
            .iter()
            .any(|file| command.cwd.join(file).exists())
    {
        spec.env
            .push(("GEMINI_CLI_TRUST_WORKSPACE".into(), "false".into()));
    }
}

/// What of `~/.gemini` makes Gemini run programs later, or tells every session what to
/// do, held whole ([`Gemini::state`]).
/// (`.env` is loaded into Gemini's environment, and its shell's, where the workspace has
/// none.)
const HELD: &[&str] = &[
    "trustedFolders.json",
    ".env",
    // Its global context (what its memory tool saves too), given to every session.
    "GEMINI.md",
    "AGENTS.md",
    "extensions",
    "commands",
    "agents",
    "skills",
    "policies",
];

/// The keys of `~/.gemini/settings.json` that start programs or decide what Gemini
/// trusts (Gemini itself rewrites the file's older keys, which are left to it).
const HELD_SETTINGS: &[&[&str]] = &[
    &["mcpServers"],
    &["mcp"],
    &["hooks"],
    &["hooksConfig"],
    &["tools", "discoveryCommand"],
    &["tools", "callCommand"],
    &["tools", "sandbox"],
    &["security", "folderTrust"],
    &["context", "includeDirectories"],
    &["extensions"],
    &["advanced", "bugCommand"],
];

/// Gemini CLI's own directory: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
fn gemini_home() -> Option<PathBuf> {
    let base = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|home| !home.is_empty())
        .or_else(|| std::env::var_os("HOME"))?;
    Some(Path::new(&base).join(".gemini"))
}

/// The chat records (`tmp/<project>/chats/session-*.jsonl`) a kept agent started at
/// `started` left besides `session`'s ([`startup_record`]).
fn startup_records(home: &Path, started: SystemTime, session: &str) -> Vec<PathBuf> {
    let mut records = Vec::new();
    let Ok(projects) = std::fs::read_dir(home.join("tmp")) else {
        return records;
    };
    for project in projects.flatten() {
        let Ok(chats) = std::fs::read_dir(project.path().join("chats")) else {
            continue;
        };
        let files: Vec<(PathBuf, Record)> = chats
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| written_since(path, started))
            .filter_map(|path| Record::read(&path).map(|record| (path, record)))
            .collect();
        // The start-up record begins before codecrew's session does.
        let Some(opened) = files
            .iter()
            .find(|(_, record)| record.session_id == session)
            .map(|(_, record)| record.start_time.clone())
        else {
            continue;
        };
        records.extend(
            files
                .into_iter()
                .filter(|(_, record)| startup_record(record, session, &opened))
                .map(|(path, _)| path),
        );
    }
    records
}

/// The record `gemini --acp` wrote at start-up: another session of the main kind that
/// began before codecrew's own (`opened`, both Gemini's ISO-8601 UTC times) and that no
/// model ever answered. A user's chat has the model's answers in it, or began at another
/// time than the second or two between the agent's start and its first session.
fn startup_record(record: &Record, session: &str, opened: &str) -> bool {
    record.session_id != session
        && record.kind == "main"
        && record.start_time.as_str() <= opened
        && !record.answered
}

/// What matters of one chat record.
struct Record {
    session_id: String,
    start_time: String,
    kind: String,
    /// The model answered in it.
    answered: bool,
}

impl Record {
    /// The record at `path`: a small `session-*.jsonl` whose first line names it.
    fn read(path: &Path) -> Option<Record> {
        const LARGEST_STARTUP_RECORD: u64 = 1 << 20;
        let name = path.file_name()?.to_str()?;
        if !name.starts_with("session-") || !name.ends_with(".jsonl") {
            return None;
        }
        if path.metadata().ok()?.len() > LARGEST_STARTUP_RECORD {
            return None;
        }
        let text = std::fs::read_to_string(path).ok()?;
        let head: serde_json::Value = serde_json::from_str(text.lines().next()?).ok()?;
        Some(Record {
            session_id: head["sessionId"].as_str()?.to_owned(),
            start_time: head["startTime"].as_str()?.to_owned(),
            kind: head["kind"].as_str().unwrap_or_default().to_owned(),
            answered: text.contains(r#""type":"gemini""#),
        })
    }
}

/// Whether `path` was written at or after `started`.
fn written_since(path: &Path, started: SystemTime) -> bool {
    path.metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= started)
}

/// Gemini's policy rule that makes every shell command ask.
const ASK_BEFORE_SHELL: &str = r#"[[rule]]
toolName = "run_shell_command"
argsPattern = ".*"
decision = "ask_user"
priority = 100
"#;

/// [`ASK_BEFORE_SHELL`] in a file of its own, for `--policy`.
fn policy_file() -> std::io::Result<tempfile::TempPath> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix("codecrew-gemini-policy-")
        .suffix(".toml")
        .tempfile()?;
    file.write_all(ASK_BEFORE_SHELL.as_bytes())?;
    Ok(file.into_temp_path())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_tools::Mode;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn the_prompt_goes_on_stdin() {
        let spec = provider("gemini").command(
            Path::new("gemini"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            ["--output-format", "stream-json", "--model=haiku"]
        );
        assert!(spec.stdin.is_some());
    }

    #[test]
    fn the_kept_agent_asks_codecrew_before_its_edits_and_every_shell_command() {
        let spec = provider("gemini").resident_command(
            Path::new("gemini"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        let args = args(&spec);
        assert_eq!(args[..3], ["--acp", "--model=haiku", "--policy"]);
        assert!(
            !args.iter().any(|a| a == "--approval-mode"),
            "its default mode asks"
        );
        let policy = std::fs::read_to_string(&args[3]).unwrap();
        assert!(policy.contains("run_shell_command") && policy.contains("ask_user"));
        // Per turn its edits and shell are off: headless, what would ask is not offered.
        let spec = provider("gemini").command(
            Path::new("gemini"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        assert!(
            !super::super::testing::args(&spec)
                .iter()
                .any(|a| a == "auto_edit")
        );
    }

    #[test]
    fn only_the_start_up_record_of_the_kept_agent_is_found() {
        let home = tempfile::tempdir().unwrap();
        let chats = home.path().join("tmp/work/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let started = SystemTime::now() - std::time::Duration::from_secs(1);
        let record = |name: &str, id: &str, start: &str, answered: bool| {
            let mut text =
                format!("{{\"sessionId\":\"{id}\",\"startTime\":\"{start}\",\"kind\":\"main\"}}\n");
            text.push_str(r#"{"$set":{"messages":[{"type":"user","content":"ctx"}"#);
            if answered {
                text.push_str(r#",{"type":"gemini","content":"hi"}"#);
            }
            text.push_str("]}}\n");
            std::fs::write(chats.join(name), text).unwrap();
            chats.join(name)
        };
        let stray = record("session-a.jsonl", "A", "2026-11-25T17:33:46.941Z", false);
        record("session-b.jsonl", "B", "2026-11-25T17:33:47.038Z", true);
        // The user's: answered, or begun after codecrew's session.
        record("session-c.jsonl", "C", "2026-11-25T17:33:46.000Z", true);
        record("session-d.jsonl", "D", "2026-11-25T17:33:48.000Z", false);
        std::fs::write(chats.join("notes.txt"), "not a record").unwrap();
        assert_eq!(startup_records(home.path(), started, "B"), [stray]);
        // Nothing is found when codecrew's own session has no record here.
        assert!(startup_records(home.path(), started, "Z").is_empty());
        // Nor among records written before the agent started.
        let later = SystemTime::now() + std::time::Duration::from_secs(60);
        assert!(startup_records(home.path(), later, "B").is_empty());
    }
}
