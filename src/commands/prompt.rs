//! `codecrew prompt`: the tool-augmented prompt, for scripts that feed any LLM CLI.

use std::io::Write;
use std::process::ExitCode;

use codecrew::cli::PromptArgs;
use codecrew::prompt;
use codecrew::tool::{Mode, ToolCatalog, ToolRegistry};

pub fn run(args: PromptArgs) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    let catalog = ToolCatalog::for_mode(&ToolRegistry::builtin(), mode)?;
    let message = args.message.join(" ");
    let text = prompt::render_task(&catalog, mode, &message);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}
