use super::testing::*;
use super::*;

/// An agent's effort reaches its CLI as the CLI spells it, per turn and kept; an
/// agent without one passes nothing.
#[test]
fn an_agents_effort_is_its_clis_own_flag() {
    let argv = |kind: &str, effort: Option<&str>, kept: bool| {
        let mut agent = provider(kind).agent;
        agent.effort = effort.map(str::to_owned);
        let provider = Provider::new(kind, agent);
        let turn = turn(None, Mode::Query);
        let spec = if kept {
            provider.resident_command(Path::new(kind), &turn, Path::new("."))
        } else {
            provider.command(Path::new(kind), &turn, Path::new("."))
        };
        args(&spec)
    };
    for kept in [false, true] {
        assert!(argv("claude", Some("high"), kept).contains(&"--effort=high".to_owned()));
        assert!(
            argv("copilot", Some("xhigh"), kept).contains(&"--reasoning-effort=xhigh".to_owned())
        );
        let codex = argv("codex", Some("low"), kept);
        assert!(
            codex
                .windows(2)
                .any(|pair| pair == ["-c", "model_reasoning_effort=\"low\""]),
            "{codex:?}"
        );
        for kind in ["claude", "codex", "copilot"] {
            assert!(
                !argv(kind, None, kept)
                    .iter()
                    .any(|arg| arg.contains("effort")),
                "{kind}"
            );
        }
    }
}

/// The sign-in an editor runs in a terminal is the CLI's own, its program on PATH:
/// nothing of the config reaches its command line.
#[test]
fn a_sign_in_is_the_clis_own_command() {
    let sign_in = |kind: &str| provider(kind).sign_in();
    assert_eq!(
        sign_in("claude"),
        Some((
            "claude".to_owned(),
            vec!["auth".to_owned(), "login".to_owned()]
        ))
    );
    assert_eq!(
        sign_in("codex"),
        Some(("codex".to_owned(), vec!["login".to_owned()]))
    );
    assert_eq!(sign_in("gemini"), Some(("gemini".to_owned(), Vec::new())));
    assert_eq!(sign_in("llm"), None);
    assert!(provider("claude").model_aliases().contains(&"haiku"));
    assert!(provider("codex").model_aliases().is_empty());
}

#[test]
fn every_built_in_agent_has_its_cli() {
    for kind in CliKind::ALL {
        let provider = provider(kind.name());
        assert_eq!(provider.kind(), ProviderKind::Cli(kind));
        assert_eq!(provider.format(), kind.format());
        assert_eq!(provider.program(), kind.name());
        assert!(!provider.install_hint().is_empty());
        assert!(provider.can_resume(), "{kind:?}");
    }
}

#[test]
fn only_claude_and_codex_kept_and_llm_have_every_read_judged() {
    for mode in [Mode::Query, Mode::Execute] {
        let judged: Vec<&str> = CliKind::NAMES
            .into_iter()
            .filter(|name| provider(name).judges_every_read(mode))
            .collect();
        assert_eq!(judged, ["claude", "codex", "llm"], "{mode:?}");
    }
    let mut agent = codecrew_config::Config::default().agents["claude"].clone();
    agent.keep_alive = Some(false);
    assert!(
        !Provider::new("claude", agent).judges_every_read(Mode::Query),
        "run per turn, Claude's reads ask no one"
    );
}

#[test]
fn every_cli_with_tools_is_kept_for_the_loop() {
    let kept: Vec<&str> = CliKind::NAMES
        .into_iter()
        .filter(|name| provider(name).keeps_alive(Mode::Execute))
        .collect();
    assert_eq!(
        kept,
        ["claude", "gemini", "codex", "copilot", "opencode", "qwen"]
    );
    let mut agent = codecrew_config::Config::default().agents["codex"].clone();
    agent.args.query = vec!["--oss".into()];
    let codex = Provider::new("codex", agent);
    assert!(
        !codex.keeps_alive(Mode::Query),
        "extra exec flags: per turn"
    );
    assert!(codex.keeps_alive(Mode::Execute));
}
