//! The built-in tools.

mod help;

use std::sync::Arc;

use super::Tool;

/// Every built-in tool.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(help::Help)]
}
