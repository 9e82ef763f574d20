//! The script: which reply a request gets, by its content.

use super::*;

/// A native tool call the fake model asks the CLI to run (Anthropic `tool_use`, Gemini
/// `functionCall`, OpenAI `function_call`). The names differ per CLI: `Bash` for Claude,
/// `run_shell_command` / `list_directory` for Gemini, `exec_command` for Codex.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
    /// The OpenAI Responses `namespace` of the function (Codex offers an MCP server's
    /// tools as the namespace `mcp__<server>` of functions named as the server names
    /// them, and runs a call only with both); the other protocols have none.
    pub namespace: Option<String>,
}

/// An HTTP error answer: the status and the message, wrapped in each protocol's error body.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

/// What the fake model answers to one request.
///
/// Built with [`Reply::text`], [`Reply::tool`], [`Reply::error`] or [`Reply::hang`], refined with
/// the `with_*` methods.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub(super) text: String,
    pub(super) thinking: Option<String>,
    pub(super) tool_calls: Vec<ToolCall>,
    pub(super) error: Option<ApiError>,
    pub(super) hang: bool,
    pub(super) delay: Duration,
    pub(super) chunk_size: Option<usize>,
}

impl Reply {
    /// A plain text answer, streamed in chunks.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            thinking: None,
            tool_calls: Vec::new(),
            error: None,
            hang: false,
            delay: Duration::ZERO,
            chunk_size: None,
        }
    }

    /// A native tool call with no text before it.
    pub fn tool(name: impl Into<String>, input: Value) -> Reply {
        Reply::text("").with_tool_call(name, input)
    }

    /// An HTTP error with this status and message (in the protocol's own error body).
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            error: Some(ApiError {
                status,
                message: message.into(),
            }),
            ..Reply::text("")
        }
    }

    /// Accept the request and never answer it (until the server is dropped).
    pub fn hang() -> Reply {
        Reply {
            hang: true,
            ..Reply::text("")
        }
    }

    /// A thinking block streamed before the text.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Reply {
        self.thinking = Some(thinking.into());
        self
    }

    /// A native tool call after the text (may be repeated for several calls).
    pub fn with_tool_call(mut self, name: impl Into<String>, input: Value) -> Reply {
        self.tool_calls.push(ToolCall {
            name: name.into(),
            input,
            namespace: None,
        });
        self
    }

    /// A native tool call of a function in an OpenAI Responses namespace (see
    /// [`ToolCall::namespace`]); only that protocol sends the namespace.
    pub fn with_namespaced_tool_call(
        mut self,
        namespace: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Reply {
        self.tool_calls.push(ToolCall {
            name: name.into(),
            input,
            namespace: Some(namespace.into()),
        });
        self
    }

    /// Wait this long before answering (an error, or the start of the stream).
    pub fn with_delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Shorthand for [`Reply::with_delay`] in milliseconds.
    pub fn with_delay_ms(self, ms: u64) -> Reply {
        self.with_delay(Duration::from_millis(ms))
    }

    /// Stream the text in pieces of this many characters (overrides the script's size).
    pub fn with_chunk_size(mut self, chars: usize) -> Reply {
        self.chunk_size = Some(chars.max(1));
        self
    }

    pub fn text_str(&self) -> &str {
        &self.text
    }

    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }
}

/// One scripted answer and the condition that selects it. See the module docs for the order.
#[derive(Clone, Debug)]
pub struct Rule {
    pub(super) name: Option<String>,
    pub(super) on_tool_result: bool,
    pub(super) prompt_contains: Option<String>,
    pub(super) tool_result_contains: Option<String>,
    pub(super) reply: Reply,
}

impl Rule {
    /// Matches a request **without** a tool result whose latest user prompt contains `needle`
    /// (an empty needle matches every such request).
    pub fn on_prompt(needle: impl Into<String>, reply: Reply) -> Rule {
        Rule {
            name: None,
            on_tool_result: false,
            prompt_contains: Some(needle.into()),
            tool_result_contains: None,
            reply,
        }
    }

