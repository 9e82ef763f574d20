//! Qwen Code (`qwen`): `--output-format stream-json` (Claude's shape, read by the Claude
//! decoder), the prompt on stdin; `--resume <id>` continues a session; kept for the loop
//! as an ACP agent (`qwen --acp`, see [`super::drive::acp`]) with the same flags.
//!
//! Headless, Qwen's default approval mode is `auto` (its own classifier approves
//! actions), so codecrew always sets the mode: `plan` in `query` (nothing modified,
//! nothing run), `default` in `execute` (its edits and shell ask, and codecrew's policy
//! answers).
//!
//! A settings file of codecrew's, as Qwen's system settings
//! (`QWEN_CODE_SYSTEM_SETTINGS_PATH`, which outranks the user's and the workspace's, and
//! which a workspace `.env` cannot set), makes every shell command ask (`permissions.ask:
//! ["Bash"]`; Qwen otherwise runs the ones its classifier deems read-only, `cat .env`
//! among them, without asking) and keeps out what codecrew has not seen or would not
//! govern: its managed-memory sub-agent (which writes files after each turn with tools
//! of its own), follow-up suggestions, hooks, MCP servers, user and project skills,
//! `QWEN.md`/`AGENTS.md` context files; `--extensions none` its extensions. The user's
//! settings (the model provider, its key) still apply. (`--safe-mode` would keep these
//! out too, but it also drops every permission rule, the ask above included.)

use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::drive::process::CommandSpec;
use crate::identifiers::SessionShape;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Qwen;

impl Cli for Qwen {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Qwen)
    }

    fn program(&self) -> &str {
        "qwen"
    }

    fn install_hint(&self) -> String {
        "npm install -g @qwen-code/qwen-code".to_owned()
    }

    /// Started on its own, it asks how to sign in (its `qwen auth` was removed).
    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn session_shape(&self) -> SessionShape {
        SessionShape::Uuid
    }

    /// `~/.qwen` read only: its settings, extensions, skills, MCP approvals. Written:
    /// its chats, sessions, temporary files and extension store (without which it does
    /// not start).
    fn state(&self) -> Option<wall::State> {
        let home = wall::home()?.join(".qwen");
        Some(wall::State {
            write: ["extension-store", "projects", "tmp", "sessions"]
                .iter()
                .map(|name| home.join(name))
                .collect(),
            made: ["extensions", "skills"]
                .iter()
                .map(|name| home.join(name))
                .collect(),
            read: vec![home],
            ..wall::State::default()
        })
    }

    /// Its project settings (hooks, MCP servers, tool commands), skills and agents; Qwen
    /// also rewrites an older settings file in place, before it asks whether the folder
    /// is trusted.
    fn project_files(&self) -> &'static [&'static str] {
        &[".qwen"]
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["--output-format", "stream-json", "--extensions", "none"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(session) = turn.session {
            args.push(format!("--resume={session}"));
        }
        args.extend([
            "--approval-mode".to_owned(),
            approval_mode(turn.mode).to_owned(),
        ]);
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        with_system_settings(&mut spec, command.trusted);
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `qwen --acp` with the model, approval mode and settings of a run per turn.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args = ["--acp", "--extensions", "none"].map(String::from).to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        args.extend([
            "--approval-mode".to_owned(),
            approval_mode(command.turn.mode).to_owned(),
        ]);
        let mut spec = command.spec();
        spec.args = argv(args);
        with_system_settings(&mut spec, command.trusted);
        spec
    }

    /// A resumed run's `result` counts the whole session: a second run that used 100
    /// tokens after a first that used 100 reports 200.
    fn reports_session_usage(&self) -> bool {
        true
    }
}

/// Never Qwen's own `auto` classifier: nothing modified or run in `query`; in `execute`
/// its `default` mode, where its edits and its shell ask first (kept, codecrew answers:
/// [`super::drive::acp`]; per turn, headless, nobody does and they do not run).
fn approval_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Query => "plan",
        Mode::Execute => "default",
    }
}

