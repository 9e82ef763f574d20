//! `glob`: files whose path matches a glob pattern, newest first.

use std::borrow::Cow;
use std::path::Path;
use std::time::SystemTime;

use globset::GlobBuilder;
use serde_json::{Value, json};

use super::support::{
    Cancel, beneath_error, blocking, directory, optional_str, required_str, walker,
};
use crate::beneath::Beneath;
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct Glob;

/// The most files one call returns.
pub const MAX_FILES: usize = 1000;

impl Tool for Glob {
    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        "Finds files by name pattern, e.g. \"**/*.rs\" or \"src/**/test_*.py\". The pattern \
         is matched against paths relative to `path` (default: the workspace root); `*` \
         does not cross `/`, `**` matches any number of directories, `{a,b}` alternatives \
         and `[abc]` classes work. Returns paths relative to the workspace root, most \
         recently modified first, at most 1000 (`truncated` says when there were more). \
         Files ignored by .gitignore and the .git directory are skipped."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed("finds files whose path matches a glob, e.g. \"**/*.rs\"")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "A glob pattern, e.g. \"**/*.toml\""
                },
                "path": {
                    "type": "string",
                    "description": "The directory to search, relative to the workspace root (default \".\")"
                }
            },
            "required": ["pattern"],
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
            let pattern = required_str(&input, "pattern")?;
            // `./src/*.rs` means `src/*.rs`: matched paths never start with `./`.
            let normalised = pattern.trim_start_matches("./");
            let matcher = GlobBuilder::new(normalised)
                .literal_separator(true)
                .build()
                .map_err(|error| {
                    ToolError::new(
                        ErrorCode::InvalidPattern,
                        format!("invalid glob {pattern:?}: {error}"),
                    )
                    .with_suggestion("e.g. \"**/*.rs\" or \"src/{lib,main}.rs\"")
                })?
                .compile_matcher();
            let requested = optional_str(&input, "path").unwrap_or(".");
            let dir = resolve(&ctx.workspace, requested, Access::Read)?;
            let root = ctx.workspace.clone();
            let pattern = pattern.to_owned();
            blocking(move |cancel| {
                let shown = display(&root, &dir);
                directory(&dir, &shown)?;
                let beneath = Beneath::open(&root).map_err(|error| beneath_error(&shown, error))?;
                let (files, total) = find(&root, &dir, &matcher, &beneath, &cancel);
                Ok(json!({
                    "pattern": pattern,
                    "path": shown,
                    "files": files,
                    "total": total,
                    "truncated": total > files.len(),
                }))
            })
            .await
        })
    }
}

/// The newest MAX_FILES matching files (paths relative to the root) and the number of
/// all matches.
fn find(
    root: &Path,
    dir: &Path,
    matcher: &globset::GlobMatcher,
    beneath: &Beneath,
    cancel: &Cancel,
) -> (Vec<String>, usize) {
    let mut found: Vec<(SystemTime, String)> = Vec::new();
    for entry in walker(root, dir).build().flatten() {
        if cancel.is_cancelled() {
            break;
        }
        // Links are reported when they lead to a file (the walk does not follow them).
        let is_file = match entry.file_type() {
            Some(kind) if kind.is_symlink() => entry.path().is_file(),
            Some(kind) => kind.is_file(),
            None => false,
        };
        if !is_file {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(dir) else {
            continue;
        };
        // Read through a directory swapped for a link to elsewhere: not beneath the
        // workspace now, so not reported.
        if matcher.is_match(relative) && beneath.holds(entry.path()) {
            // Without an mtime a file sorts as the oldest.
            let modified = entry
                .metadata()
                .ok()
                .and_then(|meta| meta.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((modified, display(root, entry.path())));
        }
    }
    let total = found.len();
    // Newest first; equal times by path, so the order is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.truncate(MAX_FILES);
    (found.into_iter().map(|(_, path)| path).collect(), total)
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use super::*;
    use crate::builtin::support::test_support::Workspace;

    fn touch(ws: &Workspace, relative: &str, seconds_ago: u64) {
        ws.write(relative, "");
        let time = SystemTime::now() - Duration::from_secs(seconds_ago);
        File::options()
            .write(true)
            .open(ws.root().join(relative))
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[tokio::test]
    async fn matches_newest_first() {
        let ws = Workspace::new();
        touch(&ws, "old.rs", 300);
        touch(&ws, "src/new.rs", 10);
        touch(&ws, "src/mid.rs", 100);
        touch(&ws, "src/notes.md", 1);
        touch(&ws, "target/gen.rs", 1);
        ws.write(".gitignore", "target/\n");
        let output = ws.call(&Glob, json!({"pattern": "**/*.rs"})).await.unwrap();
        assert_eq!(
            output["files"],
            json!(["src/new.rs", "src/mid.rs", "old.rs"])
        );
        assert_eq!(output["total"], 3);
        assert_eq!(output["truncated"], false);
        // `*` does not cross directories; `path` narrows the search.
        let top = ws.call(&Glob, json!({"pattern": "*.rs"})).await.unwrap();
        assert_eq!(top["files"], json!(["old.rs"]));
        let sub = ws
            .call(&Glob, json!({"pattern": "./*.rs", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(sub["files"], json!(["src/new.rs", "src/mid.rs"]));
        assert_eq!(sub["path"], "src");
    }

    #[tokio::test]
    async fn caps_the_files() {
        let ws = Workspace::new();
        for n in 0..MAX_FILES + 3 {
            ws.write(&format!("d/f{n}.txt"), "");
        }
        let output = ws.call(&Glob, json!({"pattern": "d/*.txt"})).await.unwrap();
        assert_eq!(output["files"].as_array().unwrap().len(), MAX_FILES);
        assert_eq!(output["total"], MAX_FILES + 3);
        assert_eq!(output["truncated"], true);
    }

    #[tokio::test]
    async fn error_paths() {
        let ws = Workspace::new();
        ws.write("file.txt", "");
        let code = async |input: Value| ws.error(&Glob, input).await.code;
        assert_eq!(
            code(json!({"pattern": "a[b"})).await,
            ErrorCode::InvalidPattern
        );
        assert_eq!(
            code(json!({"pattern": "*", "path": "missing"})).await,
            ErrorCode::NotFound
        );
        assert_eq!(
            code(json!({"pattern": "*", "path": "file.txt"})).await,
            ErrorCode::NotADirectory
        );
        assert_eq!(
            code(json!({"pattern": "*", "path": "../.."})).await,
            ErrorCode::PathOutsideWorkspace
        );
    }
}
