//! An ACP agent's questions about its own tools (`session/request_permission`), as the
//! codecrew calls they amount to ([`crate::drive::native`]): a write of each path the tool
//! call names (its `locations`, its diffs, its `rawInput`), the command line
//! (`rawInput`'s `command`, else the title, which is Gemini's command verbatim), a read of
//! each path, anything else a call codecrew has no rule for. The answer is "allow once"
//! or "reject", never "always".

use std::path::Path;
use std::sync::{Arc, Mutex};

use codecrew_tools::executor::CallRequest;
use serde_json::{Value, json};

use crate::drive::json_lines::line;
use crate::drive::native::{self, Native, Outbox, Pending, Verdict};

/// The agent `program`'s question with JSON-RPC id `id`: answered at once when the tool
/// is harmless, else left in `outbox` for the gate. A refusal is also noted in `refused`,
/// when given, with why.
pub(super) fn question(
    program: &str,
    id: &Value,
    params: &Value,
    outbox: &mut Outbox,
    refused: Option<Arc<Mutex<Vec<String>>>>,
) {
    let call = &params["toolCall"];
    let options = params["options"].clone();
    let id = id.clone();
    let name = format!(
        "{program}'s {}",
        call["_meta"]["toolName"]
            .as_str()
            .or(call["title"].as_str())
            .unwrap_or("tool")
    );
    let what = name.clone();
    let answer = move |verdict: &Verdict| {
        if let (Verdict::Deny(why), Some(refused)) = (verdict, refused) {
            refused
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(format!("{what} ({why})"));
        }
        let outcome = match option(&options, verdict) {
            Some(option) => json!({"outcome": "selected", "optionId": option}),
            None => json!({"outcome": "cancelled"}),
        };
        line(&json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}}))
    };
    match native(program, call) {
        Native::Harmless => outbox.bytes.extend(answer(&Verdict::Allow)),
        Native::Judged(calls) => outbox.pending.push(Pending {
            native: name,
            calls,
            answer: Box::new(answer),
        }),
    }
}

/// Whether `field` is a comma-joined list of paths, relative to one folder, that
/// `located` (the call's absolute paths) already names: opencode's `apply_patch` question
/// says its files so, relative to its project, which codecrew does not know.
fn lists_located(field: &str, located: &[&str]) -> bool {
    let parts: Vec<&str> = field.split(", ").map(str::trim).collect();
    let (Some(first), true) = (parts.first(), parts.len() > 1) else {
        return false;
    };
    // Each folder the first part may be relative to: every part must be found there.
    located
        .iter()
        .filter_map(|path| path.strip_suffix(first))
        .filter(|root| root.ends_with('/'))
        .any(|root| {
            parts.iter().all(|part| {
                !part.is_empty()
                    && located
                        .iter()
                        .any(|path| path.strip_prefix(root) == Some(part))
            })
        })
}