/// Qwen's system settings as codecrew sets them (see the module docs). `$version` keeps
/// Qwen from rewriting the file.
const SYSTEM_SETTINGS: &str = r#"{
  "$version": 4,
  "permissions": {"ask": ["Bash"]},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false,
             "enableAutoSkill": false, "enableTeamMemory": false, "enableTeamMemorySync": false},
  "ui": {"enableFollowupSuggestions": false, "enableSpeculation": false},
  "disableAllHooks": true,
  "mcp": {"excluded": ["*"], "serverCommand": ""},
  "skills": {"disabledLevels": ["project", "user", "extension"]},
  "context": {"fileName": ["__codecrew_no_context__.md"]},
  "tools": {"discoveryCommand": "", "callCommand": ""}
}
"#;

/// Points `spec` at [`SYSTEM_SETTINGS`] in a file of its own, and keeps an inherited
/// safe mode (which would drop the ask rule) off. In a project the user has not
/// trusted, Qwen's folder trust is turned on with a trusted-folders file of codecrew's
/// that lists nothing (`QWEN_CODE_TRUSTED_FOLDERS_PATH`, which a workspace `.env`
/// cannot set): it then merges the workspace's settings as empty, so no permission rule
/// or tool command of the checkout's applies.
fn with_system_settings(spec: &mut CommandSpec, trusted: bool) {
    let settings = if trusted {
        SYSTEM_SETTINGS.to_owned()
    } else {
        let mut settings: serde_json::Value =
            serde_json::from_str(SYSTEM_SETTINGS).unwrap_or_default();
        settings["security"] = serde_json::json!({"folderTrust": {"enabled": true}});
        settings.to_string()
    };
    // Without it, its shell's read-only commands run without asking, inside its wall.
    settings_file(spec, "QWEN_CODE_SYSTEM_SETTINGS_PATH", &settings);
    if !trusted {
        settings_file(spec, "QWEN_CODE_TRUSTED_FOLDERS_PATH", "{}");
    }
    spec.env_remove.push("QWEN_CODE_SAFE_MODE".into());
}

/// `text` in a temporary file of its own (removed when the command is dropped), named
/// to Qwen by `variable`.
fn settings_file(spec: &mut CommandSpec, variable: &str, text: &str) {
    use std::io::Write;
    let written = tempfile::Builder::new()
        .prefix("codecrew-qwen-")
        .suffix(".json")
        .tempfile()
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            Ok(file.into_temp_path())
        });
    match written {
        Ok(file) => {
            spec.env
                .push((variable.into(), file.as_os_str().to_owned()));
            spec.files.push(std::sync::Arc::new(file));
        }
        Err(error) => tracing::warn!("cannot write qwen's {variable} file: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_intercept::decode::Format;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn codecrew_sets_the_approval_mode_of_each_mode() {
        let query = provider("qwen").command(
            Path::new("qwen"),
            &turn(Some("s1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&query),
            [
                "--output-format",
                "stream-json",
                "--extensions",
                "none",
                "--model=haiku",
                "--resume=s1",
                "--approval-mode",
                "plan"
            ]
        );
        assert_eq!(query.stdin.as_deref(), Some(&b"the prompt"[..]));
        let execute = provider("qwen").command(
            Path::new("qwen"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        assert!(args(&execute).ends_with(&["--approval-mode".into(), "default".into()]));
        assert_eq!(provider("qwen").format(), Format::Claude);
        assert!(provider("qwen").reports_session_usage());
        let kept = provider("qwen").resident_command(
            Path::new("qwen"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&kept),
            [
                "--acp",
                "--extensions",
                "none",
                "--model=haiku",
                "--approval-mode",
                "plan"
            ]
        );
        // Every shell command asks; the memory sub-agent and hooks stay off.
        let settings = env(&kept, "QWEN_CODE_SYSTEM_SETTINGS_PATH").unwrap();
        let settings: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
        assert_eq!(settings["permissions"]["ask"][0], "Bash");
        assert_eq!(settings["memory"]["enableManagedAutoMemory"], false);
        assert_eq!(settings["disableAllHooks"], true);
        assert!(
            kept.env_remove
                .iter()
                .any(|name| name == "QWEN_CODE_SAFE_MODE")
        );
    }
}
