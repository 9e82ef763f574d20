//! The wall around an agent CLI's own process (`claude`, `codex`, ...): whatever its own
//! tools do, or whatever a permission bridge failed to stop, happens inside it.
//!
//! The CLI may read and execute:
//! - the workspace: in `query` all of it but its sensitive files (the same plan as the
//!   read-only domain: [`crate::workspace_reads`]), in `execute` all of it;
//! - the system's programs and libraries ([`super::SYSTEM_READ`]), `/proc` and `/sys`
//!   (runtimes read their own process and the machine's limits there; another
//!   process's `/proc` entries stay behind Landlock's ptrace rule), the few files of `/etc`
//!   that programs and name resolution need ([`super::SYSTEM_FILES`], [`NETWORK_FILES`]),
//!   the user's git configuration;
//! - its own installation (the caller finds it from the program: [`CliWall::install`]);
//! - its own settings and sign-in ([`CliWall::settings`]), read only, so that nothing
//!   running inside can leave a hook, an MCP server or a plugin there to run later,
//!   outside the wall;
//! - its own state ([`CliWall::state`]: sessions, caches, logs), which it may write.
//!
//! Nothing else of the home directory, nothing of other users, mounts or `/tmp`.
//! It may write its state, a private temporary directory ([`CliWall::temp`]),
//! `/dev/null` and pseudo-terminals; in `execute` also the workspace, whose sensitive
//! files it then reads only where its own reads are judged by the policy
//! ([`CliWall::reads_sensitive`]), and where the workspace holds the home
//! (`--allow-home`) never writes the home's hidden entries (`~/.bashrc`, codecrew's
//! journal) nor the sensitive files. The network is open: the CLI talks to its model's API.

use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::{
    ABI_WANTED, Domain, DomainError, READABLE_DEVICES, SYSTEM_FILES, SYSTEM_READ, Support, support,
    user_git_config,
};

/// What a CLI needs of `/etc` besides [`SYSTEM_FILES`]: name resolution and the
/// certificate stores its HTTPS client reads.
pub const NETWORK_FILES: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/os-release",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
];

/// Trees a CLI reads besides [`SYSTEM_READ`].
const RUNTIME_READ: &[&str] = &["/proc", "/sys"];

/// Devices a CLI may read and write: the null device, and pseudo-terminals for the
/// shells its own tools run in a terminal (Gemini's `forkpty`); `/dev/tty` is the
/// terminal of the CLI's own session, never the user's (it runs in a session of its own).
const DEVICES: &[&str] = &["/dev/null", "/dev/ptmx", "/dev/pts", "/dev/tty"];

/// What one CLI process may touch, besides the workspace and the system.
#[derive(Debug, Clone, Default)]
pub struct CliWall {
    /// The workspace, canonical.
    pub workspace: PathBuf,
    /// `execute`: the workspace is writable.
    pub writes_workspace: bool,
    /// Whether the workspace's sensitive files are readable: only where the CLI asks
    /// codecrew before each of its own reads (the permission bridge decides about them).
    pub reads_sensitive: bool,
    /// Paths of the workspace (relative) the CLI may not read: its own configuration in
    /// a checkout the user has not trusted, which could make it run programs.
    pub withheld: Vec<PathBuf>,
    /// The CLI's installation: read and execute.
    pub install: Vec<PathBuf>,
    /// Its settings, sign-in and extensions (folders and files): read only.
    pub settings: Vec<PathBuf>,
    /// Its state folders and the files it rewrites in place: read and write.
    pub state: Vec<PathBuf>,
    /// A temporary directory of its own (its `TMPDIR`): read and write.
    pub temp: Option<PathBuf>,
    /// In a linked worktree codecrew made: its repository's git data (read; in
    /// `execute`, what a commit writes).
    pub git: super::LinkedGit,
}

