//! Making an agent's worktree: a linked worktree on a branch of its own, outside the
//! repository, with what the checkout's ignored files and the user's set-up add.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use codecrew_policy::sandbox::LinkedGit;

use super::git::{GitError, entries};
use super::record::{Record, RecordError, now};
use super::repository::{Repository, RepositoryError};
use super::{Git, branch};

/// What to do with a checkout that holds changes HEAD does not (`--dirty`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DirtyChoice {
    /// Refuse to start, naming the files and the choices.
    #[default]
    Refuse,
    /// Start from the base as it is; the changes stay in the checkout alone.
    Ignore,
    /// Bring the tracked files' changes into each worktree.
    CopyTracked,
    /// Those, and the files git does not track (but does not ignore either).
    CopyAll,
}

/// How a run's worktrees are made.
#[derive(Debug, Clone, Default)]
pub struct Isolation {
    /// The commit each worktree starts from (`--base`; HEAD when None).
    pub base: Option<String>,
    pub dirty: DirtyChoice,
    /// Folders of the checkout linked into each worktree rather than copied
    /// (`[worktree] link`).
    pub link: Vec<String>,
    /// A command run in each new worktree (`[worktree] setup`), from the user's config.
    pub setup: Option<String>,
}

/// Why a worktree could not be made. Each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum MakeError {
    #[error(
        "there is nowhere to keep worktrees: neither XDG_DATA_HOME nor HOME is set \
         (or set CODECREW_WORKTREES to a folder)"
    )]
    NoRoot,
    #[error(
        "the checkout {} has changes its HEAD does not ({}); the agents' worktrees would \
         not have them. Commit or stash them, or choose: --dirty ignore (start from HEAD), \
         --dirty copy-tracked, --dirty copy-all",
        .top.display(), .sample
    )]
    Dirty { top: PathBuf, sample: String },
    #[error(
        "the repository's own git configuration makes git run {0}, which making and \
         comparing worktrees would start outside every wall; remove it from .git/config \
         (your ~/.gitconfig is yours and stays), or give the agents one at a time"
    )]
    RunsAProgram(String),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the worktree set-up `{command}` failed in {}: {said}", .path.display())]
    Setup {
        command: String,
        path: PathBuf,
        said: String,
    },
}

/// A worktree made for one agent.
#[derive(Debug, Clone)]
pub struct Made {
    pub record: Record,
    /// The worktree's top folder.
    pub path: PathBuf,
    /// Where the agent works: the worktree's counterpart of the workspace.
    pub workspace: PathBuf,
    /// What it may reach of the repository (and of the folders linked in).
    pub outside: LinkedGit,
    /// What the user should know (a submodule not initialised...).
    pub notes: Vec<String>,
}

/// The base commit of a run's worktrees, after checking the checkout: refused when it
/// holds changes and `dirty` says to refuse.
pub fn base(repo: &Repository, isolation: &Isolation) -> Result<String, MakeError> {
    // Checking files out and committing them runs the filters and drivers a repository's
    // config names: codecrew runs git there unasked, so not with those.
    if let Some(why) = codecrew_policy::git::program_in_repository_itself(&repo.top) {
        return Err(MakeError::RunsAProgram(why));
    }
    let base = repo.commit(isolation.base.as_deref())?;
    if isolation.dirty == DirtyChoice::Refuse {
        let dirty = repo.dirty()?;
        if !dirty.is_empty() {
            return Err(MakeError::Dirty {
                top: repo.top.clone(),
                sample: dirty.sample(),
            });
        }
    }
    Ok(base)
}

