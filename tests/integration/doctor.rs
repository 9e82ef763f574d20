//! `codecrew doctor` through the binary, with a PATH the test controls.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::binary::codecrew;
use crate::support::clis::Clis;

struct World {
    dir: tempfile::TempDir,
}

impl World {
    /// A workspace, an empty `bin/` for PATH, and a user config with `text`.
    fn new(config: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("user.toml"), config).unwrap();
        World { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// An executable script in `bin/`.
    fn program(&self, name: &str, script: &str) {
        let path = self.path("bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn doctor(&self, args: &[&str], path: &Path) -> Output {
        self.doctor_command(args, path).output().unwrap()
    }

    fn doctor_command(&self, args: &[&str], path: &Path) -> Command {
        let mut command = codecrew(&self.path(""));
        command
            .arg("--workdir")
            .arg(self.path("ws"))
            .arg("doctor")
            .args(args)
            .env("CODECREW_CONFIG", self.path("user.toml"))
            .env("PATH", path)
            .env("NO_COLOR", "1");
        command
    }
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
    let world = World::new("");
    world.program("claude", "echo '9.9.9 (Claude Code)'");
    let output = world.doctor(&[], &world.path("bin"));
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
    let world = World::new("");
    let output = world.doctor(&[], &world.path("bin"));
    let report = text(&output);
    let claude = line(&report, "cli", "claude");
    assert!(
        claude.starts_with("FAIL") && claude.contains("default agent"),
        "{claude}"
    );
    assert_eq!(output.status.code(), Some(1));

    let broken = World::new("[agents.x]\nprovider = \"nope\"\n");
    let output = broken.doctor(&["--output", "json"], &broken.path("bin"));
    let checks: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let config = checks.iter().find(|c| c["area"] == "config").unwrap();
    assert_eq!(config["status"], "fail");
    let detail = config["detail"].as_str().unwrap();
    assert!(detail.contains("user.toml:2:12"), "{detail}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn external_tool_programs_are_checked() {
    let world = World::new(
        "[tools.inv]\ncommand = \"inv-tool-missing\"\n\n[[tools.inv.exports]]\n\
         name = \"lookup\"\ndescription = \"Look up.\"\n",
    );
    world.program("claude", "echo 1.0");
    let output = world.doctor(&[], &world.path("bin"));
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
    let world = World::new(
        "[agents.good]\nprovider = \"command\"\ncommand = { argv = [\"good-cli\"] }\n\n\
         [agents.bad]\nprovider = \"command\"\ncommand = { argv = [\"bad-cli\"] }\n",
    );
    world.program("claude", "echo 1.0");
    world.program("good-cli", "cat >/dev/null; echo ok");
    world.program(
        "bad-cli",
        "cat >/dev/null; echo 'no credentials' >&2; exit 3",
    );
    let path = std::env::join_paths([
        world.path("bin"),
        PathBuf::from("/usr/bin"),
        PathBuf::from("/bin"),
    ])
    .unwrap();
    let output = world.doctor(&["--live", "good"], Path::new(&path));
    let report = text(&output);
    let good = line(&report, "live", "@good");
    assert!(
        good.starts_with("ok") && good.contains("\"ok\""),
        "{report}"
    );
    assert_eq!(output.status.code(), Some(0), "{report}");

    let output = world.doctor(&["--live", "good", "bad"], Path::new(&path));
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
    let world = World::new("");
    // A fresh home, as a new user's: nothing of the CLIs' own there yet.
    let home = world.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let output = world
        .doctor_command(&[], Path::new(&clis.path_var()))
        .env("HOME", &home)
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
    let world = World::new(&format!(
        "[mcp.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n\n\
         [mcp.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo no config >&2; exit 1\"]\n",
        node.display().to_string(),
        everything.display().to_string(),
    ));
    let output = world.doctor(&[], Path::new(&clis.path_var()));
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
