//! The OS sandbox for the programs tools start: `run_command`, external tools and MCP
//! servers (Linux, Landlock), and the agent CLIs themselves. Three domains:
//!
//! - **read-only** ([`read_only_domain`]), for every command that runs without asking
//!   (the safe list, an allow rule of the config, and anything `run_command` runs in
//!   `query`): it may read and execute only beneath the workspace (but its sensitive
//!   files: [`crate::workspace_reads`]), the system's program
//!   and library directories ([`SYSTEM_READ`]) and the few configuration files programs
//!   need ([`SYSTEM_FILES`], the user's own git configuration); write nothing but
//!   `/dev/null`; use no network; signal nothing outside itself. This is the wall behind
//!   the shell analysis: a command the analysis misjudged still cannot read `~/.ssh`,
//!   write a byte or reach the network.
//! - **the mode's** ([`ruleset`]), for what the user approved in execute (a prompt,
//!   `--yes`) and for external tools and MCP servers: read anything, write as below.
//! - **the CLI's** ([`CliWall`]), for an agent CLI's own process: whatever its own tools
//!   do happens inside it (the workspace, the system, its installation and its own
//!   state; in `query` no write but its state).
//!
//! What a command approved in execute may do:
//! - read and execute anything (it is a build or a test, it needs the toolchain);
//! - write, create, rename and delete only inside the workspace and `/tmp` (and write
//!   `/dev/null`); hard-linking or moving files in from elsewhere is refused by the kernel;
//! - no TCP (bind or connect) unless `allow_network` is set (Landlock ABI 4, Linux 6.7);
//! - no signals to processes outside the sandbox, no abstract UNIX sockets outside it
//!   (ABI 6, Linux 6.12).
//!
//! The command also runs in a session of its own (`setsid`): its process group is the
//! one the timeout and Ctrl-C kill, and it has no controlling terminal, so it cannot read
//! the keys typed at codecrew's permission prompt.
//!
//! The rules are built in codecrew before the child starts; the child only calls
//! `setsid` and `landlock_restrict_self`, which allocate nothing: a forked child through
//! [`confine`], an agent CLI's started without fork through [`Domain::into_parts`] and
//! [`crate::spawn`]. A kernel without Landlock runs the command unconfined, and codecrew
//! says so on stderr once per run.

mod cli;
mod linked_git;

use std::path::{Path, PathBuf};
use std::sync::{Once, OnceLock};

pub use cli::{CliWall, NETWORK_FILES, install_root};
pub use linked_git::LinkedGit;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, path_beneath_rules,
};

/// The Landlock ABI whose features codecrew asks for (older kernels get what they have).
const ABI_WANTED: ABI = ABI::V6;

/// What the running kernel can enforce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// File system and network rules.
    Full,
    /// File system rules only (Linux 5.13 to 6.6): the network is not restricted.
    FilesOnly,
    /// No Landlock at all.
    Unsupported,
}

/// Makes codecrew's own process non-dumpable: its memory (`/proc/<pid>/mem`, ptrace) is
/// then open only to CAP_SYS_PTRACE, which the commands it runs give up, and with it the
/// API keys codecrew keeps for the agent CLIs. Its `/proc/<pid>/environ` stays readable
/// to a process of the same user on current kernels, which is why the keys' values are
/// zeroed there first ([`crate::secrets::hide_initial_secrets`]). (It also turns off
/// core dumps of codecrew.)
pub fn protect_self() {
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("could not make codecrew non-dumpable: {error}");
    }
}

/// What the kernel supports, probed once.
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        let probe = |with_net: bool| {
            let ruleset = Ruleset::default()
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessFs::from_all(ABI::V1));
            let ruleset = if with_net {
                ruleset.and_then(|ruleset| ruleset.handle_access(AccessNet::from_all(ABI::V4)))
            } else {
                ruleset
            };
            ruleset.and_then(Ruleset::create).is_ok()
        };
        if probe(true) {
            Support::Full
        } else if probe(false) {
            Support::FilesOnly
        } else {
            Support::Unsupported
        }
    })
}

