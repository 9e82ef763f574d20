//! `codecrew completions <shell>`: the shell completion script, from the clap definitions.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;
use codecrew::cli::{CommandLine, CompletionsArgs};
use codecrew::output::console;

pub fn run(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    // Generated into memory first: clap_complete panics when its writer fails, and stdout
    // may be a closed pipe.
    let script = script(args.shell);
    // A script for the shell to read.
    console::stdout().exact(&script)?;
    Ok(ExitCode::SUCCESS)
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut command = CommandLine::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "codecrew", &mut script);
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_knows_the_commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let script = String::from_utf8(script(shell)).unwrap();
            assert!(!script.is_empty(), "{shell}");
            for command in ["intercept", "agents", "init", "completions"] {
                assert!(script.contains(command), "{shell} lacks {command}");
            }
        }
    }
}
