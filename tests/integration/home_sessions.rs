//! One set of home rules per editor session (issue 48): `codecrew acp --allow-home` serves
//! sessions in several folders from one process, and what of the home a session's doors
//! withhold is decided by that session's folder. A session in a folder that holds the
//! home, then one in the home itself (and the other way round): each is refused the
//! home's hidden files by the path it names them with. A project's own hidden files are
//! read before and after a session in the home opens; the session in the home is still
//! refused.
//!
//! The editor is this test, speaking JSON-RPC on codecrew's stdin and stdout; the agent is
//! a `claude` script that asks codecrew for the file its prompt names and says what the
//! tool result held.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::World;

/// The token in a hidden folder of the home that no sensitive class names.
const TOKEN: &str = "gho_codecrewSessionToken48";
/// What a project's own hidden file holds.
const NOTE: &str = "PROJECT-NOTE-4848";

/// A kept `claude` (stream-json both ways). A message naming `READ-FILE:<path>` is
/// answered with one `codecrew:read_file` call of that path; the next one, codecrew's
/// tool result, with what it held: the token, the project's note, or neither.
const READING_CLAUDE: &str = r##"#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"type":"user"'*) ;;
    *) continue ;;
  esac
  case "$line" in
    *READ-FILE:*)
      path=$(printf '%s\n' "$line" | sed 's/.*READ-FILE:\([A-Za-z0-9._\/-]*\).*/\1/')
      printf '{"type":"system","subtype":"init","session_id":"4848aaaa-5dd0-4df1-a3a5-64e422fced48","model":"fake"}\n'
      printf '{"type":"assistant","message":{"content":[{"type":"text","text":"```json\\n{\\"type\\":\\"tool_use\\",\\"name\\":\\"codecrew:read_file\\",\\"input\\":{\\"path\\":\\"%s\\"}}\\n```"}]},"session_id":"4848aaaa-5dd0-4df1-a3a5-64e422fced48"}\n' "$path"
      printf '{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"4848aaaa-5dd0-4df1-a3a5-64e422fced48"}\n'
      ;;
    *)
      case "$line" in
        *gho_codecrewSessionToken48*) seen=TOKEN-SEEN ;;
        *PROJECT-NOTE-4848*) seen=NOTE-SEEN ;;
        *) seen=NOTHING-SEEN ;;
      esac
      printf '{"type":"assistant","message":{"content":[{"type":"text","text":"%s"}]},"session_id":"4848aaaa-5dd0-4df1-a3a5-64e422fced48"}\n' "$seen"
      printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"4848aaaa-5dd0-4df1-a3a5-64e422fced48"}\n' "$seen"
      ;;
  esac
done
"##;

/// A world outside `/tmp` whose top folder holds the home (the token in
/// `.myapp/session.txt`), a project (the workspace, with a hidden `.notes/todo.txt`) and
/// the `claude` script; nothing of the caller's reaches codecrew.
fn machine() -> World {
    let machine = World::outside_tmp()
        .alone()
        .program("claude", READING_CLAUDE)
        .env("NO_COLOR", "1");
    let write = |path: PathBuf, content: String| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write(
        machine.home_dir().join(".myapp/session.txt"),
        format!("session {TOKEN}\n"),
    );
    write(
        machine.workspace().join(".notes/todo.txt"),
        format!("{NOTE}\n"),
    );
    machine
}

/// The folder that holds the home and the project.
fn top(machine: &World) -> PathBuf {
    machine.home.root().to_path_buf()
}

/// `codecrew acp --allow-home`, started in the project as an editor might.
fn editor(machine: &World) -> Editor {
    let mut child = machine
        .command(&["acp", "--allow-home"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (sender, messages) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && sender.send(message).is_err()
            {
                break;
            }
        }
    });
    let mut editor = Editor {
        child,
        stdin: Some(stdin),
        messages,
        next: 0,
    };
    let (reply, _) = editor.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    assert_eq!(reply["result"]["protocolVersion"], 1, "{reply}");
    editor
}

/// The editor's end of the connection.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next: u64,
}