/// Says once on stderr what the sandbox cannot do on this kernel.
fn warn_once(support: Support, allow_network: bool) {
    static WARNED: Once = Once::new();
    let message = match support {
        Support::Full => return,
        Support::FilesOnly if allow_network => return,
        Support::FilesOnly => {
            "codecrew: warning: this kernel's Landlock cannot restrict the network (needs \
             Linux 6.7); run_command commands may use it"
        }
        Support::Unsupported => {
            "codecrew: warning: this kernel has no Landlock (Linux 5.13+ with landlock in the \
             LSM list), so run_command runs without the OS sandbox: commands can write \
             outside the workspace and use the network. The permission checks still apply."
        }
    };
    WARNED.call_once(|| eprintln!("{message}"));
}

/// The rules for one program (writes allowed in `writable`, `/tmp` and `/dev/null`), built
/// before the fork. None when the kernel has no
/// Landlock (after the one warning).
pub fn ruleset<'a>(
    writable: impl IntoIterator<Item = &'a Path>,
    allow_network: bool,
) -> Result<Option<RulesetCreated>, landlock::RulesetError> {
    let support = support();
    warn_once(support, allow_network);
    if support == Support::Unsupported {
        return Ok(None);
    }
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(ABI_WANTED))?;
    if !allow_network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED))?;
    }
    let writable: Vec<&Path> = writable
        .into_iter()
        .chain([Path::new("/tmp"), Path::new("/dev/null")])
        .collect();
    let created = ruleset
        .scope(Scope::from_all(ABI_WANTED))?
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(ABI_WANTED)))?;
    Ok(Some(created))
}

/// Directories whose whole tree a read-only command may read and execute: where the
/// system keeps programs, libraries, locales, time zones and the like.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.conf.d",
    "/etc/terminfo",
    "/sys/devices/system/cpu",
];

/// Single files of `/etc` a read-only command may read: the dynamic loader's
/// configuration, users and groups (for `ls -l`, `id`), the time zone, locale and file
/// type databases, the system's git configuration. Nothing else of `/etc`
/// (`/etc/shadow`, keys) is readable.
pub const SYSTEM_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.preload",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/mime.types",
    "/etc/gitconfig",
    "/etc/gitattributes",
];

/// Devices a read-only command may read; `/dev/null` it may also write.
const READABLE_DEVICES: &[&str] = &["/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// Whether the user left the sandbox on: `CODECREW_SANDBOX=off` (the user's environment,
/// never the model's) turns it off.
pub fn enabled() -> bool {
    std::env::var("CODECREW_SANDBOX").map_or(true, |value| value != "off")
}

/// Why commands cannot run in the read-only sandbox here, or None when they can.
/// `enabled` is false when the user turned the sandbox off (`CODECREW_SANDBOX=off`).
pub fn read_only_unavailable(enabled: bool) -> Option<&'static str> {
    if !enabled {
        return Some("the user turned the OS sandbox off (CODECREW_SANDBOX=off)");
    }
    match support() {
        Support::Full => None,
        Support::FilesOnly => {
            Some("this kernel's Landlock cannot keep commands off the network (it needs Linux 6.7)")
        }
        Support::Unsupported => {
            Some("this kernel has no Landlock (Linux 5.13+ with landlock in the LSM list)")
        }
    }
}

/// The user's own git configuration, read-only: `~/.gitconfig`, the XDG `git/` folder
/// (config, ignore, attributes) and the files they include. Git refuses to run when a
/// configuration file it finds cannot be read.
fn user_git_config() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| home.as_ref().map(|home| home.join(".config")));
    crate::git::user_config_files(home.as_deref(), xdg.as_deref())
}

/// What a child enters before it executes its program: Landlock rules and a system-call
/// filter, both built before the fork.
#[derive(Default)]
pub struct Domain {
    ruleset: Option<RulesetCreated>,
    filter: Option<BpfProgram>,
}

