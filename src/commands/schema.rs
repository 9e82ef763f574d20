//! `codecrew schema`: the JSON Schema a `--schema` argument means, for a user writing one
//! (the compact form spelled out) or a script that wants it.

use std::process::ExitCode;

use codecrew::cli::SchemaArgs;
use codecrew::output::console;
use codecrew_core::schema::AnswerSchema;

pub fn run(args: &SchemaArgs) -> anyhow::Result<ExitCode> {
    let dir = std::env::current_dir().unwrap_or_default();
    match AnswerSchema::from_argument(&args.schema, args.multi, &dir) {
        Ok(schema) => {
            let text = serde_json::to_string_pretty(schema.json())?;
            console::stdout().exact(format!("{text}\n").as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            console::error(error);
            Ok(ExitCode::from(super::EXIT_USAGE))
        }
    }
}