/// Makes `agent`'s worktree for `run` from `base` (checked by [`base`]).
pub fn make(
    repo: &Repository,
    base: &str,
    run: &str,
    agent: &str,
    isolation: &Isolation,
) -> Result<Made, MakeError> {
    let root = super::root().ok_or(MakeError::NoRoot)?;
    let folder = repo.folder(&root);
    let run_folder = folder.join(run);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&run_folder)
        .map_err(|source| MakeError::Io {
            path: run_folder.clone(),
            source,
        })?;
    let mut record = Record {
        run: run.to_owned(),
        agent: agent.to_owned(),
        repository: repo.top.clone(),
        branch: branch(run, agent),
        git_name: agent.to_owned(),
        base: base.to_owned(),
        created: now(),
        pid: Some(i64::from(std::process::id())),
        pid_start: i32::try_from(std::process::id())
            .ok()
            .and_then(codecrew_policy::process::started_ms),
        linked: Vec::new(),
        change: None,
        check: None,
        applied: None,
    };
    let path = record.path(&folder);
    // Written first: a worktree half made is found and removed by its record.
    record.write(&folder)?;
    let path_arg = path.as_os_str().to_owned();
    repo.git().run([
        "worktree".as_ref(),
        "add".as_ref(),
        "--quiet".as_ref(),
        "-b".as_ref(),
        record.branch.as_ref(),
        path_arg.as_os_str(),
        base.as_ref(),
    ])?;
    let own_git = PathBuf::from(
        Git::at(&path)
            .run(["rev-parse", "--absolute-git-dir"])?
            .trim(),
    );
    let name = own_git
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    record.git_name = name.clone();
    record.write(&folder)?;
    let worktree = repo.worktree_git(&folder, &record)?;
    let mut outside =
        LinkedGit::for_worktree(repo.common.clone(), &name, &format!("codecrew/{run}"));
    let mut notes = Vec::new();
    match isolation.dirty {
        DirtyChoice::CopyTracked => copy_tracked_changes(repo, &worktree)?,
        DirtyChoice::CopyAll => {
            copy_tracked_changes(repo, &worktree)?;
            let untracked = repo.dirty()?.untracked;
            copy_files(&repo.top, &path, untracked.iter().map(String::as_str))?;
        }
        DirtyChoice::Refuse | DirtyChoice::Ignore => {}
    }
    if path.join(".gitmodules").is_file() {
        notes.extend(init_submodules(repo, &worktree, agent));
    }
    copy_included(repo, &path)?;
    for name in &isolation.link {
        if let Some(target) = link(repo, &path, name)? {
            outside.read.push(target);
            record.linked.push(name.clone());
        }
    }
    if !record.linked.is_empty() {
        record.write(&folder)?;
    }
    if let Some(command) = &isolation.setup {
        set_up(command, &path)?;
    }
    let workspace = path.join(&repo.within);
    Ok(Made {
        record,
        path,
        workspace,
        outside,
        notes,
    })
}

/// Initialises the worktree's submodules from the checkout's own (cloned from the
/// folder where the checkout has each, with no network): what could not be, said.
fn init_submodules(repo: &Repository, worktree: &Git, agent: &str) -> Vec<String> {
    let listed = worktree
        .run([
            "config",
            "--file",
            ".gitmodules",
            "--get-regexp",
            r"^submodule\..*\.path$",
        ])
        .unwrap_or_default();
    let mut notes = Vec::new();
    for line in listed.lines() {
        let Some((key, sub_path)) = line.split_once(' ') else {
            continue;
        };
        let Some(name) = key
            .strip_prefix("submodule.")
            .and_then(|key| key.strip_suffix(".path"))
        else {
            continue;
        };
        // A path the checkout's .gitmodules names: never one that leads out of it.
        if !is_inside(sub_path) {
            continue;
        }
        let in_checkout = repo.top.join(sub_path);
        let url = format!("submodule.{name}.url={}", in_checkout.display());
        let from_checkout = in_checkout.join(".git").exists();
        let mut args: Vec<&str> = Vec::new();
        if from_checkout {
            // The user's own checkout of it: as trusted as the checkout, and local.
            args.extend(["-c", "protocol.file.allow=always", "-c", &url]);
        }
        args.extend([
            "submodule",
            "update",
            "--init",
            "--recursive",
            "--",
            sub_path,
        ]);
        if let Err(error) = worktree.run(&args) {
            notes.push(format!(
                "@{agent}'s worktree: the submodule {sub_path} could not be initialised \
                 (it is empty there): {error}"
            ));
        }
    }
    notes
}

