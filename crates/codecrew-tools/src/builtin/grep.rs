//! `grep`: regex search over the workspace, built from ripgrep's own crates.
//!
//! The walk is `ignore`'s parallel walker (gitignore-aware, one thread per core), each
//! thread searches with its own `grep_searcher::Searcher` and the shared
//! `grep_regex::RegexMatcher`, binary files are dropped at the first NUL byte. Only
//! matching files touch shared state, so the cost per file is what ripgrep pays.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use codecrew_policy::home::HomeInWorkspace;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkState;
use ignore::overrides::{Override, OverrideBuilder};
use serde_json::{Value, json};

use super::grep_sink::{FileSink, LineMatch, SinkMode};
use super::support::{
    Cancel, beneath_error, blocking, io_error, optional_bool, optional_str, optional_u64,
    required_str, walker,
};
use crate::beneath::Beneath;
use crate::path::{Access, display, resolve};
use crate::{ErrorCode, Mode, Tool, ToolContext, ToolError, ToolFuture};

#[derive(Debug)]
pub struct Grep;

/// Results (matching lines in content mode, files otherwise) when the call does not say.
pub const DEFAULT_MAX_RESULTS: u64 = 500;
pub const MAX_RESULTS: u64 = 10_000;
pub const MAX_CONTEXT: u64 = 20;

impl Tool for Grep {
    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        "Searches file contents with a regular expression (Rust regex syntax, like \
         ripgrep), skipping files ignored by .gitignore, the .git directory and binary \
         files. `output_mode`: \"files_with_matches\" (default) lists matching files; \
         \"content\" returns each matching line with its path and line number (and \
         `context` lines before and after); \"count\" gives the number of matching lines \
         per file. Narrow the search with `path` (a directory or file) and `glob` (e.g. \
         \"*.rs\" or \"src/**/*.ts\"; \"!*.min.js\" excludes). At most `max_results` \
         results (default 500); `truncated` says when there were more."
    }

    fn summary_in(&self, _mode: Mode) -> Cow<'_, str> {
        Cow::Borrowed(
            "searches file contents for a regular expression (`output_mode` \"content\" gives the lines)",
        )
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The regular expression, e.g. \"fn\\\\s+main\" or \"TODO|FIXME\""
                },
                "path": {
                    "type": "string",
                    "description": "A directory or file to search, relative to the workspace root (default \".\")"
                },
                "glob": {
                    "type": "string",
                    "description": "Only search files matching this glob, gitignore-style: \"*.rs\" matches at any depth; a leading \"!\" excludes"
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": MAX_CONTEXT,
                    "description": "Lines of context before and after each match (content mode only; default 0)"
                },
                "output_mode": {
                    "type": "string",
                    "enum": ["content", "files_with_matches", "count"],
                    "description": "What to return (default \"files_with_matches\")"
                },
                "case_insensitive": {
                    "type": "boolean",
                    "description": "Ignore letter case (default false)"
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS,
                    "description": "The most matching lines (content) or files (other modes) to return (default 500)"
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
            let query = Query::from_input(&input)?;
            let requested = optional_str(&input, "path").unwrap_or(".");
            let target = resolve(&ctx.workspace, requested, Access::Read)?;
            let glob = optional_str(&input, "glob").map(str::to_owned);
            let root = ctx.workspace.clone();
            blocking(move |cancel| {
                let shown = display(&root, &target);
                let meta = std::fs::metadata(&target).map_err(|error| io_error(&shown, &error))?;
                // A glob is relative to the directory searched (a file's own directory).
                let base = if meta.is_dir() {
                    target.as_path()
                } else {
                    target.parent().unwrap_or(&root)
                };
                let overrides = glob.map(|glob| overrides(base, &glob)).transpose()?;
                query.run(&root, &target, overrides, &cancel)
            })
            .await
        })
    }
}

/// Files a directory search does not read: sensitive ones. (Hard-linked files are not
/// read either: [`Beneath::open_read`] refuses them, named or not.)
fn skipped_on_walk(root: &Path, home: &HomeInWorkspace, path: &Path) -> bool {
    let relative = path.strip_prefix(root).unwrap_or(path);
    codecrew_policy::paths::sensitive(relative, home).is_some()
}

