//! `list_directory`: the entries of a directory, a few levels deep, as the model should
//! see them: sorted, directories marked with a trailing `/`, ignored files left out.

use std::borrow::Cow;
use std::path::Path;

use serde_json::{Value, json};

use super::support::{
    Cancel, beneath_error, blocking, directory, optional_str, optional_u64, walker,
};
use crate::beneath::Beneath;
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct ListDirectory;

/// The most entries one listing returns.
pub const MAX_ENTRIES: usize = 1000;
/// The deepest listing.
pub const MAX_DEPTH: u64 = 5;

impl Tool for ListDirectory {
    fn name(&self) -> &str {
        "list_directory"
    }

    fn description(&self) -> &str {
        "Lists a directory's entries, sorted, directories marked with a trailing `/`. \
         Entries are paths relative to the workspace root, ready for the other tools. \
         `depth` (1-5, default 1) also lists subdirectories. Files ignored by .gitignore \
         and the .git directory are left out; other hidden files are shown. At most 1000 \
         entries; `truncated` says when there were more."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("lists a directory's entries (`depth` levels deep)")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The directory, relative to the workspace root (default \".\", the root)"
                },
                "depth": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_DEPTH,
                    "description": "How many levels to list (default 1: only the directory's own entries)"
                }
            },
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
            let requested = optional_str(&input, "path").unwrap_or(".");
            let depth = optional_u64(&input, "depth").unwrap_or(1);
            if !(1..=MAX_DEPTH).contains(&depth) {
                return Err(ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("depth must be between 1 and {MAX_DEPTH}, not {depth}"),
                ));
            }
            let dir = resolve(&ctx.workspace, requested, Access::Read)?;
            let root = ctx.workspace.clone();
            blocking(move |cancel| list(&root, &dir, depth, &cancel)).await
        })
    }
}

fn list(root: &Path, dir: &Path, depth: u64, cancel: &Cancel) -> Result<Value, ToolError> {
    let shown = display(root, dir);
    directory(dir, &shown)?;
    let beneath = Beneath::open(root).map_err(|error| beneath_error(&shown, error))?;
    let walk = walker(root, dir)
        .max_depth(usize::try_from(depth).ok())
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut entries = Vec::new();
    let mut truncated = false;
    // Unreadable entries are skipped: one bad directory should not hide the rest.
    for entry in walk.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if cancel.is_cancelled() {
            break;
        }
        // The walk reads directories by name; a name it read through a directory swapped
        // for a link to elsewhere is not beneath the workspace now, and is dropped.
        if !beneath.holds(entry.path()) {
            continue;
        }
        if entries.len() == MAX_ENTRIES {
            truncated = true;
            break;
        }
        let mut name = display(root, entry.path());
        if entry.file_type().is_some_and(|kind| kind.is_dir()) {
            name.push('/');
        }
        entries.push(name);
    }
    Ok(json!({ "path": shown, "entries": entries, "truncated": truncated }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::builtin::support::test_support::Workspace;

    fn tree() -> Workspace {
        let ws = Workspace::new();
        ws.write("b.txt", "");
        ws.write("a/one.rs", "");
        ws.write("a/deeper/two.rs", "");
        ws.write(".hidden", "");
        ws.write(".git/config", "");
        ws.write(".gitignore", "target/\n*.log\n");
        ws.write("target/debug/x", "");
        ws.write("run.log", "");
        ws
    }

    #[tokio::test]
    async fn lists_one_level_sorted_and_gitignore_aware() {
        let ws = tree();
        let output = ws.call(&ListDirectory, json!({})).await.unwrap();
        assert_eq!(
            output,
            json!({
                "path": ".",
                "entries": [".gitignore", ".hidden", "a/", "b.txt"],
                "truncated": false,
            })
        );
    }

    #[tokio::test]
    async fn lists_deeper_from_a_subdirectory() {
        let ws = tree();
        let output = ws
            .call(&ListDirectory, json!({"path": "a", "depth": 3}))
            .await
            .unwrap();
        assert_eq!(output["path"], "a");
        assert_eq!(
            output["entries"],
            json!(["a/deeper/", "a/deeper/two.rs", "a/one.rs"])
        );
    }

    #[tokio::test]
    async fn caps_the_entries() {
        let ws = Workspace::new();
        for n in 0..MAX_ENTRIES + 5 {
            ws.write(&format!("f{n:05}"), "");
        }
        let output = ws.call(&ListDirectory, json!({})).await.unwrap();
        assert_eq!(output["entries"].as_array().unwrap().len(), MAX_ENTRIES);
        assert_eq!(output["truncated"], true);
    }

    #[tokio::test]
    async fn error_paths() {
        let ws = tree();
        let code = async |input: Value| ws.error(&ListDirectory, input).await.code;
        assert_eq!(code(json!({"path": "missing"})).await, ErrorCode::NotFound);
        assert_eq!(
            code(json!({"path": "b.txt"})).await,
            ErrorCode::NotADirectory
        );
        assert_eq!(
            code(json!({"path": ".."})).await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(json!({"path": "/"})).await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(code(json!({"path": "a\0"})).await, ErrorCode::InvalidPath);
        assert_eq!(code(json!({"depth": 9})).await, ErrorCode::InvalidInput);
    }
}
