//! opencode (`opencode`): `run --format json`, the prompt on stdin; `-s <id>` continues
//! a session; kept for the loop as an ACP agent (`opencode acp`, see [`super::acp`]),
//! unless the job names a model, which its ACP agent takes only through a session
//! option. Its own tools answer to `OPENCODE_PERMISSION`, which opencode merges over
//! every config file it reads: in `query` nothing of its own may edit, run a shell or
//! leave the workspace; in `execute` its edits run (as Claude's `acceptEdits`) and its
//! shell does not. `--title` spares the extra model request opencode otherwise makes to
//! title each new session.

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv};
use crate::clis::process::CommandSpec;
use crate::config::ProviderKind;

/// The permissions codecrew gives opencode's own tools, per mode.
const QUERY_PERMISSION: &str =
    r#"{"edit":"deny","bash":"deny","external_directory":"deny","webfetch":"deny"}"#;
const EXECUTE_PERMISSION: &str =
    r#"{"edit":"allow","bash":"deny","external_directory":"deny","webfetch":"deny"}"#;

#[derive(Debug)]
pub struct Opencode;

impl Cli for Opencode {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Opencode
    }

    fn program(&self) -> &str {
        "opencode"
    }

    fn install_hint(&self) -> String {
        "npm install -g opencode-ai".to_owned()
    }

    fn format(&self) -> Format {
        Format::Opencode
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["run", "--format", "json", "--title", "codecrew"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            // opencode names a model `provider/model`.
            args.extend(["-m".to_owned(), model.to_owned()]);
        }
        if let Some(session) = turn.session {
            args.extend(["-s".to_owned(), session.to_owned()]);
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.env.push(permission(turn.mode));
        // opencode reads a piped stdin as the message.
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `opencode acp`, its tools under the same permissions as a run per turn.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut spec = command.spec();
        spec.args = argv(["acp"]);
        spec.env.push(permission(command.turn.mode));
        spec
    }

    fn kept_takes_model(&self) -> bool {
        false
    }
}

/// The `OPENCODE_PERMISSION` variable for `mode`.
fn permission(mode: Mode) -> (std::ffi::OsString, std::ffi::OsString) {
    let permission = match mode {
        Mode::Query => QUERY_PERMISSION,
        Mode::Execute => EXECUTE_PERMISSION,
    };
    ("OPENCODE_PERMISSION".into(), permission.into())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn a_turn_continues_its_session_with_the_prompt_on_stdin() {
        let spec = provider("opencode").command(
            Path::new("opencode"),
            &turn(Some("ses_1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "run", "--format", "json", "--title", "codecrew", "-m", "haiku", "-s", "ses_1"
            ]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
    }

    #[test]
    fn its_own_tools_never_write_in_query_and_never_run_a_shell() {
        for (mode, edit) in [(Mode::Query, "deny"), (Mode::Execute, "allow")] {
            let spec = provider("opencode").command(
                Path::new("opencode"),
                &turn(None, mode),
                Path::new("."),
            );
            let permission: serde_json::Value =
                serde_json::from_str(env(&spec, "OPENCODE_PERMISSION").unwrap()).unwrap();
            assert_eq!(permission["edit"], edit, "{mode:?}");
            assert_eq!(permission["bash"], "deny", "{mode:?}");
            assert_eq!(permission["external_directory"], "deny", "{mode:?}");
            let kept = provider("opencode").resident_command(
                Path::new("opencode"),
                &turn(None, mode),
                Path::new("."),
            );
            assert_eq!(args(&kept), ["acp"]);
            assert_eq!(
                env(&kept, "OPENCODE_PERMISSION"),
                env(&spec, "OPENCODE_PERMISSION")
            );
        }
    }
}
