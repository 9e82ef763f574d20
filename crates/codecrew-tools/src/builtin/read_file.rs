//! `read_file`: a page of a text file with line numbers, or a summary of a binary one.
//!
//! The file is streamed: lines before the page are skipped, lines after it only counted,
//! and no line keeps more than [`MAX_LINE_CHARS`] characters in memory, so a page of a
//! 1 GB log costs what the page costs.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

use serde_json::{Value, json};

use super::support::{
    Cancel, blocking, io_error, open_read, optional_u64, regular_file, required_str,
};
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct ReadFile;

/// Lines returned when the call does not say.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longer lines are cut to this many characters.
pub const MAX_LINE_CHARS: usize = 2000;
/// How much of the file's start decides whether it is binary.
const SNIFF_BYTES: usize = 8 * 1024;
/// A line is read up to this many bytes (enough for MAX_LINE_CHARS of any UTF-8).
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;

impl Tool for ReadFile {
    fn name(&self) -> &str {
        "read_file"
    }

    fn description(&self) -> &str {
        "Reads a text file and returns its lines numbered like `cat -n` (line number, tab, \
         text). Returns up to `limit` lines (default 2000) starting at line `offset` \
         (1-based, default 1); when the file has more, `truncated` is true and `next_offset` \
         says where to continue. Lines longer than 2000 characters are cut. Binary files are \
         not returned, only their size and type."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("reads a text file, its lines numbered (`offset` and `limit` for a part)")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file, relative to the workspace root, e.g. \"src/main.rs\""
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The first line to return, 1-based (default 1)"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to return at most (default 2000)"
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn readonly(&self) -> bool {
        true
    }

    fn is_codecrews(&self) -> bool {
        true
    }

    fn execute<'a>(&'a self, ctx: &'a ToolContext, input: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let requested = required_str(&input, "path")?;
            let path = resolve(&ctx.workspace, requested, Access::Read)?;
            let shown = display(&ctx.workspace, &path);
            let offset = optional_u64(&input, "offset").unwrap_or(1).max(1);
            let limit = optional_u64(&input, "limit")
                .unwrap_or(DEFAULT_LIMIT)
                .max(1);
            let root = ctx.workspace.clone();
            blocking(move |cancel| read(&root, &path, &shown, offset, limit, &cancel)).await
        })
    }
}

fn read(
    root: &Path,
    path: &Path,
    shown: &str,
    offset: u64,
    limit: u64,
    cancel: &Cancel,
) -> Result<Value, ToolError> {
    let meta = regular_file(path, shown)?;
    let io = |error: std::io::Error| io_error(shown, &error);
    let mut file = open_read(root, path, shown)?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    if is_binary(&head) {
        return Ok(json!({
            "path": shown,
            "binary": true,
            "size": meta.len(),
            "mime": mime_guess(path),
        }));
    }

    file.rewind().map_err(io)?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut content = String::new();
    let mut line = Vec::new();
    let mut number: u64 = 0;
    let last = offset.saturating_add(limit - 1);
    loop {
        let wanted = number + 1 >= offset && number < last;
        // Outside the page only the line count matters, so nothing is kept.
        let cap = if wanted { MAX_LINE_BYTES } else { 0 };
        line.clear();
        let Some(cut) = read_line(&mut reader, &mut line, cap).map_err(io)? else {
            break;
        };
        number += 1;
        if wanted {
            push_numbered(&mut content, number, &line, cut);
        }
        if number >= last {
            number += count_lines(&mut reader, cancel).map_err(io)?;
            break;
        }
    }
    let total = number;
    if offset > total && offset > 1 {
        return Err(ToolError::new(
            ErrorCode::InvalidInput,
            format!("offset {offset} is past the end of {shown:?}, which has {total} lines"),
        )
        .with_suggestion("use an offset between 1 and the number of lines"));
    }
    let returned = total.min(last).saturating_sub(offset - 1);
    let truncated = last < total;
    let mut output = json!({
        "path": shown,
        "content": content,
        "start_line": offset,
        "lines_returned": returned,
        "total_lines": total,
        "truncated": truncated,
    });
    if truncated {
        output["next_offset"] = json!(last + 1);
    }
    Ok(output)
}

/// NUL bytes or invalid UTF-8 in the first bytes make a file binary. A multi-byte
/// character cut off by the sniff's end is not an error.
fn is_binary(head: &[u8]) -> bool {
    if memchr::memchr(0, head).is_some() {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(error) => error.error_len().is_some(),
    }
}

