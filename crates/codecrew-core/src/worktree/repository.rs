//! The git repository a workspace lies in, as codecrew's worktrees need to know it.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::git::{Git, GitError, entries};
use super::record::Record;

/// A workspace's repository: its checkout's top folder and the git folder its
/// worktrees share.
#[derive(Debug, Clone)]
pub struct Repository {
    /// The checkout's top folder, canonical.
    pub top: PathBuf,
    /// The workspace relative to `top` (empty at the top).
    pub within: PathBuf,
    /// The git folder every worktree of the repository shares, canonical.
    pub common: PathBuf,
}

/// Why the repository could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{reference:?} names no commit in {}", .top.display())]
    NoSuchBase { reference: String, top: PathBuf },
    #[error("the repository in {} has no commit yet: commit once, then run again", .0.display())]
    NoCommit(PathBuf),
}

/// What the checkout holds that its HEAD does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirty {
    /// Tracked files changed, staged or not.
    pub tracked: Vec<String>,
    /// Files git does not track and does not ignore.
    pub untracked: Vec<String>,
}

impl Dirty {
    pub fn is_empty(&self) -> bool {
        self.tracked.is_empty() && self.untracked.is_empty()
    }

    /// The first few paths, for a message.
    pub fn sample(&self) -> String {
        let all: Vec<&str> = self
            .tracked
            .iter()
            .chain(&self.untracked)
            .map(String::as_str)
            .collect();
        let shown = all.iter().take(5).copied().collect::<Vec<_>>().join(", ");
        match all.len() {
            0..=5 => shown,
            more => format!("{shown} and {} more", more - 5),
        }
    }
}

impl Repository {
    /// The repository `workspace` lies in; None outside any (or without git).
    pub fn find(workspace: &Path) -> Option<Repository> {
        let git = Git::at(workspace);
        let said = git
            .run([
                "rev-parse",
                "--path-format=absolute",
                "--show-toplevel",
                "--git-common-dir",
            ])
            .ok()?;
        let mut lines = said.lines();
        let top = PathBuf::from(lines.next()?);
        let common = PathBuf::from(lines.next()?);
        let top = top.canonicalize().unwrap_or(top);
        let common = common.canonicalize().unwrap_or(common);
        let workspace = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        let within = workspace
            .strip_prefix(&top)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        Some(Repository {
            top,
            within,
            common,
        })
    }

    pub fn git(&self) -> Git {
        Git::at(&self.top)
    }

    /// The git folder of the worktree `record` describes.
    pub fn worktree_git_dir(&self, record: &Record) -> PathBuf {
        self.common.join("worktrees").join(&record.git_name)
    }

    /// Git in `record`'s worktree (under `folder`), once its links are checked to lead
    /// where codecrew made them: its git folder's `commondir` to this repository and its
    /// `gitdir` back to the worktree. The agent that worked there could write both; a
    /// link it changed could make git read another repository's configuration.
    pub fn worktree_git(&self, folder: &Path, record: &Record) -> Result<Git, GitError> {
        let path = record.path(folder);
        let git_dir = self.worktree_git_dir(record);
        let read = |name: &str| {
            std::fs::read_to_string(git_dir.join(name))
                .map(|text| text.trim_end_matches(['\n', '\r']).to_owned())
                .unwrap_or_default()
        };
        let common = git_dir.join(read("commondir"));
        let common_ok = common
            .canonicalize()
            .is_ok_and(|common| common == self.common);
        let back_ok = Path::new(&read("gitdir")) == path.join(".git");
        // Its HEAD on its own branch: a HEAD the agent pointed at another branch would
        // have codecrew's own commit of its work land there (git run outside its wall).
        // And that branch a commit, not a link to another ref (its file is the agent's to
        // write too): a commit "on" it would move the ref it names.
        let branch_file = self.common.join("refs/heads").join(&record.branch);
        let branch_ok = std::fs::read_to_string(&branch_file).map_or(true, |oid| {
            let oid = oid.trim();
            !oid.is_empty() && oid.bytes().all(|byte| byte.is_ascii_hexdigit())
        });
        let head_ok = branch_ok && read("HEAD") == format!("ref: refs/heads/{}", record.branch);
        // No configuration of its own: codecrew never writes one, and with the
        // repository's `extensions.worktreeConfig` on, git would read what the agent wrote
        // there (a filter's program, run by codecrew's commit outside every wall).
        let config_ok = std::fs::symlink_metadata(git_dir.join("config.worktree")).is_err();
        if record.repository != self.top || !common_ok || !back_ok || !head_ok || !config_ok {
            return Err(GitError::Failed {
                command: "worktree".into(),
                said: format!(
                    "the worktree {} no longer links to this repository, or its HEAD to its \
                     branch, as codecrew made it, or has a configuration of its own \
                     (config.worktree); codecrew will not run git there (remove it: codecrew \
                     worktrees rm {} {})",
                    path.display(),
                    record.run,
                    record.agent
                ),
            });
        }
        Ok(Git::in_worktree(path, git_dir))
    }

    /// The folder of this repository's worktrees under `root`: its folder's name and a
    /// digest of its path, so two checkouts named alike stay apart.
    pub fn folder(&self, root: &Path) -> PathBuf {
        let name = self
            .top
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let digest = Sha256::digest(self.top.as_os_str().as_encoded_bytes());
        let short: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        root.join(format!("{name}-{short}"))
    }

    /// The commit `reference` names (HEAD when None).
    pub fn commit(&self, reference: Option<&str>) -> Result<String, RepositoryError> {
        let reference = reference.unwrap_or("HEAD");
        // `--end-of-options`: a reference is never read as an option.
        let spec = format!("{reference}^{{commit}}");
        match self.git().run([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ]) {
            Ok(commit) if !commit.trim().is_empty() => Ok(commit.trim().to_owned()),
            _ if reference == "HEAD" => Err(RepositoryError::NoCommit(self.top.clone())),
            _ => Err(RepositoryError::NoSuchBase {
                reference: reference.to_owned(),
                top: self.top.clone(),
            }),
        }
    }

    /// What the checkout holds that HEAD does not (ignored files aside).
    pub fn dirty(&self) -> Result<Dirty, GitError> {
        let said = self
            .git()
            .run(["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
        let mut dirty = Dirty::default();
        let mut parts = entries(&said);
        while let Some(entry) = parts.next() {
            let (status, path) = entry.split_at(entry.len().min(3));
            if status.starts_with("??") {
                dirty.untracked.push(path.to_owned());
            } else {
                dirty.tracked.push(path.to_owned());
                // A rename's entry is followed by its old path.
                if status.starts_with('R') || status.starts_with('C') {
                    parts.next();
                }
            }
        }
        Ok(dirty)
    }
}
