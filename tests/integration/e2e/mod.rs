//! End to end: `codecrew query` / `execute` drive the REAL claude, gemini, codex, copilot,
//! opencode, qwen and llm CLIs against the project's fake model server. Each scenario runs
//! for every CLI.
//!
//! The fake picks replies by prompt content. codecrew's follow-up turns carry the tool
//! results as a new user prompt ("codecrew ran the tool calls …") in the same session, so
//! the rules match on that text and on the results in it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use codecrew::config::CliKind;
use serde_json::{Value, json};

use crate::support::clis::{CliEnv, CliRun, Clis, TestHome, run};
use crate::support::fake_model::{FakeModel, Reply, Rule, Script};

const FOLLOW_UP: &str = "codecrew ran the tool calls";
const TIMEOUT: Duration = Duration::from_secs(180);

fn fenced(envelopes: &[Value]) -> String {
    envelopes
        .iter()
        .map(|e| format!("```json\n{e}\n```\n"))
        .collect()
}

fn envelope(tool: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": format!("codecrew:{tool}"), "input": input})
}

/// A test's world: a fake model with `script`, a HOME and a workspace, the CLIs' env.
struct World {
    home: TestHome,
    server: FakeModel,
    env: CliEnv,
}

impl World {
    fn new(test: &str, script: Script) -> Option<World> {
        let clis = Clis::require(test)?;
        let home = TestHome::new(test);
        let server = FakeModel::start(script);
        // An empty CODECREW_CONFIG: no user config file, whatever the developer has.
        let env = clis
            .env_for_all(&home, &server.url())
            .with("CODECREW_CONFIG", "");
        Some(World { home, server, env })
    }

    fn workspace(&self) -> std::path::PathBuf {
        self.home.workdir()
    }

    /// The world's environment with a user config that trusts the workspace.
    fn trusting(&self) -> CliEnv {
        let config = self.home.root().join("trusting.toml");
        std::fs::write(
            &config,
            format!(
                "trusted_projects = [{:?}]\n",
                self.workspace().display().to_string()
            ),
        )
        .unwrap();
        self.env.clone().with("CODECREW_CONFIG", config)
    }

    fn codecrew(&self, args: &[&str]) -> CliRun {
        self.codecrew_with(&self.env, args)
    }

    fn codecrew_with(&self, env: &CliEnv, args: &[&str]) -> CliRun {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        env.apply(&mut command);
        command.args(args);
        run(&mut command, TIMEOUT)
    }

    /// `codecrew <mode> --output json <args>`, parsed.
    fn json(&self, mode: &str, args: &[&str]) -> (CliRun, Value) {
        let mut all = vec![mode, "--output", "json"];
        all.extend_from_slice(args);
        let run = self.codecrew(&all);
        let document = serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e})\n--- stdout\n{}\n--- stderr\n{}",
                run.stdout, run.stderr
            )
        });
        (run, document)
    }
}

fn result(document: &Value) -> &Value {
    &document["results"][0]
}

/// Calls `$then! { [claude, gemini, …] $args… }` with the matrix's CLIs, one ident each: the
/// one list [`per_cli!`] expands and `the_matrix_has_every_cli_of_the_registry` checks
/// against [`CliKind::NAMES`].
macro_rules! matrix_clis {
    ($then:ident! ($($args:tt)*)) => {
        $then! { [claude, gemini, codex, copilot, opencode, qwen, llm] $($args)* }
    };
}

/// One test per CLI of a scenario: `per_cli!(scenario)`, beside `fn scenario(agent: &str)`,
/// is a module `scenario` with a `#[test]` per CLI (`scenario::claude`,
/// `scenario::gemini`, …), each calling the scenario with its CLI's name, so one CLI's
/// failure hides no other's and they run in parallel.
macro_rules! per_cli {
    ($scenario:ident) => {
        matrix_clis!(per_cli_expand!($scenario));
    };
}

/// [`per_cli!`]'s expansion, given the CLIs.
macro_rules! per_cli_expand {
    ([$($cli:ident),+] $scenario:ident) => {
        mod $scenario {
            $(
                #[test]
                fn $cli() {
                    super::$scenario(stringify!($cli));
                }
            )+
        }
    };
}

/// The names of the CLIs given, as an array.
macro_rules! cli_names {
    ([$($cli:ident),+]) => {
        [$(stringify!($cli)),+]
    };
}

/// A CLI added to the registry but not to [`matrix_clis!`] has no test: this fails.
#[test]
fn the_matrix_has_every_cli_of_the_registry() {
    let matrix: &[&str] = &matrix_clis!(cli_names!());
    assert_eq!(matrix, CliKind::NAMES);
}

mod acp;
mod chat;
mod chat_endings;
mod checkout_config;
mod compact_prompt;
mod config;
mod copilot;
mod crew;
mod escapes;
mod fresh_starts;
mod home;
mod interrupt;
mod kept_runs;
mod live;
mod mcp_http;
mod native_policy;
mod native_tools;
mod piped;
mod plants;
mod query_commands;
mod rendered;
mod runs;
mod tool_loop;
mod usage;
mod warm;
mod workspace_state;

/// Every file beneath `dir` (none when it is missing).
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}