/// A validated search.
#[derive(Debug, Clone)]
struct Query {
    matcher: RegexMatcher,
    mode: SinkMode,
    context: usize,
    max_results: usize,
}

impl Query {
    fn from_input(input: &Value) -> Result<Self, ToolError> {
        let pattern = required_str(input, "pattern")?;
        let mode = match optional_str(input, "output_mode").unwrap_or("files_with_matches") {
            "files_with_matches" => SinkMode::Files,
            "count" => SinkMode::Count,
            "content" => SinkMode::Content,
            other => {
                return Err(ToolError::new(
                    ErrorCode::InvalidInput,
                    format!("unknown output_mode {other:?}"),
                )
                .with_suggestion("use \"content\", \"files_with_matches\" or \"count\""));
            }
        };
        let context = optional_u64(input, "context").unwrap_or(0);
        let max_results = optional_u64(input, "max_results").unwrap_or(DEFAULT_MAX_RESULTS);
        if context > MAX_CONTEXT || !(1..=MAX_RESULTS).contains(&max_results) {
            return Err(ToolError::new(
                ErrorCode::InvalidInput,
                format!(
                    "context must be 0-{MAX_CONTEXT} and max_results 1-{MAX_RESULTS}, \
                     not {context} and {max_results}"
                ),
            ));
        }
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(optional_bool(input, "case_insensitive"))
            // Like ripgrep: `^` and `$` anchor at lines, no match spans a line end.
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .map_err(|error| {
                ToolError::new(
                    ErrorCode::InvalidPattern,
                    format!("invalid regular expression: {error}"),
                )
                .with_suggestion(
                    "Rust regex syntax: escape literal ( ) [ ] { } . * + ? | \\ with a backslash",
                )
            })?;
        Ok(Query {
            matcher,
            mode,
            context: usize::try_from(context).unwrap_or(0),
            max_results: usize::try_from(max_results).unwrap_or(usize::MAX),
        })
    }

    /// Walks `target` in parallel and returns the tool's output.
    fn run(
        &self,
        root: &Path,
        target: &Path,
        overrides: Option<Override>,
        cancel: &Cancel,
    ) -> Result<Value, ToolError> {
        let beneath = Beneath::open(root).map_err(|error| beneath_error(".", error))?;
        let mut builder = walker(root, target);
        let home = &HomeInWorkspace::of(root);
        if let Some(overrides) = overrides {
            builder.overrides(overrides);
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(12));
        let mut searcher = SearcherBuilder::new();
        searcher
            .binary_detection(BinaryDetection::quit(0))
            // Line numbers cost a count of every newline; only content mode shows them.
            .line_number(self.mode == SinkMode::Content);
        if self.mode == SinkMode::Content {
            searcher
                .before_context(self.context)
                .after_context(self.context);
        }
        // Counted towards the cap: lines in content mode, files otherwise.
        let found = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let results: Mutex<Vec<(String, FileSink)>> = Mutex::new(Vec::new());
        // One more than the cap is looked for, to know whether anything was left out.
        let wanted = self.max_results.saturating_add(1);

        builder.threads(threads).build_parallel().run(|| {
            let mut searcher = searcher.build();
            let matcher = self.matcher.clone();
            let (found, stop, results, beneath) = (&found, &stop, &results, &beneath);
            Box::new(move |entry| {
                if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                // Unreadable entries are skipped, as ripgrep does (it reports them).
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                    return WalkState::Continue;
                }
                // A file named by the call was approved by the permission layer; files met
                // on the walk were not, so credentials are skipped. Files with other
                // (possibly outside) names fail `open_read`'s hard-link check, on the open
                // file itself.
                let named = entry.path() == target;
                if !named && skipped_on_walk(root, home, entry.path()) {
                    return WalkState::Continue;
                }
                // Opened beneath the workspace: a directory of the walk swapped for a link
                // to elsewhere is refused, so nothing outside is ever read.
                let Ok(file) = beneath.open_read(entry.path()) else {
                    return WalkState::Continue;
                };
                let mut sink = FileSink::new(self.mode, wanted);
                let searched = searcher.search_file(&matcher, &file, &mut sink);
                if searched.is_err() || sink.binary || !sink.matched {
                    return WalkState::Continue;
                }
                let weight = match self.mode {
                    SinkMode::Content => sink.matches.len(),
                    SinkMode::Files | SinkMode::Count => 1,
                };
                let path = display(root, entry.path());
                if let Ok(mut results) = results.lock() {
                    results.push((path, sink));
                }
                if found.fetch_add(weight, Ordering::Relaxed) + weight >= wanted {
                    stop.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                WalkState::Continue
            })
        });

        let mut results = results
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        results.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(self.output(results))
    }

