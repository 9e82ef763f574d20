//! What to tell the user when a CLI cannot start inside its wall: the kernel refused a
//! file the CLI's start-up needs (a version manager's program, an interpreter in the
//! home directory), and the line of config that lets the wall read it.
//!
//! The refusal shows as the CLI failing before it printed anything: the shell's `126`
//! ("Permission denied") or `127`, or an `EACCES` in its error. Where the message names
//! the refused file, the advice names the folder to grant: the source folder of an
//! editable install it lies in, the version manager's folder, else its installation
//! ([`codecrew_policy::sandbox::install_root`]). Where it names none (Python's import
//! system can swallow the refusal into "No module named …"), the folders the installation
//! loads code from outside itself ([`install::sources_outside`]) are the ones refused.

use std::path::{Path, PathBuf};

use codecrew_tools::ErrorCode;

use crate::drive::process::Ending;
use crate::wall::install;

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

/// [`looks_refused`], or a start that failed for a module it could not find (Python's
/// import system swallows the refusal of a folder on its path into "No module named …")
/// while `program` loads code from folders outside its installation that are not
/// `readable` anyway: what the wall does not grant it.
pub fn looks_refused_by(
    program: &Path,
    ending: &Ending,
    stdout_bytes: u64,
    stderr: &str,
    readable: &[PathBuf],
) -> bool {
    looks_refused(ending, stdout_bytes, stderr)
        || (stdout_bytes == 0
            && matches!(ending, Ending::Exited(code) if *code != 0)
            && mentions_missing_module(stderr)
            && install::sources_outside(program)
                .iter()
                .any(|source| !readable_anyway(&source.folder, readable)))
}

fn mentions_missing_module(stderr: &str) -> bool {
    stderr.contains("No module named") || stderr.contains("Cannot find module")
}

fn mentions_refusal(stderr: &str) -> bool {
    stderr.contains("ermission denied") || stderr.contains("EACCES")
}

/// The file the refusal names, where the CLI's message gives it: the one just before
/// `: Permission denied` (`bash: /path: Permission denied`), the one after it (Python's
/// `PermissionError: [Errno 13] Permission denied: '/path'`), or the one after `EACCES`
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
        // Python names the file after the words, quoted (a path may hold blanks).
        if let Some((_, after)) = line.split_once("Permission denied: ")
            && let Some(quote @ ('\'' | '"')) = after.chars().next()
            && let Some((quoted, _)) = after[1..].split_once(quote)
        {
            return absolute(quoted);
        }
        let (before, _) = line.split_once(": Permission denied")?;
        absolute(before.rsplit(": ").next()?)
    })
}

/// What `cli_read` should name for the wall to let the CLI start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToGrant {
    pub folders: Vec<PathBuf>,
    /// What they are, when they are not where the CLI is installed (an editable install's
    /// source folder).
    pub what: Option<String>,
}

impl ToGrant {
    /// The line of config: `cli_read = ["/a", "/b"]`.
    pub fn config_line(&self) -> String {
        let quoted: Vec<String> = self
            .folders
            .iter()
            .map(|folder| format!("{:?}", folder.display().to_string()))
            .collect();
        format!("cli_read = [{}]", quoted.join(", "))
    }

    /// The folders for a sentence, and what they are.
    pub fn described(&self) -> String {
        let folders: Vec<String> = self
            .folders
            .iter()
            .map(|folder| folder.display().to_string())
            .collect();
        match &self.what {
            Some(what) => format!("{} ({what})", folders.join(", ")),
            None => folders.join(", "),
        }
    }
}

/// The folders `cli_read` should name so the wall lets the CLI read `refused`: an
/// editable install's source folder it lies in, the version manager's folder, else the
/// installation it lies in. When the message named no file: the folders the installation
/// loads code from outside itself and that `readable` (the workspace, `cli_read`, the
/// system) does not already cover, else `program`'s own installation.
pub fn to_grant(
    program: &Path,
    refused: Option<&Path>,
    readable: &dyn Fn(&Path) -> bool,
) -> ToGrant {
    let outside: Vec<install::SourceOutside> = install::sources_outside(program)
        .into_iter()
        .filter(|source| !readable(&source.folder))
        .collect();
    if let Some(path) = refused
        && let Some(source) = outside
            .iter()
            .find(|source| path.starts_with(&source.folder))
    {
        return ToGrant {
            folders: vec![source.folder.clone()],
            what: Some(source.what.clone()),
        };
    }
    if refused.is_none() && !outside.is_empty() {
        let what: Vec<&str> = outside.iter().map(|source| source.what.as_str()).collect();
        return ToGrant {
            folders: outside.iter().map(|source| source.folder.clone()).collect(),
            what: Some(what.join("; ")),
        };
    }
    let home = crate::wall::home();
    let path = refused.unwrap_or(program);
    let folder = install::manager_folder(path).unwrap_or_else(|| {
        let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        codecrew_policy::sandbox::install_root(&real, home.as_deref())
    });
    ToGrant {
        folders: vec![folder],
        what: None,
    }
}

