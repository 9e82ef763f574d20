//! The command line's own help, as the `help` tool gives it to a model.

use super::CommandLine;

/// The long help of the whole CLI, or of one command (`None` when there is no such command).
pub fn help_text(command: Option<&str>) -> Option<String> {
    use clap::CommandFactory;
    let mut root = CommandLine::command();
    match command {
        None => Some(root.render_long_help().to_string()),
        Some(name) => {
            let mut path = name.split_whitespace();
            let first = path.next()?;
            let mut current = root.find_subcommand_mut(first)?.clone();
            for next in path {
                current = current.find_subcommand_mut(next)?.clone();
            }
            let bin = format!("codecrew {name}");
            Some(current.bin_name(bin).render_long_help().to_string())
        }
    }
}

/// The names of the top-level commands.
pub fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    CommandLine::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}

/// The help tool's text: the command line's own help, for the tools of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct CliHelp;

impl codecrew_tools::builtin::HelpSource for CliHelp {
    fn command_names(&self) -> Vec<String> {
        command_names()
    }

    fn help_text(&self, command: Option<&str>) -> Option<String> {
        help_text(command)
    }
}
