//! Runs that stop before any agent answers, which need no real CLI: a CLI that is not
//! installed (exit 3 and how to install it), an unknown agent (exit 2), and a project
//! config's own programs in a workspace that is not trusted (exit 2, nothing run).

use codecrew_config::CliKind;
use serde_json::Value;

use crate::support::World;
use crate::support::clis::CliRun;

/// A world whose `PATH` holds the system's programs and none of the agents' CLIs.
fn without_the_clis() -> World {
    World::new().env("PATH", "/usr/bin:/bin")
}

/// The first result of a `--output json` run's document.
fn first_result(run: &CliRun) -> Value {
    let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    doc["results"][0].clone()
}

/// For every CLI of the registry: not on `PATH`, the run exits 3 and its error says how
/// to install it.
#[test]
fn a_missing_cli_exits_3_with_how_to_install() {
    let world = without_the_clis();
    for agent in CliKind::NAMES {
        let run = world.codecrew(&["query", "--output", "json", &format!("@{agent} hello")]);
        run.assert_code(3);
        let error = first_result(&run)["error"].as_str().unwrap().to_owned();
        let how = if agent == "llm" {
            "pipx install llm"
        } else {
            "npm install -g"
        };
        assert!(error.contains(how), "{agent}: {error}");
    }
}

#[test]
fn a_missing_cli_as_text_has_no_usage_line() {
    let world = without_the_clis();
    // As text: the error, and no usage line (nothing ran) to read past it.
    let run = world.codecrew(&["query", "@qwen hello"]);
    run.assert_code(3);
    assert!(
        run.stderr.contains("npm install -g @qwen-code/qwen-code"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("turns"), "{}", run.stderr);
}

#[test]
fn unknown_agent_is_a_usage_error() {
    let world = World::new();
    let run = world.codecrew(&["query", "@nobody hello"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("unknown agent @nobody"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("@claude"));
}

#[test]
fn a_project_config_cannot_run_its_own_programs_untrusted() {
    let world = World::new().project_config(
        "[agents.evil]\nprovider = \"command\"\n[agents.evil.command]\nargv = [\"touch\", \"pwned\"]\n",
    );
    let run = world.codecrew(&["query", "@evil hello"]);
    run.assert_code(2);
    assert!(!world.workspace().join("pwned").exists());
    assert!(run.stderr.contains("evil"), "{}", run.stderr);
}
