//! Helpers shared by the integration tests: the test world (`world.rs`, with its scripted
//! agent in `agent_script.rs`), the fake model server, the real-CLI harness, and running
//! codecrew's own binary.

// Each topic module uses a different part of these helpers.
#![allow(dead_code)]

pub mod agent_script;
pub mod binary;
pub mod clis;
pub mod fake_model;
pub mod git;
pub mod http_server;
pub mod mcp;
pub mod pty;
pub mod world;

pub use agent_script::{AgentScript, Answer, Turn};
pub use world::World;
