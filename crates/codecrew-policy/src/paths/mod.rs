//! Which paths need a question before they are read or written.
//!
//! Two lists, both matched without regard to case (`.ENV`, `.Git/config` and `ID_RSA`
//! count as much as their lower-case spellings, since some file systems fold case):
//! - *sensitive* files hold credentials: reading one needs Ask;
//! - *protected* files steer tools, shells or codecrew itself: writing one needs Ask, even
//!   before it exists (sensitive files are protected too).
//!
//! In a workspace that holds the home directory (opted in), every hidden entry of the home
//! is sensitive too ([`crate::home`]): each function takes the [`HomeInWorkspace`] of the
//! workspace the path is read in, since one process may serve several.
//!
//! Everything here is lexical: it looks at the path's components, never at the disk, so
//! it works for files that do not exist yet and for paths named in shell commands. The
//! caller resolves symlinks first and classifies both the path as written and the path it
//! resolves to.

use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path};

mod tables;

use tables::*;

use crate::home::HomeInWorkspace;

/// Whether `name` ends in a source-code or documentation extension.
fn is_source_or_docs(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, extension)| SOURCE_OR_DOCS.contains(&extension))
}

/// The lower-case names of a path's normal components (`.` and `..` dropped: callers pass
/// normalised paths, and a lexical `..` never makes a path less sensitive).
fn components(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_string_lossy().to_lowercase()),
            Component::RootDir
            | Component::Prefix(_)
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect()
}

/// Whether the components `run` are the names `names`.
fn same(run: &[String], names: &[&str]) -> bool {
    run.len() == names.len()
        && run
            .iter()
            .zip(names)
            .all(|(part, name)| part.eq_ignore_ascii_case(name))
}

/// Why reading `path` needs a question, or None. `path` may be absolute, or relative to
/// the workspace whose `home` it is.
pub fn sensitive(path: &Path, home: &HomeInWorkspace) -> Option<String> {
    let parts = components(path);
    let shown = path.display();
    if let Some(entry) = home.hidden_entry(path) {
        return Some(format!(
            "{shown} is in {}, a hidden entry of your home directory, where programs keep \
             their sign-ins, keys and histories",
            entry.display()
        ));
    }
    // A repository's config files (its own, a submodule's, a worktree's) may carry a
    // token in a remote's URL, and its objects hold every file ever committed, the
    // sensitive ones included (compressed, not hidden).
    if let Some(at) = parts.iter().position(|part| part == ".git") {
        let inside = &parts[at + 1..];
        let config = inside
            .last()
            .is_some_and(|name| name == "config" || name == "config.worktree");
        if inside.iter().any(|part| part == "objects") || config {
            return Some(format!(
                "{shown} is inside a repository's .git (its config or objects), which may hold \
                 credentials or committed secrets"
            ));
        }
    }
    if let Some(dir) = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .find(|part| SENSITIVE_DIRS.contains(&part.as_str()))
    {
        return Some(format!("{shown} is inside {dir}/, which holds credentials"));
    }
    let above = &parts[..parts.len().saturating_sub(1)];
    if let Some(dir) = SENSITIVE_DIR_PATHS
        .iter()
        .find(|dir| above.windows(dir.len()).any(|run| same(run, dir)))
    {
        return Some(format!(
            "{shown} is inside {}/, which holds credentials",
            dir.join("/")
        ));
    }
    if SENSITIVE_FILE_PATHS
        .iter()
        .any(|file| parts.len() >= file.len() && same(&parts[parts.len() - file.len()..], file))
    {
        return Some(format!("{shown} holds credentials (a sign-in or a token)"));
    }
    let name = parts.last()?;
    // A backup of a sensitive file is as sensitive (`.netrc.bak`, `.pgpass~`).
    let name = &BACKUP_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .unwrap_or(name)
        .to_owned();
    if SENSITIVE_DIRS.contains(&name.as_str()) {
        return Some(format!("{shown} is a directory of credentials"));
    }
    let matched = SENSITIVE_NAMES
        .iter()
        .any(|sensitive| sensitive.eq_ignore_ascii_case(name))
        || (SENSITIVE_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
            && !is_source_or_docs(name))
        || SENSITIVE_SUFFIXES
            .iter()
            .any(|suffix| name.ends_with(suffix));
    matched.then(|| format!("{shown} may hold secrets (credentials, keys or tokens)"))
}

