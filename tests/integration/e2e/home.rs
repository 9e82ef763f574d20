//! Started in the home directory with `--allow-home`: a CLI whose every read codecrew
//! judges (Claude and Codex, kept for the loop) never gets a credential of the home to
//! the model through its own tools: the GitHub CLI's token (a sensitive class), a session
//! in a hidden folder no class names (a hidden entry of the home), a file in its own
//! folder (which its wall must grant it). A file of the home that is no hidden entry does
//! reach it (the control). The CLIs whose own reads are not judged, whose walls alone
//! would have to keep their own sign-in from their tools, do not start there.

use super::native_policy::{model_saw, native_read, plant};
use super::*;

/// Each CLI's own folder in the home, which its wall grants it.
fn own_folder(agent: &str) -> &'static str {
    match agent {
        "claude" => ".claude",
        "codex" => ".codex",
        "gemini" => ".gemini",
        "qwen" => ".qwen",
        "copilot" => ".copilot",
        _ => ".local/share/opencode",
    }
}

#[test]
fn opted_in_a_clis_own_read_of_a_home_credential_never_reaches_the_model() {
    let Some(world) = World::new("e2e-home-reads", Script::new()) else {
        return;
    };
    let home = world.home.home();
    // Started in the home, as a shell opened in `~` would.
    let mut env = world.env.clone();
    env.workdir = Some(home.clone());
    world
        .codecrew_with(&env, &["query", "@claude hi"])
        .assert_code(2);
    for agent in ["claude", "codex", "gemini", "qwen", "copilot", "opencode"] {
        let targets = [
            ("PUBLIC", home.join("notes.txt")),
            ("GH", home.join(".config/gh/hosts.yml")),
            ("HIDDEN", home.join(".someapp/session.txt")),
            (
                "OWN",
                home.join(own_folder(agent)).join("probe-session.json"),
            ),
        ];
        let mut script = Script::new().rule(Rule::on_any_tool_result(Reply::text("Read done.")));
        for (name, path) in &targets {
            plant(path, &format!("HOME-SECRET-{name}-{agent}"));
            script = script.rule(Rule::on_prompt(
                format!("E2E-HOME-READ-{name}"),
                native_read(agent, path),
            ));
        }
        world.server.set_script(script);
        let judged = matches!(agent, "claude" | "codex");
        for (name, _) in &targets {
            let since = world.server.requests().len();
            let run = world.codecrew_with(
                &env,
                &[
                    "--allow-home",
                    "query",
                    "--output",
                    "json",
                    &format!("@{agent} E2E-HOME-READ-{name}"),
                ],
            );
            let secret = format!("HOME-SECRET-{name}-{agent}");
            if !judged {
                run.assert_code(2);
                assert!(
                    run.stderr.contains("cannot start here") && run.stderr.contains("--workdir"),
                    "{agent}: {}",
                    run.stderr
                );
                assert_eq!(world.server.requests().len(), since, "{agent} started");
            } else if *name == "PUBLIC" {
                run.assert_code(0);
                assert!(
                    model_saw(&world, since, &secret),
                    "{agent}: the control read did not reach the model: {}\n{}",
                    run.stdout,
                    run.stderr
                );
            } else {
                assert!(
                    !model_saw(&world, since, &secret),
                    "{agent}: its own read of {name} reached the model: {}",
                    run.stdout
                );
            }
        }
    }
}