/// What one prompt brought back: the tool result's words as the editor was shown them,
/// whether the call failed, and the agent's answer.
#[derive(Debug)]
struct Turn {
    result: String,
    failed: bool,
    answer: String,
}

impl Editor {
    /// Sends a request; its response, and the notifications that came before it.
    fn call(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.next += 1;
        let id = self.next;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut before = Vec::new();
        loop {
            let message = self
                .messages
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {method}; before it: {before:#?}"));
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    /// A session in `cwd`: its id.
    fn open(&mut self, cwd: &Path) -> String {
        let (reply, _) = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        reply["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session in {}: {reply}", cwd.display()))
            .to_owned()
    }

    /// Asks `session`'s agent to read `path` through codecrew.
    fn read(&mut self, session: &str, path: &str) -> Turn {
        let prompt = [json!({"type": "text", "text": format!("@claude READ-FILE:{path} please")})];
        let (reply, updates) = self.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
        );
        assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
        let updates: Vec<&Value> = updates
            .iter()
            .filter(|message| message["method"] == "session/update")
            .map(|message| &message["params"]["update"])
            .collect();
        let closed = updates
            .iter()
            .find(|update| update["sessionUpdate"] == "tool_call_update")
            .unwrap_or_else(|| panic!("no tool call for {path}: {updates:#?}"));
        let answer = updates
            .iter()
            .filter(|update| update["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|update| update["content"]["text"].as_str())
            .collect();
        Turn {
            result: closed["content"].to_string(),
            failed: closed["status"] == "failed",
            answer,
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        // The editor goes away: codecrew ends every session and exits.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The hidden file was refused by the home's rule, and the model never saw the token.
#[track_caller]
fn refused_as_a_hidden_entry(turn: &Turn, said: &str) {
    assert!(turn.failed, "{said}: {turn:#?}");
    assert!(
        turn.result
            .contains("a hidden entry of your home directory"),
        "{said}: {turn:#?}"
    );
    assert!(!turn.result.contains(TOKEN), "{said}: {turn:#?}");
    assert_eq!(turn.answer, "NOTHING-SEEN", "{said}: {turn:#?}");
}

#[test]
fn a_session_in_the_home_after_one_in_a_folder_that_holds_it_is_refused_its_hidden_files() {
    let machine = machine();
    let mut editor = editor(&machine);
    let above = editor.open(&top(&machine));
    let refused = editor.read(&above, "home/.myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the folder that holds the home");
    let home = editor.open(&machine.home_dir());
    let refused = editor.read(&home, ".myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the home, second");
    // The first session still keeps to its own rules.
    let refused = editor.read(&above, "home/.myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the folder that holds the home, again");
}

#[test]
fn a_session_in_a_folder_that_holds_the_home_after_one_in_the_home_is_refused_its_hidden_files() {
    let machine = machine();
    let mut editor = editor(&machine);
    let home = editor.open(&machine.home_dir());
    let refused = editor.read(&home, ".myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the home");
    let above = editor.open(&top(&machine));
    let refused = editor.read(&above, "home/.myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the folder that holds the home, second");
    let refused = editor.read(&home, ".myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the home, again");
}

#[test]
fn a_session_in_the_home_after_a_project_is_refused_and_the_project_keeps_its_hidden_files() {
    let machine = machine();
    let mut editor = editor(&machine);
    let project = editor.open(&machine.workspace());
    let read = editor.read(&project, ".notes/todo.txt");
    assert!(!read.failed, "{read:#?}");
    assert_eq!(read.answer, "NOTE-SEEN", "{read:#?}");
    let home = editor.open(&machine.home_dir());
    let refused = editor.read(&home, ".myapp/session.txt");
    refused_as_a_hidden_entry(&refused, "the home, after a project");
    // The home's rules are the home session's: the project's own hidden file is still
    // read there, as it would be alone.
    let read = editor.read(&project, ".notes/todo.txt");
    assert!(!read.failed, "{read:#?}");
    assert_eq!(read.answer, "NOTE-SEEN", "{read:#?}");
}
