//! Which records of the journal codecrew wrote ([`super::journal`]). A record says what
//! to write where, outside any wall, so none is read back unless it carries a seal: an
//! HMAC-SHA256, under a key of the user's, of the folder it was written in
//! (`<pid>-<start>`: a record moved into another codecrew's folder is not that one's)
//! and of its bytes.
//!
//! The key is kept beside the journal's folder (`$XDG_STATE_HOME/codecrew/journal-key`),
//! made once from the OS's random source, `0600`, and refused when it is a link, another
//! user's, or readable or writable by others (`codecrew_config::secret_file`). No tool,
//! command or CLI reads the state folder (`codecrew_policy::state_folder`), so a record
//! written by anything but codecrew — a tool, a command, a CLI's own write where the
//! state folder lies inside the workspace — carries no seal that fits, however it got
//! there.
//!
//! A sealed record is one line, `codecrew-held 2 <the seal in hex>`, then the record.

use std::path::{Path, PathBuf};

use codecrew_config::secret_file;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The key's length in bytes.
const KEY_BYTES: usize = 32;
/// What opens a sealed record, before its seal.
const HEADER: &[u8] = b"codecrew-held 2 ";
/// Keeps a record's seal from ever meaning anything else made with the same key.
const DOMAIN: &[u8] = b"codecrew held record\0";

/// The key that seals the records of one journal.
pub struct Key {
    key: Vec<u8>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// Where the key of the journal under `root` is kept: beside it.
pub fn key_path(root: &Path) -> Option<PathBuf> {
    Some(root.parent()?.join("journal-key"))
}

impl Key {
    /// The key of the journal under `root`, made when there is none yet; why not, when
    /// it cannot be had (then nothing is sealed, and nothing read back).
    pub fn of(root: &Path) -> Result<Key, String> {
        let path = key_path(root).ok_or_else(|| "the journal has no folder above it".to_owned())?;
        let text =
            secret_file::read_or_create(&path, KEY_BYTES).map_err(|error| error.to_string())?;
        Ok(Key {
            key: text.into_bytes(),
        })
    }

    /// `body`, written in the folder `folder`, with its seal.
    pub fn seal(&self, folder: &str, body: &[u8]) -> Vec<u8> {
        let mac = self
            .mac(folder, body)
            .map(|mac| mac.finalize().into_bytes());
        let mut sealed = HEADER.to_vec();
        sealed.extend(mac.iter().flatten().flat_map(|byte| hex(*byte)));
        sealed.push(b'\n');
        sealed.extend_from_slice(body);
        sealed
    }

    /// The record `sealed`, read in the folder `folder`, when its seal is this key's;
    /// why not, in words for the user.
    pub fn open<'a>(&self, folder: &str, sealed: &'a [u8]) -> Result<&'a [u8], String> {
        let unsealed = || {
            "it carries no seal of codecrew's, so codecrew did not write it (a tool, a command \
             or a CLI may have)"
                .to_owned()
        };
        let rest = sealed.strip_prefix(HEADER).ok_or_else(unsealed)?;
        let end = rest
            .iter()
            .position(|byte| *byte == b'\n')
            .ok_or_else(unsealed)?;
        let seal = unhex(&rest[..end]).ok_or_else(unsealed)?;
        let body = &rest[end + 1..];
        // Compared in constant time by the MAC itself.
        let verified = self
            .mac(folder, body)
            .is_some_and(|mac| mac.verify_slice(&seal).is_ok());
        if !verified {
            return Err(
                "its seal is not codecrew's (it was changed since, moved from another \
                        codecrew's folder, or written by something else)"
                    .to_owned(),
            );
        }
        Ok(body)
    }

    /// The MAC of `body` in `folder`; None where HMAC refused the key, which it does not.
    fn mac(&self, folder: &str, body: &[u8]) -> Option<Hmac<Sha256>> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).ok()?;
        mac.update(DOMAIN);
        // The folder's name cannot hold a NUL: it ends where the record begins.
        mac.update(folder.as_bytes());
        mac.update(b"\0");
        mac.update(body);
        Some(mac)
    }
}

fn hex(byte: u8) -> [u8; 2] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    [
        DIGITS[usize::from(byte >> 4)],
        DIGITS[usize::from(byte & 0xf)],
    ]
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2)
        .map(|pair| {
            let digit = |byte: u8| char::from(byte).to_digit(16);
            Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_record_sealed_with_the_key_in_its_folder_opens() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("state/codecrew/held");
        let key = Key::of(&root).unwrap();
        let sealed = key.seal("12-34", b"[1,2]");
        assert!(sealed.starts_with(b"codecrew-held 2 "));
        assert_eq!(key.open("12-34", &sealed).unwrap(), b"[1,2]");
        // The same key again, read back from its file.
        assert_eq!(
            Key::of(&root).unwrap().open("12-34", &sealed).unwrap(),
            b"[1,2]"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(dir.path().join("state/codecrew/journal-key"))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);

        assert!(key.open("12-35", &sealed).unwrap_err().contains("seal"));
        let mut changed = sealed.clone();
        *changed.last_mut().unwrap() = b'3';
        assert!(key.open("12-34", &changed).is_err());
        assert!(key.open("12-34", b"[1,2]").unwrap_err().contains("no seal"));
        let forged = format!("codecrew-held 2 {}\n[1,2]", "00".repeat(32));
        assert!(key.open("12-34", forged.as_bytes()).is_err());
        let other = tempfile::tempdir().unwrap();
        let theirs = Key::of(&other.path().join("held")).unwrap();
        assert!(theirs.open("12-34", &sealed).is_err());
    }
}
