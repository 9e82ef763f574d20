//! `codecrew prompt`: the tool-augmented prompt, for scripts that feed any LLM CLI.

use std::process::ExitCode;

use codecrew::cli::PromptArgs;
use codecrew::output::console;
use codecrew_config::PromptStyle;
use codecrew_core::prompt;
use codecrew_tools::{Mode, ToolCatalog};

pub async fn run(args: PromptArgs, options: &super::ToolOptions) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    // Only shown: servers listed by an earlier run are not started.
    let toolbox = options.engine()?.toolbox(mode).await;
    let catalog = ToolCatalog::for_mode(toolbox.registry(), mode)?;
    let message = args.message.join(" ");
    let style = if args.compact {
        PromptStyle::Compact
    } else {
        PromptStyle::Full
    };
    let text = prompt::render_task(&catalog, mode, &message, style);
    // For another CLI to read, byte for byte; shown at a terminal, inert (an MCP server
    // writes its tools' descriptions).
    if console::stdout_is_terminal() {
        console::stdout().show(&console::Text::plain(&text))?;
    } else {
        console::stdout().exact(text.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
