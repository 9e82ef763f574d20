//! The home directory, and the folders above it, are not a project.
//!
//! A shell opened in `~` starts codecrew there, and the workspace would then be the whole
//! home: every program's sign-in, keys and history (`~/.config/gh/hosts.yml`, a browser's
//! saved logins, the shell's history) within reach of codecrew's tools and of each CLI's
//! own reads, and a walk of the whole home (of the whole file system, from `/`) before
//! every command. So the commands that run tools or agents refuse a workspace that is the
//! home, holds it (`/home`) or is `/`, and say how to start in a project instead.
//!
//! `--allow-home` runs there anyway. It is a flag, so that no file a repository ships can
//! set it; and even then every hidden entry of the home is kept out of every door as the
//! sensitive files are ([`codecrew_policy::home`]).

use std::path::{Path, PathBuf};

use crate::cli::{Command, ToolsCommand};

/// The user's home directories, canonical: `$HOME`, and the password database's entry
/// when it differs (a `HOME` changed for one shell does not move the real one).
pub fn homes() -> Vec<PathBuf> {
    let from_env = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute());
    let from_passwd = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|user| user.dir)
        .filter(|home| home.is_absolute());
    let mut homes: Vec<PathBuf> = Vec::new();
    for home in from_env.into_iter().chain(from_passwd) {
        if let Ok(home) = home.canonicalize()
            && !homes.contains(&home)
        {
            homes.push(home);
        }
    }
    homes
}

/// What a workspace is, when it is not a project: the home itself, a folder that holds
/// it, or the whole file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAProject {
    Home,
    Holds(PathBuf),
    Root,
}

impl NotAProject {
    /// What `workspace` (canonical) is, with `homes` the user's home directories; None
    /// for a project (anything beneath the home, or beside it).
    pub fn of(workspace: &Path, homes: &[PathBuf]) -> Option<NotAProject> {
        if homes.iter().any(|home| home == workspace) {
            return Some(NotAProject::Home);
        }
        if workspace == Path::new("/") {
            return Some(NotAProject::Root);
        }
        homes
            .iter()
            .find(|home| home.starts_with(workspace))
            .map(|home| NotAProject::Holds(home.clone()))
    }

    fn describe(&self, workspace: &Path) -> String {
        let shown = workspace.display();
        match self {
            NotAProject::Home => format!("{shown} is your home directory"),
            NotAProject::Holds(home) => {
                format!("{shown} holds your home directory ({})", home.display())
            }
            NotAProject::Root => "/ is the whole file system".to_owned(),
        }
    }
}

/// A command refused because its workspace is not a project (exit code 2: usage).
#[derive(Debug, thiserror::Error)]
#[error(
    "{what}, not a project: `codecrew {command}` would give the agents and tools the \
     sign-ins, keys and histories that programs keep there\n  \
     hint: cd into a project first, or name one with --workdir DIR; to run here anyway, \
     pass --allow-home (the hidden files and folders of your home then stay out of reach)"
)]
pub struct HomeRefused {
    what: String,
    command: &'static str,
}

/// The command's name when it runs codecrew's tools or an agent CLI in the workspace.
/// The others read or print only what codecrew itself keeps or composes: the prompt,
/// the tool list, the config and agents, the stored threads, completions, the manual;
/// `doctor` without `--live` runs each CLI's `--version` only, and `intercept
/// --dry-run` lists calls without running them.
fn runs_tools(command: &Command) -> Option<&'static str> {
    match command {
        Command::Query(_) => Some("query"),
        Command::Execute(_) => Some("execute"),
        Command::Chat(_) => Some("chat"),
        Command::Intercept(args) if !args.dry_run => Some("intercept"),
        Command::Tools(ToolsCommand::Call { .. }) => Some("tools call"),
        Command::Mcp(_) => Some("mcp"),
        Command::Doctor(args) if args.live => Some("doctor --live"),
        // A starter codecrew.toml in the home would be the project file of every folder
        // beneath it that is not a repository.
        Command::Init(_) => Some("init"),
        Command::Intercept(_)
        | Command::Tools(ToolsCommand::List { .. } | ToolsCommand::Show { .. })
        | Command::Doctor(_)
        | Command::Prompt(_)
        | Command::Agents(_)
        | Command::Threads(_)
        | Command::Completions(_)
        | Command::Man(_) => None,
    }
}

