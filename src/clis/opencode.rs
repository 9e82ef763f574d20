//! opencode (`opencode`): `run --format json`, the prompt on stdin; `-s <id>` continues
//! a session, one run per turn. (`opencode acp` serves a loop from one process, but
//! `opencode run -s` then hangs on the session it opened, so a thread could not go on
//! with it; and its ACP agent takes no model on its command line.) Its own tools answer to `OPENCODE_PERMISSION`, which opencode merges over
//! every config file it reads: in `query` nothing of its own may edit, run a shell or
//! leave the workspace; in `execute` its edits run (as Claude's `acceptEdits`) and its
//! shell does not. `--title` spares the extra model request opencode otherwise makes to
//! title each new session.

use codecrew_intercept::decode::Format;
use codecrew_tools::Mode;

use super::{Cli, TurnCommand, argv};
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
        }
    }
}
