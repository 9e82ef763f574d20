//! The `provider` and `output` values: the registry's names, read and written as the
//! derived enums they replace did.

use pretty_assertions::assert_eq;

use super::*;

fn agent(text: &str) -> Result<AgentConfig, toml::de::Error> {
    toml::from_str(text)
}

#[test]
fn every_known_cli_is_a_provider_by_its_name() {
    for kind in CliKind::ALL {
        let agent = agent(&format!("provider = \"{}\"\n", kind.name())).unwrap();
        assert_eq!(agent.provider, ProviderKind::Cli(kind));
        let written = toml::to_string(&agent).unwrap();
        assert_eq!(
            written.lines().next(),
            Some(format!("provider = \"{}\"", kind.name()).as_str())
        );
        assert_eq!(
            serde_json::to_value(agent.provider).unwrap(),
            serde_json::json!(kind.name())
        );
    }
    let command = agent("provider = \"command\"\ncommand = { argv = [\"x\"] }\n").unwrap();
    assert_eq!(command.provider, ProviderKind::Command);
    assert_eq!(ProviderKind::NAMES[..CliKind::ALL.len()], CliKind::NAMES);
    assert_eq!(ProviderKind::NAMES.last(), Some(&"command"));
    // The files written before the registry still load.
    for name in [
        "claude", "gemini", "codex", "copilot", "opencode", "qwen", "llm", "command",
    ] {
        assert_eq!(
            ProviderKind::from_name(name).map(ProviderKind::name),
            Some(name)
        );
    }
}

/// serde's message for an unknown variant: "one of `a`, `b`".
fn one_of(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    format!("one of {}", names.join(", "))
}

#[test]
fn an_unknown_provider_is_serdes_unknown_variant() {
    for bad in ["openai", "Claude", "auto", ""] {
        let error = agent(&format!("provider = \"{bad}\"\n")).unwrap_err();
        assert_eq!(
            error.message(),
            format!(
                "unknown variant `{bad}`, expected {}",
                one_of(&ProviderKind::NAMES)
            )
        );
    }
    let error = agent("provider = 3\n").unwrap_err();
    assert_eq!(error.message(), "wanted string or table");
}

#[test]
fn every_format_but_auto_is_an_output_by_its_name() {
    let mut printed: Vec<&str> = Format::ALL.map(Format::name).to_vec();
    printed.retain(|name| *name != "auto");
    assert_eq!(OutputFormat::NAMES.to_vec(), printed);
    for name in [
        "text", "claude", "gemini", "codex", "copilot", "opencode", "llm",
    ] {
        assert!(OutputFormat::from_name(name).is_some(), "{name}");
    }
    assert_eq!(OutputFormat::default().format(), Format::Text);
    for name in OutputFormat::NAMES {
        let text = format!("argv = [\"x\"]\nprompt = \"stdin\"\noutput = \"{name}\"\n");
        let command: CommandProvider = toml::from_str(&text).unwrap();
        assert_eq!(command.output.format().name(), name);
        assert_eq!(toml::to_string(&command).unwrap(), text);
    }
    for bad in ["auto", "json", "Text"] {
        let text = format!("argv = [\"x\"]\noutput = \"{bad}\"\n");
        let error = toml::from_str::<CommandProvider>(&text).unwrap_err();
        assert_eq!(
            error.message(),
            format!(
                "unknown variant `{bad}`, expected {}",
                one_of(&OutputFormat::NAMES)
            )
        );
    }
}
