//! The threads directory: one `<name>.json` per thread, changed only under an exclusive
//! lock on `<name>.lock` and always replaced whole (a temporary file in the same directory,
//! fsynced, then renamed over it). A reader therefore sees the old document or the new
//! one, never half of one, and needs no lock; a writer re-reads under the lock, so an
//! exchange another job or process saved meanwhile is kept, not overwritten.
//!
//! The lock lives in its own file because the rename gives the document a new inode: a lock
//! on the document itself would not be seen by the next writer.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use codecrew_tools::state_dir;
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::seal::{self, Sealer};
use super::{FORMAT_VERSION, Result, Thread, ThreadError, ThreadName};
use codecrew_config::secret_file::SecretFileError;

/// The threads of one workspace.
#[derive(Debug, Clone)]
pub struct ThreadStore {
    dir: PathBuf,
    /// The key that seals what this store writes ([`seal`]); `None` seals nothing.
    key: Option<PathBuf>,
}

/// One entry of [`ThreadStore::list`]: a thread, or why its file cannot be read.
pub type Listed = (ThreadName, Result<Thread>);

impl ThreadStore {
    /// `<workspace>/.codecrew/threads`, sealed with the user's key.
    pub fn in_workspace(workspace: &Path) -> ThreadStore {
        ThreadStore {
            dir: state_dir::in_workspace(workspace).join("threads"),
            key: seal::user_key_path(),
        }
    }

    /// The threads in `dir`, unsealed.
    pub fn at(dir: PathBuf) -> ThreadStore {
        ThreadStore { dir, key: None }
    }

