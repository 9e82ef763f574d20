//! The paths a command names: inside the workspace or not, sensitive or not, and the
//! trees a recursive search would read.

use super::*;

impl<'a> Analyser<'a> {
    /// Checks the paths a literal argument may name: itself, an option's value, and the
    /// files a glob expands to.
    pub(super) fn word_paths(&mut self, word: &Word, safe: bool) {
        let value = word.value.as_str();
        if word.tilde {
            self.risk(format!(
                "`{value}` is in your home directory, outside the workspace"
            ));
            if let Some(rest) = value.strip_prefix('~') {
                let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
                let expanded = format!("{home}{rest}");
                self.path_argument(&expanded, safe);
            }
            return;
        }
        let candidates: Vec<&str> = if let Some(option) = value.strip_prefix('-') {
            if let Some((_, after)) = option.split_once('=') {
                vec![after]
            } else if let Some(at) = option.find('/') {
                vec![&option[at..]]
            } else {
                Vec::new()
            }
        } else {
            vec![value]
        };
        for candidate in candidates {
            if word.glob {
                self.glob_argument(candidate, safe);
            }
            self.path_argument(candidate, safe);
        }
    }

    pub(super) fn glob_argument(&mut self, pattern: &str, safe: bool) {
        for cwd in self.cwds.clone() {
            match expand_glob(&cwd, pattern) {
                Some(matches) => {
                    for found in matches {
                        self.path_argument(&found.to_string_lossy(), safe);
                    }
                }
                None => self.risk(format!(
                    "the glob `{pattern}` matches more than {MAX_GLOB_MATCHES} files"
                )),
            }
        }
    }

    /// Checks one path named in a command: inside the workspace, not sensitive, not a
    /// protected file unless the command only reads (`reads_only`).
    pub(super) fn path_argument(&mut self, value: &str, reads_only: bool) {
        if value.is_empty() || value == "-" || is_harmless_device(value) {
            return;
        }
        if let Some(why) = paths::forbidden_system_path(value) {
            self.deny(why);
            return;
        }
        let home = crate::home::HomeInWorkspace::of(self.ctx.workspace);
        if let Some(why) = paths::sensitive(Path::new(value), &home) {
            self.risk(format!("it names a sensitive file: {why}"));
        }
        if !reads_only && let Some(why) = paths::protected(Path::new(value), &home) {
            self.risk(format!("it may write a protected file: {why}"));
        }
        let root = self.ctx.workspace;
        let state = crate::state_folder::StateFolder::current();
        for cwd in self.cwds.clone() {
            let joined = cwd.join(value);
            // codecrew's own records and keys: never, not even with --yes (as named here;
            // through a link, `resolve` below refuses it).
            let named = crate::path::normalise(&cwd, value);
            if let Some(folder) = state
                .as_ref()
                .filter(|folder| folder.holds_lexically(&named))
            {
                self.deny(folder.refusal(&format!("`{value}`")));
                continue;
            }
            let Some(requested) = joined.to_str() else {
                self.risk(format!("`{value}` is not valid UTF-8"));
                continue;
            };
            match resolve(root, requested, Access::Read) {
                Ok(resolved) => {
                    let relative = display(root, &resolved);
                    if let Some(why) = paths::sensitive(Path::new(&relative), &home) {
                        self.risk(format!("it names a sensitive file: {why}"));
                    }
                    if !reads_only && let Some(why) = paths::protected(Path::new(&relative), &home)
                    {
                        self.risk(format!("it may write a protected file: {why}"));
                    }
                    if let Ok(meta) = std::fs::symlink_metadata(&resolved)
                        && paths::hard_linked(&meta)
                    {
                        self.deny(format!(
                            "{relative} has other hard links, and one may be a file outside the \
                             workspace"
                        ));
                    }
                }
                Err(error)
                    if error.suggestion.as_deref() == Some(crate::state_folder::SUGGESTION) =>
                {
                    self.deny(error.message);
                }
                Err(error) => self.risk(format!("`{value}`: {}", error.message)),
            }
        }
    }

