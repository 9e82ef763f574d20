//! The starter file `codecrew init` writes: it loads, and documents every key.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_starter_file_loads_as_a_project_file() {
    let repo = Repo::new();
    repo.write_project(STARTER);
    let loaded = repo.load().unwrap();
    let config = &loaded.config;
    assert_eq!(config.default_agent, "claude");
    assert_eq!(config.agents["claude"].model.as_deref(), Some("sonnet"));
    let aichat = config.agents["aichat"].command.as_ref().unwrap();
    assert_eq!(aichat.argv, ["aichat", "-m", "{model}"]);
    assert_eq!(aichat.prompt, PromptVia::Stdin);
    // The built-in llm agent is not shadowed by an example.
    assert_eq!(
        config.agents["llm"].provider,
        ProviderKind::Cli(CliKind::Llm)
    );
    let ollama = config.agents["ollama"].command.as_ref().unwrap();
    assert!(ollama.argv.contains(&"{prompt}".to_owned()));
    assert_eq!(ollama.prompt, PromptVia::Arg);
    let permissions = loaded.project_permissions.as_ref().unwrap();
    assert!(
        permissions
            .allow
            .contains(&"run_command(git diff *)".to_owned())
    );
    assert!(permissions.ask.contains(&"write_file(src/**)".to_owned()));
    assert!(
        permissions
            .deny
            .contains(&"read_file(secrets/**)".to_owned())
    );
    assert_eq!(config.limits, LimitsConfig::default());
}

#[test]
fn the_starter_file_also_loads_as_a_user_file_and_documents_every_key() {
    let repo = Repo::new();
    repo.write_user(STARTER);
    repo.load().unwrap();
    for key in [
        "default_agent",
        "[agents.",
        "provider",
        "model",
        "system_prompt",
        "args",
        "query",
        "execute",
        "tools",
        "command",
        "argv",
        "prompt",
        "output",
        "[permissions]",
        "allow",
        "ask",
        "deny",
        "pass_env",
        "allow_network",
        "[limits]",
        "max_turns",
        "turn_timeout_secs",
        "max_calls_per_message",
        "trusted_projects",
        "[tools.",
        "[[tools.",
        "exports",
        "input_schema",
        "readonly_tools",
        "[mcp.",
    ] {
        assert!(STARTER.contains(key), "the starter does not mention {key}");
    }
}

#[test]
fn the_starter_commented_examples_load_too() {
    // Uncomment the commented-out key lines (`# key = value`) of the claude agent.
    let text: String = STARTER
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest)
                if ["system_prompt =", "args =", "tools ="]
                    .iter()
                    .any(|k| rest.starts_with(k)) =>
            {
                rest.to_owned()
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(text, STARTER.trim_end());
    let repo = Repo::new();
    repo.write_project(&text);
    let loaded = repo.load().unwrap();
    assert!(loaded.config.agents["claude"].tools.is_some());
}

#[test]
fn the_starter_tool_and_server_examples_load() {
    let text: String = STARTER
        .lines()
        .map(|line| {
            line.strip_prefix("#| ")
                .or(line.strip_prefix("#|"))
                .unwrap_or(line)
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(text, STARTER.trim_end());
    let repo = Repo::new();
    repo.write_user(&text);
    let loaded = repo.load().unwrap();
    assert_eq!(loaded.config.tools["jira"].exports[0].name, "search");
    assert_eq!(loaded.config.mcp["files"].command, "npx");
}
