//! `codecrew tools`: list, show and call tools directly.

use std::fmt::Write;
use std::process::ExitCode;

use codecrew::cli::{OutputArg, ToolsCommand};
use codecrew::output::color::LABEL;
use codecrew::output::console::{self, Text};
use codecrew_intercept::PREFIX;
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{ErrorCode, Mode, Status, ToolCatalog, ToolError, ToolResult, Toolbox};
use serde_json::{Value, json};

pub async fn run(command: ToolsCommand, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    match command {
        ToolsCommand::List { mode, output } => list(Mode::from(mode), output, &options).await,
        ToolsCommand::Show { name } => show(&name, &options).await,
        ToolsCommand::Call { name, input, mode } => {
            call(&name, &input, Mode::from(mode), &options).await
        }
    }
}

/// Every tool of the workspace's config (built-ins, external tools, MCP servers' tools),
/// the servers started for a run of `mode`.
async fn registry(options: &super::ToolOptions, mode: Mode) -> anyhow::Result<Toolbox> {
    Ok(options.engine()?.toolbox_started(mode).await)
}

async fn list(
    mode: Mode,
    output: OutputArg,
    options: &super::ToolOptions,
) -> anyhow::Result<ExitCode> {
    let toolbox = registry(options, mode).await?;
    let catalog = ToolCatalog::for_mode(toolbox.registry(), mode)?;
    let palette = options.colors.stdout;
    match output {
        OutputArg::Json => {
            let tools: Vec<Value> = catalog
                .tools()
                .map(|tool| {
                    json!({
                        "name": format!("{PREFIX}{}", tool.name()),
                        "tool": tool.name(),
                        "description": tool.description_in(mode),
                        "readonly": tool.readonly(),
                        "input_schema": tool.input_schema(),
                    })
                })
                .collect();
            console::stdout().json_pretty(&tools)?;
        }
        OutputArg::Text => {
            // Descriptions come from MCP servers and tool programs too.
            let mut out = Text::new();
            let width = catalog.names().map(str::len).max().unwrap_or(0) + PREFIX.len();
            for tool in catalog.tools() {
                let access = if tool.readonly() || mode == Mode::Query {
                    "read"
                } else {
                    "write"
                };
                let summary = first_sentence(tool.description_in(mode));
                // Padded before it is styled: the escapes take no columns.
                let name = format!("{:<width$}", format!("{PREFIX}{}", tool.name()));
                out.push_styled(palette, LABEL, &name)
                    .push(&format!("  {access:<5}  {summary}\n"));
            }
            console::stdout().show(&out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The first sentence: up to a `. ` followed by a capital letter or a backtick (so that
/// abbreviations like "e.g. `*.rs`" do not end it).
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let bytes = text.as_bytes();
    let end = text.match_indices(". ").map(|(at, _)| at).find(|at| {
        bytes
            .get(at + 2)
            .is_some_and(|b| b.is_ascii_uppercase() || *b == b'`')
    });
    match end {
        Some(end) => &text[..=end],
        None => text.lines().next().unwrap_or(text),
    }
}

async fn show(name: &str, options: &super::ToolOptions) -> anyhow::Result<ExitCode> {
    // Showing a schema writes nothing: the servers start read-only.
    let toolbox = registry(options, Mode::Query).await?;
    let registry = toolbox.registry();
    let bare = super::bare_name(name);
    let Some(tool) = registry.get(bare) else {
        let known: Vec<&str> = registry.names().collect();
        anyhow::bail!(
            "there is no tool named {name:?}; known tools: {}",
            known.join(", ")
        );
    };
    let mut out = String::new();
    writeln!(out, "{PREFIX}{}", tool.name())?;
    writeln!(out)?;
    writeln!(out, "{}", tool.description().trim())?;
    writeln!(out)?;
    writeln!(
        out,
        "Read-only: {}",
        if tool.readonly() {
            "yes"
        } else {
            "no (execute mode only)"
        }
    )?;
    writeln!(out, "Input schema:")?;
    let mut console = console::stdout();
    console.show(&Text::plain(&out))?;
    console.json_pretty(&tool.input_schema())?;
    Ok(ExitCode::SUCCESS)
}

async fn call(
    name: &str,
    input: &str,
    mode: Mode,
    options: &super::ToolOptions,
) -> anyhow::Result<ExitCode> {
    let tool = super::bare_name(name).to_owned();
    let result = match serde_json::from_str::<Value>(input) {
        Ok(input) => {
            // Of the MCP servers only the one that serves the tool (`<server>__<tool>`)
            // starts, none for a built-in or external tool: starting every server of the
            // config can take seconds.
            let server = tool.split_once("__").map(|(server, _)| server);
            let mut engine = options.engine()?;
            engine
                .config_mut()
                .config
                .mcp
                .retain(|name, _| Some(name.as_str()) == server);
            let (executor, toolbox) = engine.executor(mode).await?;
            let result = executor
                .call(&CallRequest {
                    id: codecrew_core::session::new_call_id(),
                    tool,
                    input,
                })
                .await;
            toolbox.shutdown().await;
            result
        }
        Err(error) => ToolResult {
            tool_call_id: codecrew_core::session::new_call_id(),
            tool,
            status: Status::Error,
            output: Value::Null,
            error: Some(
                ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("--input is not valid JSON: {error}"),
                )
                .with_suggestion("pass a JSON object, e.g. --input '{\"path\":\"README.md\"}'"),
            ),
            duration_ms: 0,
            decided: None,
        },
    };
    console::stdout().json_pretty(&result)?;
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