    /// The same store, sealing with the key at `key`.
    pub fn sealed_with(self, key: PathBuf) -> ThreadStore {
        ThreadStore {
            key: Some(key),
            ..self
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds a thread.
    pub fn path(&self, name: &ThreadName) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    fn lock_path(&self, name: &ThreadName) -> PathBuf {
        self.dir.join(format!("{name}.lock"))
    }

    /// The thread, or `None` when it does not exist yet. No lock: files are replaced whole.
    pub fn load(&self, name: &ThreadName) -> Result<Option<Thread>> {
        let path = self.path(name);
        let bytes = match state_dir::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ThreadError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
        };
        let corrupt = |reason: String| ThreadError::Corrupt {
            name: name.to_string(),
            path: path.clone(),
            reason,
        };
        let thread: Thread =
            serde_json::from_slice(&bytes).map_err(|error| corrupt(error.to_string()))?;
        if thread.version != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {}, this codecrew reads version {FORMAT_VERSION}",
                thread.version
            )));
        }
        if thread.name != name.as_str() {
            return Err(corrupt(format!("it names the thread {:?}", thread.name)));
        }
        Ok(Some(thread))
    }

    /// Reads the thread under the lock (a new one if there is none), lets `change` modify
    /// it and writes it back atomically. Returns the thread as written.
    pub fn update(
        &self,
        name: &ThreadName,
        now: String,
        change: impl FnOnce(&mut Thread),
    ) -> Result<Thread> {
        let _lock = self.lock(name)?;
        let mut thread = self.load(name)?.unwrap_or_else(|| Thread::new(name, now));
        change(&mut thread);
        match self.sealer(name) {
            Ok(sealer) => sealer.seal(&mut thread),
            // The exchange is kept all the same; only continuing it will ask for a key.
            Err(error) => {
                thread.seal = None;
                tracing::warn!("{error}");
            }
        }
        self.write(name, &thread)?;
        Ok(thread)
    }

    /// The thread to continue, or `None` when it does not exist yet. A thread the user's
    /// codecrew did not write (no seal of theirs) is refused unless the user trusts the
    /// project: a checkout may ship `.codecrew/threads/`, and a thread says which
    /// sessions and models the agents resume.
    pub fn load_to_continue(
        &self,
        name: &ThreadName,
        project_trusted: bool,
    ) -> Result<Option<Thread>> {
        let Some(thread) = self.load(name)? else {
            return Ok(None);
        };
        if project_trusted || self.sealer(name)?.is_sealed(&thread) {
            Ok(Some(thread))
        } else {
            Err(ThreadError::NotYours {
                name: name.to_string(),
                path: self.path(name),
            })
        }
    }

    /// Seals an existing thread as the user's: they have read it and continue it.
    pub fn adopt(&self, name: &ThreadName) -> Result<Thread> {
        let sealer = self.sealer(name)?;
        let _lock = self.lock(name)?;
        let mut thread = self.load(name)?.ok_or_else(|| ThreadError::NotFound {
            name: name.to_string(),
            path: self.path(name),
        })?;
        sealer.seal(&mut thread);
        self.write(name, &thread)?;
        Ok(thread)
    }

    fn sealer(&self, name: &ThreadName) -> Result<Sealer> {
        let key_error = |source| ThreadError::Key {
            name: name.to_string(),
            source,
        };
        let Some(key) = &self.key else {
            return Err(key_error(SecretFileError::Io {
                path: PathBuf::from("$XDG_STATE_HOME/codecrew/thread-key"),
                source: std::io::Error::other("neither XDG_STATE_HOME nor HOME is set"),
            }));
        };
        Sealer::with_key_at(key).map_err(key_error)
    }

    /// Removes a thread and its lock file.
    pub fn remove(&self, name: &ThreadName) -> Result<()> {
        let lock = self.lock(name)?;
        let path = self.path(name);
        let removed = match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == ErrorKind::NotFound => Err(ThreadError::NotFound {
                name: name.to_string(),
                path,
            }),
            Err(source) => Err(ThreadError::Io {
                action: "remove",
                path,
                source,
            }),
        };
        // Still holding the lock: a writer waiting on this lock file sees it gone and
        // opens a new one (see `lock`), so removing it cannot let two writers in at once.
        // A lock file left behind is harmless, so failing to remove it is no error.
        let _ = std::fs::remove_file(self.lock_path(name));
        drop(lock);
        removed
    }

    /// Every thread, sorted by name; a file that cannot be read is listed with its error.
    pub fn list(&self) -> Result<Vec<Listed>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ThreadError::Io {
                    action: "list",
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| ThreadError::Io {
                action: "list",
                path: self.dir.clone(),
                source,
            })?;
            let file_name = entry.file_name();
            // Lock files, temporary files and whatever else is not ours are skipped.
            let Some(stem) = file_name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            if let Ok(name) = ThreadName::parse(stem) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names
            .into_iter()
            .filter_map(|name| match self.load(&name) {
                Ok(Some(thread)) => Some((name, Ok(thread))),
                // Removed since the directory was read.
                Ok(None) => None,
                Err(error) => Some((name, Err(error))),
            })
            .collect())
    }

    /// Takes the thread's exclusive lock, waiting for whoever holds it.
    fn lock(&self, name: &ThreadName) -> Result<Flock<File>> {
        let path = self.lock_path(name);
        let io = |action, source| ThreadError::Io {
            action,
            path: path.clone(),
            source,
        };
        state_dir::create(&self.dir).map_err(|source| ThreadError::Io {
            action: "create",
            path: self.dir.clone(),
            source,
        })?;
        loop {
            let file = state_dir::open_rw(&path).map_err(|source| io("open", source))?;
            let locked = match Flock::lock(file, FlockArg::LockExclusive) {
                Ok(locked) => locked,
                Err((_, Errno::EINTR)) => continue,
                Err((_, errno)) => return Err(io("lock", errno.into())),
            };
            // `remove` deletes the lock file while holding it: a lock on a file that is no
            // longer at `path` excludes nobody, so start again with the current one.
            let held = locked.metadata().map_err(|source| io("inspect", source))?;
            match std::fs::metadata(&path) {
                Ok(current) if current.dev() == held.dev() && current.ino() == held.ino() => {
                    return Ok(locked);
                }
                Ok(_) => continue,
                Err(error) if error.kind() == ErrorKind::NotFound => continue,
                Err(source) => return Err(io("inspect", source)),
            }
        }
    }

    /// Replaces the thread's file whole: temporary file, fsync, rename, fsync the directory.
    fn write(&self, name: &ThreadName, thread: &Thread) -> Result<()> {
        let path = self.path(name);
        let io = |action, source| ThreadError::Io {
            action,
            path: path.clone(),
            source,
        };
        let mut bytes = serde_json::to_vec_pretty(thread)
            .map_err(|error| io("serialise", std::io::Error::other(error)))?;
        bytes.push(b'\n');
        // A leading dot: never taken for a thread (names cannot start with one).
        let mut temporary = tempfile::Builder::new()
            .prefix(".")
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(|source| io("create a temporary file for", source))?;
        temporary
            .write_all(&bytes)
            .and_then(|()| temporary.as_file().sync_all())
            .map_err(|source| io("write", source))?;
        temporary
            .persist(&path)
            .map_err(|error| io("replace", error.error))?;
        // The rename itself must survive a crash too.
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|source| io("sync the directory of", source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::Exchange;

    fn exchange(task: &str) -> Exchange {
        Exchange {
            agent: "mine".to_owned(),
            provider: "command".to_owned(),
            model: None,
            mode: "query".to_owned(),
            task: task.to_owned(),
            answer: format!("answer to {task}"),
            time: "2025-01-01T00:00:01Z".to_owned(),
            session_id: None,
            usage: None,
        }
    }

    fn name(text: &str) -> ThreadName {
        ThreadName::parse(text).unwrap()
    }

    const NOW: &str = "2025-01-01T00:00:00Z";

    /// The workspace's store, sealing with a key of the test's own (not the user's).
    fn in_workspace(workspace: &Path) -> ThreadStore {
        ThreadStore::in_workspace(workspace).sealed_with(workspace.join("thread-key"))
    }

    /// A thread as a checkout could ship it: written by no codecrew.
    fn ship(store: &ThreadStore, name: &ThreadName) {
        let mut thread = Thread::new(name, NOW.to_owned());
        thread.agents.insert(
            "claude".to_owned(),
            super::super::AgentState {
                provider: "claude".to_owned(),
                model: Some("--settings=/tmp/x.json".to_owned()),
                session_id: Some("--dangerously-skip-permissions".to_owned()),
            },
        );
        state_dir::create(store.dir()).unwrap();
        std::fs::write(store.path(name), serde_json::to_vec(&thread).unwrap()).unwrap();
    }

    #[test]
    fn a_thread_the_user_did_not_write_is_not_continued_until_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let store = in_workspace(dir.path());
        let shipped = name("shipped");
        ship(&store, &shipped);
        let error = store.load_to_continue(&shipped, false).unwrap_err();
        assert!(matches!(error, ThreadError::NotYours { .. }), "{error}");
        assert!(
            error.to_string().contains("codecrew threads adopt shipped"),
            "{error}"
        );
        // A project the user trusts may ship threads.
        assert!(store.load_to_continue(&shipped, true).unwrap().is_some());
        // Shown as data all the same.
        assert!(store.load(&shipped).unwrap().is_some());

        let adopted = store.adopt(&shipped).unwrap();
        assert!(adopted.seal.is_some());
        assert_eq!(
            store.load_to_continue(&shipped, false).unwrap(),
            Some(adopted)
        );

        // What codecrew writes is the user's; a thread not there yet is none at all.
        let mine = name("mine");
        assert_eq!(store.load_to_continue(&mine, false).unwrap(), None);
        store
            .update(&mine, NOW.to_owned(), |t| t.add(exchange("one")))
            .unwrap();
        assert!(store.load_to_continue(&mine, false).unwrap().is_some());

        // Sealed with another key (another user's, a checkout author's): not theirs.
        let theirs = ThreadStore::in_workspace(dir.path()).sealed_with(dir.path().join("other"));
        assert!(matches!(
            theirs.load_to_continue(&mine, false),
            Err(ThreadError::NotYours { .. })
        ));
        assert!(matches!(
            store.adopt(&name("missing")),
            Err(ThreadError::NotFound { .. })
        ));

        // A checkout's link to a sealed thread of the user's other project: not followed.
        let checkout = tempfile::tempdir().unwrap();
        let there = in_workspace(checkout.path()).sealed_with(dir.path().join("thread-key"));
        state_dir::create(there.dir()).unwrap();
        std::os::unix::fs::symlink(store.path(&mine), there.path(&mine)).unwrap();
        let error = there.load_to_continue(&mine, false).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
    }

    #[test]
    fn update_creates_then_appends_and_load_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = in_workspace(dir.path());
        let t = name("t");
        assert_eq!(store.load(&t).unwrap(), None);
        store
            .update(&t, NOW.to_owned(), |thread| thread.add(exchange("one")))
            .unwrap();
        let written = store
            .update(&t, "2030-01-01T00:00:00Z".to_owned(), |thread| {
                thread.add(exchange("two"))
            })
            .unwrap();
        assert_eq!(written.created, NOW, "created stays the first time");
        let loaded = store.load(&t).unwrap().unwrap();
        assert_eq!(loaded, written);
        let tasks: Vec<&str> = loaded.exchanges.iter().map(|e| e.task.as_str()).collect();
        assert_eq!(tasks, ["one", "two"]);
        assert_eq!(
            store.path(&t),
            dir.path().join(".codecrew/threads/t.json"),
            "the documented place"
        );
        // Only the document and its lock file are left: no temporary file.
        let mut files: Vec<String> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["t.json", "t.lock"]);
    }

    /// Many writers at once, each in its own thread with its own store: every exchange is
    /// kept and the file stays valid.
    #[test]
    fn concurrent_updates_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let t = name("busy");
        let writers: Vec<_> = (0..16)
            .map(|n| {
                let store = in_workspace(dir.path());
                let t = t.clone();
                std::thread::spawn(move || {
                    for round in 0..5 {
                        store
                            .update(&t, NOW.to_owned(), |thread| {
                                thread.add(exchange(&format!("w{n}r{round}")))
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let thread = in_workspace(dir.path()).load(&t).unwrap().unwrap();
        let mut tasks: Vec<String> = thread.exchanges.into_iter().map(|e| e.task).collect();
        tasks.sort();
        let mut expected: Vec<String> = (0..16)
            .flat_map(|n| (0..5).map(move |round| format!("w{n}r{round}")))
            .collect();
        expected.sort();
        assert_eq!(tasks, expected);
    }

    /// While one holder has the lock, another waits; it then sees the first one's change.
    #[test]
    fn the_lock_excludes_and_the_waiter_rereads() {
        let dir = tempfile::tempdir().unwrap();
        let store = in_workspace(dir.path());
        let t = name("t");
        let held = store.lock(&t).unwrap();
        let (started_tx, started) = std::sync::mpsc::channel();
        let waiter = {
            let store = store.clone();
            let t = t.clone();
            std::thread::spawn(move || {
                started_tx.send(()).unwrap();
                store
                    .update(&t, NOW.to_owned(), |thread| thread.add(exchange("second")))
                    .unwrap()
            })
        };
        started.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(!waiter.is_finished(), "the waiter must block on the lock");
        // Written as the lock holder: the waiter must merge, not overwrite.
        let mut first = Thread::new(&t, NOW.to_owned());
        first.add(exchange("first"));
        store.write(&t, &first).unwrap();
        drop(held);
        let written = waiter.join().unwrap();
        let tasks: Vec<&str> = written.exchanges.iter().map(|e| e.task.as_str()).collect();
        assert_eq!(tasks, ["first", "second"]);
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = in_workspace(dir.path());
        let t = name("broken");
        std::fs::create_dir_all(store.dir()).unwrap();
        std::fs::write(store.path(&t), "{\"version\": 1, \"name\": ").unwrap();
        let message = store.load(&t).unwrap_err().to_string();
        assert!(
            message.contains(&store.path(&t).display().to_string()),
            "{message}"
        );
        assert!(message.contains("codecrew threads rm broken"), "{message}");
        let error = store
            .update(&t, NOW.to_owned(), |thread| thread.add(exchange("x")))
            .unwrap_err();
        assert!(matches!(error, ThreadError::Corrupt { .. }), "{error}");
        assert_eq!(
            std::fs::read_to_string(store.path(&t)).unwrap(),
            "{\"version\": 1, \"name\": ",
            "an update never replaces a file it could not read"
        );
        // A document of another thread or format version is not taken either.
        let mut other = Thread::new(&name("other"), NOW.to_owned());
        std::fs::write(store.path(&t), serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(matches!(store.load(&t), Err(ThreadError::Corrupt { .. })));
        other.name = "broken".to_owned();
        other.version = 99;
        std::fs::write(store.path(&t), serde_json::to_vec(&other).unwrap()).unwrap();
        let message = store.load(&t).unwrap_err().to_string();
        assert!(message.contains("version 99"), "{message}");
    }

    #[test]
    fn list_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let store = in_workspace(dir.path());
        assert!(store.list().unwrap().is_empty(), "no directory yet");
        for n in ["b", "a"] {
            store
                .update(&name(n), NOW.to_owned(), |thread| thread.add(exchange(n)))
                .unwrap();
        }
        std::fs::write(store.dir().join("c.json"), "not json").unwrap();
        std::fs::write(store.dir().join(".tmp123.tmp"), "{").unwrap();
        let listed = store.list().unwrap();
        let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(listed[0].1.is_ok() && listed[1].1.is_ok());
        assert!(matches!(listed[2].1, Err(ThreadError::Corrupt { .. })));

        store.remove(&name("a")).unwrap();
        assert!(!store.path(&name("a")).exists());
        assert!(!store.dir().join("a.lock").exists());
        assert!(matches!(
            store.remove(&name("a")),
            Err(ThreadError::NotFound { .. })
        ));
        // A corrupt thread can be removed: that is the way out the error suggests.
        store.remove(&name("c")).unwrap();
        let names: Vec<String> = store
            .list()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n.to_string())
            .collect();
        assert_eq!(names, ["b"]);
    }
}
