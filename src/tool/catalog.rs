//! The tools one run offers the model.

use std::sync::Arc;

use serde_json::Value;

use super::{Mode, Tool, ToolRegistry};

/// One offered tool with its compiled input schema.
pub struct CatalogEntry {
    pub tool: Arc<dyn Tool>,
    validator: jsonschema::Validator,
}

impl CatalogEntry {
    /// Checks an input against the tool's schema. Each error names the path the model
    /// has to fix, e.g. `input.path: 3 is not of type "string"`.
    pub fn validate(&self, input: &Value) -> Result<(), Vec<String>> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(input)
            .map(|error| {
                let pointer = error.instance_path().to_string();
                let path = if pointer.is_empty() {
                    "input".to_owned()
                } else {
                    format!("input{}", pointer.replace('/', "."))
                };
                format!("{path}: {error}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// A tool whose schema does not compile (a broken external tool definition).
#[derive(Debug, thiserror::Error)]
#[error("tool {tool:?} has an invalid input schema: {message}")]
pub struct CatalogError {
    pub tool: String,
    pub message: String,
}

/// The subset of the registry shown to the model in one run, in name order.
#[derive(Default)]
pub struct ToolCatalog {
    entries: Vec<CatalogEntry>,
}

impl ToolCatalog {
    /// What a mode offers: `query` only read-only tools, `execute` everything.
    pub fn for_mode(registry: &ToolRegistry, mode: Mode) -> Result<Self, CatalogError> {
        Self::from_tools(
            registry
                .iter()
                .filter(|tool| mode == Mode::Execute || tool.readonly())
                .cloned(),
        )
    }

    pub fn from_tools(
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<Self, CatalogError> {
        let entries = tools
            .into_iter()
            .map(|tool| {
                let validator =
                    jsonschema::validator_for(&tool.input_schema()).map_err(|error| {
                        CatalogError {
                            tool: tool.name().to_owned(),
                            message: error.to_string(),
                        }
                    })?;
                Ok(CatalogEntry { tool, validator })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ToolCatalog { entries })
    }

    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries.iter().find(|entry| entry.tool.name() == name)
    }

    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|entry| &entry.tool)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.tool.name())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