/// The checkout's changes to tracked files, applied in the worktree.
fn copy_tracked_changes(repo: &Repository, worktree: &Git) -> Result<(), MakeError> {
    let patch = repo.git().command(["diff", "--binary", "HEAD"]).output();
    let patch = patch.map_err(GitError::Missing)?;
    if patch.stdout.is_empty() {
        return Ok(());
    }
    let mut apply = worktree
        .command(["apply", "--whitespace=nowarn", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(GitError::Missing)?;
    if let Some(mut stdin) = apply.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(&patch.stdout)
            .map_err(|source| MakeError::Io {
                path: worktree.dir().to_path_buf(),
                source,
            })?;
    }
    let output = apply.wait_with_output().map_err(GitError::Missing)?;
    if !output.status.success() {
        return Err(super::git::failed(&["apply"], &output).into());
    }
    Ok(())
}

/// The files `.worktreeinclude` names (gitignore syntax) among those git ignores,
/// copied from the checkout as regular files.
fn copy_included(repo: &Repository, path: &Path) -> Result<(), MakeError> {
    let list = repo.top.join(".worktreeinclude");
    if !list.is_file() {
        return Ok(());
    }
    let mut builder = ignore::gitignore::GitignoreBuilder::new(&repo.top);
    if let Some(error) = builder.add(&list) {
        tracing::warn!("{}: {error}", list.display());
    }
    let Ok(matcher) = builder.build() else {
        return Ok(());
    };
    let ignored = repo.git().run([
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
    ])?;
    let included = entries(&ignored)
        .filter(|file| matcher.matched_path_or_any_parents(file, false).is_ignore());
    copy_files(&repo.top, path, included)
}

/// Copies `files` (relative) from `from` to `to` as regular files, keeping their mode.
/// A file that is a link, or whose folder leads out of `from`, is left out: a worktree
/// never gets a link out of the checkout it came from.
fn copy_files<'a>(
    from: &Path,
    to: &Path,
    files: impl Iterator<Item = &'a str>,
) -> Result<(), MakeError> {
    for file in files {
        let relative = Path::new(file);
        if !is_inside(file) {
            continue;
        }
        let source = from.join(relative);
        let Ok(meta) = std::fs::symlink_metadata(&source) else {
            continue;
        };
        let inside = source
            .canonicalize()
            .is_ok_and(|real| real.starts_with(from));
        if !meta.file_type().is_file() || !inside {
            continue;
        }
        let target = to.join(relative);
        let io = |source| MakeError::Io {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::copy(&source, &target).map_err(io)?;
    }
    Ok(())
}

/// Links the checkout's folder `name` into the worktree (where it is missing there):
/// the folder it leads to, for the wall to let the agent read.
fn link(repo: &Repository, path: &Path, name: &str) -> Result<Option<PathBuf>, MakeError> {
    let relative = Path::new(name);
    if !is_inside(name) {
        return Ok(None);
    }
    let source = repo.top.join(relative);
    let target = path.join(relative);
    if !source.is_dir() || target.symlink_metadata().is_ok() {
        return Ok(None);
    }
    if let Some(parent) = target.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::os::unix::fs::symlink(&source, &target).map_err(|source| MakeError::Io {
        path: target.clone(),
        source,
    })?;
    Ok(Some(source.canonicalize().unwrap_or(source)))
}

/// Whether `relative` names a path beneath a folder: no root, no `..`, not empty.
fn is_inside(relative: &str) -> bool {
    let path = Path::new(relative);
    !relative.is_empty()
        && path
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)))
}

/// Runs the user's set-up command in the new worktree.
fn set_up(command: &str, path: &Path) -> Result<(), MakeError> {
    let output = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(path)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| MakeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    Err(MakeError::Setup {
        command: command.to_owned(),
        path: path.to_path_buf(),
        said: said.trim().chars().take(2000).collect(),
    })
}
