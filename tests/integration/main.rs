//! codecrew's integration tests: one test binary, one module per topic.
//!
//! # Where a new test goes
//!
//! - **A run of `codecrew` with agents, config, a workspace**: build a
//!   [`support::World`] (`support/world.rs`): a home, a workspace, the user config
//!   (`user_config`, `trusted`), the project config (`project_config`), scripted agents
//!   (`agent(name, AgentScript)`: a script of turns, each text, a fenced tool call, a
//!   failure, a hang, chosen by what the prompt holds and counted), programs of the
//!   test's own on `PATH` (`program`; `World::with_claude` for a `claude` printing
//!   Claude's stream-json on cue), then `run` / `run_with_stdin` / `run_json` (the
//!   `Output`), or `codecrew` / `json` (a `CliRun`: own process group, a timeout).
//!   `World::outside_tmp` when the test is about what may be written outside the
//!   workspace (the sandbox lets `/tmp` be written), `alone` when nothing of the caller's
//!   may reach it, `started_in_the_home` for a run in the home. Put it in the module of
//!   its topic below; a new topic is a new module. A fixture of a module's own (an
//!   editor's connection, security's `Ws`, a git `Repo`, an install's `Machine`) is built
//!   on a World.
//! - **It needs a real CLI** (claude, gemini, codex, copilot, opencode, qwen, llm
//!   talking to a model): `e2e/`, with `World::new(test, script)` there (the same world
//!   with the real CLIs against `support::fake_model`, skipped outside CI when they are
//!   not installed); `per_cli!` gives a scenario a test per CLI. Nothing that runs
//!   without them goes there: check with `CODECREW_TEST_CLIS=/nonexistent`.
//! - **A CLI's own wire format against the fake model** (no codecrew):
//!   `fake_model_clis/`.
//! - **One command with no agent** (`tools call`, `intercept`, `prompt`, help): the
//!   topic's module (`commands`, `security/`, `external_tools`, ...), in a World too
//!   (`commands` and `terminal` pipe their input to `world.command`; older modules still
//!   call `support::binary::codecrew(home)`), with `support::binary`'s `assert_exit` and
//!   `tool_result`; what a user reads word for word: `snapshots`.
//! - **MCP**: `mcp_server` (stdio), `mcp_http` (`codecrew mcp --http`), each server
//!   started with `world.command` in the test's World; `mcp_client/` (codecrew as a
//!   client of real MCP servers).
//! - **A terminal** (a pty: Ctrl-C, colours, a chat): `support::pty::Terminal` with the
//!   world's `env`.

// Test code may unwrap and panic (the crate-wide lints deny them in library code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod answer_first;
mod answer_schema;
mod background;
mod binary_size;
mod chat_commands;
mod commands;
mod config;
mod doctor;
mod e2e;
mod external_tools;
mod fake_model_clis;
mod home;
mod home_sessions;
mod install_shapes;
mod layering;
mod logs;
mod mcp_client;
mod mcp_http;
mod mcp_server;
mod not_signed_in;
mod real_models;
mod records;
mod resume;
mod run_errors;
mod second_interrupt;
mod security;
mod security_git;
mod snapshots;
mod support;
mod terminal;
mod threads;
mod undo;
mod worktrees;
