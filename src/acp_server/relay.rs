//! What the editor sees of a turn: each agent's text as `agent_message_chunk`s (marked
//! with the agent in `_meta`, and headed by its name when several answer), each codecrew
//! tool call and each CLI's own as a `tool_call` then a `tool_call_update` (kind, title,
//! the files it touches, a diff for a write).

use std::collections::BTreeMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use super::usage::ContextGauge;
use codecrew_core::engine::JobLabel;
use codecrew_core::session::{Failure, JobEvent, JobReport};
use codecrew_core::usage::JobUsage;
use codecrew_tools::Status;

/// The most of a call's output the editor is shown.
const OUTPUT_SHOWN: usize = 8 * 1024;

/// The calls shown to the editor and not finished yet, by id: codecrew's calls and the
/// CLIs' own alike are shown under the id the engine gave them where it found them (the
/// `toolCallId` is the id the run store and `stream-json` have) and closed by the result
/// with that id. A question names the call it is about.
#[derive(Default)]
pub struct Announced {
    /// The open calls, by id: the tool and the input.
    calls: BTreeMap<String, (String, Value)>,
}

impl Announced {
    /// Call `id` is shown.
    fn open(&mut self, id: &str, tool: &str, input: &Value) {
        self.calls
            .insert(id.to_owned(), (tool.to_owned(), input.clone()));
    }

    /// Call `id` has its result: whether it was shown.
    fn close(&mut self, id: &str) -> bool {
        self.calls.remove(id).is_some()
    }

    /// The open call of `tool` with `input`, whatever agent made it: for a question
    /// that does not name its call by id.
    pub fn find(&self, tool: &str, input: &Value) -> Option<String> {
        self.calls
            .iter()
            .find(|(_, (open_tool, called))| open_tool == tool && called == input)
            .map(|(id, _)| id.clone())
    }
}

/// One prompt's agents, as the editor is shown them.
pub struct Relay<'a> {
    labels: &'a [JobLabel],
    workspace: &'a Path,
    /// The agent whose text came last (a header goes before another's, when several).
    speaking: Option<usize>,
    /// What each agent's last turn used: the `usage_update` of the prompt's end.
    context: ContextGauge,
}