    /// Shapes the sorted results, cut to max_results.
    fn output(&self, results: Vec<(String, FileSink)>) -> Value {
        let max = self.max_results;
        match self.mode {
            SinkMode::Files => {
                let truncated = results.len() > max;
                let files: Vec<&str> = results.iter().take(max).map(|(p, _)| p.as_str()).collect();
                json!({
                    "mode": "files_with_matches",
                    "files": files,
                    "truncated": truncated,
                })
            }
            SinkMode::Count => {
                let truncated = results.len() > max;
                let counts: Vec<Value> = results
                    .iter()
                    .take(max)
                    .map(|(path, sink)| json!({"path": path, "count": sink.count}))
                    .collect();
                json!({"mode": "count", "counts": counts, "truncated": truncated})
            }
            SinkMode::Content => {
                let all: Vec<(&str, &LineMatch)> = results
                    .iter()
                    .flat_map(|(path, sink)| sink.matches.iter().map(move |m| (path.as_str(), m)))
                    .collect();
                let truncated = all.len() > max;
                let with_context = self.context > 0;
                let matches: Vec<Value> = all
                    .iter()
                    .take(max)
                    .map(|(path, line)| line.to_json(path, with_context))
                    .collect();
                json!({"mode": "content", "matches": matches, "truncated": truncated})
            }
        }
    }
}

