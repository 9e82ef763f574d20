//! `edit_file`: replaces an exact string in a file, atomically.
//!
//! The string must be unique unless `replace_all` is set, so an edit never lands in the
//! wrong place. When it is not found, the most common cause (the model's copy differs in
//! indentation, line endings or case) is detected and named, with the line to look at.

use std::borrow::Cow;
use std::path::Path;

use serde_json::{Value, json};

use super::support::{
    atomic_write, blocking, io_error, open_read, optional_bool, regular_file, required_str,
};
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct EditFile;

/// Files larger than this are not edited in memory.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;
/// How many line numbers an ambiguity error lists.
const MAX_LISTED_LINES: usize = 20;

impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }

    fn description(&self) -> &str {
        "Replaces `old_string` with `new_string` in a file. `old_string` must match the \
         file exactly (indentation and line breaks included) and occur exactly once; add \
         surrounding lines to make it unique, or set `replace_all` to replace every \
         occurrence. Read the file first and copy the text from it, without the line-number \
         prefixes of codecrew:read_file."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("replaces `old_string` (found once in the file) with `new_string`")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file, relative to the workspace root"
                },
                "old_string": {
                    "type": "string",
                    "description": "The exact text to replace (not empty)"
                },
                "new_string": {
                    "type": "string",
                    "description": "The text to put in its place (may be empty, to delete)"
                },
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence instead of exactly one (default false)"
                }
            },
            "required": ["path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn readonly(&self) -> bool {
        false
    }

    fn is_codecrews(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let requested = required_str(&input, "path")?;
            let old = required_str(&input, "old_string")?.to_owned();
            let new = required_str(&input, "new_string")?.to_owned();
            let replace_all = optional_bool(&input, "replace_all");
            if old.is_empty() {
                return Err(
                    ToolError::new(ErrorCode::InvalidInput, "old_string is empty")
                        .with_suggestion("to create or overwrite a file use codecrew:write_file"),
                );
            }
            if old == new {
                return Err(ToolError::new(
                    ErrorCode::NoChange,
                    "old_string and new_string are the same; nothing would change",
                ));
            }
            let path = resolve(&ctx.workspace, requested, Access::Write)?;
            let shown = display(&ctx.workspace, &path);
            let root = ctx.workspace.clone();
            blocking(move |_| edit(&root, &path, &shown, &old, &new, replace_all)).await
        })
    }
}

fn edit(
    root: &Path,
    path: &Path,
    shown: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Value, ToolError> {
    let meta = regular_file(path, shown)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{shown:?} has {} bytes; edit_file handles files up to {MAX_EDIT_BYTES}",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_read(root, path, shown)?, &mut bytes)
        .map_err(|error| io_error(shown, &error))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::new(ErrorCode::NotText, format!("{shown:?} is not UTF-8 text"))
            .with_suggestion("edit_file only changes text files")
    })?;
    let starts: Vec<usize> = text.match_indices(old).map(|(start, _)| start).collect();
    match starts.len() {
        0 => return Err(no_match(&text, old, shown)),
        1 => {}
        count if !replace_all => {
            let lines = line_numbers(&text, &starts);
            let listed: Vec<String> = lines
                .iter()
                .take(MAX_LISTED_LINES)
                .map(u64::to_string)
                .collect();
            let more = if count > MAX_LISTED_LINES {
                ", ..."
            } else {
                ""
            };
            return Err(ToolError::new(
                ErrorCode::AmbiguousMatch,
                format!(
                    "old_string occurs {count} times in {shown:?} (lines {}{more})",
                    listed.join(", ")
                ),
            )
            .with_suggestion(
                "include more surrounding lines so it occurs once, or set replace_all to true",
            ));
        }
        _ => {}
    }
    let updated = text.replace(old, new);
    atomic_write(root, path, updated.as_bytes(), shown)?;
    Ok(json!({ "path": shown, "replacements": starts.len() }))
}

/// The 1-based line of each byte offset (offsets ascending).
fn line_numbers(text: &str, starts: &[usize]) -> Vec<u64> {
    let mut line = 1u64;
    let mut counted = 0;
    starts
        .iter()
        .map(|&start| {
            line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..start]).count() as u64;
            counted = start;
            line
        })
        .collect()
}

fn no_match(text: &str, old: &str, shown: &str) -> ToolError {
    let error = ToolError::new(
        ErrorCode::NoMatch,
        format!("old_string does not occur in {shown:?}"),
    );
    match loose_match(text, old) {
        Some(line) => error.with_suggestion(format!(
            "a similar text with different whitespace or letter case is at line {line}; \
             read the file and copy old_string exactly"
        )),
        None => error.with_suggestion("read the file and copy old_string exactly from it"),
    }
}

