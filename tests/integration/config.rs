//! `codecrew init`, `codecrew agents list` and `codecrew completions`, run as the built binary.
//! Every run gets `CODECREW_CONFIG` pointing at a scratch user file, so the developer's own
//! config never leaks in, and a workspace that is a repository root (`.git`), so no
//! `codecrew.toml` above it is found.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::World;
use crate::support::binary::assert_exit;

const STARTER: &str = include_str!("../../crates/codecrew-config/src/starter.toml");

/// A world whose workspace is a repository root (no `codecrew.toml` above it is found)
/// and whose user config is `user` (written even when empty).
fn world_with(user: &str) -> World {
    let world = World::new();
    std::fs::create_dir_all(world.workspace().join(".git")).unwrap();
    world.user_config(user)
}

fn world() -> World {
    world_with("")
}

/// The workspace, as the kernel resolves it.
fn workspace(world: &World) -> PathBuf {
    world.workspace().canonicalize().unwrap()
}

fn project_file(world: &World) -> PathBuf {
    workspace(world).join("codecrew.toml")
}

/// The user config file the world wrote.
fn user_file(world: &World) -> PathBuf {
    world.path("user.toml")
}

/// `codecrew ARGS --workdir WORKSPACE` with `CODECREW_CONFIG` set to `config`.
fn run_with_config(world: &World, config: &Path, args: &[&str]) -> Output {
    let workspace = workspace(world);
    let mut all = args.to_vec();
    all.extend(["--workdir", workspace.to_str().unwrap()]);
    let env = world.env.clone().with("CODECREW_CONFIG", config);
    world.command_with(&env, &all).output().unwrap()
}

fn run(world: &World, args: &[&str]) -> Output {
    run_with_config(world, &user_file(world), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn init_writes_the_starter_file_and_it_loads() {
    let world = world();
    let output = run(&world, &["init"]);
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("Wrote "), "{}", stdout(&output));
    assert_eq!(
        std::fs::read_to_string(project_file(&world)).unwrap(),
        STARTER
    );

    let output = run(&world, &["agents", "list"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    for agent in ["claude", "llm", "ollama"] {
        assert!(text.lines().any(|l| l.starts_with(agent)), "{text}");
    }
    assert!(
        text.contains(&project_file(&world).display().to_string()),
        "{text}"
    );
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let world = world();
    std::fs::write(project_file(&world), "default_agent = \"gemini\"\n").unwrap();
    let output = run(&world, &["init"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("already exists"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("--force"), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(project_file(&world)).unwrap(),
        "default_agent = \"gemini\"\n"
    );

    let output = run(&world, &["init", "--force"]);
    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read_to_string(project_file(&world)).unwrap(),
        STARTER
    );
}

const USER: &str = r#"
default_agent = "mine"

[agents.mine]
provider = "gemini"
model = "gemini-2.5-flash"
"#;

const PROJECT: &str = r#"
[agents.claude]
provider = "claude"
model = "haiku"

[agents.wrapped]
provider = "command"
command = { argv = ["llm", "-m", "{model}"] }
"#;

#[test]
fn agents_list_shows_the_merged_agents_and_the_files() {
    let world = world_with(USER);
    std::fs::write(project_file(&world), PROJECT).unwrap();
    let output = run(&world, &["agents", "list"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let row = |id: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no row for {id} in:\n{text}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let user = user_file(&world).display().to_string();
    let project = project_file(&world).display().to_string();
    assert_eq!(
        row("mine"),
        ["mine", "gemini", "gemini-2.5-flash", "yes", &user]
    );
    assert_eq!(row("claude"), ["claude", "claude", "haiku", &project]);
    assert_eq!(row("codex"), ["codex", "codex", "-", "built-in"]);
    assert!(
        row("wrapped").join(" ").contains("blocked until trusted"),
        "{text}"
    );
    assert!(text.contains(&format!("user     {user}")), "{text}");
    assert!(
        text.contains(&format!("project  {project} (not trusted")),
        "{text}"
    );
}

#[test]
fn agents_list_json_is_one_document() {
    let world = world_with(USER);
    std::fs::write(project_file(&world), PROJECT).unwrap();
    let output = run(&world, &["agents", "list", "--output", "json"]);
    assert_exit(&output, 0);
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["default_agent"], "mine");
    let agents = document["agents"].as_array().unwrap();
    let agent = |id: &str| agents.iter().find(|a| a["id"] == id).unwrap().clone();
    let mine = agent("mine");
    assert_eq!(mine["provider"], "gemini");
    assert_eq!(mine["model"], "gemini-2.5-flash");
    assert_eq!(mine["default"], true);
    assert_eq!(mine["origin"], "user");
    assert_eq!(mine["defined_in"], user_file(&world).display().to_string());
    let claude = agent("claude");
    assert_eq!(claude["origin"], "project");
    assert_eq!(claude["default"], false);
    let codex = agent("codex");
    assert_eq!(codex["origin"], "builtin");
    assert_eq!(codex["model"], Value::Null);
    assert_eq!(codex["defined_in"], Value::Null);
    let wrapped = agent("wrapped");
    assert_eq!(wrapped["argv"], serde_json::json!(["llm", "-m", "{model}"]));
    assert_eq!(wrapped["allowed"], false);
    assert_eq!(
        document["sources"],
        serde_json::json!([
            user_file(&world).display().to_string(),
            project_file(&world).display().to_string()
        ])
    );
    assert_eq!(document["files"]["project_trusted"], false);
}

#[test]
fn a_broken_project_file_is_exit_2_with_its_location() {
    let world = world();
    std::fs::write(
        project_file(&world),
        "[agents.mine]\nprovider = \"openai\"\n",
    )
    .unwrap();
    for args in [
        &["agents", "list"][..],
        &["agents", "list", "--output", "json"],
    ] {
        let output = run(&world, args);
        assert_exit(&output, 2);
        let message = stderr(&output);
        let location = format!("{}:2:12: ", project_file(&world).display());
        assert!(message.contains(&location), "{message}");
        assert!(message.contains("unknown provider `openai`"), "{message}");
        assert!(message.contains("hint: "), "{message}");
        assert!(output.stdout.is_empty(), "{}", stdout(&output));
    }
}

#[test]
fn a_broken_user_file_is_exit_2_with_its_location() {
    let world = world_with("[limits]\nmax_turns = 0\n");
    let output = run(&world, &["agents", "list"]);
    assert_exit(&output, 2);
    let message = stderr(&output);
    let location = format!("{}:2:13: ", user_file(&world).display());
    assert!(message.contains(&location), "{message}");
    assert!(message.contains("must be positive"), "{message}");
}

#[test]
fn a_missing_codecrew_config_file_is_exit_2() {
    let world = world();
    let missing = world.path("missing.toml");
    let output = run_with_config(&world, &missing, &["agents", "list"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("CODECREW_CONFIG"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn completions_for_each_shell_know_the_commands() {
    let world = world();
    for shell in ["bash", "zsh", "fish"] {
        let output = run(&world, &["completions", shell]);
        assert_exit(&output, 0);
        let script = stdout(&output);
        assert!(!script.trim().is_empty(), "{shell}");
        assert!(script.contains("intercept"), "{shell}:\n{script}");
    }
    let output = run(&world, &["completions", "cmd.exe"]);
    assert_exit(&output, 2);
}
