//! `codecrew tools`: list, show and call tools directly.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use codecrew::cli::{OutputArg, ToolsCommand};
use codecrew::intercept::PREFIX;
use codecrew::tool::executor::CallRequest;
use codecrew::tool::{
    Mode, Status, ToolCatalog, ToolError, ToolExecutor, ToolRegistry, ToolResult, Toolbox,
};
use serde_json::{Value, json};

pub async fn run(command: ToolsCommand, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let loaded = codecrew::config::load(&options.workspace)?;
    let toolbox = Toolbox::start(&loaded.config, &options.workspace).await;
    for notice in toolbox.notices() {
        eprintln!("codecrew: warning: {notice}");
    }
    let registry = toolbox.registry();
    let code = match command {
        ToolsCommand::List { mode, output } => list(registry, Mode::from(mode), output),
        ToolsCommand::Show { name } => show(registry, &name),
        ToolsCommand::Call { name, input, mode } => {
            let mode = Mode::from(mode);
            match ToolCatalog::for_mode(registry, mode) {
                Ok(catalog) => match super::policy_from(&loaded) {
                    Ok(policy) => {
                        let executor = super::executor_for(
                            Arc::clone(registry),
                            Arc::new(catalog),
                            mode,
                            &options,
                            Arc::new(policy),
                        );
                        call(&name, &input, &executor).await
                    }
                    Err(error) => Err(error),
                },
                Err(error) => Err(error.into()),
            }
        }
    };
    toolbox.shutdown().await;
    code
}

fn list(registry: &ToolRegistry, mode: Mode, output: OutputArg) -> anyhow::Result<ExitCode> {
    let catalog = ToolCatalog::for_mode(registry, mode)?;
    let mut out = std::io::stdout().lock();
    match output {
        OutputArg::Json => {
            let tools: Vec<Value> = catalog
                .tools()
                .map(|tool| {
                    json!({
                        "name": format!("{PREFIX}{}", tool.name()),
                        "tool": tool.name(),
                        "description": tool.description(),
                        "readonly": tool.readonly(),
                        "input_schema": tool.input_schema(),
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut out, &tools)?;
            writeln!(out)?;
        }
        OutputArg::Text => {
            let width = catalog.names().map(str::len).max().unwrap_or(0) + PREFIX.len();
            for tool in catalog.tools() {
                let access = if tool.readonly() { "read" } else { "write" };
                let summary = first_sentence(tool.description());
                let name = format!("{PREFIX}{}", tool.name());
                writeln!(out, "{name:<width$}  {access:<5}  {summary}")?;
            }
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

fn show(registry: &ToolRegistry, name: &str) -> anyhow::Result<ExitCode> {
    let bare = super::bare_name(name);
    let Some(tool) = registry.get(bare) else {
        let known: Vec<&str> = registry.names().collect();
        anyhow::bail!(
            "there is no tool named {name:?}; known tools: {}",
            known.join(", ")
        );
    };
    let mut out = std::io::stdout().lock();
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
    serde_json::to_writer_pretty(&mut out, &tool.input_schema())?;
    writeln!(out)?;
    Ok(ExitCode::SUCCESS)
}

async fn call(name: &str, input: &str, executor: &ToolExecutor) -> anyhow::Result<ExitCode> {
    let tool = super::bare_name(name).to_owned();
    let result = match serde_json::from_str::<Value>(input) {
        Ok(input) => {
            executor
                .call(&CallRequest {
                    id: String::new(),
                    tool,
                    input,
                })
                .await
        }
        Err(error) => ToolResult {
            tool_call_id: "call_1".to_owned(),
            tool,
            status: Status::Error,
            output: Value::Null,
            error: Some(
                ToolError::new(
                    "E_INVALID_INPUT",
                    format!("--input is not valid JSON: {error}"),
                )
                .with_suggestion("pass a JSON object, e.g. --input '{\"path\":\"README.md\"}'"),
            ),
            duration_ms: 0,
        },
    };
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &result)?;
    writeln!(out)?;
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
