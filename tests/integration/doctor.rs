//! `codecrew doctor` through the binary, with a PATH the test controls.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::clis::Clis;
use crate::support::{AgentScript, Answer, World};

/// A world whose user config is `config` (written even when empty: doctor checks it).
fn configured(config: &str) -> World {
    World::new().user_config(config)
}

/// `codecrew doctor ARGS` in `world`, with `path` as `PATH` and no colours.
fn doctor_command(world: &World, args: &[&str], path: &Path) -> Command {
    let env = world.env.clone().with("PATH", path).with("NO_COLOR", "1");
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    world.command_with(&env, &all)
}

fn doctor(world: &World, args: &[&str], path: &Path) -> Output {
    doctor_command(world, args, path).output().unwrap()
}

/// The world's own `bin/`, alone, as `PATH`: no CLI but the test's.
fn bin(world: &World) -> PathBuf {
    let bin = world.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    bin
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The line of `area` that mentions `what`.
#[track_caller]
fn line<'a>(report: &'a str, area: &str, what: &str) -> &'a str {
    report
        .lines()
        .find(|line| line.split_whitespace().nth(1) == Some(area) && line.contains(what))
        .unwrap_or_else(|| panic!("no {area} line with {what:?} in:\n{report}"))
}

#[test]
fn reports_installed_and_missing_clis_with_versions() {
    let world = configured("").program("claude", "#!/bin/sh\necho '9.9.9 (Claude Code)'\n");
    let output = doctor(&world, &[], &bin(&world));
    let report = text(&output);
    let claude = line(&report, "cli", "claude");
    assert!(claude.starts_with("ok"), "{claude}");
    assert!(claude.contains("9.9.9 (Claude Code)"), "{claude}");
    assert!(
        claude.contains(&world.path("bin/claude").display().to_string()),
        "{claude}"
    );
    if codecrew_policy::sandbox::support() != codecrew_policy::sandbox::Support::Unsupported {
        assert!(claude.contains("starts inside its wall"), "{claude}");
    }
    let gemini = line(&report, "cli", "gemini");
    assert!(gemini.starts_with("warn"), "{gemini}");
    assert!(
        report.contains("npm install -g @google/gemini-cli"),
        "{report}"
    );
    assert!(
        line(&report, "config", "user.toml").starts_with("ok"),
        "{report}"
    );
    assert_eq!(output.status.code(), Some(0), "{report}");
}

#[test]
fn a_missing_default_cli_or_a_broken_config_fails() {
    let world = configured("");
    let output = doctor(&world, &[], &bin(&world));
    let report = text(&output);
    let claude = line(&report, "cli", "claude");
    assert!(
        claude.starts_with("FAIL") && claude.contains("default agent"),
        "{claude}"
    );
    assert_eq!(output.status.code(), Some(1));

    let broken = configured("[agents.x]\nprovider = \"nope\"\n");
    let output = doctor(&broken, &["--output", "json"], &bin(&broken));
    let checks: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let config = checks.iter().find(|c| c["area"] == "config").unwrap();
    assert_eq!(config["status"], "fail");
    let detail = config["detail"].as_str().unwrap();
    assert!(detail.contains("user.toml:2:12"), "{detail}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn external_tool_programs_are_checked() {
    let world = configured(
        "[tools.inv]\ncommand = \"inv-tool-missing\"\n\n[[tools.inv.exports]]\n\
         name = \"lookup\"\ndescription = \"Look up.\"\n",
    )
    .program("claude", "#!/bin/sh\necho 1.0\n");
    let output = doctor(&world, &[], &bin(&world));
    let report = text(&output);
    let tool = line(&report, "tool", "inv");
    assert!(
        tool.starts_with("FAIL") && tool.contains("inv-tool-missing"),
        "{report}"
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn live_asks_each_agent_through_query() {
    let world = configured("")
        .program("claude", "#!/bin/sh\necho 1.0\n")
        .agent("good", AgentScript::new().otherwise(Answer::text("ok\n")))
        .agent(
            "bad",
            AgentScript::new().otherwise(Answer::fail(3, "no credentials\n")),
        );
    let path = std::env::join_paths([
        world.path("bin"),
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
    ])
    .unwrap();
    let output = doctor(&world, &["--live", "good"], Path::new(&path));
    let report = text(&output);
    let good = line(&report, "live", "@good");
    assert!(
        good.starts_with("ok") && good.contains("\"ok\""),
        "{report}"
    );
    assert_eq!(output.status.code(), Some(0), "{report}");

    let output = doctor(&world, &["--live", "good", "bad"], Path::new(&path));
    let report = text(&output);
    let bad = line(&report, "live", "@bad");
    assert!(bad.starts_with("FAIL"), "{report}");
    assert_eq!(output.status.code(), Some(1), "{report}");
}

/// The real CLIs report their pinned versions.
#[test]
fn the_real_clis_report_their_versions() {
    let Some(clis) = Clis::require("the_real_clis_report_their_versions") else {
        return;
    };
    let world = configured("");
    // A fresh home, as a new user's: nothing of the CLIs' own there yet.
    let output = doctor_command(&world, &[], Path::new(&clis.path_var()))
        .env_remove("XDG_CACHE_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("COPILOT_CACHE_HOME")
        .env_remove("COPILOT_PKG_CACHE_HOME")
        .output()
        .unwrap();
    let report = text(&output);
    assert!(
        line(&report, "cli", "claude").contains("2.1.329"),
        "{report}"
    );
    assert!(
        line(&report, "cli", "gemini").contains("0.61.0"),
        "{report}"
    );
    assert!(
        line(&report, "cli", "codex").contains("0.169.0"),
        "{report}"
    );
    // A fresh home: Copilot's package is not unpacked yet. A job unpacks it before its
    // first turn; the check does the same, and does not send the user to open the wall.
    let copilot = line(&report, "cli", "copilot");
    assert!(
        copilot.starts_with("ok") && copilot.contains("starts inside its wall"),
        "{report}"
    );
}

/// MCP servers: a real one starts and lists its tools, a broken one fails the check.
#[test]
fn mcp_servers_are_started_and_reported() {
    let Some(clis) = Clis::require("mcp_servers_are_started_and_reported") else {
        return;
    };
    let node = std::env::split_paths(&clis.path_var())
        .map(|dir| dir.join("node"))
        .find(|node| node.is_file())
        .unwrap();
    let everything = clis.bin_dir().join("mcp-server-everything");
    let world = configured(&format!(
        "[mcp.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n\n\
         [mcp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no config >&2; exit 1\"]\n",
        node.display().to_string(),
        everything.display().to_string(),
    ));
    let output = doctor(&world, &[], Path::new(&clis.path_var()));
    let report = text(&output);
    let good = line(&report, "mcp", "everything");
    assert!(good.starts_with("ok") && good.contains("echo"), "{report}");
    let broken = line(&report, "mcp", "broken");
    assert!(
        broken.starts_with("FAIL") && broken.contains("no config"),
        "{report}"
    );
    assert_eq!(output.status.code(), Some(1));
}
