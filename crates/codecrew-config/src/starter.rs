//! The commented starter `codecrew.toml` that `codecrew init` writes.

/// The starter project file: every key, documented, with examples. It loads as is.
pub const STARTER: &str = include_str!("starter.toml");
