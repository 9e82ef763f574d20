//! Every tool this process can run.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Tool, builtin};

/// All runnable tools by name: built-ins now, external commands and MCP servers later.
/// What one run *offers* the model is the [`super::ToolCatalog`], a subset of this.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// The registry of the built-in tools, the help tool explaining `help`'s commands.
    pub fn builtin(help: Arc<dyn builtin::HelpSource>) -> Self {
        let mut registry = ToolRegistry::default();
        for tool in builtin::all(help) {
            registry.register(tool);
        }
        registry
    }

    /// Adds a tool; a later tool of the same name replaces the earlier one.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.name().to_owned(), tool);
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// The tools in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}
