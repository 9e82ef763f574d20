//! The means of driving the CLIs, apart from the CLIs themselves (one module each in
//! [`super`]): [`process`] runs a command once, [`resident`] keeps one running (each
//! started by `child`, without `fork` where it can),
//! [`transport`] chooses between them per job; [`acp`], [`app_server`] and
//! [`claude_control`] speak the long-lived JSON-RPC and control protocols (with
//! [`claude_tools`], what Claude's own tools amount to) (lines split by [`json_lines`];
//! what the JSON-RPC CLIs report becomes the interception engine's events in
//! `turn_events`), [`native`] turns a CLI's question about its own tool into the codecrew
//! calls it amounts to, [`refused`] tells a start the CLI's wall refused, and [`start`]
//! keeps the starts of a CLI whose processes share their set-up from colliding.
//!
//! It depends on the wall ([`super::wall`]), which a process enters before it runs; the
//! wall depends on nothing here.

pub mod acp;
pub mod app_server;
mod child;
pub mod claude_control;
pub mod claude_tools;
pub mod json_lines;
pub mod native;
pub mod process;
pub mod refused;
pub mod resident;
pub mod start;
pub mod transport;
mod turn_events;
