//! What of the workspace the read-only sandbox, and an agent CLI's wall, let a program
//! read: all of it but the sensitive files (`.env`, keys, `.ssh/`, ... as
//! [`crate::paths::sensitive`] names them), at any size.
//!
//! codecrew's own state folder is withheld too, wherever it lies in the workspace (a
//! per-project `XDG_STATE_HOME`): its records hold copies of the user's files and the
//! keys that seal them ([`crate::state_folder`]).
//!
//! The shell analysis asks before a command *names* a sensitive file; this keeps the
//! kernel to the same rule when the analysis is wrong or a program reads what no argument
//! names (a Makefile an allow rule lets run, a pager git was talked into running, a CLI's
//! own read tool): the file cannot be opened. Landlock grants, it cannot refuse beneath
//! a grant, so a directory that holds a sensitive file is granted only for listing, and
//! each of its other entries gets a grant of its own; a directory that holds none is
//! granted whole. The repository's `.git` and dependency or build directories
//! (`node_modules`, `target`, ...) are granted whole without a look (`scan`).
//!
//! Every directory must be looked at once, which on a checkout of 100,000 files costs
//! a few hundred milliseconds. The plan is kept with the stamp of every directory it
//! rests on (`verified`): when none moved, the next plan is the kept one, for one
//! `stat` per directory. When some moved, the kept listings (`cache`) let the planner
//! read again just the directories whose names changed (`scan::Stamp`).

mod cache;
mod scan;
mod verified;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cache::Listings;
use scan::{Entries, Listing};

use crate::home::HomeInWorkspace;
use crate::state_folder::StateFolder;

/// The grants that make up the readable workspace.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// Directories granted whole: everything beneath may be read.
    pub trees: Vec<PathBuf>,
    /// Directories that hold a sensitive file: listed only.
    pub listed: Vec<PathBuf>,
    /// Files granted one by one, beside a sensitive one.
    pub files: Vec<PathBuf>,
    /// The sensitive files left out (workspace-relative), for the record.
    pub withheld: Vec<PathBuf>,
}

/// What a plan leaves out of the workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Withheld {
    /// The sensitive files ([`crate::paths::sensitive`]).
    pub sensitive: bool,
    /// These paths, relative to the workspace, files or whole folders: an agent CLI's
    /// own configuration in a checkout the user has not trusted (`.claude`, `.mcp.json`).
    pub paths: Vec<PathBuf>,
}

impl Withheld {
    /// The sensitive files alone: the read-only domain's plan.
    pub fn sensitive() -> Self {
        Withheld {
            sensitive: true,
            paths: Vec::new(),
        }
    }

    /// Whether `relative` (a path in the workspace whose `home` it is) is left out.
    fn holds(&self, relative: &Path, home: &HomeInWorkspace) -> bool {
        self.paths.iter().any(|path| path == relative)
            || (self.sensitive && crate::paths::sensitive(relative, home).is_some())
    }

    /// Whether a path it names lies beneath the directory `relative`: that directory
    /// must be looked into, even where it would be granted whole without a look.
    fn lies_beneath(&self, relative: &Path) -> bool {
        self.paths
            .iter()
            .any(|path| path != relative && path.starts_with(relative))
    }

    /// These paths and codecrew's own state folder where it lies in `workspace`, which
    /// no door grants ([`crate::state_folder`]); None when the folder holds the whole
    /// workspace, which is then not granted at all.
    fn and_state_folder(&self, folder: Option<&StateFolder>, workspace: &Path) -> Option<Self> {
        let mut withheld = self.clone();
        let Some(folder) = folder else {
            return Some(withheld);
        };
        if folder.holds(workspace) {
            return None;
        }
        if let Some(inside) = folder.within(workspace)
            && !withheld.paths.contains(&inside)
        {
            withheld.paths.push(inside);
        }
        Some(withheld)
    }
}

/// The grants for `workspace` (canonical) but its sensitive files, reusing the listings
/// of the user's cache directory where the disk says they still hold.
pub fn plan(workspace: &Path) -> Reads {
    plan_withholding(workspace, &Withheld::sensitive())
}

/// The grants for `workspace` but what `withheld` names, and but codecrew's own state
/// folder wherever it lies (nothing at all when it holds the workspace).
pub fn plan_withholding(workspace: &Path, withheld: &Withheld) -> Reads {
    match withheld.and_state_folder(StateFolder::current().as_ref(), workspace) {
        Some(withheld) => plan_with_cache(workspace, &withheld, cache::dir().as_deref()),
        None => Reads::default(),
    }
}

/// [`plan_withholding`] with the cache kept in `cache_dir` (none: every directory is
/// read).
pub fn plan_with_cache(workspace: &Path, withheld: &Withheld, cache_dir: Option<&Path>) -> Reads {
    plan_at(workspace, withheld, cache_dir, SystemTime::now()).0
}

