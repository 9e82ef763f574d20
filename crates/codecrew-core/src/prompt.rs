//! The prompt that offers codecrew's tools to a model, from the templates in `prompts/`
//! (compiled in, so the binary needs no files at run time).

use codecrew_tools::{Mode, ToolCatalog};

const TOOLS_TEMPLATE: &str = include_str!("../../../prompts/tools.md");
const TASK_TEMPLATE: &str = include_str!("../../../prompts/task.md");
const RESULTS_TEMPLATE: &str = include_str!("../../../prompts/results.md");

/// The full first prompt: the tools section, then the task.
pub fn render_task(catalog: &ToolCatalog, mode: Mode, message: &str) -> String {
    fill(
        TASK_TEMPLATE,
        &[
            ("tools_section", &render_tools_section(catalog, mode)),
            ("message", message.trim()),
        ],
    )
}

/// The section that lists each offered tool and explains how to call one.
pub fn render_tools_section(catalog: &ToolCatalog, mode: Mode) -> String {
    let mode_rule = match mode {
        Mode::Query => "the tools only read; nothing in the workspace can be changed.",
        Mode::Execute => {
            "tools may write files and run commands, within the user's permission policy."
        }
    };
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
        let prompt = render_task(&catalog(Mode::Query), Mode::Query, "  Summarise README.md ");
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
        let prompt = render_task(&catalog(Mode::Query), Mode::Query, "say {{tools}} {{");
        assert!(prompt.contains("say {{tools}} {{"));
    }

    #[test]
    fn the_example_in_the_prompt_is_a_harmless_valid_call() {
        // A CLI that echoes the prompt must at worst ask for help, never act.
        let prompt = render_task(&catalog(Mode::Execute), Mode::Execute, "task");
        let calls: Vec<_> = Scanner::scan(&prompt)
            .into_iter()
            .filter_map(|segment| match segment {
                Segment::Call(call) => Some(call.tool),
                Segment::Rejected(rejection) => Some(format!("rejected: {}", rejection.reason)),
                Segment::Text(_) => None,
            })
            .collect();
        assert_eq!(calls, ["help"]);
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
