//! llm (`llm`, Simon Willison's): `prompt --json`, the prompt on stdin; `--cid <id>`
//! continues a conversation. The `--json` document carries the answer, the conversation
//! id and the tokens, so one process gives all of it (the answer arrives whole, not
//! streamed). llm has no tools of its own unless given some, so nothing of its own runs
//! in either mode.

use std::path::PathBuf;

use super::{Cli, TurnCommand, argv, wall};
use crate::drive::process::CommandSpec;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Llm;

impl Cli for Llm {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Llm)
    }

    fn program(&self) -> &str {
        "llm"
    }

    fn install_hint(&self) -> String {
        "pipx install llm (or: pip install llm)".to_owned()
    }

    /// `$LLM_USER_PATH`, else `~/.config/io.datasette.llm`: its keys, models and logs.
    fn state(&self) -> Option<wall::State> {
        let dir = std::env::var_os("LLM_USER_PATH")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| wall::xdg("XDG_CONFIG_HOME", ".config", "io.datasette.llm"));
        Some(wall::State::writable(dir))
    }

    /// llm takes a JSON Schema as it is (`--schema`).
    fn native_schema(
        &self,
        schema: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        Ok(Some(schema.clone()))
    }

    /// llm's words for a model whose plugin cannot hold it to a schema.
    fn refused_native_schema(&self, said: &str) -> bool {
        said.contains("does not support schemas")
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args: Vec<String> = ["prompt", "--json"].map(String::from).to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(conversation) = command.turn.session {
            args.push(format!("--cid={conversation}"));
        }
        if let Some(schema) = command.turn.schema {
            // llm's own: the model is held to the schema where its plugin can (a model
            // that cannot says so, and the turn fails as any other would).
            args.push(format!("--schema={schema}"));
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        // With no prompt argument, llm reads the prompt from stdin.
        spec.stdin = Some(command.turn.prompt.as_bytes().to_vec());
        spec
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_tools::Mode;

    use super::super::testing::*;

    #[test]
    fn a_turn_continues_its_conversation_with_the_prompt_on_stdin() {
        let spec = provider("llm").command(
            Path::new("llm"),
            &turn(Some("01abc"), Mode::Execute),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            ["prompt", "--json", "--model=haiku", "--cid=01abc"]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
        assert!(!provider("llm").keeps_alive(Mode::Execute));
    }
}