/// What one of the agent's own tool calls amounts to: `program` names the agent.
fn native(program: &str, call: &Value) -> Native {
    let id = call["toolCallId"].as_str().unwrap_or("");
    let raw = &call["rawInput"];
    let tool = call["_meta"]["toolName"]
        .as_str()
        .or(call["kind"].as_str())
        .unwrap_or("tool");
    let located: Vec<&str> = call["locations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|location| location["path"].as_str())
        .chain(
            call["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|content| content["type"] == "diff")
                .filter_map(|content| content["path"].as_str()),
        )
        .chain(
            // opencode's patch: each file it touches, and where a file it moves goes
            // (`*** Move to:`), which its question's other paths leave out.
            raw["files"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|file| [&file["filePath"], &file["movePath"]])
                .filter_map(Value::as_str),
        )
        .collect();
    let mut paths: Vec<&str> = [
        // Gemini, Copilot, Qwen Code; opencode's tool input says `filePath`.
        "file_path",
        "fileName",
        "filePath",
        "path",
        "absolute_path",
    ]
    .iter()
    .filter_map(|field| raw[*field].as_str())
    // opencode's question says `filepath`: for a patch, its files relative to its
    // project and joined by commas.
    .chain(
        raw["filepath"]
            .as_str()
            .filter(|list| !lists_located(list, &located)),
    )
    .chain(located.iter().copied())
    .collect();
    paths.sort_unstable();
    paths.dedup();
    let each = |make: fn(&str, &str, &str, &str) -> CallRequest| {
        Native::Judged(
            paths
                .iter()
                .map(|path| make(program, tool, id, path))
                .collect(),
        )
    };
    match call["kind"].as_str() {
        Some("edit" | "delete" | "move") => each(native::write),
        Some("read") if !paths.is_empty() => each(native::read),
        Some("search") if !paths.is_empty() => each(native::list),
        Some("execute") => {
            let command = raw["command"].as_str().or(call["title"].as_str());
            let cwd = raw["directory"]
                .as_str()
                .or(raw["dir_path"].as_str())
                .map(str::to_owned)
                .or_else(|| shell_dir(call));
            Native::Judged(
                command
                    .map(|command| {
                        native::shell(program, tool, id, command, cwd.as_deref().map(Path::new))
                    })
                    .into_iter()
                    .collect(),
            )
        }
        Some("think" | "switch_mode") => Native::Harmless,
        _ => Native::Judged(vec![native::other(program, tool, id, call)]),
    }
}

/// The folder Gemini says its shell command runs in, in the text of the question:
/// `[current working directory <dir>]` or `[in <dir>]`.
fn shell_dir(call: &Value) -> Option<String> {
    let texts = call["content"].as_array()?;
    texts.iter().find_map(|content| {
        let text = content["content"]["text"].as_str()?;
        let (_, rest) = text
            .split_once("[current working directory ")
            .or_else(|| text.split_once("[in "))?;
        rest.split_once(']').map(|(dir, _)| dir.to_owned())
    })
}

/// The option that answers `verdict`: allow once, or reject. None when the agent offered
/// none such (the request is then withdrawn, which grants nothing).
fn option(options: &Value, verdict: &Verdict) -> Option<String> {
    let kinds: &[&str] = match verdict {
        Verdict::Allow => &["allow_once"],
        Verdict::Deny(_) => &["reject_once", "reject_always"],
    };
    options
        .as_array()?
        .iter()
        .filter(|option| {
            option["kind"]
                .as_str()
                .is_some_and(|kind| kinds.contains(&kind))
        })
        .find_map(|option| option["optionId"].as_str())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::drive::json_lines::parse_lines as lines;

    const OPTIONS: &str = r#"[{"optionId": "proceed_always", "kind": "allow_always"},
        {"optionId": "proceed_once", "kind": "allow_once"},
        {"optionId": "cancel", "kind": "reject_once"}]"#;

    fn ask(tool_call: Value) -> Pending {
        let mut outbox = Outbox::default();
        let options: Value = serde_json::from_str(OPTIONS).unwrap();
        question(
            "gemini",
            &json!(0),
            &json!({"sessionId": "S1", "toolCall": tool_call, "options": options}),
            &mut outbox,
            None,
        );
        assert!(outbox.bytes.is_empty());
        outbox.pending.pop().unwrap()
    }

    #[test]
    fn a_comma_list_is_left_out_only_when_the_locations_name_every_part() {
        let located = ["/w/sub/b.txt", "/w/a.txt"];
        assert!(lists_located("sub/b.txt, a.txt", &located));
        // A part the locations do not name: the field is judged as it is.
        assert!(!lists_located("sub/b.txt, ../../etc/passwd", &located));
        assert!(
            !lists_located("sub/b.txt, b.txt", &located),
            "b.txt is not /w/b.txt"
        );
        assert!(!lists_located("a.txt", &located), "not a list");
    }
    /// A model that has read hostile text writes a patch that "updates" an ordinary file
    /// and moves it over a git hook: the hook is judged, not only the file.
    #[test]
    fn a_patch_that_moves_a_file_is_judged_where_it_lands() {
        let question = ask(json!({
            "toolCallId": "p1", "title": "1 file", "kind": "edit",
            "locations": [{"path": "/ws/a.txt"}],
            "rawInput": {"filepath": "a.txt", "files": [{
                "filePath": "/ws/a.txt", "relativePath": ".git/hooks/pre-commit",
                "type": "move", "movePath": "/ws/.git/hooks/pre-commit"}]},
        }));
        let judged: Vec<&Value> = question.calls.iter().map(|c| &c.input["path"]).collect();
        assert!(
            judged.contains(&&json!("/ws/.git/hooks/pre-commit")),
            "{judged:?}"
        );
        assert!(judged.contains(&&json!("/ws/a.txt")), "{judged:?}");
        assert!(question.calls.iter().all(|call| call.tool == "write_file"));
    }

    #[test]
    fn permission_requests_are_questions_answered_once_never_always() {
        // Gemini's shell: the command is the title, its folder in the text.
        let question = ask(
            json!({"toolCallId": "t1", "title": "touch pwned", "kind": "execute", "locations": [],
                   "content": [{"type": "content", "content": {"type": "text",
                     "text": "[current working directory /ws/sub] (make a file)"}}]}),
        );
        assert_eq!(question.calls[0].tool, "run_command");
        assert_eq!(question.calls[0].input["command"], "touch pwned");
        assert_eq!(question.calls[0].input["cwd"], "/ws/sub");
        assert_eq!(
            lines(&question.answer_now(&Verdict::Deny("asks".into()))),
            [json!({"jsonrpc": "2.0", "id": 0, "result": {
                "outcome": {"outcome": "selected", "optionId": "cancel"}}})]
        );
        // Qwen's: rawInput carries the command.
        let question = ask(
            json!({"toolCallId": "t2", "title": "touch pwned (make a file)", "kind": "execute",
                   "rawInput": {"command": "touch pwned", "is_background": false}}),
        );
        assert_eq!(question.calls[0].input["command"], "touch pwned");
        // An edit: every path it names, once.
        let question = ask(
            json!({"toolCallId": "t3", "title": "Writing to .env", "kind": "edit",
                   "locations": [{"path": "/ws/.env"}],
                   "content": [{"type": "diff", "path": "/ws/.env", "oldText": "", "newText": "x"}]}),
        );
        assert_eq!(question.calls.len(), 1);
        assert_eq!(question.calls[0].tool, "write_file");
        assert_eq!(
            lines(&question.answer_now(&Verdict::Allow))[0]["result"]["outcome"]["optionId"],
            "proceed_once"
        );
        // A fetch: a call codecrew has no rule for.
        let question = ask(json!({"toolCallId": "t4", "title": "GET x", "kind": "fetch"}));
        assert_eq!(question.calls[0].tool, "gemini:fetch");
    }

    #[test]
    fn without_a_way_to_refuse_the_request_is_withdrawn() {
        let mut outbox = Outbox::default();
        question(
            "gemini",
            &json!(1),
            &json!({"toolCall": {"kind": "edit", "locations": [{"path": "/ws/a"}]},
                    "options": [{"optionId": "yes", "kind": "allow_always"}]}),
            &mut outbox,
            None,
        );
        // Even an allowed call: "always" would let the agent's later calls skip codecrew.
        let question = outbox.pending.pop().unwrap();
        let answer = lines(&question.answer_now(&Verdict::Allow));
        assert_eq!(answer[0]["result"]["outcome"]["outcome"], "cancelled");
    }
}
