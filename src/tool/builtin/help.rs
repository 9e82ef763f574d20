//! `help`: codecrew explains itself to the model.

use serde_json::{Value, json};

use crate::tool::{Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct Help;

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

    fn execute<'a>(&'a self, _ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            match input.get("command").and_then(Value::as_str) {
                None => Ok(json!({
                    "overview": OVERVIEW,
                    "commands": crate::cli::command_names(),
                    "help": crate::cli::help_text(None),
                })),
                Some(command) => match crate::cli::help_text(Some(command)) {
                    Some(help) => Ok(json!({ "command": command, "help": help })),
                    None => Err(ToolError::new(
                        "E_UNKNOWN_COMMAND",
                        format!("codecrew has no command {command:?}"),
                    )
                    .with_suggestion(format!(
                        "ask about one of: {}",
                        crate::cli::command_names().join(", ")
                    ))),
                },
            }
        })
    }
}
