//! What a call touches (its paths, its commands) and what the built-in checks found of
//! them: the facts a [`Policy`](crate::Policy) decides on, gathered per tool kind.

use std::path::Path;

use serde_json::Value;

use crate::home::HomeInWorkspace;
use crate::path::{Access, display, normalise, resolve};
use crate::rules::Subject;
use crate::{ErrorCode, ToolContext, paths, rules, shell};

/// The paths and commands a call touches, and what the built-in checks found.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    /// Workspace-relative paths used by the tool.
    pub(crate) paths: Vec<String>,
    /// Commands that must be allowed (off the safe list).
    pub(crate) unsafe_commands: Vec<Vec<String>>,
    /// Every command, including wrapped ones: deny and ask rules see them all.
    pub(crate) all_commands: Vec<Vec<String>>,
    pub(crate) deny: Vec<String>,
    /// How the line could be written so the deny list lets it through, when only its
    /// spelling is in the way.
    pub(crate) deny_hints: Vec<String>,
    pub(crate) risks: Vec<String>,
}

pub(crate) fn subjects<'a>(tool: &'a str, facts: &'a Facts) -> Vec<Subject<'a>> {
    let mut subjects: Vec<Subject<'a>> = facts
        .paths
        .iter()
        .map(|path| Subject::Path { tool, path })
        .collect();
    subjects.extend(
        facts
            .all_commands
            .iter()
            .map(|words| Subject::Command(words)),
    );
    subjects.push(Subject::Call { tool });
    subjects
}

/// The path field of a file tool, and its default.
fn path_field(tool: &str, input: &Value) -> Option<String> {
    let default = match tool {
        "list_directory" | "glob" | "grep" => Some("."),
        _ => None,
    };
    input
        .get("path")
        .and_then(Value::as_str)
        .or(default)
        .map(str::to_owned)
}

/// `requested` made workspace-relative and normalised without touching the disk (how it
/// reads, before any symlink is followed).
fn lexical(root: &Path, requested: &str) -> String {
    display(root, &normalise(root, requested))
}

pub(crate) fn path_facts(tool: &str, input: &Value, ctx: &ToolContext) -> Facts {
    let mut facts = Facts::default();
    let Some(requested) = path_field(tool, input) else {
        return facts;
    };
    let root = &ctx.workspace;
    let writes = rules::WRITE_TOOLS.contains(&tool);
    let reads_content = matches!(tool, "read_file" | "grep" | "edit_file");
    let access = if writes { Access::Write } else { Access::Read };
    let written = lexical(root, &requested);
    facts.paths.push(written.clone());
    let resolved = match resolve(root, &requested, access) {
        Ok(resolved) => resolved,
        Err(error) => {
            // Outside the workspace, through a link that leaves it or smuggles a
            // sensitive file, a special file: never. Other problems (an empty path) the
            // tool reports itself.
            if matches!(
                error.code,
                ErrorCode::PathOutsideWorkspace
                    | ErrorCode::Symlink
                    | ErrorCode::PermissionDenied
                    | ErrorCode::NotAFile
            ) {
                facts.deny.push(error.message);
            }
            return facts;
        }
    };
    let relative = display(root, &resolved);
    if relative != written {
        facts.paths.push(relative.clone());
    }
    let home = HomeInWorkspace::of(root);
    for path in facts.paths.clone() {
        let path = Path::new(&path);
        if reads_content && let Some(why) = paths::sensitive(path, &home) {
            facts.risks.push(format!("reading it: {why}"));
        }
        if writes && let Some(why) = paths::protected(path, &home) {
            facts.risks.push(format!("writing it: {why}"));
        }
    }
    // Special files were refused by `resolve` above (E_NOT_A_FILE, a deny).
    if (reads_content || writes)
        && let Ok(meta) = std::fs::metadata(&resolved)
        && paths::hard_linked(&meta)
    {
        facts.deny.push(format!(
            "{relative} has other hard links, and one may be a file outside the workspace; \
             codecrew does not read or write hard-linked files (copy the file instead)"
        ));
    }
    facts.risks.dedup();
    facts
}

pub(crate) fn command_facts(input: &Value, ctx: &ToolContext) -> Facts {
    let mut facts = Facts::default();
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return facts;
    };
    let root = &ctx.workspace;
    let requested = input.get("cwd").and_then(Value::as_str).unwrap_or(".");
    let cwd = match resolve(root, requested, Access::Read) {
        Ok(cwd) => cwd,
        Err(error) => {
            facts
                .risks
                .push(format!("the working directory: {}", error.message));
            root.clone()
        }
    };
    let analysis = shell::analyse(
        command,
        &shell::ShellContext {
            workspace: root,
            cwd: &cwd,
        },
    );
    facts.deny = analysis.deny;
    facts.deny_hints = analysis.hints;
    facts.risks = analysis.risks;
    for command in analysis.commands {
        if !command.safe {
            facts.unsafe_commands.push(command.words.clone());
        }
        facts.all_commands.push(command.words);
    }
    facts.all_commands.extend(analysis.wrapped);
    facts
}