    /// Recursive searches (`grep -r`, `rg`) read every file below their directories:
    /// a tree holding credentials (or, when links are followed, a link out of the
    /// workspace) makes them a risk.
    pub(super) fn tree_search(&mut self, argv: &[String]) {
        let Some((dirs, follow)) = searched_trees(argv) else {
            return;
        };
        for dir in dirs {
            for cwd in self.cwds.clone() {
                let start = cwd.join(&dir);
                if let Some(found) = tree_holds_secrets(self.ctx.workspace, &start, follow) {
                    self.risk(format!(
                        "`{}` searches {dir}, which holds {found}; search named files instead",
                        argv[0]
                    ));
                }
            }
        }
    }

    /// `cd`, `pushd`, `popd`: the directories the command may stand in after them. A
    /// literal target is followed wherever it leads, out of the workspace too (`cd ..`
    /// then `rm -rf ws` names the workspace); one the analysis cannot follow (`cd
    /// "$d"`, `cd -`, `popd`, a `CDPATH` set in the line) makes the directory unknown.
    pub(super) fn change_directory(&mut self, words: &[Word]) {
        let program = base_name(&words[0].value);
        let operands: Vec<&Word> = words[1..]
            .iter()
            .skip_while(|word| word.literal && word.value.starts_with('-') && word.value != "-")
            .filter(|word| word.value != "--")
            .collect();
        let pushd_keeps = program == "pushd"
            && words[1..]
                .iter()
                .take_while(|word| word.value.starts_with('-'))
                .any(|word| word.value == "-n");
        if pushd_keeps {
            return;
        }
        if program == "popd" {
            self.risk("`popd` goes back to a directory the analysis does not follow");
            self.cwd_unknown = true;
            return;
        }
        let Some(target) = operands.first() else {
            if program == "pushd" {
                // `pushd` alone swaps the top two directories of the stack.
                self.cwd_unknown = true;
                self.risk("`pushd` goes to a directory the analysis does not follow");
                return;
            }
            self.risk("`cd` without a directory goes to your home directory");
            if self.vars.contains_key("HOME") || self.env_prefix.contains_key("HOME") {
                self.cwd_unknown = true;
            } else if let Some(home) = std::env::var_os("HOME") {
                self.cwds.push(PathBuf::from(home));
            }
            return;
        };
        let value = target.value.as_str();
        let rotates = program == "pushd"
            && (value.starts_with('+') || value.starts_with('-'))
            && value[1..].chars().all(|c| c.is_ascii_digit());
        let searched = !value.starts_with('/')
            && !value.starts_with("./")
            && !value.starts_with("../")
            && value != "."
            && value != ".."
            && (self.vars.contains_key("CDPATH")
                || self.env_prefix.contains_key("CDPATH")
                || self.cdable_vars);
        if !target.literal || target.glob || value == "-" || rotates || searched {
            self.risk(format!(
                "`{program} {}` goes to a directory only known at run time",
                target.source.as_str().trim()
            ));
            self.cwd_unknown = true;
            return;
        }
        if target.tilde {
            self.risk(format!("`{program} {value}` goes to your home directory"));
            match std::env::var_os("HOME") {
                Some(home) if is_home_word(value) || value.starts_with("~/") => {
                    let rest = value.trim_start_matches('~').trim_start_matches('/');
                    let dir = PathBuf::from(home).join(rest);
                    self.cwds.push(dir);
                }
                _ => self.cwd_unknown = true,
            }
            return;
        }
        self.enter(value);
    }

    /// Adds the directories `target` (literal) leads to from each current one: the path
    /// as written (bash's `cd` is logical: `..` drops the last name) and, where it
    /// exists, with its links resolved. One outside the workspace is a risk.
    pub(super) fn enter(&mut self, target: &str) {
        let mut next = self.cwds.clone();
        for cwd in self.cwds.clone() {
            let lexical = normalise(&cwd, target);
            if let Err(error) =
                resolve(self.ctx.workspace, &lexical.to_string_lossy(), Access::Read)
            {
                self.risk(format!("`cd {target}`: {}", error.message));
            }
            if let Ok(canonical) = cwd.join(target).canonicalize() {
                next.push(canonical);
            }
            next.push(lexical);
        }
        next.sort();
        next.dedup();
        self.cwds = next;
    }

