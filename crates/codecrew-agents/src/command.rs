//! Any other CLI, described by the user (`provider = "command"`): an argv template with
//! `{model}` and `{prompt}`, the prompt on stdin or in one argv element, and the output
//! format to read. Its sessions are not continued: a follow-up turn carries the
//! transcript.

use codecrew_intercept::decode::Format;

use super::{Cli, TurnCommand, argv};
use crate::drive::process::CommandSpec;
use codecrew_config::{AgentConfig, OutputFormat, PromptVia, ProviderKind};

#[derive(Debug)]
pub struct DeclaredCommand {
    agent_id: String,
    /// The argv template (program first); empty when the agent configured none.
    argv: Vec<String>,
    prompt: PromptVia,
    output: OutputFormat,
}

impl DeclaredCommand {
    pub fn new(agent_id: &str, agent: &AgentConfig) -> DeclaredCommand {
        let (argv, prompt, output) = match &agent.command {
            Some(command) => (command.argv.clone(), command.prompt, command.output),
            None => (Vec::new(), PromptVia::Stdin, OutputFormat::TEXT),
        };
        DeclaredCommand {
            agent_id: agent_id.to_owned(),
            argv,
            prompt,
            output,
        }
    }
}

impl Cli for DeclaredCommand {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Command
    }

    fn program(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    fn install_hint(&self) -> String {
        format!(
            "install {:?} or fix `agents.{}.command.argv` in codecrew.toml",
            self.program(),
            self.agent_id
        )
    }

    fn format(&self) -> Format {
        self.output.format()
    }

    /// Unconfined: codecrew does not know where a declared command keeps its state.
    fn state(&self) -> Option<super::wall::State> {
        None
    }

    fn can_resume(&self) -> bool {
        false
    }

    /// A program codecrew does not know may not take `--version`.
    fn reports_version(&self) -> bool {
        false
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let model = command.model;
        let mut args = Vec::new();
        for arg in self.argv.iter().skip(1) {
            if arg == "{model}" && model.is_none() {
                continue;
            }
            let mut value = arg.replace("{model}", model.unwrap_or(""));
            if self.prompt == PromptVia::Arg {
                value = value.replace("{prompt}", command.turn.prompt);
            }
            args.push(value);
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        if self.prompt == PromptVia::Stdin {
            spec.stdin = Some(command.turn.prompt.as_bytes().to_vec());
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_tools::Mode;

    use super::super::Provider;
    use super::super::testing::*;
    use super::*;
    use codecrew_config::{CommandProvider, Config};

    #[test]
    fn the_template_takes_the_model_and_the_prompt() {
        let mut agent = Config::default().agents["claude"].clone();
        agent.provider = ProviderKind::Command;
        agent.command = Some(CommandProvider {
            argv: vec![
                "mycli".into(),
                "-m".into(),
                "{model}".into(),
                "--".into(),
                "{prompt}".into(),
            ],
            prompt: PromptVia::Arg,
            output: OutputFormat::TEXT,
        });
        let provider = Provider::new("mine", agent);
        let spec = provider.command(
            Path::new("/usr/bin/mycli"),
            &turn(None, Mode::Query),
            Path::new("."),
        );
        assert_eq!(args(&spec), ["-m", "haiku", "--", "the prompt"]);
        assert!(spec.stdin.is_none());
        let mut no_model = turn(None, Mode::Query);
        no_model.model = None;
        let spec = provider.command(Path::new("/usr/bin/mycli"), &no_model, Path::new("."));
        assert_eq!(args(&spec), ["-m", "--", "the prompt"]);
        assert_eq!(provider.format(), Format::Text);
        assert!(!provider.can_resume());
        assert!(provider.install_hint().contains("agents.mine.command.argv"));
    }
}