/// Why writing `path` needs a question, or None (as [`sensitive`]).
pub fn protected(path: &Path, home: &HomeInWorkspace) -> Option<String> {
    let parts = components(path);
    let shown = path.display();
    if let Some(dir) = parts
        .iter()
        .find(|part| PROTECTED_DIRS.contains(&part.as_str()))
    {
        return Some(format!(
            "{shown} is in {dir}/, which steers git, editors, the agent CLIs or codecrew itself"
        ));
    }
    for window in PROTECTED_DIR_PATHS {
        if parts
            .windows(window.len())
            .any(|run| run.iter().zip(window.iter()).all(|(a, b)| a == b))
        {
            return Some(format!(
                "{shown} is in {}/, which runs in CI with the repository's credentials or \
                 makes an agent CLI run programs",
                window.join("/")
            ));
        }
    }
    let name = parts.last()?;
    if PROTECTED_NAMES.contains(&name.as_str()) {
        return Some(format!(
            "{shown} is a configuration file that shells, git, agents or codecrew act on"
        ));
    }
    sensitive(path, home).map(|why| format!("{why}; overwriting it is not undoable"))
}

/// The sensitive files as glob patterns over a `/`-separated path, for a CLI that can
/// only be told by pattern what its own tools may not read (opencode's permissions,
/// where `*` matches any characters, `/` included). Wider than [`sensitive`]: no
/// exception for source files named like secrets (`secrets.rs`), no backups; each name
/// in lower and upper case. `home` is the workspace's, whose paths the patterns match.
pub fn sensitive_globs(home: &HomeInWorkspace) -> Vec<String> {
    let mut globs = Vec::new();
    for dir in SENSITIVE_DIRS {
        globs.extend([format!("{dir}/*"), format!("*/{dir}/*")]);
    }
    for path in SENSITIVE_DIR_PATHS {
        let path = path.join("/");
        globs.extend([format!("{path}/*"), format!("*/{path}/*")]);
    }
    for name in SENSITIVE_NAMES
        .iter()
        .map(|name| (*name).to_owned())
        .chain(SENSITIVE_FILE_PATHS.iter().map(|path| path.join("/")))
    {
        globs.extend([name.clone(), format!("*/{name}")]);
    }
    for prefix in SENSITIVE_PREFIXES {
        globs.extend([format!("{prefix}*"), format!("*/{prefix}*")]);
    }
    for suffix in SENSITIVE_SUFFIXES {
        globs.push(format!("*{suffix}"));
    }
    globs.extend(
        [
            ".git/config",
            "*/.git/config",
            ".git/objects/*",
            "*/.git/objects/*",
        ]
        .map(String::from),
    );
    globs.extend(home.globs());
    both_cases(globs)
}

/// Feeds `state` the tables the sensitive classes are made of: what a plan made under
/// other rules differs in. Hashing the tables rather than [`sensitive_globs`] spares every
/// codecrew building the globs (about 0.3 ms) just to recognise its kept read plan.
pub fn hash_sensitive_tables(state: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    (
        SENSITIVE_DIRS,
        SENSITIVE_DIR_PATHS,
        SENSITIVE_NAMES,
        SENSITIVE_FILE_PATHS,
        SENSITIVE_PREFIXES,
        SENSITIVE_SUFFIXES,
    )
        .hash(state);
}

/// The protected files (the sensitive ones included) as glob patterns, as
/// [`sensitive_globs`].
pub fn protected_globs(home: &HomeInWorkspace) -> Vec<String> {
    let mut globs = Vec::new();
    for dir in PROTECTED_DIRS {
        globs.extend([format!("{dir}/*"), format!("*/{dir}/*")]);
    }
    for path in PROTECTED_DIR_PATHS {
        let path = path.join("/");
        globs.extend([format!("{path}/*"), format!("*/{path}/*")]);
    }
    for name in PROTECTED_NAMES {
        globs.extend([(*name).to_owned(), format!("*/{name}")]);
    }
    globs.extend(sensitive_globs(home));
    both_cases(globs)
}

