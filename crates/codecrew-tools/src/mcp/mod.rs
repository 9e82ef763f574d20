//! The Model Context Protocol client: [`client`] starts the servers of `[mcp.<server>]`
//! and offers their tools as `codecrew:<server>__<tool>`.
//!
//! - `client.rs`: starting, supervising and stopping the servers ([`client::McpClients`]);
//! - `remote.rs`: one remote tool as a codecrew `Tool` (name, description, schema, calls);
//! - `result.rs`: a call's MCP result shaped for the model ([`client::shape`]).

pub mod client;
mod remote;
mod result;

#[cfg(test)]
mod tests;