/// Reads one line into `line`, keeping at most `cap` bytes of it and skipping the rest.
/// Returns None at the end of the file, otherwise whether the line was cut.
fn read_line<R: Read>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    let mut seen_any = false;
    let mut cut = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(seen_any.then_some(cut));
        }
        seen_any = true;
        let (chunk, used, done) = match memchr::memchr(b'\n', buffer) {
            Some(end) => (&buffer[..end], end + 1, true),
            None => (buffer, buffer.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        if chunk.len() > room {
            cut = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if done {
            return Ok(Some(cut));
        }
    }
}

/// Counts the lines left in the reader (a last line without a newline counts). Stops
/// early when nobody waits for the answer any more.
fn count_lines<R: Read>(reader: &mut BufReader<R>, cancel: &Cancel) -> std::io::Result<u64> {
    let mut lines = 0u64;
    let mut ends_open = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() || cancel.is_cancelled() {
            return Ok(lines + u64::from(ends_open));
        }
        lines += memchr::memchr_iter(b'\n', buffer).count() as u64;
        ends_open = buffer.last() != Some(&b'\n');
        let used = buffer.len();
        reader.consume(used);
    }
}

/// Appends `     7\ttext\n`, the text cut at MAX_LINE_CHARS with a marker.
fn push_numbered(content: &mut String, number: u64, line: &[u8], mut cut: bool) {
    let text = String::from_utf8_lossy(line);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    let kept = match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((end, _)) => {
            cut = true;
            &text[..end]
        }
        None => text,
    };
    content.push_str(&format!("{number:>6}\t{kept}"));
    if cut {
        content.push_str(" … [line truncated]");
    }
    content.push('\n');
}