/// Marks every descriptor above the standard streams close-on-exec, in a child about to
/// enter its wall: what codecrew's caller left open for it (a pipe of the shell's, a file
/// an editor holds open for writing) is not the confined program's to use, and Landlock,
/// which judges a path when it is opened, does not stop the use of one already open. Not
/// closed at once: the forked start's own report pipe must last until the `exec`. A plain
/// system call. Before Linux 5.11, which has no Landlock either, nothing changes.
#[allow(unsafe_code)]
pub(crate) fn close_inherited_on_exec() {
    // SAFETY: a plain system call on this process's own table of descriptors.
    unsafe {
        nix::libc::close_range(
            3,
            nix::libc::c_uint::MAX,
            nix::libc::CLOSE_RANGE_CLOEXEC as i32,
        );
    }
}

impl Domain {
    /// The ruleset's descriptor and the filter, for a child that enters them with plain
    /// system calls ([`crate::spawn`]).
    pub fn into_parts(self) -> (Option<std::os::fd::OwnedFd>, Option<BpfProgram>) {
        (self.ruleset.and_then(Option::from), self.filter)
    }
}

impl From<Option<RulesetCreated>> for Domain {
    fn from(ruleset: Option<RulesetCreated>) -> Self {
        Domain {
            ruleset,
            filter: None,
        }
    }
}

/// Why a domain could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    #[error(transparent)]
    Landlock(#[from] landlock::RulesetError),
    #[error("the system-call filter: {0}")]
    Filter(#[from] seccompiler::BackendError),
}

/// The read-only domain (see the module docs) for a command that runs without asking in
/// `workspace`: the Landlock rules, and a filter that refuses to create sockets (UDP
/// and UNIX sockets, which Landlock does not restrict) or io_uring instances (which
/// could open them). No rules when Landlock cannot enforce them (the caller has made
/// such commands ask: [`read_only_unavailable`]); no filter on an architecture the
/// filter does not know.
pub fn read_only_domain(workspace: &Path, git: &LinkedGit) -> Result<Domain, DomainError> {
    Ok(Domain {
        ruleset: read_only_ruleset(workspace, git)?,
        filter: no_sockets()?,
    })
}

/// The filter of the read-only domain: `socket` and `io_uring_setup` fail with EACCES;
/// every other call is allowed.
fn no_sockets() -> Result<Option<BpfProgram>, seccompiler::BackendError> {
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(None);
    };
    let refused = [nix::libc::SYS_socket, nix::libc::SYS_io_uring_setup]
        .into_iter()
        .map(|call| (call, Vec::<SeccompRule>::new()))
        .collect();
    let filter = SeccompFilter::new(
        refused,
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::EACCES.unsigned_abs()),
        arch,
    )?;
    Ok(Some(BpfProgram::try_from(filter)?))
}

fn read_only_ruleset(
    workspace: &Path,
    git: &LinkedGit,
) -> Result<Option<RulesetCreated>, landlock::RulesetError> {
    if support() != Support::Full {
        return Ok(None);
    }
    let read = AccessFs::from_read(ABI_WANTED);
    let file_read = read & AccessFs::from_file(ABI_WANTED);
    let reads = crate::workspace_reads::plan(workspace);
    let readable_files = SYSTEM_FILES
        .iter()
        .copied()
        .chain(READABLE_DEVICES.iter().copied())
        .map(PathBuf::from)
        .chain(user_git_config());
    let created = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI_WANTED))?
        .handle_access(AccessNet::from_all(ABI_WANTED))?
        .scope(Scope::from_all(ABI_WANTED))?
        .create()?
        .add_rules(path_beneath_rules(SYSTEM_READ, read))?
        // The workspace but its sensitive files (see `workspace_reads`).
        .add_rules(path_beneath_rules(&reads.trees, read))?
        .add_rules(path_beneath_rules(&reads.listed, AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(&reads.files, file_read))?
        // A linked worktree's repository: git reads it to say anything about the worktree.
        .add_rules(path_beneath_rules(&git.read, read))?
        .add_rules(path_beneath_rules(readable_files, file_read))?
        .add_rules(path_beneath_rules(
            ["/dev/null"],
            AccessFs::from_file(ABI_WANTED),
        ))?;
    Ok(Some(created))
}

