//! The listings of one workspace's last plan, kept in the user's cache directory
//! (`$XDG_CACHE_HOME/codecrew/workspace-reads`, else `~/.cache/codecrew/...`), one file
//! per workspace, so that the next command or CLI start only checks each directory's
//! stamp instead of reading every name of a large checkout.
//!
//! Neither the agent CLIs' walls nor the sandboxes of commands grant the cache
//! directory, so nothing the model runs can write a plan. A file that cannot be read,
//! was written by another build of the rules, or names another workspace is ignored:
//! the plan is then made from the disk, as without a cache.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Withheld;
use super::scan::Listing;

/// Bumped when the file's shape or the plan's meaning changes.
const FORMAT: u32 = 1;

/// Every directory looked into, by its path relative to the workspace root.
pub type Listings = HashMap<PathBuf, Listing>;

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    /// The sensitive classes this plan was made with ([`rules_fingerprint`]).
    rules: u64,
    workspace: PathBuf,
    listings: Listings,
}

/// The cache directory of the plans, from the environment.
pub fn dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute())
                .map(|home| home.join(".cache"))
        })?;
    Some(base.join("codecrew").join("workspace-reads"))
}

/// The listings planned for `workspace` last time, if `dir` holds them.
pub fn load(dir: &Path, workspace: &Path, withheld: &Withheld) -> Listings {
    let Ok(bytes) = std::fs::read(file_for(dir, workspace, withheld)) else {
        return Listings::new();
    };
    match serde_json::from_slice::<File>(&bytes) {
        Ok(file)
            if file.format == FORMAT
                && file.rules == rules_fingerprint()
                && file.workspace == workspace =>
        {
            file.listings
        }
        _ => Listings::new(),
    }
}

/// Keeps `listings` for `workspace`'s next plan.
pub fn store(dir: &Path, workspace: &Path, withheld: &Withheld, listings: Listings) {
    let file = File {
        format: FORMAT,
        rules: rules_fingerprint(),
        workspace: workspace.to_path_buf(),
        listings,
    };
    match serde_json::to_vec(&file) {
        Ok(bytes) => write_whole(dir, &file_for(dir, workspace, withheld), &bytes),
        // A name that is not UTF-8: no cache for this workspace.
        Err(error) => tracing::debug!(%error, "could not keep the workspace's read plan"),
    }
}

/// Writes `bytes` to `file` in `dir` whole, then renames it into place, so a concurrent
/// reader sees the old file or the new one.
pub(super) fn write_whole(dir: &Path, file: &Path, bytes: &[u8]) {
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| tempfile::NamedTempFile::new_in(dir))
        .and_then(|mut temp| {
            temp.write_all(bytes)?;
            temp.persist(file).map_err(|error| error.error)?;
            Ok(())
        });
    if let Err(error) = written {
        tracing::debug!(%error, "could not keep the workspace's read plan");
    }
}

/// One file per workspace and what its plan withholds (the read-only domain's, and each
/// CLI's wall in a checkout the user has not trusted).
pub(super) fn file_for(dir: &Path, workspace: &Path, withheld: &Withheld) -> PathBuf {
    let mut hasher = std::hash::DefaultHasher::new();
    workspace.hash(&mut hasher);
    withheld.hash(&mut hasher);
    // The homes the workspace holds are the user's (`$HOME` may differ between two
    // codecrews): a plan made for other homes is not this plan.
    crate::home::HomeInWorkspace::of(workspace).hash(&mut hasher);
    dir.join(format!("{:016x}.json", hasher.finish()))
}

/// A fingerprint of the sensitive classes: a plan made under other rules is not reused.
pub(super) fn rules_fingerprint() -> u64 {
    static FINGERPRINT: OnceLock<u64> = OnceLock::new();
    *FINGERPRINT.get_or_init(|| {
        let mut hasher = std::hash::DefaultHasher::new();
        // The class tables alone: the homes are in the file's name. How the tables are
        // read can change only with the code, which the version below stands for.
        crate::paths::hash_sensitive_tables(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        hasher.finish()
    })
}
