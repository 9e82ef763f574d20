//! The Model Context Protocol, both ways: [`client`] starts the servers of `[mcp.<server>]`
//! and offers their tools as `codecrew:<server>__<tool>`; [`server`] is `codecrew mcp`,
//! which serves codecrew's own tools (and other agents) to MCP clients.

pub mod client;
pub mod server;
