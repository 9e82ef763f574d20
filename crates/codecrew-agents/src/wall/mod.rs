//! The wall around a CLI's own process ([`codecrew_policy::sandbox::CliWall`]): what of
//! the machine it may read and write, worked out for one command before it starts.
//!
//! The CLI's module names its state ([`super::Cli::state`]); this adds its
//! installation, found from the program ([`install`]), and
//! a temporary directory of its own as its `TMPDIR`: in `query` `/tmp` is not writable,
//! since it may hold the workspace, and programs that look for a temporary folder
//! without `TMPDIR` find `/var/tmp` first, which the wall keeps them out of (SQLite's
//! migrations in Codex's state failed there).

mod compile_cache;
pub mod guard;
mod housekeeping;
pub mod install;

pub use housekeeping::finish as finish_housekeeping;

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};

use codecrew_policy::sandbox::{self, CliWall, Support};
use codecrew_tools::Mode;

/// What of the home directory a CLI's process may touch inside its wall, as its module
/// knows it ([`super::Cli::state`]). What makes a CLI run a program the next time it
/// starts — its settings, hooks, MCP server lists, plugins, extensions, commands,
/// agents — is read only, so that nothing running under codecrew can leave one there
/// for later, outside the wall.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Folders (and files) it reads and never writes: its settings, sign-in, extensions.
    pub read: Vec<PathBuf>,
    /// Folders it writes: sessions, caches, logs. codecrew makes the missing ones, since
    /// the CLI cannot make them in a folder it may only read.
    pub write: Vec<PathBuf>,
    /// Folders it needs to find but never writes (made when missing, read only).
    pub made: Vec<PathBuf>,
    /// Single files it rewrites in place: granted when they exist.
    pub files: Vec<PathBuf>,
    /// What the CLI must be able to write that also makes it run programs: put back
    /// after each command ([`Guarded`]).
    pub guarded: Vec<Guarded>,
}

/// A file or folder the CLI must be able to write that also holds what makes it run
/// programs: held as it was while the CLI runs ([`guard`]).
#[derive(Debug, Clone)]
pub struct Guarded {
    pub path: PathBuf,
    pub hold: Hold,
}

/// What of a guarded path is held.
#[derive(Debug, Clone, Copy)]
pub enum Hold {
    /// Some keys of a JSON file, each a path of object keys from the top; `*` stands
    /// for every key at its level (`["projects", "*", "mcpServers"]`).
    Keys(&'static [&'static [&'static str]]),
    /// The whole file, or every file beneath a folder.
    Whole,
    /// Every file beneath a folder but those under the names given (what the CLI itself
    /// rewrites there: Codex's bundled `skills/.system`).
    WholeBut(&'static [&'static str]),
    /// The files beneath a folder when the command starts; what the run adds is the
    /// CLI's own (Claude's shell snapshot of this run, beside those of its sessions
    /// outside codecrew, each of which sources its own file before every command).
    Existing,
}

impl State {
    /// `other`'s paths added to these.
    pub fn extend(&mut self, other: State) {
        self.read.extend(other.read);
        self.write.extend(other.write);
        self.made.extend(other.made);
        self.files.extend(other.files);
        self.guarded.extend(other.guarded);
    }

    /// Every folder written whole: for a CLI whose settings codecrew has not told apart
    /// from its state.
    pub fn writable(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        State {
            write: dirs.into_iter().collect(),
            ..State::default()
        }
    }
}

/// A CLI process's wall, the temporary directory that lives as long as the command, and
/// the guarded keys checked when it ends.
#[derive(Debug, Clone)]
pub struct Confinement {
    pub wall: CliWall,
    /// Removed when the last command holding it is dropped.
    pub temp: Option<Arc<tempfile::TempDir>>,
    /// Checked, and put back, when the last command holding them is dropped.
    pub guards: Vec<Arc<guard::Guard>>,
    /// Node's compile cache for the CLI (`compile_cache`).
    pub compile_cache: Option<PathBuf>,
}

impl Confinement {
    /// The variables the command needs on top of its environment.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let temp = self
            .temp
            .iter()
            .map(|temp| (OsString::from("TMPDIR"), temp.path().as_os_str().to_owned()));
        let cache = self.compile_cache.iter().map(|dir| {
            (
                OsString::from("NODE_COMPILE_CACHE"),
                dir.as_os_str().to_owned(),
            )
        });
        temp.chain(cache).collect()
    }
}

/// The user's home directory, where the CLIs keep their state.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
}

/// `$<variable>` when set to an absolute path.
pub fn custom_dir(variable: &str) -> Option<PathBuf> {
    std::env::var_os(variable)
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
}

/// `$<variable>` when set to an absolute path, else `~/<default>`.
pub fn dir_from_env(variable: &str, default: &str) -> Option<PathBuf> {
    custom_dir(variable).or_else(|| home().map(|home| home.join(default)))
}

