use clap::CommandFactory;

use super::*;

/// The values clap offers for `intercept --from`.
fn from_values() -> Vec<String> {
    let command = CommandLine::command();
    let intercept = command
        .find_subcommand("intercept")
        .expect("intercept is a command");
    let from = intercept
        .get_arguments()
        .find(|arg| arg.get_id() == "from")
        .expect("--from");
    from.get_possible_values()
        .iter()
        .map(|value| value.get_name().to_owned())
        .collect()
}

/// `intercept --from` offers exactly the engine's decoders, by their own names.
#[test]
fn from_offers_every_decoder_by_its_name() {
    let offered = from_values();
    let decoders: Vec<String> = Format::ALL.iter().map(|f| f.name().to_owned()).collect();
    assert_eq!(offered, decoders);
    for format in Format::ALL {
        let parsed =
            CommandLine::try_parse_from(["codecrew", "intercept", "--from", format.name()])
                .expect("parses");
        let CodecrewCommand::Intercept(args) = parsed.command else {
            panic!("not intercept");
        };
        assert_eq!(args.from, format);
    }
}

/// The words of a list as the docs write them: `a`, `b` and `c`, "a", "b" or "c",
/// a|b|c (quotes, backticks and escapes dropped).
fn listed(list: &str) -> Vec<String> {
    list.replace("\\|", ",")
        .replace('|', ",")
        .replace(" and ", ",")
        .replace(" or ", ",")
        .split(',')
        .map(|word| word.trim().trim_matches(['`', '"']).to_owned())
        .filter(|word| !word.is_empty())
        .collect()
}

/// The text of `doc` between `start` and the next `end` after it.
fn between<'a>(doc: &'a str, start: &str, end: &str) -> &'a str {
    let from = doc.find(start).map(|at| at + start.len());
    let from = from.unwrap_or_else(|| panic!("no {start:?}"));
    let rest = &doc[from..];
    &rest[..rest
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?}"))]
}

/// The words in backticks in `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The values a config key accepts, as the config's own error lists them.
fn accepted(toml: &str) -> Vec<String> {
    let error = match toml::from_str::<codecrew_config::AgentConfig>(toml) {
        Ok(_) => panic!("{toml} was accepted"),
        Err(error) => error,
    };
    let (_, expected) = error.message().split_once("expected").expect("a list");
    backticked(expected)
}

/// Every list of the CLIs codecrew knows, in the code, the help and the docs, is the
/// registry's ([`CliKind`]); each fails here when a CLI is added to the registry alone.
#[test]
fn every_list_of_clis_is_the_registrys() {
    use codecrew_config::{CliKind, OutputFormat, ProviderKind};

    let clis: Vec<String> = CliKind::NAMES.map(str::to_owned).to_vec();
    let mut providers = clis.clone();
    providers.push("command".to_owned());
    let mut dialects: Vec<String> = Vec::new();
    for kind in CliKind::ALL {
        let name = kind.format().name().to_owned();
        if !dialects.contains(&name) {
            dialects.push(name);
        }
    }
    let mut printed = vec!["text".to_owned()];
    printed.extend(dialects.iter().cloned());
    let mut formats = vec!["auto".to_owned()];
    formats.extend(printed.iter().cloned());

    // The code: clap's `--from`, the config's `provider` and `output` values.
    let offered = from_values();
    assert_eq!(offered, formats, "intercept --from");
    assert_eq!(
        accepted("provider = \"nope\"\n"),
        providers,
        "config provider"
    );
    assert_eq!(ProviderKind::NAMES.to_vec(), providers);
    assert_eq!(
        accepted("provider = \"command\"\ncommand = { argv = [\"x\"], output = \"nope\" }\n"),
        printed,
        "config output"
    );
    assert_eq!(OutputFormat::NAMES.to_vec(), printed);

    // The help: `query --help` names the built-in agents.
    let mut command = CommandLine::command();
    let query = command
        .find_subcommand_mut("query")
        .expect("query is a command");
    let help = query.render_long_help().to_string();
    assert_eq!(
        listed(between(&help, "\nAgents: ", " run those CLIs")),
        clis,
        "query --help"
    );

    // The docs.
    let config_md = include_str!("../../docs/CONFIG.md");
    assert_eq!(
        backticked(between(config_md, "it knows the agents", "(each running")),
        clis,
        "docs/CONFIG.md, its opening"
    );
    assert_eq!(
        listed(between(config_md, "| `provider` | ", " | ")),
        providers,
        "docs/CONFIG.md, the provider row"
    );
    assert_eq!(
        listed(between(config_md, "| `output` | ", " | ")),
        printed,
        "docs/CONFIG.md, the output row"
    );
    assert_eq!(
        listed(between(config_md, "valid providers: ", "\n")),
        providers,
        "docs/CONFIG.md, the error's example"
    );
    assert_eq!(
        listed(between(config_md, "hint: use one of ", ";")),
        providers,
        "docs/CONFIG.md, the error's hint"
    );
    let readme = include_str!("../../README.md");
    assert_eq!(
        backticked(between(
            readme,
            "LLM command-line agents",
            "or any CLI you declare"
        )),
        clis,
        "README.md, its opening"
    );
    assert_eq!(
        backticked(between(readme, "Built-in agents: ", ";")),
        clis,
        "README.md, the built-in agents"
    );
    assert_eq!(
        listed(between(readme, "`codecrew intercept [--from ", "]")),
        formats,
        "README.md, intercept --from"
    );
}

/// The worktree flags are execute's: `query --help` does not list them, `execute --help`
/// does, and query still parses them (to say they are execute's).
#[test]
fn only_execute_lists_the_worktree_flags() {
    let flags = [
        "--worktrees",
        "--shared-workspace",
        "--base",
        "--dirty",
        "--check",
        "--judge",
    ];
    let mut command = CommandLine::command();
    let help = |command: &mut clap::Command, name: &str| {
        command
            .find_subcommand_mut(name)
            .expect("a command")
            .render_long_help()
            .to_string()
    };
    let query = help(&mut command, "query");
    let execute = help(&mut command, "execute");
    for flag in flags {
        assert!(!query.contains(flag), "query --help lists {flag}:\n{query}");
        assert!(execute.contains(flag), "execute --help lacks {flag}");
    }
    let parsed = CommandLine::try_parse_from(["codecrew", "query", "--worktrees", "@claude hi"])
        .expect("query parses --worktrees");
    let CodecrewCommand::Query(args) = parsed.command else {
        panic!("not a query");
    };
    assert!(args.isolation.wants_worktrees());
}
