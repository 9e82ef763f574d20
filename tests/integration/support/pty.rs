//! A terminal for a test, as a terminal emulator makes one: a pseudo-terminal whose slave
//! is the controlling terminal of the program run on it (a session of its own, the slave
//! its terminal: `setsid --ctty`, which calls setsid and TIOCSCTTY on stdin before it
//! runs the program in its own place, so the pid is the program's). The test holds the
//! master: it types, reads what the program wrote, and closes the master to hang up,
//! which is what closing a terminal window does: the kernel sends SIGHUP to the session
//! and the slave's reads fail.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::pty::{PtyMaster, grantpt, posix_openpt, ptsname_r, unlockpt};

use super::clis::CliEnv;

pub struct Terminal {
    /// None once the terminal was closed ([`Terminal::hang_up`]).
    master: Option<PtyMaster>,
    child: Child,
    /// Every byte the program wrote so far.
    written: Vec<u8>,
}

impl Terminal {
    /// `program args` with `env`, on a new terminal of 150×40 that it controls.
    pub fn run(env: &CliEnv, program: &Path, args: &[&str]) -> Terminal {
        // Both ends close on exec, opened so at once (another test's thread may start a
        // program meanwhile): a copy of the master in any other process would keep the
        // terminal open when the test closes it.
        let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(OFlag::O_NOCTTY.bits())
            .open(ptsname_r(&master).unwrap())
            .unwrap();
        // Read without blocking: the test reads what there is between its checks.
        let flags = OFlag::from_bits_truncate(fcntl(&master, FcntlArg::F_GETFL).unwrap());
        fcntl(&master, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
        let sized = Command::new("stty")
            .args(["cols", "150", "rows", "40"])
            .stdin(slave.try_clone().unwrap())
            .status()
            .unwrap();
        assert!(sized.success(), "stty could not size the terminal");
        let mut command = Command::new("setsid");
        env.apply(&mut command);
        command
            .env("TERM", "xterm-256color")
            .arg("--ctty")
            .arg(program)
            .args(args)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave);
        let child = command.spawn().unwrap();
        Terminal {
            master: Some(master),
            child,
            written: Vec::new(),
        }
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// What the program wrote so far, as text.
    pub fn text(&mut self) -> String {
        self.read();
        String::from_utf8_lossy(&self.written).into_owned()
    }

    /// Types `keys` (raw bytes: `\r` is Enter, `\x04` Ctrl-D).
    pub fn type_keys(&mut self, keys: &[u8]) {
        let master = self.master.as_mut().expect("the terminal was closed");
        master.write_all(keys).unwrap();
    }

    /// Waits until `done` holds of what was written, or panics after `limit` showing it.
    pub fn wait_for(&mut self, what: &str, limit: Duration, done: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let text = self.text();
            if done(&text) {
                return;
            }
            assert!(
                start.elapsed() < limit,
                "no {what} within {limit:?}; the terminal shows:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the terminal from the master's side: the program's session gets SIGHUP.
    pub fn hang_up(&mut self) {
        self.read();
        self.master = None;
    }

    /// The program's exit status once it exits, within `limit` (None: still running).
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            self.read();
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if start.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Takes in what the program wrote since the last read (the terminal's buffer would
    /// fill, and block it, if nobody read).
    fn read(&mut self) {
        let Some(master) = self.master.as_mut() else {
            return;
        };
        let mut buffer = [0u8; 8192];
        loop {
            match master.read(&mut buffer) {
                Ok(0) => return,
                Ok(n) => self.written.extend_from_slice(&buffer[..n]),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                // Nothing more for now, or the slave's side all closed (EIO).
                Err(_) => return,
            }
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
