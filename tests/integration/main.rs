//! codecrew's integration tests: one test binary, one module per topic.

// Test code may unwrap and panic (the crate-wide lints deny them in library code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod answer_first;
mod background;
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