/// The `glob` filter as ripgrep's `-g`: gitignore-style, `!` to exclude.
fn overrides(base: &Path, glob: &str) -> Result<Override, ToolError> {
    let invalid = |error: ignore::Error| {
        ToolError::new(
            ErrorCode::InvalidPattern,
            format!("invalid glob {glob:?}: {error}"),
        )
        .with_suggestion("e.g. \"*.rs\", \"src/**/*.ts\" or \"!*.min.js\"")
    };
    let mut builder = OverrideBuilder::new(base);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::builtin::support::test_support::Workspace;

    fn tree() -> Workspace {
        let ws = Workspace::new();
        ws.write("src/a.rs", "fn main() {\n    let needle = 1;\n}\n");
        ws.write(
            "notes.txt",
            "one needle\ntwo\nthree NEEDLE\nfour\nfive needle\n",
        );
        ws.write("src/c.rs", "nothing here\n");
        ws.write(".gitignore", "target/\n");
        ws.write("target/gen.rs", "needle\n");
        ws.write(".hidden/h.txt", "needle\n");
        ws.write(".git/HEAD", "needle\n");
        ws.write("blob.bin", b"needle\n\0\x01\x02");
        ws
    }

    async fn grep(ws: &Workspace, input: Value) -> Value {
        ws.call(&Grep, input).await.unwrap()
    }

    #[tokio::test]
    async fn lists_matching_files_respecting_ignores_and_binaries() {
        let ws = tree();
        let output = grep(&ws, json!({"pattern": "needle"})).await;
        assert_eq!(
            output,
            json!({
                "mode": "files_with_matches",
                "files": [".hidden/h.txt", "notes.txt", "src/a.rs"],
                "truncated": false,
            })
        );
    }

    #[tokio::test]
    async fn sensitive_and_hard_linked_files_are_not_searched() {
        let ws = tree();
        ws.write(".env", "needle\n");
        ws.write("outside/real.txt", "needle\n");
        std::fs::hard_link(
            ws.root().join("outside/real.txt"),
            ws.root().join("linked.txt"),
        )
        .unwrap();
        let output = grep(&ws, json!({"pattern": "needle"})).await;
        assert_eq!(
            output["files"],
            json!([".hidden/h.txt", "notes.txt", "src/a.rs"])
        );
        // Named, a sensitive file was approved by the permission layer; a hard link never is.
        let env = grep(&ws, json!({"pattern": "needle", "path": ".env"})).await;
        assert_eq!(env["files"], json!([".env"]));
        let linked = grep(&ws, json!({"pattern": "needle", "path": "linked.txt"})).await;
        assert_eq!(linked["files"], json!([]));
    }

    #[tokio::test]
    async fn globs_narrow_and_exclude() {
        let ws = tree();
        let only_rs = grep(&ws, json!({"pattern": "needle", "glob": "*.rs"})).await;
        assert_eq!(only_rs["files"], json!(["src/a.rs"]));
        let no_rs = grep(&ws, json!({"pattern": "needle", "glob": "!*.rs"})).await;
        assert_eq!(no_rs["files"], json!([".hidden/h.txt", "notes.txt"]));
        let in_src = grep(&ws, json!({"pattern": "needle|nothing", "path": "src"})).await;
        assert_eq!(in_src["files"], json!(["src/a.rs", "src/c.rs"]));
        let one_file = grep(&ws, json!({"pattern": "needle", "path": "notes.txt"})).await;
        assert_eq!(one_file["files"], json!(["notes.txt"]));
    }

    #[tokio::test]
    async fn content_mode_with_context() {
        let ws = tree();
        let output = grep(
            &ws,
            json!({"pattern": "needle", "path": "notes.txt", "output_mode": "content", "context": 1}),
        )
        .await;
        assert_eq!(
            output["matches"],
            json!([
                {"path": "notes.txt", "line_number": 1, "line": "one needle",
                 "before": [], "after": [{"line_number": 2, "line": "two"}]},
                {"path": "notes.txt", "line_number": 5, "line": "five needle",
                 "before": [{"line_number": 4, "line": "four"}], "after": []},
            ])
        );
        let plain = grep(
            &ws,
            json!({"pattern": "needle", "output_mode": "content", "case_insensitive": true}),
        )
        .await;
        let lines: Vec<(&str, u64)> = plain["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap(),
                    m["line_number"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                (".hidden/h.txt", 1),
                ("notes.txt", 1),
                ("notes.txt", 3),
                ("notes.txt", 5),
                ("src/a.rs", 2)
            ]
        );
        assert!(plain["matches"][0].get("before").is_none());
    }

    #[tokio::test]
    async fn count_mode() {
        let ws = tree();
        let output = grep(
            &ws,
            json!({"pattern": "(?i)needle", "output_mode": "count", "glob": "*.txt"}),
        )
        .await;
        assert_eq!(
            output["counts"],
            json!([{"path": ".hidden/h.txt", "count": 1}, {"path": "notes.txt", "count": 3}])
        );
    }

    #[tokio::test]
    async fn results_are_capped() {
        let ws = Workspace::new();
        for n in 0..30 {
            ws.write(&format!("f{n:02}.txt"), "hit\nhit\n");
        }
        let files = grep(&ws, json!({"pattern": "hit", "max_results": 10})).await;
        assert_eq!(files["files"].as_array().unwrap().len(), 10);
        assert_eq!(files["truncated"], true);
        let lines = grep(
            &ws,
            json!({"pattern": "hit", "max_results": 25, "output_mode": "content"}),
        )
        .await;
        assert_eq!(lines["matches"].as_array().unwrap().len(), 25);
        assert_eq!(lines["truncated"], true);
        let exact = grep(&ws, json!({"pattern": "hit", "max_results": 30})).await;
        assert_eq!(exact["truncated"], false);
    }

    #[tokio::test]
    async fn error_paths() {
        let ws = tree();
        let error = ws.error(&Grep, json!({"pattern": "fn (main"})).await;
        assert_eq!(error.code, ErrorCode::InvalidPattern);
        assert!(error.message.contains("unclosed group"), "{error}");
        let code = async |input: Value| ws.error(&Grep, input).await.code;
        assert_eq!(
            code(json!({"pattern": "x", "glob": "a[b"})).await,
            ErrorCode::InvalidPattern
        );
        assert_eq!(
            code(json!({"pattern": "x", "path": "missing"})).await,
            ErrorCode::NotFound
        );
        assert_eq!(
            code(json!({"pattern": "x", "path": "../"})).await,
            ErrorCode::PathOutsideWorkspace
        );
        assert_eq!(
            code(json!({"pattern": "x", "output_mode": "lines"})).await,
            ErrorCode::InvalidInput
        );
        assert_eq!(
            code(json!({"pattern": "x", "context": 99})).await,
            ErrorCode::InvalidInput
        );
    }
}
