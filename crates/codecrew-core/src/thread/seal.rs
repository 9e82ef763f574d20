//! Which threads the user made: each thread codecrew writes carries a seal, an
//! HMAC-SHA256 of what it continues (its name and its agents' CLIs, models and sessions)
//! under a key only the user can read (`$XDG_STATE_HOME/codecrew/thread-key`, 0600, made
//! on first use). A thread a checkout ships has no seal of the user's, and none can be
//! made for it without the key, which no CLI's wall reaches.
//!
//! The seal covers only strings (no float whose text could change in a round trip), in
//! a fixed order (struct fields, a `BTreeMap`), so writing the same thread again gives
//! the same seal.

use std::path::{Path, PathBuf};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{FORMAT_VERSION, Thread};
use codecrew_config::secret_file::{self, SecretFileError};

/// The key's length in bytes.
const KEY_BYTES: usize = 32;
/// Keeps a thread's seal from ever meaning anything else made with the same key.
const DOMAIN: &[u8] = b"codecrew thread seal\0";

/// The user's thread key: `$XDG_STATE_HOME/codecrew/thread-key`, else
/// `~/.local/state/codecrew/thread-key`.
pub fn user_key_path() -> Option<PathBuf> {
    codecrew_policy::state_folder::location().map(|dir| dir.join("thread-key"))
}

/// Seals threads and checks their seals with one key.
pub struct Sealer {
    key: Vec<u8>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    /// The sealer of the key at `path`, made there when there is none yet.
    pub fn with_key_at(path: &Path) -> Result<Sealer, SecretFileError> {
        let text = secret_file::read_or_create(path, KEY_BYTES)?;
        Ok(Sealer {
            key: text.into_bytes(),
        })
    }

    /// `thread` with its seal set for what it holds now.
    pub fn seal(&self, thread: &mut Thread) {
        thread.seal = self
            .mac(thread)
            .map(|mac| hex(&mac.finalize().into_bytes()));
    }

    /// Whether `thread` carries this key's seal of what it holds.
    pub fn is_sealed(&self, thread: &Thread) -> bool {
        let Some(seal) = thread.seal.as_deref().and_then(unhex) else {
            return false;
        };
        // Compared in constant time by the MAC itself.
        self.mac(thread)
            .is_some_and(|mac| mac.verify_slice(&seal).is_ok())
    }

    /// The MAC of what `thread` continues; `None` (no seal made, none accepted) where
    /// HMAC refused the key or the fields did not serialise, which neither does.
    fn mac(&self, thread: &Thread) -> Option<Hmac<Sha256>> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).ok()?;
        mac.update(DOMAIN);
        // Only strings: `(version, name, agents)` serialises the same way every time.
        let sealed = serde_json::to_vec(&(FORMAT_VERSION, &thread.name, &thread.agents)).ok()?;
        mac.update(&sealed);
        Some(mac)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{AgentState, ThreadName};
    use super::*;

    fn thread() -> Thread {
        let mut thread = Thread::new(
            &ThreadName::parse("review").unwrap(),
            "2026-01-01T00:00:00Z".to_owned(),
        );
        thread.agents.insert(
            "claude".to_owned(),
            AgentState {
                provider: "claude".to_owned(),
                model: Some("haiku".to_owned()),
                session_id: Some("3a9402ca-1472-42f2-9849-3f1b060f9fd3".to_owned()),
            },
        );
        thread
    }

    #[test]
    fn a_sealed_thread_is_known_and_a_changed_or_foreign_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let sealer = Sealer::with_key_at(&dir.path().join("key")).unwrap();
        let mut mine = thread();
        assert!(!sealer.is_sealed(&mine), "no seal yet");
        sealer.seal(&mut mine);
        assert!(sealer.is_sealed(&mine));

        // Through a file and back, as the store keeps it.
        let text = serde_json::to_string_pretty(&mine).unwrap();
        let read: Thread = serde_json::from_str(&text).unwrap();
        assert!(sealer.is_sealed(&read));

        // Another session slipped in under the seal.
        let mut changed = mine.clone();
        if let Some(state) = changed.agents.get_mut("claude") {
            state.session_id = Some("--dangerously-skip-permissions".to_owned());
        }
        assert!(!sealer.is_sealed(&changed));

        // The user's own sealed thread, shipped under another name (a checkout copying
        // a thread it saw): the name is sealed too.
        let mut renamed = mine.clone();
        renamed.name = "other".to_owned();
        assert!(!sealer.is_sealed(&renamed));

        // Sealed by someone else's key (a checkout's author).
        let theirs = Sealer::with_key_at(&dir.path().join("their-key")).unwrap();
        let mut shipped = thread();
        theirs.seal(&mut shipped);
        assert!(!sealer.is_sealed(&shipped));

        // Not a seal at all.
        for seal in ["", "zz", "abc", "é"] {
            let mut odd = thread();
            odd.seal = Some(seal.to_owned());
            assert!(!sealer.is_sealed(&odd), "{seal:?}");
        }
    }

    #[test]
    fn the_key_is_kept_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/thread-key");
        let mut sealed = thread();
        Sealer::with_key_at(&path).unwrap().seal(&mut sealed);
        assert!(Sealer::with_key_at(&path).unwrap().is_sealed(&sealed));
    }
}
