//! `help`: codecrew explains itself to the model, with the text of the front end's
//! commands handed in as a [`HelpSource`] (the tools know nothing of the command line).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

/// Where the help tool's text comes from: the front end that owns the commands.
pub trait HelpSource: Send + Sync {
    /// The names of the top-level commands.
    fn command_names(&self) -> Vec<String>;
    /// The full help of the program (`None`) or of one command (`"tools call"`); `None`
    /// when there is no such command.
    fn help_text(&self, command: Option<&str>) -> Option<String>;
}

/// A front end without commands of its own: the help tool gives the overview only.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCommands;

impl HelpSource for NoCommands {
    fn command_names(&self) -> Vec<String> {
        Vec::new()
    }

    fn help_text(&self, command: Option<&str>) -> Option<String> {
        command.is_none().then(|| OVERVIEW.to_owned())
    }
}

pub struct Help {
    source: Arc<dyn HelpSource>,
}

impl Help {
    pub fn new(source: Arc<dyn HelpSource>) -> Self {
        Help { source }
    }
}

impl std::fmt::Debug for Help {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Help").finish_non_exhaustive()
    }
}

const OVERVIEW: &str = "codecrew is a proxy for LLM command-line agents. It offers them tools \
(named codecrew:<tool>) that they call by writing a JSON envelope in their answer, runs the \
calls and sends the results back. `query` runs are read-only; `execute` runs may write files \
and run commands under a permission policy.";

impl Tool for Help {
    fn name(&self) -> &str {
        "help"
    }

    fn description(&self) -> &str {
        "Explains codecrew and its commands. Without input: an overview and the command list. \
         With {\"command\": \"<name>\"}: the full help of that command (e.g. \"execute\", \
         \"tools call\")."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("explains codecrew and its commands")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "A codecrew command, e.g. \"query\", \"intercept\" or \"tools call\""
                }
            },
            "additionalProperties": false
        })
    }

    fn readonly(&self) -> bool {
        true
    }

    fn is_codecrews(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, _ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            match input.get("command").and_then(Value::as_str) {
                None => Ok(json!({
                    "overview": OVERVIEW,
                    "commands": self.source.command_names(),
                    "help": self.source.help_text(None),
                })),
                Some(command) => match self.source.help_text(Some(command)) {
                    Some(help) => Ok(json!({ "command": command, "help": help })),
                    None => Err(ToolError::new(
                        ErrorCode::UnknownCommand,
                        format!("codecrew has no command {command:?}"),
                    )
                    .with_suggestion(format!(
                        "ask about one of: {}",
                        self.source.command_names().join(", ")
                    ))),
                },
            }
        })
    }
}
