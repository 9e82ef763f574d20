//! Helpers shared by the integration tests: the fake model server, the real-CLI harness,
//! and running codecrew's own binary.

// Each topic module uses a different part of these helpers.
#![allow(dead_code)]

pub mod binary;
pub mod clis;
pub mod fake_model;
pub mod git;
pub mod http_server;
pub mod mcp;
pub mod pty;
pub mod scripted_claude;
