//! A scratch machine whose `claude` is a shell script: a home, a workspace, and a PATH
//! where the script comes first. For what no real CLI can be made to do on cue (hold
//! its exit, ignore SIGTERM, write at a given moment).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::binary::codecrew_alone;

pub struct ScriptedClaude {
    dir: tempfile::TempDir,
}

impl ScriptedClaude {
    /// The machine, with `script` as its `claude`.
    pub fn new(script: &str) -> ScriptedClaude {
        let dir = tempfile::tempdir().unwrap();
        let machine = ScriptedClaude { dir };
        for folder in [machine.home(), machine.workspace(), machine.bin()] {
            std::fs::create_dir_all(folder).unwrap();
        }
        let claude = machine.claude();
        std::fs::write(&claude, script).unwrap();
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        machine
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// The script's path, which names its process in `/proc`.
    pub fn claude(&self) -> PathBuf {
        self.bin().join("claude")
    }

    /// `codecrew <args>` in the workspace, with only this machine's home and PATH, its
    /// output piped.
    pub fn codecrew(&self, args: &[&str]) -> Command {
        let mut command = codecrew_alone(&self.home());
        command
            .arg("--workdir")
            .arg(self.workspace())
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin().display()))
            .env("CODECREW_CONFIG", "")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Whether a process whose command line names the script is running.
    pub fn claude_runs(&self) -> bool {
        running(&self.claude())
    }
}

/// Whether a process whose command line names `program` is running.
pub fn running(program: &Path) -> bool {
    let needle = program.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline.windows(needle.len()).any(|w| w == needle))
    })
}
