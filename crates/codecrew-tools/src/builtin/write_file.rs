//! `write_file`: creates or replaces a whole file, atomically.

use serde_json::{Value, json};
use std::borrow::Cow;

use super::support::{atomic_write, blocking, required_str};
use crate::path::{Access, display, resolve};
use crate::{Mode, Tool, ToolContext, ToolFuture};

#[derive(Debug)]
pub struct WriteFile;

impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }

    fn description(&self) -> &str {
        "Writes `content` to a file, replacing all of it, and creates missing parent \
         directories. An existing file keeps its permissions. To change part of a file, \
         prefer codecrew:edit_file; read a file before overwriting it."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("writes a whole file, making its folders")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file, relative to the workspace root, e.g. \"src/lib.rs\""
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file"
                }
            },
            "required": ["path", "content"],
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
            let content = required_str(&input, "content")?.to_owned();
            let path = resolve(&ctx.workspace, requested, Access::Write)?;
            let shown = display(&ctx.workspace, &path);
            let root = ctx.workspace.clone();
            blocking(move |_| {
                let created = atomic_write(&root, &path, content.as_bytes(), &shown)?;
                Ok(json!({
                    "path": shown,
                    "bytes_written": content.len(),
                    "created": created,
                }))
            })
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use serde_json::json;

    use super::*;
    use crate::ErrorCode;
    use crate::builtin::support::test_support::Workspace;

    #[tokio::test]
    async fn creates_then_replaces() {
        let ws = Workspace::new();
        let created = ws
            .call(
                &WriteFile,
                json!({"path": "src/new/mod.rs", "content": "héllo\n"}),
            )
            .await
            .unwrap();
        assert_eq!(
            created,
            json!({"path": "src/new/mod.rs", "bytes_written": 7, "created": true})
        );
        assert_eq!(ws.read("src/new/mod.rs"), "héllo\n");
        let path = ws.root().join("src/new/mod.rs");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let replaced = ws
            .call(&WriteFile, json!({"path": "src/new/mod.rs", "content": ""}))
            .await
            .unwrap();
        assert_eq!(replaced["created"], false);
        assert_eq!(replaced["bytes_written"], 0);
        assert_eq!(ws.read("src/new/mod.rs"), "");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }

    #[tokio::test]
    async fn error_paths() {
        let ws = Workspace::new();
        ws.write("dir/file", "x");
        ws.fifo("pipe");
        let outside = tempfile::TempDir::new().unwrap();
        std::fs::write(outside.path().join("target"), "keep").unwrap();
        symlink(outside.path().join("target"), ws.root().join("link")).unwrap();
        symlink(outside.path(), ws.root().join("outdir")).unwrap();
        let code = async |path: &str| {
            ws.error(&WriteFile, json!({"path": path, "content": "new"}))
                .await
                .code
        };
        assert_eq!(code("dir").await, ErrorCode::IsADirectory);
        assert_eq!(code("dir/file/below").await, ErrorCode::NotADirectory);
        assert_eq!(code("pipe").await, ErrorCode::NotAFile);
        assert_eq!(code("").await, ErrorCode::InvalidPath);
        assert_eq!(code("x\0y").await, ErrorCode::InvalidPath);
        assert_eq!(code("../escape.txt").await, ErrorCode::PathOutsideWorkspace);
        assert_eq!(
            code("/tmp/escape.txt").await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(code("link").await, ErrorCode::Symlink);
        assert_eq!(code("outdir/target").await, ErrorCode::PathOutsideWorkspace);
        assert_eq!(
            std::fs::read_to_string(outside.path().join("target")).unwrap(),
            "keep"
        );
    }

    #[test]
    fn is_not_readonly() {
        assert!(!WriteFile.readonly());
    }
}
