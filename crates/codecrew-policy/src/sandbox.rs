//! The OS sandbox for the programs tools start: `run_command` in execute mode and external
//! tools (Linux, Landlock).
//!
//! What a sandboxed command may do:
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
//! The rules are built in codecrew before the fork; the child only calls `setsid` and
//! `landlock_restrict_self`, which allocate nothing. A kernel without Landlock runs the
//! command unconfined, and codecrew says so on stderr once per run.

use std::path::Path;
use std::sync::{Once, OnceLock};

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

/// Makes codecrew's own process non-dumpable: its `/proc/<pid>/environ` and memory are
/// then readable only with CAP_SYS_PTRACE, which the commands it runs give up. Without
/// this a command could read the API keys codecrew passes to the agent CLIs from
/// `/proc/$PPID/environ`, scrub or not. (It also turns off core dumps of codecrew.)
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
pub fn ruleset(
    writable: Option<&Path>,
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

/// Linux's number for CAP_SYS_PTRACE (capability.h).
const CAP_SYS_PTRACE: nix::libc::c_ulong = 19;

/// Makes the child of `command` start a session of its own, give up CAP_SYS_PTRACE (so
/// even as root it cannot read codecrew's memory or `/proc/<codecrew>/environ`, which
/// holds the secrets the scrub kept from the command; see [`protect_self`]) and, with a
/// ruleset, confine itself before it executes the program.
#[allow(unsafe_code)]
pub fn confine(command: &mut tokio::process::Command, ruleset: Option<RulesetCreated>) {
    let mut ruleset = ruleset;
    // SAFETY: the closure runs in the forked child before exec, where only
    // async-signal-safe work is sound. It makes plain system calls (setsid, prctl, and
    // prctl plus landlock_restrict_self inside `restrict_self`) on a ruleset file
    // descriptor built before the fork; it allocates nothing and takes no lock, and its
    // errors are plain errno values.
    unsafe {
        command.pre_exec(move || {
            nix::unistd::setsid()
                .map_err(|errno| std::io::Error::from_raw_os_error(errno as i32))?;
            // Fails without CAP_SETPCAP (not root), where there is nothing to drop.
            let _ = nix::libc::prctl(nix::libc::PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
            if let Some(ruleset) = ruleset.take() {
                ruleset.restrict_self().map_err(|_| {
                    std::io::Error::from_raw_os_error(nix::errno::Errno::EPERM as i32)
                })?;
            }
            Ok(())
        });
    }
}
