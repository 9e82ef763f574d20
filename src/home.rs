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

use std::path::Path;

pub use codecrew_config::projects::{NotAProject, checkout_hint, homes, trust_advice};

use crate::cli::{CodecrewCommand, ToolsCommand};

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
/// the tool list, the config and agents, the stored threads and runs (`kill` signals a
/// run's own codecrew), completions, the manual;
/// `doctor` without `--live` runs each CLI's `--version` only, and `intercept
/// --dry-run` lists calls without running them.
fn runs_tools(command: &CodecrewCommand) -> Option<&'static str> {
    match command {
        CodecrewCommand::Query(_) => Some("query"),
        CodecrewCommand::Execute(_) => Some("execute"),
        CodecrewCommand::Chat(_) => Some("chat"),
        CodecrewCommand::Intercept(args) if !args.dry_run => Some("intercept"),
        CodecrewCommand::Tools(ToolsCommand::Call { .. }) => Some("tools call"),
        CodecrewCommand::Mcp(_) => Some("mcp"),
        CodecrewCommand::Doctor(args) if args.live => Some("doctor --live"),
        // A starter codecrew.toml in the home would be the project file of every folder
        // beneath it that is not a repository.
        CodecrewCommand::Init(_) => Some("init"),
        CodecrewCommand::Intercept(_)
        | CodecrewCommand::Tools(ToolsCommand::List { .. } | ToolsCommand::Show { .. })
        | CodecrewCommand::Doctor(_)
        | CodecrewCommand::Prompt(_)
        | CodecrewCommand::Schema(_)
        | CodecrewCommand::Agents(_)
        | CodecrewCommand::Threads(_)
        | CodecrewCommand::Logs(_)
        | CodecrewCommand::Ps(_)
        | CodecrewCommand::Kill(_)
        | CodecrewCommand::Result(_)
        // It writes only what a run recorded here changed (a run that needed the flag).
        | CodecrewCommand::Undo(_)
        // An editor starts it where it likes; each session's folder is checked instead.
        | CodecrewCommand::Acp(_)
        | CodecrewCommand::Completions(_)
        // Git on the repository and the worktrees codecrew made: no agent, no tool.
        | CodecrewCommand::Diff(_)
        | CodecrewCommand::Apply(_)
        | CodecrewCommand::Worktrees(_)
        | CodecrewCommand::Man(_) => None,
    }
}

/// An editor's session refused because its folder is not a project.
#[derive(Debug, thiserror::Error)]
#[error(
    "{what}, not a project: a codecrew session there would give the agents and tools the \
     sign-ins, keys and histories that programs keep there; open a project folder in the \
     editor, or start the agent as `codecrew acp --allow-home` to allow it (the hidden \
     files and folders of your home then stay out of reach)"
)]
pub struct SessionRefused {
    what: String,
}

/// Refuses an editor's session whose `workspace` (canonical) is not a project, unless
/// `allow_home` (`codecrew acp --allow-home`); as [`guard`] does a command. The editor
/// starts `codecrew acp` wherever it likes: each session's folder is what counts, for
/// this and for the hidden entries its doors withhold (each session's own).
pub fn refuse_session(workspace: &Path, allow_home: bool) -> Result<(), SessionRefused> {
    let Some(what) = NotAProject::of(workspace, &homes()) else {
        return Ok(());
    };
    if allow_home {
        Ok(())
    } else {
        Err(SessionRefused {
            what: what.describe(workspace),
        })
    }
}

/// Refuses `command` in a `workspace` (canonical) that is not a project, unless
/// `allow_home`. Where the workspace holds the home, its hidden entries are withheld by
/// every door that reads in it, whatever the command: each derives them from the
/// workspace it is given ([`codecrew_policy::home::HomeInWorkspace::of`]).
pub fn guard(
    command: &CodecrewCommand,
    workspace: &Path,
    allow_home: bool,
) -> Result<(), HomeRefused> {
    let Some(what) = NotAProject::of(workspace, &homes()) else {
        return Ok(());
    };
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
