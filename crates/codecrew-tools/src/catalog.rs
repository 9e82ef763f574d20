//! The tools one run offers the model.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::{Mode, Tool, ToolRegistry};

/// The draft codecrew's own tool schemas are compiled as ([`Tool::is_codecrews`]).
const DRAFT_7: &str = "http://json-schema.org/draft-07/schema#";

/// One offered tool with its input schema, compiled on first use: most runs call few of
/// the offered tools, and compiling every schema up front would cost each start-up.
pub struct CatalogEntry {
    pub tool: Arc<dyn Tool>,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl CatalogEntry {
    fn new(tool: Arc<dyn Tool>) -> Self {
        CatalogEntry {
            tool,
            validator: OnceLock::new(),
        }
    }

    fn validator(&self) -> Result<&jsonschema::Validator, CatalogError> {
        self.validator
            .get_or_init(|| {
                let mut schema = self.tool.input_schema();
                // Named in the schema, not with `options().with_draft(..)`, which compiled
                // a second copy of the validator's code into the binary (1.3 MB).
                if self.tool.is_codecrews()
                    && let Some(fields) = schema.as_object_mut()
                {
                    fields.insert("$schema".to_owned(), DRAFT_7.into());
                }
                jsonschema::validator_for(&schema).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| CatalogError {
                tool: self.tool.name().to_owned(),
                message: message.clone(),
            })
    }

    /// Checks an input against the tool's schema. Each error names the path the model
    /// has to fix, e.g. `input.path: 3 is not of type "string"`. A schema that does not
    /// compile is one error naming the tool.
    pub fn validate(&self, input: &Value) -> Result<(), Vec<String>> {
        let validator = self.validator().map_err(|error| vec![error.to_string()])?;
        let errors: Vec<String> = validator
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
    /// What a mode offers: `execute` everything; `query` the read-only tools, and
    /// `run_command` (its reading commands) where the kernel holds the read-only sandbox.
    pub fn for_mode(registry: &ToolRegistry, mode: Mode) -> Result<Self, CatalogError> {
        use codecrew_policy::sandbox;
        let sandboxed = sandbox::read_only_unavailable(sandbox::enabled()).is_none();
        Self::from_tools(
            registry
                .iter()
                .filter(|tool| {
                    mode == Mode::Execute
                        || tool.readonly()
                        || (sandboxed && tool.offered_in_query())
                })
                .cloned(),
        )
    }

    pub fn from_tools(
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<Self, CatalogError> {
        let entries = tools.into_iter().map(CatalogEntry::new).collect();
        Ok(ToolCatalog { entries })
    }

    /// Compiles every schema now, for checks (`doctor`, tests) that want errors early.
    pub fn check_schemas(&self) -> Result<(), CatalogError> {
        self.entries
            .iter()
            .try_for_each(|entry| entry.validator().map(|_| ()))
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
}

/// Why a schema cannot describe a tool's input, if it cannot.
pub fn schema_problem(schema: &serde_json::Value) -> Option<String> {
    let Some(object) = schema.as_object() else {
        return Some("it is not a table".to_owned());
    };
    if let Some(kind) = object.get("type")
        && kind != "object"
    {
        return Some(format!("its type is {kind}, and tool inputs are objects"));
    }
    jsonschema::validator_for(schema)
        .err()
        .map(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Mode, ToolRegistry};

    #[test]
    fn every_builtin_schema_compiles() {
        let catalog = ToolCatalog::for_mode(
            &ToolRegistry::builtin(Arc::new(crate::builtin::NoCommands)),
            Mode::Execute,
        )
        .unwrap();
        assert_eq!(catalog.names().count(), 8);
        catalog.check_schemas().unwrap();
    }

    /// The built-in tools' schemas are compiled as draft 7 (`Tool::is_codecrews`):
    /// each is a schema under both drafts, so that it means the same under either.
    #[test]
    fn every_builtin_is_codecrews_and_a_schema_of_both_drafts() {
        let registry = ToolRegistry::builtin(Arc::new(crate::builtin::NoCommands));
        for tool in registry.iter() {
            assert!(tool.is_codecrews(), "{}", tool.name());
            let schema = tool.input_schema();
            if let Err(error) = jsonschema::meta::validate(&schema) {
                panic!("{}: {error}", tool.name());
            }
            if let Err(error) = jsonschema::draft7::meta::validate(&schema) {
                panic!("{} (draft 7): {error}", tool.name());
            }
        }
    }

    /// A schema from elsewhere still gets the meta-schema's check: one that is not a
    /// schema is refused, naming the tool, rather than compiled into a validator that
    /// means something else.
    #[test]
    fn a_schema_from_elsewhere_that_is_not_one_is_refused() {
        struct Foreign;
        impl Tool for Foreign {
            fn name(&self) -> &str {
                "foreign"
            }
            fn description(&self) -> &str {
                "a tool of an MCP server"
            }
            fn input_schema(&self) -> Value {
                serde_json::json!({"type": "object", "minProperties": "two"})
            }
            fn readonly(&self) -> bool {
                true
            }
            fn execute<'a>(
                &'a self,
                _ctx: &'a crate::ToolContext,
                _input: Value,
            ) -> crate::ToolFuture<'a> {
                Box::pin(async { Ok(Value::Null) })
            }
        }
        let entry = CatalogEntry::new(Arc::new(Foreign));
        let errors = entry.validate(&serde_json::json!({})).unwrap_err();
        assert!(errors[0].contains("foreign"), "{errors:?}");
    }
}