/// Linux's number for CAP_SYS_PTRACE (capability.h).
const CAP_SYS_PTRACE: nix::libc::c_ulong = 19;

/// Makes the child of `command` start a session of its own, give up CAP_SYS_PTRACE (so
/// even as root it cannot read codecrew's memory or `/proc/<codecrew>/environ`, which
/// holds the secrets the scrub kept from the command; see [`protect_self`]) and, with a
/// ruleset, confine itself before it executes the program.
#[allow(unsafe_code)]
pub fn confine(command: &mut tokio::process::Command, domain: impl Into<Domain>) {
    let mut domain = domain.into();
    // SAFETY: see `enter`, the closure's only work.
    unsafe {
        command.pre_exec(move || enter(&mut domain));
    }
}

/// [`confine`] for a program codecrew runs and waits for itself (a blocking
/// `std::process::Command`).
#[allow(unsafe_code)]
pub fn confine_blocking(command: &mut std::process::Command, domain: impl Into<Domain>) {
    use std::os::unix::process::CommandExt;
    let mut domain = domain.into();
    // SAFETY: see `enter`, the closure's only work.
    unsafe {
        command.pre_exec(move || enter(&mut domain));
    }
}

/// What the child does between fork and exec: a session of its own, the descriptors it
/// inherited closed at the exec, no CAP_SYS_PTRACE,
/// the ruleset, the filter. It runs in the forked child, where only async-signal-safe
/// work is sound: plain system calls (setsid, prctl, and prctl plus
/// landlock_restrict_self inside `restrict_self`, prctl plus seccomp inside
/// `apply_filter`) on a ruleset file descriptor and a filter built before the fork; it
/// allocates nothing and takes no lock, and its errors are plain errno values.
#[allow(unsafe_code)]
fn enter(domain: &mut Domain) -> std::io::Result<()> {
    nix::unistd::setsid().map_err(|errno| std::io::Error::from_raw_os_error(errno as i32))?;
    close_inherited_on_exec();
    // Fails without CAP_SETPCAP (not root), where there is nothing to drop.
    // SAFETY: a plain prctl with integer arguments.
    let _ = unsafe { nix::libc::prctl(nix::libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0) };
    if let Some(ruleset) = domain.ruleset.take() {
        ruleset
            .restrict_self()
            .map_err(|_| std::io::Error::from_raw_os_error(nix::errno::Errno::EPERM as i32))?;
    }
    if let Some(filter) = &domain.filter {
        seccompiler::apply_filter(filter)
            .map_err(|_| std::io::Error::from_raw_os_error(nix::errno::Errno::EPERM as i32))?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A file outside any workspace held open by codecrew's caller, not close-on-exec, as
    /// a shell's `exec 7>>file` leaves one: its descriptor number.
    pub(crate) fn inherited_file(dir: &Path) -> (std::fs::File, i32) {
        let file = std::fs::File::create(dir.join("held-open.txt")).unwrap();
        nix::fcntl::fcntl(
            &file,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .unwrap();
        let fd = file.as_raw_fd();
        (file, fd)
    }

    /// The forked start (a tool's command, a CLI where the kernel has no pidfd): what the
    /// child inherited beyond its streams is closed when it executes, so a confined
    /// program cannot write through it.
    #[test]
    fn a_confined_command_cannot_use_a_descriptor_it_inherited() {
        let dir = tempfile::tempdir().unwrap();
        let (_held, fd) = inherited_file(dir.path());
        let script = format!("echo through >&{fd} && echo wrote || echo refused");
        let mut command = std::process::Command::new("/bin/sh");
        command.args(["-c", &script]);
        confine_blocking(&mut command, Domain::default());
        let output = command.output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "refused\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("held-open.txt")).unwrap(),
            ""
        );
        // Unconfined, the same command can: the refusal was the wall's.
        let output = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "wrote\n");
    }
}
