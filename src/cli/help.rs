//! The command line's own help, as the `help` tool gives it to a model.

use super::CommandLine;

/// Without a command: an index of the commands, one line each, with the examples and exit
/// codes (what a model needs to pick one; it asks for that one's help next). With one
/// (`"tools call"`): its long help, `None` when there is no such command.
///
/// The index is not the program's long help, which repeated every global option and
/// cost the model 1,200 tokens and codecrew 2 ms to render (issue 52).
pub fn help_text(command: Option<&str>) -> Option<String> {
    use clap::CommandFactory;
    match command {
        None => Some(overview().index.clone()),
        Some(name) => {
            let mut root = CommandLine::command();
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

/// "Usage", each command and what it does on one line, then the program's closing text
/// (its examples and exit codes).
fn command_index(root: &clap::Command) -> String {
    let mut text = String::from("Usage: codecrew [OPTIONS] <COMMAND>\n\nCommands:\n");
    for command in root.get_subcommands() {
        let about = command
            .get_about()
            .map(|about| about.to_string())
            .unwrap_or_default();
        // clap's wrapping is for a terminal: the model reads one line per command.
        let about = about.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!("  {}: {about}\n", command.get_name()));
    }
    text.push_str(
        "\nA command's options: ask again with {\"command\": \"<name>\"} (e.g. \"query\").\n",
    );
    if let Some(after) = root.get_after_help() {
        text.push('\n');
        text.push_str(after.to_string().trim_end());
        text.push('\n');
    }
    text
}

/// The names of the top-level commands.
pub fn command_names() -> Vec<String> {
    overview().names.clone()
}

/// What the help tool gives without input, from one build of the command tree, kept
/// for the process (it does not change).
struct Overview {
    names: Vec<String>,
    index: String,
}

fn overview() -> &'static Overview {
    use clap::CommandFactory;
    static OVERVIEW: std::sync::OnceLock<Overview> = std::sync::OnceLock::new();
    OVERVIEW.get_or_init(|| {
        let root = CommandLine::command();
        Overview {
            names: root
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .collect(),
            index: command_index(&root),
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_names_every_command_on_one_line_and_points_to_their_help() {
        let index = help_text(None).unwrap();
        for name in command_names() {
            let line = index
                .lines()
                .find(|line| line.starts_with(&format!("  {name}: ")))
                .unwrap_or_else(|| panic!("{name} is not in the index:\n{index}"));
            assert!(line.len() > name.len() + 6, "{line}");
        }
        assert!(index.contains("{\"command\": \"<name>\"}"));
        assert!(index.contains("Exit codes"), "{index}");
        // The global options are in the program's own help, not in the model's index.
        assert!(!index.contains("--allow-home"), "{index}");
        assert!(index.len() < 3_000, "{} bytes", index.len());
    }

    #[test]
    fn a_command_gets_its_long_help_and_a_missing_one_none() {
        assert!(
            help_text(Some("tools call"))
                .unwrap()
                .contains("codecrew tools call")
        );
        assert!(help_text(Some("query")).unwrap().contains("--schema"));
        assert_eq!(help_text(Some("nope")), None);
    }
}
