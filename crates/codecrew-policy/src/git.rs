//! Whether a repository's own configuration could make git run a program.
//!
//! `git status`, `git diff` and the other reading subcommands run without asking, but git
//! runs whatever the repository's config names: `core.fsmonitor` on every status, a diff
//! driver's `textconv` or `diff.external` on a diff, a `filter.<driver>.clean` on files it
//! compares, hooks when it refreshes the index. A cloned repository writes that config, so
//! a model told to look at a hostile clone's diff would run the clone's code.
//!
//! So before a reading git command is allowed, the config files git would read for the
//! command's directory (the repository's `config`, `config.worktree`, the common dir's
//! `config` of a linked worktree) and its hooks are read here. A key that names a program
//! ([`program_key`]), an `include`/`includeIf` (which pulls in a file this check does not
//! follow), or a hook that a reading command can fire ([`READING_HOOKS`]) makes the
//! command ask. Other hooks (`pre-commit`, …) run only on commands that write, which ask
//! anyway, so a repository with commit hooks installed keeps its `git status` quiet. The
//! user's own config (`~/.gitconfig`) is trusted: the workspace cannot write it.

use std::fs;
use std::path::{Path, PathBuf};

/// The largest config file read; a larger one makes the command ask.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The hooks a reading command can fire: `git status` and `git diff` refresh and may
/// write the index (`post-index-change`); a ref update anywhere fires
/// `reference-transaction`.
pub const READING_HOOKS: [&str; 2] = ["post-index-change", "reference-transaction"];

/// Why git, started in `dir`, could run a program the repository names: `None` when its
/// repository config names none (or `dir` is in no repository).
pub fn program_in_repository(dir: &Path) -> Option<String> {
    let (git_dir, work_tree) = find_git_dir(dir)?;
    if let Some(why) = check_repository(&git_dir, Some(&work_tree)) {
        return Some(why);
    }
    // `git status` and `git diff` look into submodules too, each with its own config and
    // hooks (in `.git/modules/<name>`, or a `.git` in the submodule's directory).
    let common = common_dir(&git_dir).unwrap_or_else(|| git_dir.clone());
    let mut submodules = Vec::new();
    module_dirs(&common.join("modules"), 0, &mut submodules);
    submodules.extend(
        gitmodules_paths(&work_tree)
            .into_iter()
            .filter_map(|path| own_git_dir(&work_tree.join(path))),
    );
    submodules.iter().find_map(|git_dir| {
        check_repository(git_dir, None).map(|why| format!("in a submodule: {why}"))
    })
}

/// [`program_in_repository`] for the repository `dir` is in alone, not its submodules:
/// for git run on it where the submodules' own repositories are not used (a new linked
/// worktree clones its submodules afresh).
pub fn program_in_repository_itself(dir: &Path) -> Option<String> {
    let (git_dir, work_tree) = find_git_dir(dir)?;
    check_repository(&git_dir, Some(&work_tree))
}

/// The most submodule repositories checked, and how deep their names and nesting go.
const MAX_SUBMODULES: usize = 256;
const MAX_SUBMODULE_DEPTH: usize = 6;

/// The submodules' repositories under `modules`, nested ones included.
fn module_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_SUBMODULE_DEPTH || out.len() >= MAX_SUBMODULES {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            continue;
        }
        if is_git_dir(&path) {
            out.push(path.clone());
            module_dirs(&path.join("modules"), depth + 1, out);
        } else {
            // Submodule names may hold slashes: `modules/libs/foo`.
            module_dirs(&path, depth + 1, out);
        }
    }
}

/// The `path = …` entries of the work tree's `.gitmodules`.
fn gitmodules_paths(work_tree: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(work_tree.join(".gitmodules")) else {
        return Vec::new();
    };
    entries(&text)
        .into_iter()
        .filter(|(key, _)| key.starts_with("submodule.") && key.ends_with(".path"))
        .filter_map(|(_, value)| value)
        .map(|value| value.trim_matches('"').to_owned())
        .filter(|path| !path.is_empty() && !path.starts_with('/') && !path.contains(".."))
        .take(MAX_SUBMODULES)
        .collect()
}

/// The repository of exactly `dir` (its own `.git`), not one above it.
fn own_git_dir(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    match fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_file() => read_gitdir_file(&dot_git, dir),
        Ok(_) => Some(dot_git),
        Err(_) => None,
    }
}

