//! The Model Context Protocol client: [`client`] starts the servers of `[mcp.<server>]`
//! and offers their tools as `codecrew:<server>__<tool>`.
//!
//! - `client.rs`: the servers of one run and their tools ([`client::McpClients`]);
//! - `server.rs`: one server's life (start, link, stderr tail, close), at once or at the
//!   first call of one of its tools;
//! - `offers.rs`: what a server's tool list offers (names, descriptions, schemas);
//! - `remote.rs`: one remote tool as a codecrew `Tool` (its calls over the link);
//! - `result.rs`: a call's MCP result shaped for the model ([`client::shape`]);
//! - `limits.rs`: the caps on names, descriptions, results, errors and time.
//!
//! Each imports only the ones listed after it (client the rest).

pub mod client;
mod limits;
mod offers;
mod remote;
mod result;
mod server;

#[cfg(test)]
mod tests;