/// Whitespace runs collapsed to one space, trimmed, lower case.
fn normalise(line: &str) -> String {
    line.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The first line where `old` matches when whitespace and case are ignored. `old` may
/// start and end mid-line, so its first line must end a file line and its last line must
/// start one.
fn loose_match(text: &str, old: &str) -> Option<usize> {
    let wanted: Vec<String> = old.lines().map(normalise).collect();
    let lines: Vec<String> = text.lines().map(normalise).collect();
    let (first, rest) = wanted.split_first()?;
    if rest.is_empty() {
        return lines
            .iter()
            .position(|line| line.contains(first.as_str()))
            .map(|index| index + 1);
    }
    (0..lines.len().saturating_sub(wanted.len() - 1))
        .find(|&start| {
            let window = &lines[start..start + wanted.len()];
            let last = wanted.len() - 1;
            window[0].ends_with(first.as_str())
                && window[last].starts_with(wanted[last].as_str())
                && window[1..last] == wanted[1..last]
        })
        .map(|index| index + 1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::builtin::support::test_support::Workspace;

    const SOURCE: &str = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n    let x = 1;\n}\n";

    #[tokio::test]
    async fn replaces_a_unique_string() {
        let ws = Workspace::new();
        ws.write("main.rs", SOURCE);
        let output = ws
            .call(
                &EditFile,
                json!({"path": "main.rs", "old_string": "fn main() {", "new_string": "fn run() {"}),
            )
            .await
            .unwrap();
        assert_eq!(output, json!({"path": "main.rs", "replacements": 1}));
        assert!(ws.read("main.rs").starts_with("fn run() {\n"));
    }

    #[tokio::test]
    async fn ambiguous_matches_name_their_lines() {
        let ws = Workspace::new();
        ws.write("main.rs", SOURCE);
        let error = ws
            .error(
                &EditFile,
                json!({"path": "main.rs", "old_string": "let x = 1;", "new_string": "let y = 2;"}),
            )
            .await;
        assert_eq!(error.code, ErrorCode::AmbiguousMatch);
        assert!(error.message.contains("2 times"), "{error}");
        assert!(error.message.contains("lines 2, 4"), "{error}");
        assert!(error.suggestion.unwrap().contains("replace_all"));
        assert_eq!(ws.read("main.rs"), SOURCE);
        let all = ws
            .call(
                &EditFile,
                json!({"path": "main.rs", "old_string": "let x = 1;",
                       "new_string": "let y = 2;", "replace_all": true}),
            )
            .await
            .unwrap();
        assert_eq!(all["replacements"], 2);
        assert_eq!(ws.read("main.rs").matches("let y = 2;").count(), 2);
    }

    #[tokio::test]
    async fn no_match_hints_at_whitespace_and_case() {
        let ws = Workspace::new();
        ws.write("main.rs", SOURCE);
        let error = ws
            .error(
                &EditFile,
                json!({"path": "main.rs", "old_string": "LET X = 1;\nprintln!(\"{x}\");",
                       "new_string": "x"}),
            )
            .await;
        assert_eq!(error.code, ErrorCode::NoMatch);
        assert!(error.suggestion.unwrap().contains("line 2"));
        let none = ws
            .error(
                &EditFile,
                json!({"path": "main.rs", "old_string": "absent", "new_string": "x"}),
            )
            .await;
        assert_eq!(none.code, ErrorCode::NoMatch);
        assert!(!none.suggestion.unwrap().contains("line"));
    }

    #[tokio::test]
    async fn input_errors() {
        let ws = Workspace::new();
        ws.write("main.rs", SOURCE);
        let code = async |input: Value| ws.error(&EditFile, input).await.code;
        assert_eq!(
            code(json!({"path": "main.rs", "old_string": "x", "new_string": "x"})).await,
            ErrorCode::NoChange
        );
        assert_eq!(
            code(json!({"path": "main.rs", "old_string": "", "new_string": "x"})).await,
            ErrorCode::InvalidInput
        );
    }

    #[tokio::test]
    async fn path_errors() {
        let ws = Workspace::new();
        ws.write("dir/file", "x");
        ws.write("bin", b"\xff\xfe x");
        ws.fifo("pipe");
        let outside = tempfile::TempDir::new().unwrap();
        std::fs::write(outside.path().join("t"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path().join("t"), ws.root().join("link")).unwrap();
        let code = async |path: &str| {
            ws.error(
                &EditFile,
                json!({"path": path, "old_string": "x", "new_string": "y"}),
            )
            .await
            .code
        };
        assert_eq!(code("missing").await, ErrorCode::NotFound);
        assert_eq!(code("dir").await, ErrorCode::IsADirectory);
        assert_eq!(code("pipe").await, ErrorCode::NotAFile);
        assert_eq!(code("bin").await, ErrorCode::NotText);
        assert_eq!(code("link").await, ErrorCode::Symlink);
        assert_eq!(code("../x").await, ErrorCode::PathOutsideWorkspace);
        assert_eq!(code("a\0").await, ErrorCode::InvalidPath);
    }

    #[test]
    fn loose_match_finds_the_line() {
        let text = "a\n  Foo  Bar\nbaz qux\n";
        assert_eq!(loose_match(text, "foo bar"), Some(2));
        assert_eq!(loose_match(text, "bar\nBAZ"), Some(2));
        assert_eq!(loose_match(text, "nothing"), None);
        assert_eq!(line_numbers("a\nb\nc\nb", &[2, 6]), [2, 4]);
    }
}
