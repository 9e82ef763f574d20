//! The prompt that offers codecrew's tools to a model, from the templates in `prompts/`
//! (compiled in, so the binary needs no files at run time): in full (each tool's
//! description and input schema) or compact (each tool on one line, for a model whose
//! context window is small; docs/PERFORMANCE.md measures both).

use codecrew_config::PromptStyle;
use codecrew_tools::{Mode, Tool, ToolCatalog};
use serde_json::Value;

const TOOLS_TEMPLATE: &str = include_str!("../../../prompts/tools.md");
const COMPACT_TOOLS_TEMPLATE: &str = include_str!("../../../prompts/tools-compact.md");
const TASK_TEMPLATE: &str = include_str!("../../../prompts/task.md");
const RESULTS_TEMPLATE: &str = include_str!("../../../prompts/results.md");
const SCHEMA_TEMPLATE: &str = include_str!("../../../prompts/schema.md");
const SCHEMA_RETRY_TEMPLATE: &str = include_str!("../../../prompts/schema-retry.md");

/// The first prompt: the tools section, then the task.
pub fn render_task(catalog: &ToolCatalog, mode: Mode, message: &str, style: PromptStyle) -> String {
    with_tools_section(&render_tools(catalog, mode, style), message)
}

/// The tools section in `style`.
pub fn render_tools(catalog: &ToolCatalog, mode: Mode, style: PromptStyle) -> String {
    match style {
        PromptStyle::Full => render_tools_section(catalog, mode),
        PromptStyle::Compact => render_compact_tools_section(catalog, mode),
    }
}

/// The first prompt from a tools section already rendered, then the task.
pub fn with_tools_section(tools_section: &str, message: &str) -> String {
    fill(
        TASK_TEMPLATE,
        &[
            ("tools_section", tools_section),
            ("message", message.trim()),
        ],
    )
}

fn mode_rule(mode: Mode) -> &'static str {
    match mode {
        Mode::Query => "the tools only read; nothing in the workspace can be changed.",
        Mode::Execute => {
            "tools may write files and run commands, within the user's permission policy."
        }
    }
}