/// [`plan_with_cache`] as if it were `now`, and how many directories it read.
fn plan_at(
    workspace: &Path,
    withheld: &Withheld,
    cache_dir: Option<&Path>,
    now: SystemTime,
) -> (Reads, usize) {
    if *withheld == Withheld::default() {
        let whole = Reads {
            trees: vec![workspace.to_path_buf()],
            ..Reads::default()
        };
        return (whole, 0);
    }
    if let Some(dir) = cache_dir
        && let Some(kept) = verified::load(dir, workspace, withheld)
        && kept.holds(workspace, now)
    {
        return (kept.reads, 0);
    }
    let previous = cache_dir
        .map(|dir| cache::load(dir, workspace, withheld))
        .unwrap_or_default();
    let mut planner = Planner {
        withheld,
        home: HomeInWorkspace::of(workspace),
        root: workspace,
        now,
        previous,
        listings: Listings::new(),
        changed: false,
        read: 0,
    };
    let mut reads = Reads::default();
    if !planner.visit(Path::new(""), &mut reads) {
        reads.trees.push(workspace.to_path_buf());
    }
    if let Some(dir) = cache_dir {
        verified::store(dir, workspace, withheld, &planner.listings, &reads);
        if planner.changed || !planner.previous.is_empty() {
            cache::store(dir, workspace, withheld, planner.listings);
        }
    }
    (reads, planner.read)
}

/// One plan in the making.
struct Planner<'a> {
    withheld: &'a Withheld,
    /// The homes this workspace holds, whose hidden entries a sensitive plan withholds.
    home: HomeInWorkspace,
    root: &'a Path,
    now: SystemTime,
    /// The last plan's listings not yet visited in this one.
    previous: Listings,
    /// This plan's listings, to keep for the next.
    listings: Listings,
    /// Whether any listing differs from the last plan's.
    changed: bool,
    /// How many directories were read.
    read: usize,
}

impl Planner<'_> {
    /// Plans the directory at `relative`; true when something sensitive lies beneath it
    /// (its grants are then in `reads`), false when it may be granted whole (nothing
    /// added).
    fn visit(&mut self, relative: &Path, reads: &mut Reads) -> bool {
        let dir = self.root.join(relative);
        let Some(mut listing) = self.listing(&dir, relative) else {
            return false;
        };
        let mut planned = Reads::default();
        let mut clean = Vec::new();
        let mut dirty = !listing.withheld.is_empty();
        for name in &listing.subdirs {
            let sub = relative.join(name);
            if self.visit(&sub, &mut planned) {
                dirty = true;
            } else {
                clean.push(self.root.join(sub));
            }
        }
        if !dirty {
            if listing.entries.take().is_some() {
                self.changed = true;
            }
            self.listings.insert(relative.to_path_buf(), listing);
            return false;
        }
        let entries = self.entries(&dir, relative, &mut listing);
        reads.listed.push(dir.clone());
        reads.trees.extend(clean);
        reads
            .trees
            .extend(entries.whole.iter().map(|name| dir.join(name)));
        reads
            .files
            .extend(entries.files.iter().map(|name| dir.join(name)));
        reads
            .withheld
            .extend(listing.withheld.iter().map(|name| relative.join(name)));
        reads.trees.extend(planned.trees);
        reads.listed.extend(planned.listed);
        reads.files.extend(planned.files);
        reads.withheld.extend(planned.withheld);
        listing.entries = Some(entries);
        self.listings.insert(relative.to_path_buf(), listing);
        true
    }

    /// The directory's listing: the last plan's when its stamp still holds, else read.
    fn listing(&mut self, dir: &Path, relative: &Path) -> Option<Listing> {
        let meta = std::fs::symlink_metadata(dir)
            .ok()
            .filter(|meta| meta.is_dir())?;
        if let Some(previous) = self.previous.remove(relative)
            && previous.stamp.is_some()
            && previous.stamp == scan::Stamp::of(&meta, self.now)
        {
            return Some(previous);
        }
        self.changed = true;
        self.read += 1;
        scan::read(dir, relative, self.withheld, &self.home, self.now)
    }

    /// The entries granted one by one in a directory that turned out to hold something
    /// sensitive beneath it: kept from its listing, or read now when the last plan had
    /// no need of them. Names that appeared since the listing are not granted, and a
    /// sensitive one is withheld; the listing is then read afresh next time.
    fn entries(&mut self, dir: &Path, relative: &Path, listing: &mut Listing) -> Entries {
        if let Some(entries) = listing.entries.take() {
            return entries;
        }
        self.changed = true;
        self.read += 1;
        let Some(fresh) = scan::read(dir, relative, self.withheld, &self.home, self.now) else {
            listing.stamp = None;
            return Entries::default();
        };
        if fresh.subdirs != listing.subdirs || fresh.withheld != listing.withheld {
            listing.stamp = None;
            for name in fresh.withheld {
                if !listing.withheld.contains(&name) {
                    listing.withheld.push(name);
                }
            }
        }
        fresh.entries.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
