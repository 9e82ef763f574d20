//! What a server's tool list offers: each remote tool's sanitised name, description and
//! input schema, and notices for the tools left out.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::limits::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
use crate::config::McpServerConfig;

/// What codecrew offers of one remote tool: its name, description, schema and the
/// user's word on whether it only reads; not yet tied to a running server.
#[derive(Debug, Clone)]
pub(super) struct Offer {
    /// `<server>__<tool>`.
    pub(super) name: String,
    /// The server's name for it.
    pub(super) remote: String,
    pub(super) server: String,
    pub(super) description: String,
    pub(super) input_schema: Value,
    pub(super) readonly: bool,
    pub(super) timeout: Duration,
}

/// What one server's tool list offers, and notices for the tools left out.
pub(super) fn offers(
    server: &str,
    config: &McpServerConfig,
    remote: &[rmcp::model::Tool],
) -> (Vec<Offer>, Vec<String>) {
    let mut offers = Vec::new();
    let mut notices = Vec::new();
    let mut taken = BTreeSet::new();
    let mut readonly_unused: BTreeSet<&str> =
        config.readonly_tools.iter().map(String::as_str).collect();
    for tool in remote {
        let remote_name = tool.name.to_string();
        let local = match sanitise(&remote_name) {
            Ok(local) => local,
            Err(why) => {
                notices.push(format!(
                    "mcp.{server}: tool {remote_name:?} is left out: {why}"
                ));
                continue;
            }
        };
        if !taken.insert(local.clone()) {
            notices.push(format!(
                "mcp.{server}: tool {remote_name:?} is left out: another of its tools is \
                 already offered as codecrew:{server}__{local}"
            ));
            continue;
        }
        // The user's word, by the server's name or the offered one; never the server's
        // own hints.
        let readonly = config
            .readonly_tools
            .iter()
            .any(|listed| *listed == remote_name || *listed == local);
        readonly_unused.remove(remote_name.as_str());
        readonly_unused.remove(local.as_str());
        let name = format!("{server}__{local}");
        let (input_schema, schema_problem) = input_schema(&tool.input_schema);
        if let Some(problem) = schema_problem {
            notices.push(format!(
                "mcp.{server}: the input schema of {remote_name:?} {problem}; codecrew:{name} \
                 accepts any object and leaves the checks to the server"
            ));
        }
        offers.push(Offer {
            name,
            remote: remote_name,
            server: server.to_owned(),
            description: description(tool, server),
            input_schema,
            readonly,
            timeout: Duration::from_secs(config.timeout_secs),
        });
    }
    for unused in readonly_unused {
        notices.push(format!(
            "mcp.{server}: readonly_tools names {unused:?}, which the server does not offer"
        ));
    }
    (offers, notices)
}

/// The tool part of `<server>__<tool>` for a remote name; see the module doc.
pub fn sanitise(remote: &str) -> Result<String, String> {
    let mut local = String::with_capacity(remote.len());
    for c in remote.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && local.ends_with('_')) {
            local.push(c);
        }
    }
    let local = local.trim_matches('_');
    if local.is_empty() {
        return Err("its name has no ASCII letter or digit".to_owned());
    }
    if local.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "its name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    Ok(local.to_owned())
}

/// The server's description (or title), trimmed and capped.
pub(super) fn description(tool: &rmcp::model::Tool, server: &str) -> String {
    let text = tool
        .description
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .or_else(|| tool.title.as_deref().map(str::trim))
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("The tool {:?} of the MCP server {server}.", tool.name));
    if text.chars().count() > MAX_DESCRIPTION_CHARS {
        let cut: String = text.chars().take(MAX_DESCRIPTION_CHARS).collect();
        format!("{}…", cut.trim_end())
    } else {
        text
    }
}

/// The schema codecrew checks inputs against: the server's when it describes an object
/// and compiles, else any object (and what was wrong with it).
pub(super) fn input_schema(schema: &Map<String, Value>) -> (Value, Option<&'static str>) {
    let any_object = || json!({"type": "object"});
    if schema.is_empty() {
        return (any_object(), None);
    }
    let mut schema = schema.clone();
    match schema.get("type") {
        None => {
            // Only objects can be arguments; saying so lets codecrew reject the rest.
            schema.insert("type".to_owned(), json!("object"));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(_) => return (any_object(), Some("does not describe an object")),
    }
    let schema = Value::Object(schema);
    if jsonschema::validator_for(&schema).is_err() {
        return (any_object(), Some("is not a valid JSON Schema"));
    }
    (schema, None)
}