impl<'a> Relay<'a> {
    pub fn new(labels: &'a [JobLabel], workspace: &'a Path) -> Relay<'a> {
        Relay {
            labels,
            workspace,
            speaking: None,
            context: ContextGauge::default(),
        }
    }

    /// The prompt's `usage_update`s, once its agents answered; `spent`: what each agent
    /// used in the session.
    pub fn usage_updates(
        &self,
        spent: &std::collections::BTreeMap<String, JobUsage>,
    ) -> Vec<SessionUpdate> {
        self.context.updates(spent)
    }

    fn agent(&self, index: usize) -> &str {
        self.labels.get(index).map_or("agent", |label| &label.agent)
    }

    /// The updates one of agent `index`'s events makes.
    pub fn event(
        &mut self,
        index: usize,
        event: &JobEvent,
        announced: &mut Announced,
    ) -> Vec<SessionUpdate> {
        let agent = self.agent(index).to_owned();
        match event {
            JobEvent::Text(text) if !text.is_empty() => vec![self.text(index, &agent, text)],
            JobEvent::TurnEnd {
                usage: Some(usage),
                context_window,
                ..
            } => {
                self.context.turn_ended(&agent, usage, *context_window);
                Vec::new()
            }
            JobEvent::Sub(sub) => {
                // A sub-agent's calls are shown as its caller's are; its text reaches the
                // caller as the call's result.
                let caller = format!("{agent} → {}", sub.agent);
                match &sub.event {
                    JobEvent::Text(_) => Vec::new(),
                    inner => self.call_event(&caller, inner, announced),
                }
            }
            other => self.call_event(&agent, other, announced),
        }
    }

    fn text(&mut self, index: usize, agent: &str, text: &str) -> SessionUpdate {
        let mut shown = String::new();
        if self.labels.len() > 1 && self.speaking != Some(index) {
            if self.speaking.is_some() {
                shown.push_str("\n\n");
            }
            shown.push_str(&format!("**@{agent}:** "));
        }
        self.speaking = Some(index);
        shown.push_str(text);
        let mut meta = serde_json::Map::new();
        meta.insert("codecrew".to_owned(), json!({ "agent": agent }));
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(shown)).meta(meta))
    }

    fn call_event(
        &self,
        agent: &str,
        event: &JobEvent,
        announced: &mut Announced,
    ) -> Vec<SessionUpdate> {
        match event {
            JobEvent::ToolCall { id, call } => {
                announced.open(id, &call.tool, &call.input);
                vec![SessionUpdate::ToolCall(self.tool_call(
                    id.clone(),
                    agent,
                    &call.tool,
                    &call.input,
                ))]
            }
            JobEvent::ToolResult(result) => {
                let id = result.tool_call_id.clone();
                if !announced.close(&id) {
                    return Vec::new();
                }
                let status = if result.status == Status::Ok {
                    ToolCallStatus::Completed
                } else {
                    ToolCallStatus::Failed
                };
                let shown = match &result.error {
                    Some(error) => match &error.suggestion {
                        Some(suggestion) => format!("{}\n{suggestion}", error.message),
                        None => error.message.clone(),
                    },
                    None => pretty(&result.output),
                };
                let fields = ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![ToolCallContent::from(capped(&shown))])
                    .raw_output(result.output.clone());
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id, fields,
                ))]
            }
            JobEvent::Rejected(rejection) => {
                // Shown as a call that failed at once: an id of its own, never open.
                let id = codecrew_core::session::new_call_id();
                vec![SessionUpdate::ToolCall(
                    ToolCall::new(id, format!("@{agent}: a call codecrew could not run"))
                        .kind(ToolKind::Other)
                        .status(ToolCallStatus::Failed)
                        .content(vec![ToolCallContent::from(capped(&rejection.reason))]),
                )]
            }
            JobEvent::NativeTool { id, name, input } => {
                announced.open(id, name, input);
                let mut shown = ToolCall::new(
                    id.clone(),
                    format!("@{agent}: {}", native_title(name, input)),
                )
                .kind(native_kind(name))
                .status(ToolCallStatus::InProgress)
                .raw_input(input.clone());
                if let Some(path) = native_path(input) {
                    shown = shown.locations(vec![ToolCallLocation::new(self.absolute(path))]);
                }
                vec![SessionUpdate::ToolCall(shown)]
            }
            JobEvent::NativeToolResult {
                id,
                output,
                is_error,
            } => {
                if !announced.close(id) {
                    return Vec::new();
                }
                let status = if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let fields = ToolCallUpdateFields::new()
                    .status(status)
                    .content(vec![ToolCallContent::from(capped(output))]);
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id.clone(),
                    fields,
                ))]
            }
            JobEvent::Notice(notice) | JobEvent::Retry(notice) => {
                vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    ContentBlock::from(format!("@{agent}: {notice}\n")),
                ))]
            }
            JobEvent::Text(_)
            | JobEvent::Turn(_)
            | JobEvent::TurnEnd { .. }
            | JobEvent::MessageEnd
            | JobEvent::Sub(_) => Vec::new(),
        }
    }

    /// A codecrew call as the editor shows it.
    fn tool_call(&self, id: String, agent: &str, tool: &str, input: &Value) -> ToolCall {
        let path = input.get("path").and_then(Value::as_str);
        let subject = match (tool, path) {
            ("run_command", _) => input
                .get("command")
                .and_then(Value::as_str)
                .map(|command| format!(" `{}`", first_line(command))),
            ("query_agent" | "execute_agent", _) => input
                .get("agent")
                .and_then(Value::as_str)
                .map(|asked| format!(" @{asked}")),
            (_, Some(path)) => Some(format!(" {path}")),
            _ => input
                .get("pattern")
                .and_then(Value::as_str)
                .map(|pattern| format!(" {pattern}")),
        };
        let title = format!("@{agent}: {tool}{}", subject.unwrap_or_default());
        let mut call = ToolCall::new(id, title)
            .kind(kind_of(tool))
            .status(ToolCallStatus::InProgress)
            .raw_input(input.clone());
        if let Some(path) = path {
            let absolute = self.absolute(path);
            call = call.locations(vec![ToolCallLocation::new(absolute.clone())]);
            if let Some(diff) = diff_of(tool, input, &absolute) {
                call = call.content(vec![ToolCallContent::from(diff)]);
            }
        }
        call
    }

    /// `path` (as the model wrote it, relative to the workspace) made absolute, as the
    /// protocol wants; what the tool will make of it is the tool's to say.
    fn absolute(&self, path: &str) -> std::path::PathBuf {
        let path = Path::new(path);
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.workspace.join(path)
        }
    }

    /// What the editor is told of a job that ended without an answer.
    pub fn failure(&self, report: &JobReport) -> Option<SessionUpdate> {
        if report.success || report.failure == Some(Failure::Interrupted) {
            return None;
        }
        let error = report
            .error
            .as_deref()
            .unwrap_or("it ended without an answer");
        Some(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(format!("\n\n@{} could not answer: {error}\n", report.agent)),
        )))
    }
}