    /// Matches a request whose last user turn carries a tool result containing `needle`.
    pub fn on_tool_result(needle: impl Into<String>, reply: Reply) -> Rule {
        Rule {
            name: None,
            on_tool_result: true,
            prompt_contains: None,
            tool_result_contains: Some(needle.into()),
            reply,
        }
    }

    /// Matches every request that carries a tool result.
    pub fn on_any_tool_result(reply: Reply) -> Rule {
        Rule {
            tool_result_contains: None,
            ..Rule::on_tool_result("", reply)
        }
    }

    /// Also require the latest user prompt to contain `needle` (useful on tool-result rules:
    /// the prompt is then the one that led to the tool call).
    pub fn and_prompt(mut self, needle: impl Into<String>) -> Rule {
        self.prompt_contains = Some(needle.into());
        self
    }

    /// The label recorded in [`LoggedRequest::answered_by`] (default `rules[<index>]`).
    pub fn named(mut self, name: impl Into<String>) -> Rule {
        self.name = Some(name.into());
        self
    }

    fn matches(&self, turn: &Extracted) -> bool {
        if self.on_tool_result != turn.tool_result.is_some() {
            return false;
        }
        let contains = |hay: &Option<String>, needle: &Option<String>| match needle {
            None => true,
            Some(needle) => hay.as_deref().unwrap_or("").contains(needle.as_str()),
        };
        contains(&turn.prompt, &self.prompt_contains)
            && contains(&turn.tool_result, &self.tool_result_contains)
    }
}

/// The rules of a fake model, a default reply and a default chunk size.
#[derive(Clone, Debug)]
pub struct Script {
    pub(super) rules: Vec<Rule>,
    pub(super) default: Reply,
    pub(super) chunk_size: usize,
}

impl Default for Script {
    fn default() -> Script {
        Script::new()
    }
}

impl Script {
    /// No rules; the default reply is [`DEFAULT_REPLY_TEXT`], chunks of [`DEFAULT_CHUNK_SIZE`].
    pub fn new() -> Script {
        Script {
            rules: Vec::new(),
            default: Reply::text(DEFAULT_REPLY_TEXT),
            chunk_size: DEFAULT_CHUNK_SIZE,
        }
    }

    pub fn rule(mut self, rule: Rule) -> Script {
        self.rules.push(rule);
        self
    }

    /// Shorthand for `.rule(Rule::on_prompt(needle, reply))`.
    pub fn on_prompt(self, needle: impl Into<String>, reply: Reply) -> Script {
        self.rule(Rule::on_prompt(needle, reply))
    }

    /// Shorthand for `.rule(Rule::on_tool_result(needle, reply))`.
    pub fn on_tool_result(self, needle: impl Into<String>, reply: Reply) -> Script {
        self.rule(Rule::on_tool_result(needle, reply))
    }

    /// The answer when no rule matches (also for unmatched tool results).
    pub fn default_reply(mut self, reply: Reply) -> Script {
        self.default = reply;
        self
    }

    pub fn chunk_size(mut self, chars: usize) -> Script {
        self.chunk_size = chars.max(1);
        self
    }

    /// The reply for a request, with the label of what chose it.
    pub fn choose(&self, turn: &Extracted) -> (String, Reply) {
        // Tool-result rules and prompt rules are disjoint by `Rule::matches`; walking the tool
        // result rules first keeps the documented order explicit.
        let phases = [true, false];
        for phase in phases {
            for (index, rule) in self.rules.iter().enumerate() {
                if rule.on_tool_result == phase && rule.matches(turn) {
                    let label = rule
                        .name
                        .clone()
                        .unwrap_or_else(|| format!("rules[{index}]"));
                    return (label, self.with_chunking(&rule.reply));
                }
            }
        }
        ("default".to_string(), self.with_chunking(&self.default))
    }

    fn with_chunking(&self, reply: &Reply) -> Reply {
        let mut reply = reply.clone();
        reply.chunk_size.get_or_insert(self.chunk_size);
        reply
    }
}