/// One repository's config files and hooks. `work_tree` resolves a relative
/// `core.hooksPath`; without it (a submodule's repository) any `core.hooksPath` asks.
fn check_repository(git_dir: &Path, work_tree: Option<&Path>) -> Option<String> {
    let mut dirs = vec![git_dir.to_path_buf()];
    if let Some(common) = common_dir(git_dir) {
        dirs.push(common);
    }
    let mut hooks: Vec<PathBuf> = dirs.iter().map(|dir| dir.join("hooks")).collect();
    for dir in &dirs {
        for name in ["config", "config.worktree"] {
            let path = dir.join(name);
            let mut hooks_paths = Vec::new();
            if let Some(why) = config_names_program(&path, &mut hooks_paths) {
                return Some(why);
            }
            // `core.hooksPath` moves the hooks (husky: `.husky/_`); a relative one is
            // relative to the work tree.
            for hooks_path in hooks_paths {
                match work_tree {
                    Some(work_tree) => hooks.push(work_tree.join(hooks_path)),
                    None => {
                        return Some(format!(
                            "the repository's git config sets `core.hooksPath` ({hooks_path}), \
                             whose hooks git may run"
                        ));
                    }
                }
            }
        }
    }
    hooks.iter().find_map(|dir| reading_hook(dir)).map(|hook| {
        format!(
            "the repository has a hook, {}, that git may run",
            hook.display()
        )
    })
}

/// The repository git would find from `dir`, and its work tree: the nearest `.git` (a
/// directory, or a file that points to one) or a directory that is itself a repository
/// (a bare one, its own work tree here), walking up to the root.
pub(crate) fn find_git_dir(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    for candidate in dir.ancestors() {
        if let Some(git_dir) = own_git_dir(candidate) {
            return Some((git_dir, candidate.to_path_buf()));
        }
        if is_git_dir(candidate) {
            return Some((candidate.to_path_buf(), candidate.to_path_buf()));
        }
    }
    None
}

/// A `.git` file: `gitdir: <path>`, relative to the directory that holds it.
fn read_gitdir_file(file: &Path, holder: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(holder.join(target))
}

/// What git checks: `HEAD`, `objects/` and `refs/`.
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// A linked worktree's repository: the `commondir` file names it.
pub(crate) fn common_dir(git_dir: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(git_dir.join("commondir")).ok()?;
    Some(git_dir.join(text.trim()))
}

/// A hook of [`READING_HOOKS`] that git would run from `hooks`: an executable file.
fn reading_hook(hooks: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    READING_HOOKS
        .iter()
        .map(|name| hooks.join(name))
        .find(|path| {
            fs::metadata(path)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// Why the config file at `path` could make git run a program, if it could; the
/// `core.hooksPath` values it sets go to `hooks_paths`.
fn config_names_program(path: &Path, hooks_paths: &mut Vec<String>) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Some(format!(
            "the repository's git config {} is too large to check",
            path.display()
        ));
    }
    let text = match fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) => {
            return Some(format!(
                "the repository's git config {} cannot be read ({error})",
                path.display()
            ));
        }
    };
    for (key, value) in entries(&text) {
        if key == "core.hookspath" {
            hooks_paths.extend(value.map(|value| value.trim_matches('"').to_owned()));
            continue;
        }
        if let Some(what) = program_key(&key, value.as_deref()) {
            return Some(format!(
                "the repository's git config sets `{key}` ({what}), which git may run"
            ));
        }
    }
    None
}

/// Configuration that every git command codecrew runs without asking gets from its
/// environment, above the repository's own (and a nested repository's, which the checks
/// here may not reach): no file-system monitor, no hooks, no transport (so no lazy fetch
/// of a partial clone's missing objects), no attributes from the work tree (they select
/// filter and diff drivers), no look into nested repositories, optional locks off.
const READ_ONLY_ENV: &[(&str, &str)] = &[
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    // The empty tree: work-tree `.gitattributes` files are not read.
    (
        "GIT_ATTR_SOURCE",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    ),
    ("GIT_CONFIG_COUNT", "6"),
    ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
    ("GIT_CONFIG_VALUE_0", "false"),
    ("GIT_CONFIG_KEY_1", "core.hooksPath"),
    ("GIT_CONFIG_VALUE_1", "/dev/null"),
    ("GIT_CONFIG_KEY_2", "protocol.allow"),
    ("GIT_CONFIG_VALUE_2", "never"),
    ("GIT_CONFIG_KEY_3", "core.attributesFile"),
    ("GIT_CONFIG_VALUE_3", "/dev/null"),
    // Nested repositories are not looked into: their own filters and drivers, which
    // their config names and their `info/attributes` selects, never run.
    ("GIT_CONFIG_KEY_4", "diff.ignoreSubmodules"),
    ("GIT_CONFIG_VALUE_4", "all"),
    ("GIT_CONFIG_KEY_5", "submodule.recurse"),
    ("GIT_CONFIG_VALUE_5", "false"),
];

