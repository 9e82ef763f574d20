//! What to tell the user when a CLI cannot start inside its wall: the kernel refused a
//! file the CLI's start-up needs (a version manager's program, an interpreter in the
//! home directory), and the line of config that lets the wall read it.
//!
//! The refusal shows as the CLI failing before it printed anything: the shell's `126`
//! ("Permission denied") or `127`, or an `EACCES` in its error. Where the message names
//! the refused file, the advice names the folder to grant: the version manager's folder
//! it lies in, else its installation ([`codecrew_policy::sandbox::install_root`]).

use std::path::{Path, PathBuf};

use codecrew_tools::ErrorCode;

use crate::drive::process::Ending;

/// The stable code of the error, in `--output json`.
pub const CODE: ErrorCode = ErrorCode::CliWallRefused;

/// Whether a run that ended so, having printed `stdout_bytes`, with this stderr, looks
/// like the wall refusing the CLI's start.
pub fn looks_refused(ending: &Ending, stdout_bytes: u64, stderr: &str) -> bool {
    stdout_bytes == 0
        && match ending {
            Ending::Exited(126 | 127) => true,
            Ending::Exited(code) if *code != 0 => mentions_refusal(stderr),
            _ => false,
        }
}

fn mentions_refusal(stderr: &str) -> bool {
    stderr.contains("ermission denied") || stderr.contains("EACCES")
}

/// The file the refusal names, where the CLI's message gives it: the one just before
/// `: Permission denied` (`bash: /path: Permission denied`), or the one after `EACCES`
/// (`EACCES: permission denied, open '/path'`). None for `env: 'node': Permission
/// denied`, which names a program, not where it was found.
pub fn refused_path(stderr: &str) -> Option<PathBuf> {
    let absolute = |word: &str| {
        let word = word.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ',' | ' '));
        (word.starts_with('/') && word.len() > 1).then(|| PathBuf::from(word))
    };
    stderr.lines().find_map(|line| {
        if let Some((_, after)) = line.split_once("EACCES") {
            return after.split_whitespace().find_map(absolute);
        }
        let (before, _) = line.split_once(": Permission denied")?;
        absolute(before.rsplit(": ").next()?)
    })
}

/// The folder `cli_read` should name so the wall lets the CLI read `refused` (or, when
/// the message named no file, `program`'s own installation).
pub fn folder_to_grant(program: &Path, refused: Option<&Path>) -> PathBuf {
    let home = crate::wall::home();
    let path = refused.unwrap_or(program);
    crate::wall::install::manager_folder(path).unwrap_or_else(|| {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        codecrew_policy::sandbox::install_root(&real, home.as_deref())
    })
}

/// The advice: what was refused and the config line that lets the wall read it.
pub fn advice(program: &Path, stderr: &str) -> String {
    let refused = refused_path(stderr);
    let folder = folder_to_grant(program, refused.as_deref());
    let what = match &refused {
        Some(path) => format!("the wall codecrew runs it in refused {}", path.display()),
        None => format!(
            "the wall codecrew runs it in refused something {} needs to start",
            program.display()
        ),
    };
    let config = codecrew_config::user_config_path()
        .ok()
        .flatten()
        .map_or_else(
            || "your user config".to_owned(),
            |path| path.display().to_string(),
        );
    format!(
        "{what}; to let it read {folder}, add `cli_read = [{:?}]` under [permissions] in \
         {config} (`codecrew doctor` checks each CLI inside its wall)",
        folder.display().to_string(),
        folder = folder.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_refused_by_the_wall_is_told_from_other_failures() {
        assert!(looks_refused(&Ending::Exited(126), 0, ""));
        assert!(looks_refused(
            &Ending::Exited(1),
            0,
            "Error: EACCES: permission denied, open '/home/u/.volta/tools/x'"
        ));
        assert!(!looks_refused(&Ending::Exited(1), 0, "not signed in"));
        assert!(!looks_refused(&Ending::Exited(126), 12, ""), "it started");
        assert!(!looks_refused(&Ending::Exited(0), 0, "Permission denied"));
    }

    #[test]
    fn the_refused_file_is_read_from_the_message() {
        assert_eq!(
            refused_path(
                "/home/u/.asdf/shims/claude: line 3: /home/u/.asdf/bin/asdf: Permission denied"
            ),
            Some(PathBuf::from("/home/u/.asdf/bin/asdf"))
        );
        assert_eq!(
            refused_path("Error: EACCES: permission denied, open '/opt/x/lib.js'"),
            Some(PathBuf::from("/opt/x/lib.js"))
        );
        assert_eq!(
            refused_path("/usr/bin/env: 'node': Permission denied"),
            None
        );
        assert_eq!(refused_path("something else"), None);
    }
}