/// The compact section: the envelope's rules, and each offered tool on one line, what it
/// does and its inputs, the required first (`read_file`: "Input: path; optional offset,
/// limit").
pub fn render_compact_tools_section(catalog: &ToolCatalog, mode: Mode) -> String {
    let tools = catalog
        .tools()
        .map(|tool| {
            format!(
                "- codecrew:{name}: {summary}. {inputs}",
                name = tool.name(),
                summary = tool.summary_in(mode),
                inputs = inputs_line(tool.as_ref()),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    fill(
        COMPACT_TOOLS_TEMPLATE,
        &[
            ("mode", mode.name()),
            ("mode_rule", mode_rule(mode)),
            ("tools", &tools),
        ],
    )
}

/// A tool's inputs as its schema names them: the required, then the optional.
fn inputs_line(tool: &dyn Tool) -> String {
    let schema = tool.input_schema();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut optional: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                .map(String::as_str)
                .filter(|name| !required.contains(name))
                .collect()
        })
        .unwrap_or_default();
    // In name order, whatever order a JSON object keeps its keys in (serde_json's
    // `preserve_order` is on in the binary, not in every build of this crate): the
    // prompt is the same text however codecrew was built.
    optional.sort_unstable();
    match (required.is_empty(), optional.is_empty()) {
        (true, true) => "No input.".to_owned(),
        (false, true) => format!("Input: {}.", required.join(", ")),
        (true, false) => format!("Input (optional): {}.", optional.join(", ")),
        (false, false) => format!(
            "Input: {}; optional {}.",
            required.join(", "),
            optional.join(", ")
        ),
    }
}

/// The section that lists each offered tool and explains how to call one.
pub fn render_tools_section(catalog: &ToolCatalog, mode: Mode) -> String {
    let mode_rule = mode_rule(mode);
    let tools = catalog
        .tools()
        .map(|tool| {
            let schema = serde_json::to_string(&tool.input_schema()).unwrap_or_default();
            format!(
                "### codecrew:{name}\n\n{description}\n\nInput schema: `{schema}`\n",
                name = tool.name(),
                description = tool.description_in(mode).trim(),
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    fill(
        TOOLS_TEMPLATE,
        &[
            ("mode", mode.name()),
            ("mode_rule", mode_rule),
            ("tools", tools.trim_end()),
        ],
    )
}

/// The follow-up message that carries tool results back to the model.
pub fn render_results(results_json_lines: &str) -> String {
    fill(
        RESULTS_TEMPLATE,
        &[("results", results_json_lines.trim_end())],
    )
}

/// What the task's prompt says of the shape its final answer must have (`--schema`):
/// appended to it, so that tool calls come first and the schema is for the answer.
pub fn render_schema(schema: &Value) -> String {
    let pretty = serde_json::to_string_pretty(schema).unwrap_or_else(|_| schema.to_string());
    fill(SCHEMA_TEMPLATE, &[("schema", &pretty)])
}

/// The same session asked again: its last answer did not fit, for the checker's
/// `errors`.
pub fn render_schema_retry(errors: &[String]) -> String {
    let errors = errors
        .iter()
        .map(|error| format!("- {error}"))
        .collect::<Vec<_>>()
        .join("\n");
    fill(SCHEMA_RETRY_TEMPLATE, &[("errors", &errors)])
}

/// The most characters of earlier exchanges [`render_earlier`] resends: a long thread
/// keeps its newest exchanges and leaves the oldest out, so the prompt stays bounded.
pub const MAX_EARLIER_CHARS: usize = 64 * 1024;

/// The earlier exchanges (task, answer) of a continued conversation, oldest first, for a
/// CLI that has no session of its own to resume; empty when there are none.
pub fn render_earlier(exchanges: &[(String, String)]) -> String {
    let mut kept = Vec::new();
    let mut size = 0;
    for (task, answer) in exchanges.iter().rev() {
        let block = format!(
            "### Task\n\n{}\n\n### Your answer\n\n{}",
            task.trim(),
            answer.trim()
        );
        // The newest exchange is always kept, however long.
        if !kept.is_empty() && size + block.len() > MAX_EARLIER_CHARS {
            break;
        }
        size += block.len();
        kept.push(block);
    }
    if kept.is_empty() {
        return String::new();
    }
    kept.reverse();
    let left_out = match exchanges.len() - kept.len() {
        0 => String::new(),
        n => format!(" ({n} older exchanges are left out)"),
    };
    format!(
        "This continues an earlier conversation. Its tasks and your answers so far, oldest \
         first{left_out}:\n\n{}\n\n---\n\nThe new task follows.",
        kept.join("\n\n")
    )
}

/// Replaces each `{{name}}` with its value, in one pass, so that a value containing
/// `{{...}}` (a user's message, a tool's output) is never expanded again.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let key = &after[..end];
                match values.iter().find(|(name, _)| *name == key) {
                    Some((_, value)) => out.push_str(value),
                    None => {
                        out.push_str("{{");
                        out.push_str(key);
                        out.push_str("}}");
                    }
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use codecrew_intercept::{Scanner, Segment};

    fn catalog(mode: Mode) -> ToolCatalog {
        ToolCatalog::for_mode(
            &crate::toolbox::builtin(std::sync::Arc::new(codecrew_tools::builtin::NoCommands)),
            mode,
        )
        .expect("built-in schemas compile")
    }

    #[test]
    fn lists_every_offered_tool_with_its_schema() {
        let prompt = render_task(
            &catalog(Mode::Query),
            Mode::Query,
            "  Summarise README.md ",
            PromptStyle::Full,
        );
        for tool in catalog(Mode::Query).tools() {
            assert!(prompt.contains(&format!("### codecrew:{}", tool.name())));
        }
        assert!(prompt.contains("Input schema: `{"));
        assert!(prompt.contains("**query** mode"));
        assert!(prompt.ends_with("## Your task\n\nSummarise README.md\n"));
        assert!(!prompt.contains("{{"), "every placeholder is filled");
    }

    #[test]
    fn the_message_is_not_expanded() {
        let prompt = render_task(
            &catalog(Mode::Query),
            Mode::Query,
            "say {{tools}} {{",
            PromptStyle::Full,
        );
        assert!(prompt.contains("say {{tools}} {{"));
    }

    #[test]
    fn the_example_in_the_prompt_is_a_harmless_valid_call() {
        // A CLI that echoes the prompt must at worst ask for help, never act.
        for style in [PromptStyle::Full, PromptStyle::Compact] {
            for mode in [Mode::Query, Mode::Execute] {
                let prompt = render_task(&catalog(mode), mode, "task", style);
                let calls: Vec<_> = Scanner::scan(&prompt)
                    .into_iter()
                    .filter_map(|segment| match segment {
                        Segment::Call(call) => Some(call.tool),
                        Segment::Rejected(rejection) => {
                            Some(format!("rejected: {}", rejection.reason))
                        }
                        Segment::Text(_) => None,
                    })
                    .collect();
                assert_eq!(calls, ["help"], "{style:?} {mode:?}");
            }
        }
    }

    #[test]
    fn the_compact_prompt_keeps_every_tool_its_inputs_and_the_envelopes_rules() {
        for mode in [Mode::Query, Mode::Execute] {
            let catalog = catalog(mode);
            let compact = render_task(&catalog, mode, "the task", PromptStyle::Compact);
            let full = render_task(&catalog, mode, "the task", PromptStyle::Full);
            for tool in catalog.tools() {
                let line = compact
                    .lines()
                    .find(|line| line.starts_with(&format!("- codecrew:{}: ", tool.name())))
                    .unwrap_or_else(|| panic!("{} missing:\n{compact}", tool.name()));
                // Every input the schema has, the required ones named as such.
                let schema = tool.input_schema();
                for name in schema["properties"].as_object().unwrap().keys() {
                    assert!(line.contains(name.as_str()), "{line}: {name}");
                }
                if let Some(required) = schema["required"].as_array() {
                    let listed = line.split("Input: ").nth(1).unwrap_or_default();
                    let before_optional = listed.split("; optional").next().unwrap();
                    for name in required {
                        assert!(before_optional.contains(name.as_str().unwrap()), "{line}");
                    }
                }
            }
            // The envelope's rules: its shape in a fence, the prefix, stop and wait.
            assert!(
                compact.contains("```json\n{\"type\": \"tool_use\", \"name\": \"codecrew:help\"")
            );
            assert!(compact.contains("`name` is `codecrew:`"));
            assert!(compact.contains("stop and wait"));
            assert!(compact.contains(&format!("**{}** mode", mode.name())));
            assert!(compact.ends_with("## Your task\n\nthe task\n"));
            // Much smaller: under half the full prompt's bytes (docs/PERFORMANCE.md has
            // its tokens).
            assert!(
                compact.len() * 2 < full.len(),
                "{mode:?}: {} of {}",
                compact.len(),
                full.len()
            );
        }
    }

    #[test]
    fn a_tools_inputs_are_named_required_first() {
        let line = |name: &str| {
            let catalog = catalog(Mode::Execute);
            let tool = catalog.tools().find(|tool| tool.name() == name).unwrap();
            inputs_line(tool.as_ref())
        };
        assert_eq!(line("read_file"), "Input: path; optional limit, offset.");
        assert_eq!(line("help"), "Input (optional): command.");
        assert_eq!(line("write_file"), "Input: path, content.");
    }

    #[test]
    fn earlier_exchanges_oldest_first_and_bounded() {
        assert_eq!(render_earlier(&[]), "");
        let pair = |n: usize, size: usize| (format!("task {n}"), "a".repeat(size));
        let text = render_earlier(&[pair(1, 10), pair(2, 10)]);
        let first = text.find("task 1").unwrap();
        assert!(first < text.find("task 2").unwrap(), "{text}");
        assert!(!text.contains("left out"));
        // Three of 30 000 characters do not fit: the oldest is left out, and says so.
        let text = render_earlier(&[pair(1, 30_000), pair(2, 30_000), pair(3, 30_000)]);
        assert!(!text.contains("task 1"));
        assert!(text.contains("task 2") && text.contains("task 3"));
        assert!(text.contains("(1 older exchanges are left out)"));
        // The newest is kept even alone over the limit.
        let text = render_earlier(&[pair(1, 10), pair(2, MAX_EARLIER_CHARS + 1)]);
        assert!(text.contains("task 2") && !text.contains("task 1"));
    }

    #[test]
    fn results_message() {
        let message = render_results("{\"status\":\"ok\"}\n");
        assert!(message.contains("{\"status\":\"ok\"}\n\nContinue the task."));
    }
}