/// `globs` as written (`Login Data`, as Chrome spells it), in lower case, upper case, and
/// upper case but the extension (`AGENTS.md`), without repeats.
fn both_cases(globs: Vec<String>) -> Vec<String> {
    let shouted_stem = |glob: &str| match glob.rsplit_once('.') {
        Some((stem, extension)) if !extension.contains(['/', '*']) => {
            format!("{}.{}", stem.to_uppercase(), extension.to_lowercase())
        }
        _ => glob.to_uppercase(),
    };
    let mut all: Vec<String> = globs
        .iter()
        .flat_map(|glob| {
            [
                glob.clone(),
                glob.to_lowercase(),
                glob.to_uppercase(),
                shouted_stem(glob),
            ]
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    all.retain(|glob| seen.insert(glob.clone()));
    all
}

/// Why a file must never be opened by a tool: FIFOs (an open blocks), devices and
/// sockets. None for regular files, directories and missing files.
pub fn special(meta: &Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_block_device() || kind.is_char_device() {
        Some("a device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Whether a regular file has other names (hard links), one of which may lie outside the
/// workspace: reading it could read that file, so it needs a question.
pub fn hard_linked(meta: &Metadata) -> bool {
    meta.is_file() && meta.nlink() > 1
}

/// Paths under /proc and /sys that expose other processes' secrets or memory; never read.
pub fn forbidden_system_path(path: &str) -> Option<String> {
    let lower = path.to_lowercase();
    let proc_file = lower.starts_with("/proc/")
        && [
            "environ", "mem", "maps", "cmdline", "auxv", "kcore", "fd", "stack", "syscall", "root",
            "cwd", "exe", "pagemap",
        ]
        .iter()
        .any(|name| lower.split('/').any(|part| part == *name || part == "*"));
    (proc_file || lower.starts_with("/proc/kcore") || lower.starts_with("/sys/kernel/"))
        .then(|| format!("{path} exposes process memory or environment (secrets)"))
}

#[cfg(test)]
mod tests {
    /// `*` matching any characters, `/` included, as opencode matches its patterns.
    fn glob_matches(glob: &str, path: &str) -> bool {
        match glob.split_once('*') {
            None => glob == path,
            Some((head, rest)) => {
                path.starts_with(head)
                    && (head.len()..=path.len())
                        .any(|at| path.is_char_boundary(at) && glob_matches(rest, &path[at..]))
            }
        }
    }

    #[test]
    fn the_globs_cover_each_class_and_leave_ordinary_files() {
        let sensitive = super::sensitive_globs(&HomeInWorkspace::none());
        let protected = super::protected_globs(&HomeInWorkspace::none());
        let any = |globs: &[String], path: &str| globs.iter().any(|glob| glob_matches(glob, path));
        for path in [
            ".env",
            "app/.env.local",
            "home/u/.ssh/id_rsa",
            "keys/server.pem",
            "ENV/.ENV",
            ".git/config",
        ] {
            assert!(any(&sensitive, path), "{path}");
            assert!(any(&protected, path), "{path}");
        }
        for path in [
            "AGENTS.md",
            "sub/CLAUDE.md",
            ".github/workflows/ci.yml",
            ".bashrc",
            ".git/hooks/pre-commit",
            ".vscode/settings.json",
        ] {
            assert!(any(&protected, path), "{path}");
            assert!(!any(&sensitive, path), "{path}");
        }
        for path in [
            "src/main.rs",
            "README.md",
            "notes.txt",
            "docs/agents-guide.md",
        ] {
            assert!(!any(&protected, path), "{path}");
        }
    }

    use super::*;

    fn is_sensitive(path: &str) -> bool {
        sensitive(Path::new(path), &HomeInWorkspace::none()).is_some()
    }

    fn is_protected(path: &str) -> bool {
        protected(Path::new(path), &HomeInWorkspace::none()).is_some()
    }

    #[test]
    fn sensitive_files_in_any_case() {
        for path in [
            ".env",
            ".ENV",
            "app/.env.local",
            ".Env.Production",
            "prod.env",
            "certs/server.pem",
            "server.KEY",
            "id_rsa",
            "ID_RSA.pub",
            "home/.ssh/config",
            ".SSH/known_hosts",
            ".aws/credentials",
            ".git-credentials",
            "/root/.netrc",
            "secrets.yaml",
            "config/secrets.json",
            "secret.env",
            "service-account-prod.json",
            ".npmrc",
            ".env~",
            ".env-prod",
            // A thread quotes the secrets the user approved once.
            ".codecrew/threads/review.json",
            "app/.codecrew/audit.jsonl",
        ] {
            assert!(is_sensitive(path), "{path} should be sensitive");
        }
        for path in [
            "src/main.rs",
            "README.md",
            "environment.rs",
            "keys.rs",
            "docs/ssh.md",
            "envoy/config",
            "my.environment",
            // Code and prose about secrets, not stores of them.
            "crates/codecrew-policy/src/secrets.rs",
            "app/secrets.py",
            "docs/secrets.md",
            "service-account.md",
        ] {
            assert!(!is_sensitive(path), "{path} should not be sensitive");
        }
    }

    /// What a home directory keeps its credentials in: each holds a token, a key, saved
    /// logins or typed commands, and reached a model from a workspace that was the home.
    const HOME_CREDENTIAL_STORES: &[&str] = &[
        ".config/gh/hosts.yml",
        ".config/glab-cli/config.yml",
        ".config/hub",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".docker/config.json",
        ".m2/settings.xml",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
        ".local/state/codecrew/mcp-token",
        "state/codecrew/mcp-token",
        ".local/state/codecrew/thread-key",
        ".local/state/codecrew/runs.db",
        ".local/state/codecrew/runs.db-wal",
        "state/codecrew/runs.db-shm",
        ".local/state/codecrew/held/4194305-1/0.json",
        "state/codecrew/held/1-1/.idle-3.json",
        ".local/state/codecrew/journal-key",
        ".local/state/codecrew/chat_history",
        ".yarnrc.yml",
        ".yarnrc",
        ".config/rclone/rclone.conf",
        ".bash_history",
        ".zsh_history",
        ".histfile",
        ".local/share/fish/fish_history",
        ".python_history",
        ".psql_history",
        ".mysql_history",
        ".sqlite_history",
        ".node_repl_history",
        ".lesshst",
        ".viminfo",
        ".mozilla/firefox/abc.default-release/logins.json",
        ".mozilla/firefox/abc.default-release/prefs.js",
        "snap/firefox/common/.mozilla/firefox/p/key4.db",
        "somewhere/profile/cookies.sqlite",
        ".config/google-chrome/Default/Login Data",
        ".config/google-chrome/Default/Cookies",
        ".config/chromium/Default/Cookies",
        ".config/BraveSoftware/Brave-Browser/Default/Login Data",
        ".pki/nssdb/cert9.db",
        ".local/share/keyrings/login.keyring",
        ".gnupg/private-keys-v1.d/x.key",
        ".password-store/email.gpg",
        ".netrc",
        ".pypirc",
        ".git-credentials",
        ".terraform.d/credentials.tfrc.json",
        ".kube/config",
        ".config/gcloud/application_default_credentials.json",
        ".config/gcloud/access_tokens.db",
        ".azure/msal_token_cache.json",
        ".gemini/oauth_creds.json",
        ".qwen/oauth_creds.json",
        ".config/github-copilot/apps.json",
        ".config/github-copilot/hosts.json",
        ".claude/.credentials.json",
        ".codex/auth.json",
        ".local/share/opencode/auth.json",
    ];

    #[test]
    fn the_homes_credential_stores_are_sensitive_wherever_they_lie() {
        let globs = super::sensitive_globs(&HomeInWorkspace::none());
        for store in HOME_CREDENTIAL_STORES {
            for path in [store.to_string(), format!("/home/u/{store}")] {
                assert!(is_sensitive(&path), "{path} should be sensitive");
                assert!(is_protected(&path), "{path} should be protected");
            }
            // As opencode is told, relative to its worktree (the home, or a folder above).
            for path in [store.to_string(), format!("home/u/{store}")] {
                assert!(
                    globs.iter().any(|glob| glob_matches(glob, &path)),
                    "{path} should match a sensitive glob"
                );
            }
        }
        // A project's own files of the same names are not stores of credentials.
        for path in [
            "settings.xml",
            "src/main/resources/settings.xml",
            "gradle.properties",
            "android/gradle.properties",
            "mcp-token",
            "docs/mcp-token",
            "thread-key",
            "journal-key",
            "held/0.json",
            "src/held/mod.rs",
            "runs.db",
            "data/runs.db",
            "hosts.yml",
            "ansible/inventory/hosts.yml",
            "config.yml",
            ".config/gh/config.yml",
            "apps.json",
            "hub",
            "src/hub/mod.rs",
            "chromium/src/main.cc",
            "firefox/build.sh",
            "keyrings/debian-archive-keyring.gpg.md",
            "history.md",
            "src/cookies.rs",
            "Cargo.toml",
            ".cargo/config.toml",
        ] {
            assert!(!is_sensitive(path), "{path} should not be sensitive");
        }
    }

    #[test]
    fn protected_files_in_any_case_and_before_they_exist() {
        for path in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".GIT/HOOKS/post-checkout",
            "sub/.git/hooks/x",
            ".codecrew/state.json",
            "codecrew.toml",
            "CodeCrew.TOML",
            ".bashrc",
            ".zshrc",
            ".profile",
            ".github/workflows/ci.yml",
            ".GitHub/Workflows/release.yaml",
            ".env",
            ".vscode/tasks.json",
        ] {
            assert!(is_protected(path), "{path} should be protected");
        }
        for path in [
            "src/lib.rs",
            ".github/ISSUE_TEMPLATE.md",
            "gitconfig.md",
            "docs/git.md",
        ] {
            assert!(!is_protected(path), "{path} should not be protected");
        }
    }

    /// One process may read paths in several workspaces (an editor's sessions): each path
    /// is classed by the home its own workspace holds, as the path names it there.
    #[test]
    fn a_homes_hidden_entries_are_read_in_the_frame_of_each_workspace() {
        let homes = [std::path::PathBuf::from("/home/u")];
        let in_home = HomeInWorkspace::new(Path::new("/home/u"), &homes);
        let above = HomeInWorkspace::new(Path::new("/home"), &homes);
        let project = HomeInWorkspace::new(Path::new("/home/u/app"), &homes);
        let hidden = |path: &str, home: &HomeInWorkspace| {
            sensitive(Path::new(path), home).is_some_and(|why| why.contains("hidden entry"))
        };
        assert!(hidden(".myapp/session.txt", &in_home));
        assert!(hidden("u/.myapp/session.txt", &above));
        assert!(hidden("/home/u/.myapp/session.txt", &above));
        assert!(protected(Path::new(".myapp/session.txt"), &in_home).is_some());
        // The same words in another workspace name another file.
        assert!(!hidden("u/.myapp/session.txt", &in_home));
        assert!(!hidden(".myapp/session.txt", &above));
        assert!(!hidden(".notes/todo.txt", &project));
        assert!(sensitive(Path::new(".notes/todo.txt"), &project).is_none());
        // The globs opencode is told, likewise.
        assert!(sensitive_globs(&in_home).contains(&".*".to_owned()));
        assert!(sensitive_globs(&above).contains(&"u/.*".to_owned()));
        assert!(!sensitive_globs(&project).iter().any(|glob| glob == ".*"));
    }

    #[test]
    fn proc_environ_is_forbidden() {
        assert!(forbidden_system_path("/proc/self/environ").is_some());
        assert!(forbidden_system_path("/proc/1/environ").is_some());
        assert!(forbidden_system_path("/PROC/self/mem").is_some());
        assert!(forbidden_system_path("/proc/*/environ").is_some());
        assert!(forbidden_system_path("/proc/cpuinfo").is_none());
        assert!(forbidden_system_path("/etc/passwd").is_none());
    }
}
