//! Helpers shared by the integration tests: the fake model server and the real-CLI harness.

// Each topic module uses a different part of these helpers.
#![allow(dead_code)]

pub mod clis;
pub mod fake_model;