    /// Whether a literal path is `/`, a top-level directory, a home directory, or the
    /// workspace root or one of its ancestors (`/*` and `dir/*` count as the directory).
    pub(super) fn is_rootish(&self, target: &str) -> bool {
        self.cwds.iter().any(|cwd| {
            let mut lexical = normalise(cwd, target);
            let last = lexical
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            if let Some(last) = last
                && (last.chars().all(|c| matches!(c, '*' | '?' | '.'))
                    || last.starts_with('*')
                    || last.starts_with(".*"))
            {
                lexical.pop();
            }
            let canonical = lexical.canonicalize().ok();
            [Some(lexical), canonical]
                .into_iter()
                .flatten()
                .any(|path| self.dangerous_directory(&path))
        })
    }

    pub(super) fn is_root(&self, target: &str, literal: bool) -> bool {
        literal
            && self
                .cwds
                .iter()
                .any(|cwd| normalise(cwd, target) == Path::new("/"))
    }

    pub(super) fn dangerous_directory(&self, path: &Path) -> bool {
        let depth = path
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        depth <= 1
            || self.ctx.workspace.starts_with(path)
            || home.is_some_and(|home| home == path)
            || (depth == 2 && path.starts_with("/home"))
            || (depth == 2 && path.starts_with("/usr"))
    }
}

pub(super) fn is_home_word(value: &str) -> bool {
    let rest = value.strip_prefix('~').unwrap_or(value);
    matches!(rest, "" | "/" | "/*" | "/." | "/.*")
        || (!rest.starts_with('/') && !rest.contains('/') && !rest.is_empty())
}

/// grep's long options that take the next word as their value.
const GREP_LONG_VALUES: &[&str] = &[
    "regexp",
    "file",
    "max-count",
    "after-context",
    "before-context",
    "context",
    "directories",
    "devices",
    "include",
    "exclude",
    "exclude-dir",
    "exclude-from",
    "label",
    "binary-files",
    "group-separator",
];

/// rg's long options that take the next word as their value (it takes no abbreviations).
const RG_LONG_VALUES: &[&str] = &[
    "regexp",
    "file",
    "glob",
    "iglob",
    "type",
    "type-not",
    "type-add",
    "max-count",
    "after-context",
    "before-context",
    "context",
    "threads",
    "max-depth",
    "replace",
    "encoding",
    "max-filesize",
    "ignore-file",
    "pre",
    "pre-glob",
    "sort",
    "sortr",
    "colors",
    "path-separator",
];

/// diff's long options that take the next word as their value.
const DIFF_LONG_VALUES: &[&str] = &[
    "exclude",
    "exclude-from",
    "ignore-matching-lines",
    "label",
    "starting-file",
    "from-file",
    "to-file",
    "horizon-lines",
    "tabsize",
    "width",
    "show-function-line",
];

