//! The limits of what an MCP server may hand codecrew: names, descriptions, results,
//! errors, and the time a call may take.

use std::time::Duration;

/// The most text (and structured content) one call's result carries.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The longest tool name part (after `<server>__`) codecrew offers.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description offered to the model; servers may send pages of text.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// The longest error text of an MCP tool's result: a server's error is often the whole
/// explanation the model needs.
pub const MAX_ERROR_CHARS: usize = 4000;
/// Extra time the executor grants beyond `timeout_secs`, which the tool enforces (and
/// reports, naming the server) first.
pub const TIMEOUT_MARGIN: Duration = Duration::from_secs(5);