/// An XDG base directory (`XDG_CONFIG_HOME`, ...) joined with `name`.
pub fn xdg(variable: &str, default: &str, name: &str) -> Option<PathBuf> {
    dir_from_env(variable, default).map(|dir| dir.join(name))
}

/// The wall for `program` (as found on PATH) run in `cwd` in `mode`, with `state` what
/// its CLI keeps in the home directory; `reads_sensitive` where the CLI asks codecrew
/// before each of its own reads (in `execute` it may then read the workspace's
/// sensitive files, which the policy asks about); `withheld` the paths of the workspace
/// it may not read at all (its own configuration in a checkout the user has not
/// trusted); `kind` the CLI's name in the registry, written down with what its guards
/// hold. None when the user turned the sandbox off.
pub fn confinement(
    program: &Path,
    cwd: &Path,
    mode: Mode,
    state: State,
    reads_sensitive: bool,
    withheld: &[&str],
    kind: &str,
) -> Option<Confinement> {
    if !sandbox::enabled() {
        return None;
    }
    warn_once();
    for dir in state.write.iter().chain(&state.made) {
        // A folder that does not exist yet could not be granted, and the CLI could not
        // create it in a folder it may only read.
        // Private, as the CLIs make their own: what it keeps there is the user's alone.
        if !dir.exists() {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
    }
    let mut writable = state.write;
    writable.extend(state.files);
    let cli = program.file_name().map_or_else(
        || "the agent CLI".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let holder = guard::Holder {
        cli: kind.to_owned(),
        workspace: cwd.to_path_buf(),
    };
    let guards = guard::hold(&state.guarded, &cli, &holder);
    let workspace = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let compile_cache = compile_cache::for_run(&cli, mode, &workspace);
    writable.extend(compile_cache.clone());
    let writes_workspace = mode == Mode::Execute;
    housekeeping::start();
    let temp = tempfile::Builder::new()
        .prefix(&housekeeping::temp_prefix())
        .tempdir()
        .ok()
        .map(Arc::new);
    Some(Confinement {
        wall: CliWall {
            workspace,
            writes_workspace,
            reads_sensitive: writes_workspace && reads_sensitive,
            withheld: withheld.iter().map(PathBuf::from).collect(),
            install: {
                let found = install::installation(program);
                found.dirs.into_iter().chain(found.files).collect()
            },
            settings: state.read,
            state: writable,
            temp: temp.as_ref().map(|temp| temp.path().to_path_buf()),
            git: Default::default(),
        },
        temp,
        guards,
        compile_cache,
    })
}

/// Says once per run when the kernel cannot hold the CLIs.
fn warn_once() {
    static WARNED: Once = Once::new();
    if sandbox::support() == Support::Unsupported {
        WARNED.call_once(|| {
            crate::notices::warn(
                "this kernel has no Landlock, so the agent CLIs run unconfined: their own \
                 tools can read and write outside the workspace",
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_gets_a_temporary_directory_of_its_own() {
        let workspace = tempfile::tempdir().unwrap();
        let Some(query) = confinement(
            Path::new("/bin/sh"),
            workspace.path(),
            Mode::Query,
            State::default(),
            true,
            &[],
            "sh",
        ) else {
            return; // the sandbox is off in this environment
        };
        let temp = query.temp.clone().unwrap();
        assert_eq!(
            query.env()[0],
            (OsString::from("TMPDIR"), temp.path().into())
        );
        assert!(!query.wall.writes_workspace);
        assert!(!query.wall.reads_sensitive, "never in query");
        // Its state folders are made when missing; its state files are granted as they
        // are; its settings are read only.
        let settings = workspace.path().join("home/.cli");
        let state = workspace.path().join("home/.cli/sessions");
        let file = workspace.path().join("home/.cli.json");
        let execute = confinement(
            Path::new("/bin/sh"),
            workspace.path(),
            Mode::Execute,
            State {
                read: vec![settings.clone()],
                write: vec![state.clone()],
                files: vec![file.clone()],
                ..State::default()
            },
            false,
            &[".claude"],
            "sh",
        )
        .unwrap();
        assert!(state.is_dir() && !file.exists());
        assert_eq!(execute.wall.state[..2], [state, file]);
        // Node's compile cache, apart per CLI, mode and workspace.
        let cache = execute.compile_cache.clone().unwrap();
        assert_eq!(execute.wall.state[2], cache);
        assert!(cache.is_dir());
        assert!(
            cache
                .to_string_lossy()
                .contains("/node-compile-cache/sh/execute/")
        );
        assert_ne!(Some(cache), query.compile_cache, "query and execute apart");
        assert!(execute.env().contains(&(
            OsString::from("NODE_COMPILE_CACHE"),
            execute.compile_cache.clone().unwrap().into()
        )));
        assert_eq!(execute.wall.settings, [settings]);
        assert!(execute.wall.writes_workspace);
        assert!(!execute.wall.reads_sensitive);
        assert_eq!(execute.wall.withheld, [PathBuf::from(".claude")]);
        assert_ne!(execute.temp.unwrap().path(), temp.path());
    }
}
