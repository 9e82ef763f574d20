//! Claude's folders under `~/.claude/projects/`: how Claude names a project's folder (read
//! from its JavaScript), and where a linked worktree's auto-memory lives. The wall grants
//! Claude only the folders of this workspace and its repository.

use std::path::{Path, PathBuf};

use crate::wall;

/// Claude's name for a project's folder under `projects/`, as its JavaScript makes it:
/// every UTF-16 unit of the path other than an ASCII letter or digit made `-`
/// (`/work/main` → `-work-main`; a character beyond the BMP gives two), and a name
/// longer than 200 cut there, followed by `-` and its path's hash in base 36.
pub(super) fn project_name(dir: &Path) -> String {
    let path = dir.to_string_lossy();
    let name: String = path
        .encode_utf16()
        .map(|unit| match char::from_u32(u32::from(unit)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect();
    if name.len() <= MAX_PROJECT_NAME {
        return name;
    }
    format!("{}-{}", &name[..MAX_PROJECT_NAME], base36(java_hash(&path)))
}

/// The main repository of the linked worktree `root` (whose `.git` is a file naming
/// `<main>/.git/worktrees/<name>`), where Claude keeps the worktree's auto-memory.
pub(super) fn main_repository(root: &Path) -> Option<PathBuf> {
    let link = std::fs::read_to_string(root.join(".git")).ok()?;
    let gitdir = root.join(link.trim().strip_prefix("gitdir:")?.trim());
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = gitdir.join(common.trim()).canonicalize().ok()?;
    let gitdir = gitdir.canonicalize().ok()?;
    if gitdir.parent()? != common.join("worktrees") {
        return None;
    }
    // Git names the worktree back in `<main>/.git/worktrees/<name>/gitdir`: a checkout
    // whose `.git` names another repository's worktree is not that worktree, and gets
    // no write to that repository's folder (its memory, its sessions).
    let back = std::fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = Path::new(back.trim()).canonicalize().ok()?;
    if back != root.join(".git").canonicalize().ok()? {
        return None;
    }
    if common.file_name()? == ".git" {
        common.parent().map(Path::to_path_buf)
    } else {
        Some(common)
    }
}

/// The longest project folder name Claude leaves whole.
const MAX_PROJECT_NAME: usize = 200;

/// `CLAUDE_CODE_PROJECT_DIR_NAME`, which Claude takes as the workspace's folder name
/// instead of its path when `CLAUDE_CONFIG_DIR` is set and the name is a plain one.
pub(super) fn named_project() -> Option<String> {
    wall::custom_dir("CLAUDE_CONFIG_DIR")?;
    let name = std::env::var("CLAUDE_CODE_PROJECT_DIR_NAME").ok()?;
    let plain = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let reserved = {
        let lower = name.to_ascii_lowercase();
        ["con", "prn", "aux", "nul"].contains(&lower.as_str())
            || ((lower.starts_with("com") || lower.starts_with("lpt"))
                && lower.len() == 4
                && lower.as_bytes()[3].is_ascii_digit())
    };
    (plain && !reserved).then_some(name)
}

/// The string hash Claude names long project folders by: `h = h * 31 + unit` over
/// the UTF-16 units, in 32-bit two's complement, made positive.
fn java_hash(text: &str) -> u64 {
    let hash = text.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_shl(5)
            .wrapping_sub(hash)
            .wrapping_add(i32::from(unit))
    });
    i64::from(hash).unsigned_abs()
}

fn base36(mut value: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    loop {
        digits.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8_lossy(&digits).into_owned()
}