/// A MIME type from the file's extension; binary files only, so text types are rare.
fn mime_guess(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("bmp") => "image/bmp",
        Some("ico") => "image/x-icon",
        Some("tif" | "tiff") => "image/tiff",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz" | "tgz") => "application/gzip",
        Some("tar") => "application/x-tar",
        Some("bz2") => "application/x-bzip2",
        Some("xz") => "application/x-xz",
        Some("zst") => "application/zstd",
        Some("7z") => "application/x-7z-compressed",
        Some("wasm") => "application/wasm",
        Some("mp3") => "audio/mpeg",
        Some("wav") => "audio/wav",
        Some("mp4") => "video/mp4",
        Some("webm") => "video/webm",
        Some("woff") => "font/woff",
        Some("woff2") => "font/woff2",
        Some("ttf") => "font/ttf",
        Some("sqlite" | "db") => "application/vnd.sqlite3",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::builtin::support::test_support::Workspace;
    use crate::executor::CallRequest;
    use crate::{Mode, Status, ToolCatalog, ToolExecutor, ToolRegistry};

    #[tokio::test]
    async fn returns_numbered_lines() {
        let ws = Workspace::new();
        ws.write("a.txt", "alpha\nbeta\r\ngamma");
        let output = ws.call(&ReadFile, json!({"path": "a.txt"})).await.unwrap();
        assert_eq!(
            output,
            json!({
                "path": "a.txt",
                "content": "     1\talpha\n     2\tbeta\n     3\tgamma\n",
                "start_line": 1,
                "lines_returned": 3,
                "total_lines": 3,
                "truncated": false,
            })
        );
    }

    #[tokio::test]
    async fn empty_file_has_no_lines() {
        let ws = Workspace::new();
        ws.write("empty", "");
        let output = ws.call(&ReadFile, json!({"path": "empty"})).await.unwrap();
        assert_eq!(output["total_lines"], 0);
        assert_eq!(output["content"], "");
        assert_eq!(output["truncated"], false);
    }

    #[tokio::test]
    async fn pages_through_a_large_file() {
        let ws = Workspace::new();
        let text: String = (1..=200_000).map(|n| format!("line {n}\n")).collect();
        ws.write("big.log", text);
        let first = ws
            .call(&ReadFile, json!({"path": "big.log"}))
            .await
            .unwrap();
        assert_eq!(first["lines_returned"], 2000);
        assert_eq!(first["total_lines"], 200_000);
        assert_eq!(first["truncated"], true);
        assert_eq!(first["next_offset"], 2001);
        let last = ws
            .call(
                &ReadFile,
                json!({"path": "big.log", "offset": 199_990, "limit": 50}),
            )
            .await
            .unwrap();
        assert_eq!(last["lines_returned"], 11);
        assert_eq!(last["start_line"], 199_990);
        assert_eq!(last["truncated"], false);
        assert!(last.get("next_offset").is_none());
        let content = last["content"].as_str().unwrap();
        assert!(content.starts_with("199990\tline 199990\n"));
        assert!(content.ends_with("200000\tline 200000\n"));
        let middle = ws
            .call(
                &ReadFile,
                json!({"path": "big.log", "offset": 10, "limit": 2}),
            )
            .await
            .unwrap();
        assert_eq!(middle["content"], "    10\tline 10\n    11\tline 11\n");
        assert_eq!(middle["next_offset"], 12);
    }

    #[tokio::test]
    async fn offset_past_the_end_is_an_error() {
        let ws = Workspace::new();
        ws.write("short", "one\ntwo\n");
        let error = ws
            .error(&ReadFile, json!({"path": "short", "offset": 5}))
            .await;
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains("2 lines"));
    }

    #[tokio::test]
    async fn long_lines_are_cut() {
        let ws = Workspace::new();
        // The second line is 10 MB without a newline: it is skipped, never held.
        let long = "é".repeat(5000);
        let huge = "x".repeat(10 << 20);
        ws.write("long.txt", format!("{long}\n{huge}"));
        let output = ws
            .call(&ReadFile, json!({"path": "long.txt"}))
            .await
            .unwrap();
        let content = output["content"].as_str().unwrap();
        let lines: Vec<&str> = content.lines().collect();
        assert_eq!(lines.len(), 2);
        let first = lines[0].strip_prefix("     1\t").unwrap();
        assert!(first.ends_with(" … [line truncated]"));
        assert_eq!(first.chars().filter(|&c| c == 'é').count(), MAX_LINE_CHARS);
        assert!(lines[1].ends_with(" … [line truncated]"));
        assert_eq!(output["total_lines"], 2);
    }

    #[tokio::test]
    async fn binary_files_are_summarised() {
        let ws = Workspace::new();
        ws.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        ws.write("latin1.txt", b"caf\xe9 au lait\n");
        let png = ws
            .call(&ReadFile, json!({"path": "logo.png"}))
            .await
            .unwrap();
        assert_eq!(
            png,
            json!({"path": "logo.png", "binary": true, "size": 16, "mime": "image/png"})
        );
        let latin = ws
            .call(&ReadFile, json!({"path": "latin1.txt"}))
            .await
            .unwrap();
        assert_eq!(latin["binary"], true);
        assert_eq!(latin["mime"], "application/octet-stream");
    }

    #[tokio::test]
    async fn utf8_cut_by_the_sniff_is_still_text() {
        let ws = Workspace::new();
        // 8191 ASCII bytes, then a two-byte character straddling the 8 KiB sniff.
        ws.write("edge.txt", format!("{}é\n", "a".repeat(SNIFF_BYTES - 1)));
        let output = ws
            .call(&ReadFile, json!({"path": "edge.txt"}))
            .await
            .unwrap();
        assert!(output.get("binary").is_none());
        assert_eq!(output["total_lines"], 1);
    }

    #[tokio::test]
    async fn error_paths() {
        let ws = Workspace::new();
        ws.write("dir/inside.txt", "x");
        ws.fifo("pipe");
        let outside = tempfile::TempDir::new().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), ws.root().join("link")).unwrap();
        let code = async |path: &str| ws.error(&ReadFile, json!({ "path": path })).await.code;
        assert_eq!(code("missing.txt").await, ErrorCode::NotFound);
        assert_eq!(code("dir").await, ErrorCode::IsADirectory);
        assert_eq!(code("dir/inside.txt/x").await, ErrorCode::NotADirectory);
        // A FIFO would block an open() forever; it is refused before.
        assert_eq!(code("pipe").await, ErrorCode::NotAFile);
        assert_eq!(code("a\0b").await, ErrorCode::InvalidPath);
        assert_eq!(
            code("../../etc/passwd").await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(code("/etc/passwd").await, ErrorCode::PathOutsideWorkspace);
        assert_eq!(code("link").await, ErrorCode::PathOutsideWorkspace);
    }

    #[tokio::test]
    async fn wrong_types_are_caught_by_the_executor_schema() {
        let ws = Workspace::new();
        let registry = Arc::new(ToolRegistry::builtin(Arc::new(crate::builtin::NoCommands)));
        let catalog = Arc::new(ToolCatalog::for_mode(&registry, Mode::Query).unwrap());
        let executor = ToolExecutor::new(registry, catalog, ws.ctx.clone());
        let result = executor
            .call(&CallRequest {
                id: String::new(),
                tool: "read_file".into(),
                input: json!({"path": 3, "offset": 0}),
            })
            .await;
        assert_eq!(result.status, Status::Error);
        let error = result.error.unwrap();
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(
            error.message.contains("input.path: 3 is not of type"),
            "{error}"
        );
        assert!(error.message.contains("input.offset"), "{error}");
        let extra = executor
            .call(&CallRequest {
                id: String::new(),
                tool: "read_file".into(),
                input: json!({"path": "a", "encoding": "utf8"}),
            })
            .await;
        assert_eq!(extra.error.unwrap().code, ErrorCode::InvalidInput);
    }
}