/// Refuses `command` in a `workspace` (canonical) that is not a project, unless
/// `allow_home`. Where the workspace holds the home, its hidden entries are withheld from
/// then on, whatever the command.
pub fn guard(command: &Command, workspace: &Path, allow_home: bool) -> Result<(), HomeRefused> {
    let homes = homes();
    let Some(what) = NotAProject::of(workspace, &homes) else {
        return Ok(());
    };
    codecrew_policy::home::withhold_hidden_entries(workspace, &homes);
    let Some(name) = runs_tools(command) else {
        return Ok(());
    };
    if !allow_home {
        return Err(HomeRefused {
            what: what.describe(workspace),
            command: name,
        });
    }
    crate::output::console::note(format_args!(
        "{} (--allow-home): the hidden files and folders of your home (~/.config, ~/.ssh, \
         ~/.bash_history, ...) are kept out of every tool and agent",
        what.describe(workspace)
    ));
    Ok(())
}

/// What `doctor` says of a `workspace` that is not a project, as a detail and a hint; None
/// for a project.
pub fn doctor_note(workspace: &Path) -> Option<(String, String)> {
    let canonical = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let what = NotAProject::of(&canonical, &homes())?;
    Some((
        format!(
            "{}, not a project: query, execute, tools call, intercept, mcp, doctor --live \
             and init refuse to run here",
            what.describe(&canonical)
        ),
        "cd into a project first, or name one with --workdir DIR; --allow-home runs here \
         anyway, with the hidden files and folders of your home out of reach"
            .to_owned(),
    ))
}

/// How to load the configuration a checkout ships for the CLIs, for `doctor`'s hint:
/// trust `folder`, unless it is the home directory or a folder above it.
pub fn checkout_hint(folder: &Path) -> String {
    let canonical = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if NotAProject::of(&canonical, &homes()).is_some() {
        return "your home directory is not a project to trust: run codecrew in the \
                project (cd into it, or --workdir DIR) and trust that folder"
            .to_owned();
    }
    "if you trust this checkout, add its directory to trusted_projects in your user config"
        .to_owned()
}

/// How to load the configuration a checkout ships for the CLIs, for the note that says it
/// was left out: trust `folder`, unless it is the home directory or a folder above it,
/// which is never a project to trust.
pub fn trust_advice(folder: &Path) -> String {
    let canonical = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    if NotAProject::of(&canonical, &homes()).is_some() {
        return format!(
            "{} is not a project to trust: run codecrew in the project (cd into it, or \
             --workdir DIR) and add that folder to trusted_projects in your user config",
            folder.display()
        );
    }
    format!(
        "to load it, add {:?} to trusted_projects in your user config",
        folder.display().to_string()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_a_folder_above_it_and_the_root_are_not_projects() {
        let homes = [PathBuf::from("/home/u"), PathBuf::from("/var/lib/u")];
        let of = |workspace: &str| NotAProject::of(Path::new(workspace), &homes);
        assert_eq!(of("/home/u"), Some(NotAProject::Home));
        assert_eq!(of("/var/lib/u"), Some(NotAProject::Home));
        assert_eq!(
            of("/home"),
            Some(NotAProject::Holds(PathBuf::from("/home/u")))
        );
        assert_eq!(
            of("/var"),
            Some(NotAProject::Holds(PathBuf::from("/var/lib/u")))
        );
        assert_eq!(of("/"), Some(NotAProject::Root));
        assert_eq!(
            NotAProject::of(Path::new("/"), &[]),
            Some(NotAProject::Root)
        );
        for project in ["/home/u/src/app", "/home/v", "/srv/app", "/home/user"] {
            assert_eq!(of(project), None, "{project}");
        }
    }

    #[test]
    fn the_trust_note_never_advises_trusting_the_home() {
        let root = trust_advice(Path::new("/"));
        assert!(root.contains("is not a project to trust"), "{root}");
        assert!(!root.contains("add \"/\""), "{root}");
        let project = trust_advice(Path::new("/srv/app"));
        assert!(
            project.contains("add \"/srv/app\" to trusted_projects"),
            "{project}"
        );
    }
}