/// The files the user's own git configuration consists of: `~/.gitconfig`, the XDG
/// `git/` folder, and what they include (`include.path`, `includeIf.<x>.path`, followed
/// a few levels deep) or name as the global ignore file (`core.excludesFile`). Git
/// refuses to run when one of them exists but cannot be read, so the read-only sandbox
/// lets these be read.
pub fn user_config_files(home: Option<&Path>, xdg_config: Option<&Path>) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = home
        .map(|home| home.join(".gitconfig"))
        .into_iter()
        .chain(xdg_config.map(|config| config.join("git")))
        .collect();
    let mut index = 0;
    while index < files.len() && files.len() < 32 {
        let file = files[index].clone();
        index += 1;
        let config = if file.is_dir() {
            file.join("config")
        } else {
            file.clone()
        };
        let Ok(text) = fs::read_to_string(&config) else {
            continue;
        };
        for (key, value) in entries(&text) {
            let named = key == "include.path"
                || (key.starts_with("includeif.") && key.ends_with(".path"))
                || key == "core.excludesfile";
            let Some(value) = value.filter(|_| named) else {
                continue;
            };
            let value = value.trim().trim_matches('"');
            let path = match (value.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => config
                    .parent()
                    .map_or_else(|| PathBuf::from(value), |dir| dir.join(value)),
            };
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files
}

/// A remote of the repository git would use from `dir` whose URL carries credentials
/// (`https://user:token@host/...`, `https://token@host/...`), written in the remote or
/// by a `url.<base>.insteadOf` rewrite in the repository's or the user's configuration:
/// `git remote -v` would print them. None when there is none, or no repository.
pub fn remote_with_credentials(dir: &Path) -> Option<String> {
    let (git_dir, _) = find_git_dir(dir)?;
    let common = common_dir(&git_dir).unwrap_or(git_dir);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".config")));
    let files = std::iter::once(common.join("config"))
        .chain(user_config_files(home.as_deref(), xdg.as_deref()))
        .chain([PathBuf::from("/etc/gitconfig")]);
    let carries_credentials = |url: &str| {
        url.split_once("://")
            .and_then(|(_, rest)| rest.split('/').next())
            .is_some_and(|authority| authority.contains('@'))
    };
    for file in files {
        let file = if file.is_dir() {
            file.join("config")
        } else {
            file
        };
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for (key, value) in entries(&text) {
            let Some((section, rest)) = key.split_once('.') else {
                continue;
            };
            let Some((subsection, name)) = rest.rsplit_once('.') else {
                continue;
            };
            let found = match (section, name) {
                ("remote", "url" | "pushurl") => value.as_deref().is_some_and(carries_credentials),
                ("url", "insteadof" | "pushinsteadof") => carries_credentials(subsection),
                _ => false,
            };
            if found {
                return Some(format!("{} carries credentials in a URL", file.display()));
            }
        }
    }
    None
}

/// Puts `READ_ONLY_ENV` into a command's environment, in place of configuration the
/// environment already carried (`GIT_CONFIG_COUNT`, `GIT_CONFIG_PARAMETERS`: its keys
/// would otherwise add to or outnumber codecrew's).
pub fn read_only_environment(env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>) {
    env.retain(|(name, _)| {
        let name = name.to_string_lossy();
        !(name == "GIT_CONFIG_PARAMETERS"
            || name == "GIT_CONFIG_COUNT"
            || name.starts_with("GIT_CONFIG_KEY_")
            || name.starts_with("GIT_CONFIG_VALUE_"))
    });
    env.extend(
        READ_ONLY_ENV
            .iter()
            .map(|(name, value)| ((*name).into(), (*value).into())),
    );
}

