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

use codecrew_config::CliKind;
use serde_json::{Value, json};

use crate::support::clis::{CliEnv, CliRun, Clis, TestHome, run};
use crate::support::fake_model::{FakeModel, Reply, Rule, Script};
use crate::support::world::RealClis;

const FOLLOW_UP: &str = "codecrew ran the tool calls";
const TIMEOUT: Duration = crate::support::world::RUN_TIMEOUT;

fn fenced(envelopes: &[Value]) -> String {
    envelopes
        .iter()
        .map(|e| format!("```json\n{e}\n```\n"))
        .collect()
}

fn envelope(tool: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": format!("codecrew:{tool}"), "input": input})
}

/// A test's world: the support [`crate::support::World`] with the real CLIs, a fake model
/// with the test's script, a HOME and a workspace.
type World = RealClis;

impl World {
    fn new(test: &str, script: Script) -> Option<World> {
        crate::support::World::with_real_clis(test, script)
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
mod schema;
mod tool_loop;
mod undo;
mod usage;
mod warm;
mod workspace_state;
mod worktrees;

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
