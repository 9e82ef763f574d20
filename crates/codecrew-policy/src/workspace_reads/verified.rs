//! The last plan's grants and the stamps of every directory they rest on, kept beside
//! its listings ([`super::cache`]) in a plain line format that loads in a millisecond:
//! when no stamp moved, the plan is the last one, and the cost of planning a large
//! unchanged checkout is one `stat` per directory, spread over the machine's cores.
//!
//! The file holds, one per line, tab-separated: a header (format, rules), the workspace,
//! then `S dev ino mtime_ns ctime_ns <relative dir>` for each directory looked into, and
//! `T`/`L`/`F <path>` and `X <relative path>` for the grants and what they withhold. A
//! plan is only kept when every directory had a trustworthy stamp and no name holds a
//! newline; anything unexpected in the file makes it unusable, never wrong.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::cache::{self, Listings};
use super::scan::Stamp;
use super::{Reads, Withheld};

const HEADER: &str = "codecrew-workspace-reads";
/// Bumped when the lines change.
const FORMAT: u32 = 1;
/// Below this many directories one thread checks them all.
const PARALLEL_FROM: usize = 2_000;

/// A kept plan and the directories it rests on.
#[derive(Debug)]
pub struct Verified {
    stamps: Vec<(PathBuf, Stamp)>,
    pub reads: Reads,
}

impl Verified {
    /// Whether every directory of `root` the plan rests on still has its stamp.
    pub fn holds(&self, root: &Path, now: SystemTime) -> bool {
        use nix::fcntl::{OFlag, open};
        use nix::sys::stat::{Mode, fstatat};
        // Each directory is looked up from the root, not from `/`: the shorter walk is
        // most of a `stat`'s cost here.
        let Ok(root) = open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) else {
            return false;
        };
        let root = &root;
        let check = |stamps: &[(PathBuf, Stamp)]| {
            stamps.iter().all(|(relative, stamp)| {
                let relative = if relative.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    relative.as_path()
                };
                fstatat(root, relative, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                    .ok()
                    .and_then(|stat| Stamp::of_stat(&stat, now))
                    == Some(*stamp)
            })
        };
        // Asked only for a large plan: the answer reads the cgroup's files.
        let threads = if self.stamps.len() < PARALLEL_FROM {
            1
        } else {
            std::thread::available_parallelism().map_or(1, usize::from)
        };
        if threads < 2 {
            return check(&self.stamps);
        }
        let chunk = self.stamps.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let checks: Vec<_> = self
                .stamps
                .chunks(chunk)
                .map(|part| scope.spawn(move || check(part)))
                .collect();
            checks
                .into_iter()
                .all(|check| check.join().unwrap_or(false))
        })
    }
}

/// The plan kept for `workspace` and `withheld` in `dir`, if there is a usable one.
pub fn load(dir: &Path, workspace: &Path, withheld: &Withheld) -> Option<Verified> {
    let text = std::fs::read_to_string(file_for(dir, workspace, withheld)).ok()?;
    let mut lines = text.lines();
    let header = lines.next()?;
    if header != format!("{HEADER}\t{FORMAT}\t{}", cache::rules_fingerprint()) {
        return None;
    }
    if lines.next()?.strip_prefix("W\t")? != workspace.to_str()? {
        return None;
    }
    let mut verified = Verified {
        stamps: Vec::new(),
        reads: Reads::default(),
    };
    for line in lines {
        let (kind, rest) = line.split_once('\t')?;
        match kind {
            "S" => {
                let mut fields = rest.splitn(5, '\t');
                let mut number = || fields.next()?.parse::<i128>().ok();
                let (dev, ino, mtime, ctime) = (number()?, number()?, number()?, number()?);
                let stamp = Stamp::from_fields(dev, ino, mtime, ctime)?;
                verified.stamps.push((PathBuf::from(fields.next()?), stamp));
            }
            "T" => verified.reads.trees.push(PathBuf::from(rest)),
            "L" => verified.reads.listed.push(PathBuf::from(rest)),
            "F" => verified.reads.files.push(PathBuf::from(rest)),
            "X" => verified.reads.withheld.push(PathBuf::from(rest)),
            _ => return None,
        }
    }
    (!verified.stamps.is_empty()).then_some(verified)
}

/// Keeps `reads`, the plan made from `listings`, when each listing's stamp can be
/// trusted; otherwise removes a plan kept earlier (the next plan then checks the
/// listings one by one).
pub fn store(
    dir: &Path,
    workspace: &Path,
    withheld: &Withheld,
    listings: &Listings,
    reads: &Reads,
) {
    let file = file_for(dir, workspace, withheld);
    let Some(text) = render(workspace, listings, reads) else {
        let _ = std::fs::remove_file(&file);
        return;
    };
    cache::write_whole(dir, &file, text.as_bytes());
}

fn render(workspace: &Path, listings: &Listings, reads: &Reads) -> Option<String> {
    use std::fmt::Write;
    let mut text = format!(
        "{HEADER}\t{FORMAT}\t{}\nW\t{}\n",
        cache::rules_fingerprint(),
        line_safe(workspace)?
    );
    for (relative, listing) in listings {
        let (dev, ino, mtime, ctime) = listing.stamp?.fields();
        let _ = writeln!(
            text,
            "S\t{dev}\t{ino}\t{mtime}\t{ctime}\t{}",
            line_safe(relative)?
        );
    }
    for (kind, paths) in [
        ("T", &reads.trees),
        ("L", &reads.listed),
        ("F", &reads.files),
        ("X", &reads.withheld),
    ] {
        for path in paths {
            let _ = writeln!(text, "{kind}\t{}", line_safe(path)?);
        }
    }
    Some(text)
}

/// `path` as text that stands on one line.
fn line_safe(path: &Path) -> Option<&str> {
    path.to_str().filter(|text| !text.contains('\n'))
}

fn file_for(dir: &Path, workspace: &Path, withheld: &Withheld) -> PathBuf {
    cache::file_for(dir, workspace, withheld).with_extension("plan")
}