impl CliWall {
    /// The domain the CLI enters before it executes. No rules when the kernel has no
    /// Landlock file system rules (the caller has said so).
    pub fn domain(&self) -> Result<Domain, DomainError> {
        if support() == Support::Unsupported {
            return Ok(Domain::default());
        }
        let read = AccessFs::from_read(ABI_WANTED);
        let file_read = read & AccessFs::from_file(ABI_WANTED);
        let all = AccessFs::from_all(ABI_WANTED);
        let workspace = crate::workspace_reads::plan_withholding(
            &self.workspace,
            &crate::workspace_reads::Withheld {
                sensitive: !self.reads_sensitive,
                paths: self.withheld.clone(),
            },
        );
        let mut writable: Vec<PathBuf> = self.state.clone();
        writable.extend(self.temp.clone());
        if self.writes_workspace {
            writable.extend(self.git.write.iter().cloned());
        }
        writable.extend(DEVICES.iter().map(PathBuf::from));
        // Not `/tmp`: it may hold files outside the workspace (a checkout under /tmp), and
        // the CLI has a temporary directory of its own. The workspace is written without
        // the right to read what the plan above withholds: Landlock adds rights up.
        let workspace_writes: Vec<PathBuf> = if !self.writes_workspace {
            Vec::new()
        } else if !crate::home::HomeInWorkspace::of(&self.workspace).is_empty() {
            // A workspace that holds the home (`--allow-home`): its hidden entries
            // (`~/.bashrc`, `~/.profile`, each program's settings, codecrew's own journal
            // in `~/.local/state`) run programs later, outside any wall, so nothing inside
            // writes them, whatever it may read: only the trees and files of a plan that
            // withholds them (and the other sensitive files) are written, never the
            // folders that hold them, where a missing one could be made.
            let planned;
            let writes = if self.reads_sensitive {
                planned = crate::workspace_reads::plan_withholding(
                    &self.workspace,
                    &crate::workspace_reads::Withheld {
                        sensitive: true,
                        paths: self.withheld.clone(),
                    },
                );
                &planned
            } else {
                &workspace
            };
            writes.trees.iter().chain(&writes.files).cloned().collect()
        } else {
            vec![self.workspace.clone()]
        };
        let readable_files = SYSTEM_FILES
            .iter()
            .chain(NETWORK_FILES)
            .chain(READABLE_DEVICES)
            .map(PathBuf::from)
            .chain(user_git_config());
        let created = Ruleset::default()
            .handle_access(all)?
            .scope(Scope::from_all(ABI_WANTED))?
            .create()?
            .add_rules(path_beneath_rules(SYSTEM_READ, read))?
            .add_rules(path_beneath_rules(RUNTIME_READ, read))?
            .add_rules(path_beneath_rules(readable_files, file_read))?
            .add_rules(path_beneath_rules(&self.install, read))?
            .add_rules(path_beneath_rules(&self.settings, read))?
            .add_rules(path_beneath_rules(&self.git.read, read))?
            .add_rules(path_beneath_rules(&workspace.trees, read))?
            .add_rules(path_beneath_rules(&workspace.listed, AccessFs::ReadDir))?
            .add_rules(path_beneath_rules(&workspace.files, file_read))?
            .add_rules(path_beneath_rules(&writable, all))?
            .add_rules(path_beneath_rules(&workspace_writes, all & !read))?;
        Ok(Domain::from(Some(created)))
    }
}

/// The directory a program belongs to, to be read with it: the `node_modules` folder a
/// package's entry point lies in, else the prefix of a `bin` folder (a virtualenv, an
/// installation like `/opt/node`), else the program's own folder. `home` is never
/// granted whole, nor a folder that holds it: a program in `~/.local/bin` gets that folder
/// only.
pub fn install_root(program: &Path, home: Option<&Path>) -> PathBuf {
    let parent = program.parent().unwrap_or(program);
    let too_wide =
        |dir: &Path| home.is_some_and(|home| home.starts_with(dir)) || dir == Path::new("/");
    if let Some(modules) = program
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "node_modules"))
        && !too_wide(modules)
    {
        return modules.to_path_buf();
    }
    if parent.file_name().is_some_and(|name| name == "bin")
        && let Some(prefix) = parent.parent()
        && !too_wide(prefix)
        && prefix.file_name().is_some_and(|name| name != ".local")
    {
        return prefix.to_path_buf();
    }
    parent.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_programs_installation_is_its_package_folder_or_its_prefix() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            install_root(
                Path::new("/home/u/.npm/lib/node_modules/@a/claude/cli.js"),
                home
            ),
            Path::new("/home/u/.npm/lib/node_modules")
        );
        assert_eq!(
            install_root(Path::new("/home/u/.nvm/versions/node/v20/bin/node"), home),
            Path::new("/home/u/.nvm/versions/node/v20")
        );
        assert_eq!(
            install_root(Path::new("/work/.clis/venv/bin/llm"), home),
            Path::new("/work/.clis/venv")
        );
        assert_eq!(
            install_root(Path::new("/home/u/.local/bin/aichat"), home),
            Path::new("/home/u/.local/bin"),
            "never all of ~/.local"
        );
        assert_eq!(
            install_root(Path::new("/home/u/bin/tool"), home),
            Path::new("/home/u/bin"),
            "never the home directory"
        );
    }
}