/// Whether the wall lets a CLI read `path` whatever its installation: the system's
/// folders, and `also` (the workspace, the folders `cli_read` names).
pub fn readable_anyway(path: &Path, also: &[PathBuf]) -> bool {
    codecrew_policy::sandbox::SYSTEM_READ
        .iter()
        .any(|dir| path.starts_with(dir))
        || also.iter().any(|dir| path.starts_with(dir))
}

/// The advice: what was refused and the config line that lets the wall read it;
/// `readable` is what the wall lets the CLI read beside its installation.
pub fn advice(program: &Path, stderr: &str, readable: &[PathBuf]) -> String {
    let refused = refused_path(stderr);
    let grant = to_grant(program, refused.as_deref(), &|path| {
        readable_anyway(path, readable)
    });
    let what = match (&refused, &grant.what) {
        (Some(path), _) => format!("the wall codecrew runs it in refused {}", path.display()),
        (None, Some(_)) => format!(
            "the wall codecrew runs it in refused what {} loads from outside its \
             installation",
            program.display()
        ),
        (None, None) => format!(
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
        "{what}; to let it read {}, add `{}` under [permissions] in {config} (`codecrew \
         doctor` checks each CLI inside its wall)",
        grant.described(),
        grant.config_line(),
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
        // Python, an editable plugin's source refused.
        assert_eq!(
            refused_path(
                "  File \"<frozen importlib._bootstrap_external>\", line 1130, in get_data\n\
                 PermissionError: [Errno 13] Permission denied: '/home/u/src/llm-x/llm_x/__init__.py'"
            ),
            Some(PathBuf::from("/home/u/src/llm-x/llm_x/__init__.py"))
        );
        assert_eq!(refused_path("something else"), None);
    }

    /// A venv of llm with a plugin installed with `pip install -e` from a folder beside it.
    fn venv_with_an_editable_plugin() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let site = venv.join("lib/python3.11/site-packages");
        let dist = site.join("llm_probe-0.1.dist-info");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(venv.join("bin/llm"), "#!/bin/sh\n").unwrap();
        let source = dir.path().join("src/llm-probe");
        std::fs::create_dir_all(&source).unwrap();
        std::fs::write(
            dist.join("direct_url.json"),
            format!(
                r#"{{"dir_info": {{"editable": true}}, "url": "file://{}"}}"#,
                source.display()
            ),
        )
        .unwrap();
        let program = venv.join("bin/llm");
        (dir, program, source)
    }

    #[test]
    fn a_module_not_found_is_a_refusal_only_where_code_lies_outside_the_installation() {
        let (_dir, program, source) = venv_with_an_editable_plugin();
        let missing = "ModuleNotFoundError: No module named 'llm_probe'";
        assert!(!looks_refused(&Ending::Exited(1), 0, missing));
        assert!(looks_refused_by(
            &program,
            &Ending::Exited(1),
            0,
            missing,
            &[]
        ));
        // Not when the source is readable anyway, nor after the CLI printed, nor for
        // another failure.
        let readable = [source.clone()];
        assert!(!looks_refused_by(
            &program,
            &Ending::Exited(1),
            0,
            missing,
            &readable
        ));
        assert!(!looks_refused_by(
            &program,
            &Ending::Exited(1),
            9,
            missing,
            &[]
        ));
        assert!(!looks_refused_by(
            &program,
            &Ending::Exited(1),
            0,
            "rate limited",
            &[]
        ));
        let plain = program.parent().unwrap().join("plain");
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        assert!(looks_refused_by(&plain, &Ending::Exited(126), 0, "", &[]));
    }

    #[test]
    fn an_editable_plugins_source_is_what_to_grant_not_the_venv() {
        let (_dir, program, source) = venv_with_an_editable_plugin();
        let nothing = |_: &Path| false;
        let what = Some("the source of llm-probe, installed with `pip install -e`".to_owned());
        // The refused file named (Python's PermissionError), or no file named at all.
        let refused = source.join("llm_probe/__init__.py");
        for named in [Some(refused.as_path()), None] {
            let grant = to_grant(&program, named, &nothing);
            assert_eq!(
                grant,
                ToGrant {
                    folders: vec![source.clone()],
                    what: what.clone(),
                },
                "{named:?}"
            );
        }
        assert_eq!(
            to_grant(&program, None, &nothing).config_line(),
            format!("cli_read = [{:?}]", source.display().to_string())
        );
        // Already readable (inside the workspace, or named by cli_read): not the cause.
        let grant = to_grant(&program, None, &|path| path.starts_with(&source));
        assert_eq!(grant.what, None);
        assert_eq!(grant.folders, [program.parent().unwrap().parent().unwrap()]);
        // The advice a run's error gives says it all.
        let advice = advice(
            &program,
            &format!(
                "PermissionError: [Errno 13] Permission denied: '{}'",
                refused.display()
            ),
            &[],
        );
        assert!(
            advice.contains(&format!("refused {}", refused.display())),
            "{advice}"
        );
        assert!(
            advice.contains("installed with `pip install -e`"),
            "{advice}"
        );
        assert!(
            advice.contains(&format!(
                "`cli_read = [{:?}]`",
                source.display().to_string()
            )),
            "{advice}"
        );
    }
}
