//! Every tool one run can use: the built-ins, the config's external tools, and the tools
//! of its MCP servers, which live as long as the toolbox.

use std::path::Path;
use std::sync::Arc;

use super::{ToolRegistry, external};
use crate::config::Config;

/// The tools of one run.
pub struct Toolbox {
    registry: Arc<ToolRegistry>,
    /// What the user should know: servers that did not start, tools left out.
    notices: Vec<String>,
}

impl Toolbox {
    /// The built-in tools only.
    pub fn builtin() -> Toolbox {
        Toolbox {
            registry: Arc::new(ToolRegistry::builtin()),
            notices: Vec::new(),
        }
    }

    /// The built-ins and the external tools of `config`.
    pub async fn start(config: &Config, _workspace: &Path) -> Toolbox {
        let mut registry = ToolRegistry::builtin();
        for tool in external::from_config(&config.tools) {
            registry.register(tool);
        }
        Toolbox {
            registry: Arc::new(registry),
            notices: Vec::new(),
        }
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    pub fn notices(&self) -> &[String] {
        &self.notices
    }
}