/// The kind of a codecrew tool, for the editor's icon.
pub fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read_file" => ToolKind::Read,
        "list_directory" | "glob" | "grep" => ToolKind::Search,
        "write_file" | "edit_file" => ToolKind::Edit,
        "run_command" => ToolKind::Execute,
        "query_agent" | "execute_agent" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The kind of a CLI's own tool, by the names the CLIs give them.
fn native_kind(name: &str) -> ToolKind {
    let lower = name.to_ascii_lowercase();
    if lower.contains("read") || lower == "view" || lower == "cat" {
        ToolKind::Read
    } else if ["write", "edit", "patch", "replace", "create"]
        .iter()
        .any(|word| lower.contains(word))
    {
        ToolKind::Edit
    } else if ["bash", "shell", "exec", "command", "terminal"]
        .iter()
        .any(|word| lower.contains(word))
    {
        ToolKind::Execute
    } else if ["grep", "glob", "search", "find", "list", "ls"]
        .iter()
        .any(|word| lower.contains(word))
    {
        ToolKind::Search
    } else if lower.contains("fetch") || lower.contains("web") {
        ToolKind::Fetch
    } else {
        ToolKind::Other
    }
}

/// The file a CLI's own call names, under the keys the CLIs use.
fn native_path(input: &Value) -> Option<&str> {
    [
        "file_path",
        "path",
        "absolute_path",
        "filePath",
        "notebook_path",
    ]
    .iter()
    .find_map(|key| input.get(*key).and_then(Value::as_str))
}

fn native_title(name: &str, input: &Value) -> String {
    let subject = input
        .get("command")
        .and_then(Value::as_str)
        .map(|command| format!(" `{}`", first_line(command)))
        .or_else(|| native_path(input).map(|path| format!(" {path}")));
    format!("{name}{}", subject.unwrap_or_default())
}

/// The diff a write shows: the whole new file for `write_file` (against what is there),
/// the replaced text for `edit_file`.
fn diff_of(tool: &str, input: &Value, path: &Path) -> Option<Diff> {
    match tool {
        "write_file" => {
            let content = input.get("content").and_then(Value::as_str)?;
            // What is there now, when it is a readable text file of a sensible size.
            let old = std::fs::metadata(path)
                .ok()
                .filter(|meta| meta.is_file() && meta.len() <= 1 << 20)
                .and_then(|_| std::fs::read_to_string(path).ok());
            Some(Diff::new(path.to_owned(), content.to_owned()).old_text(old))
        }
        "edit_file" => {
            let old = input.get("old_string").and_then(Value::as_str)?;
            let new = input.get("new_string").and_then(Value::as_str)?;
            Some(Diff::new(path.to_owned(), new.to_owned()).old_text(old.to_owned()))
        }
        _ => None,
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn pretty(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// `text` cut to [`OUTPUT_SHOWN`] bytes at a character's boundary, said where it was cut.
fn capped(text: &str) -> String {
    if text.len() <= OUTPUT_SHOWN {
        return text.to_owned();
    }
    let mut end = OUTPUT_SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… (cut: {} bytes in all)",
        text.get(..end).unwrap_or_default(),
        text.len()
    )
}