/// What a config key makes git do that runs or pulls in something, if anything. `key` is
/// `section.key` or `section.subsection.key`, with the section and the key lower-cased as
/// git compares them. (`core.hooksPath` is not here: the hooks it points to are checked.)
pub fn program_key(key: &str, value: Option<&str>) -> Option<&'static str> {
    let (section, rest) = key.split_once('.')?;
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    let off = |value: Option<&str>| {
        value.is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "" | "false" | "no" | "off" | "0"
            )
        })
    };
    let what = match (section, subsection, name) {
        ("core", None, "fsmonitor") if !off(value) => "a file-system monitor hook",
        ("core", None, "pager" | "editor" | "askpass" | "sshcommand" | "gitproxy") => "a program",
        ("core", None, "alternaterefscommand") => "a program",
        ("core", None, "worktree") => "another work tree",
        ("diff", None, "external") if value.is_some_and(|v| !v.trim().is_empty()) => {
            "an external diff program"
        }
        ("diff", None, "tool" | "guitool") | ("merge", None, "tool" | "guitool") => "a tool",
        ("diff", Some(_), "command" | "textconv") => "a diff driver program",
        ("merge", Some(_), "driver") => "a merge driver program",
        ("difftool" | "mergetool", Some(_), "cmd" | "path") => "a tool program",
        ("filter", Some(_), "clean" | "smudge" | "process") => "a filter program",
        ("credential", _, "helper") => "a credential helper",
        ("gpg", _, "program") => "a signing program",
        ("sequence", None, "editor") => "an editor",
        ("pager", _, _) => "a pager",
        ("interactive", None, "difffilter") => "a filter program",
        ("alias", _, _) if value.is_some_and(|v| v.trim_start().starts_with('!')) => {
            "a shell alias"
        }
        ("include", None, "path") | ("includeif", Some(_), "path") => "another config file",
        ("web", None, "browser") | ("browser" | "man", Some(_), "cmd" | "path") => "a program",
        ("man", None, "viewer") => "a program",
        ("remote", Some(_), "uploadpack" | "receivepack") => "a remote program",
        ("uploadpack", None, "packobjectshook") => "a program",
        ("trace2", None, _) => "a trace target git writes to",
        // A partial clone fetches missing objects on reads, through the remote's
        // transport, which can be a program (`ext::`).
        ("extensions", None, "partialclone") => "a remote to fetch missing objects from",
        ("remote", Some(_), "promisor" | "partialclonefilter") if !off(value) => {
            "a remote to fetch missing objects from"
        }
        ("remote", Some(_), "url" | "pushurl" | "vcs")
            if value.is_some_and(|v| {
                let v = v.trim().to_ascii_lowercase();
                v.starts_with("ext::") || v.starts_with("fd::")
            }) =>
        {
            "a transport program"
        }
        ("url", Some(base), _) if base.to_ascii_lowercase().starts_with("ext::") => {
            "a transport program"
        }
        ("protocol", _, "allow") => "which transports git may run",
        _ => return None,
    };
    Some(what)
}

/// The `(key, value)` entries of a git config file, keys normalised as [`program_key`]
/// expects (section and name lower-cased, subsection as written). A line git would not
/// parse is skipped: git would refuse the whole file, so it runs nothing from it.
pub(crate) fn entries(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(raw) = lines.next() {
        let mut line = raw.to_owned();
        // A value continued on the next line.
        while line.trim_end().ends_with('\\') {
            let trimmed = line.trim_end();
            line = trimmed[..trimmed.len() - 1].to_owned();
            match lines.next() {
                Some(next) => line.push_str(next),
                None => break,
            }
        }
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                continue;
            };
            section = section_name(&header[..end]);
            rest = header[end + 1..].trim_start();
            if rest.is_empty() || rest.starts_with(['#', ';']) {
                continue;
            }
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) || section.is_empty() {
            continue;
        }
        let (name, value) = match rest.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim().to_owned())),
            None => (rest.split([' ', '\t', '#', ';']).next().unwrap_or(""), None),
        };
        if name.is_empty() {
            continue;
        }
        out.push((format!("{section}.{}", name.to_ascii_lowercase()), value));
    }
    out
}

/// `core`, `diff "tool"`, `branch.main` (the old form) as `core`, `diff.tool`,
/// `branch.main`.
fn section_name(header: &str) -> String {
    let header = header.trim();
    match header.split_once(char::is_whitespace) {
        Some((section, sub)) => {
            let sub = sub.trim().trim_matches('"');
            format!("{}.{sub}", section.to_ascii_lowercase())
        }
        None => match header.split_once('.') {
            Some((section, sub)) => format!("{}.{sub}", section.to_ascii_lowercase()),
            None => header.to_ascii_lowercase(),
        },
    }
}

#[cfg(test)]
#[path = "git_tests.rs"]
mod tests;
