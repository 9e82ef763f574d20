//! The Model Context Protocol client: [`client`] starts the servers of `[mcp.<server>]`
//! and offers their tools as `codecrew:<server>__<tool>`.

pub mod client;