/// The directories a recursive search reads, and whether it follows links; None for
/// anything else. Options and operands are read as the program reads them
/// ([`super::options`]): `grep -d recurse KEY` searches `.`, `grep --recur` recurses.
pub(super) fn searched_trees(argv: &[String]) -> Option<(Vec<String>, bool)> {
    use super::options::{has, operands};
    let program = base_name(&argv[0]);
    let args = &argv[1..];
    // ag and ack are not on the safe list; their options are read like rg's.
    let syntax = super::syntaxes::syntax(match program {
        "ag" | "ack" | "ack-grep" => "rg",
        other => other,
    })?;
    let has = |letters: &str, longs: &[&str]| has(args, &syntax, letters, longs);
    let (recursive, follow, pattern_given, long_values) = match program {
        // Any `--directories` value counts as recursing, asking more rather than less.
        "grep" | "egrep" | "fgrep" => (
            has(
                "rRd",
                &["recursive", "dereference-recursive", "directories"],
            ),
            has("R", &["dereference-recursive"]),
            has("ef", &["regexp", "file"]),
            GREP_LONG_VALUES,
        ),
        "rg" | "ag" | "ack" | "ack-grep" => (
            true,
            has("L", &["follow"]),
            has("ef", &["regexp", "file"]),
            RG_LONG_VALUES,
        ),
        // diff reads every file of both trees, through links unless told not to; its
        // operands are all trees (no pattern comes first).
        "diff" => (
            has("r", &["recursive"]),
            !has("", &["no-dereference"]),
            true,
            DIFF_LONG_VALUES,
        ),
        _ => return None,
    };
    if !recursive {
        return None;
    }
    let mut dirs: Vec<String> = operands(args, &syntax, long_values)
        .into_iter()
        .skip(usize::from(!pattern_given))
        .cloned()
        .collect();
    if dirs.is_empty() {
        dirs.push(".".to_owned());
    }
    Some((dirs, follow))
}

/// What in the tree below `start` a search must not read: a sensitive file, or (when
/// following links) a link leaving the workspace or leading to a sensitive file.
pub(super) fn tree_holds_secrets(root: &Path, start: &Path, follow: bool) -> Option<String> {
    let home = crate::home::HomeInWorkspace::of(root);
    let state = crate::state_folder::StateFolder::current();
    walk_tree(root, start, follow, |relative| {
        // codecrew's own records are not named, not even to say they are there.
        if state
            .as_ref()
            .is_some_and(|state| state.holds_lexically(&root.join(relative)))
        {
            return Some("codecrew's own state folder".to_owned());
        }
        paths::sensitive(relative, &home).map(|_| relative.display().to_string())
    })
}

/// The first link in the tree below `start` that leads out of the workspace, for a walk
/// that follows links but reads only names.
pub(super) fn link_out(root: &Path, start: &Path) -> Option<String> {
    walk_tree(root, start, true, |_| None)
}

/// Walks the tree below `start` the way a recursive program would (through links when
/// `follow`), and returns the first thing that makes the walk a risk: what `look` says
/// of a file (workspace-relative; a link's target when following), a link leading out of
/// the workspace, or a tree too large to check. `.git` is not walked; each directory is
/// walked once, however many links lead to it.
fn walk_tree(
    root: &Path,
    start: &Path,
    follow: bool,
    mut look: impl FnMut(&Path) -> Option<String>,
) -> Option<String> {
    const MAX_ENTRIES: usize = 50_000;
    let outside = |path: &Path| {
        format!(
            "{}, a link out of the workspace",
            path.strip_prefix(root).unwrap_or(path).display()
        )
    };
    let meta = std::fs::symlink_metadata(start).ok()?;
    let start = if meta.file_type().is_symlink() {
        if !follow {
            return None;
        }
        match start.canonicalize() {
            Ok(target) if target.starts_with(root) && target.is_dir() => target,
            Ok(target) if target.starts_with(root) => return None,
            _ => return Some(outside(start)),
        }
    } else if meta.is_dir() {
        start.to_path_buf()
    } else {
        return None;
    };
    let mut stack = vec![start];
    let mut visited = std::collections::HashSet::new();
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        if let Ok(canonical) = dir.canonicalize()
            && !visited.insert(canonical)
        {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Some(format!("more than {MAX_ENTRIES} entries to check"));
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_symlink() {
                if !follow {
                    continue;
                }
                match path.canonicalize() {
                    Ok(target) if target.starts_with(root) => {
                        let inner = target.strip_prefix(root).unwrap_or(&target);
                        if let Some(found) = look(inner) {
                            return Some(format!("{found} (through a link)"));
                        }
                        if target.is_dir() {
                            stack.push(target);
                        }
                    }
                    _ => return Some(outside(&path)),
                }
            } else if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if let Some(found) = look(path.strip_prefix(root).unwrap_or(&path)) {
                return Some(found);
            }
        }
    }
    None
}
