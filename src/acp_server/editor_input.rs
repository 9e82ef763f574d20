//! What the editor hands codecrew besides its requests: a prompt's blocks (its text, and
//! what it attached) and the MCP servers it serves to the agents. Both are the editor's
//! input, checked here before anything of a session uses them.

use std::collections::BTreeMap;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, McpServer};

use super::{MAX_PROMPT_BYTES, invalid};
use codecrew_core::engine::Engine;

/// The prompt's text (where mentions are read) and what the editor attached (files,
/// selections: set beside the task, never read for mentions). Refused past
/// [`MAX_PROMPT_BYTES`].
pub(super) fn prompt_text(blocks: &[ContentBlock]) -> Result<(String, String), Error> {
    let mut text = String::new();
    let mut context = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(part) => text.push_str(&part.text),
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!(" {} ", link.uri));
            }
            ContentBlock::Resource(embedded) => {
                if let EmbeddedResourceResource::TextResourceContents(resource) = &embedded.resource
                {
                    context.push_str(&format!(
                        "The editor attached {}:\n```\n{}\n```\n\n",
                        resource.uri, resource.text
                    ));
                }
            }
            _ => {}
        }
        if text.len() + context.len() > MAX_PROMPT_BYTES {
            return Err(invalid(format!(
                "the prompt is over {} MiB: codecrew takes at most that, attachments included",
                MAX_PROMPT_BYTES >> 20
            )));
        }
    }
    Ok((text, context.trim_end().to_owned()))
}

/// The editor's MCP servers (stdio) served to the agents as the config's are: through
/// codecrew's MCP client, under the policy.
pub(super) fn add_mcp_servers(engine: &mut Engine, servers: Vec<McpServer>) -> Result<(), Error> {
    for server in servers {
        let McpServer::Stdio(server) = server else {
            return Err(invalid(
                "codecrew takes the editor's MCP servers over stdio only".to_owned(),
            ));
        };
        let named = !server.name.is_empty()
            && server.name.len() <= 64
            && server
                .name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
        if !named {
            return Err(invalid(format!(
                "the MCP server name {:?} is not one codecrew takes: letters, digits, '-' and \
                 '_', at most 64",
                server.name
            )));
        }
        let env: BTreeMap<String, String> = server
            .env
            .into_iter()
            .map(|variable| (variable.name, variable.value))
            .collect();
        let entry: codecrew_config::McpServerConfig = serde_json::from_value(serde_json::json!({
            "command": server.command.display().to_string(),
            "args": server.args,
            "env": env,
        }))
        .map_err(|error| invalid(format!("the MCP server {}: {error}", server.name)))?;
        engine.config_mut().config.mcp.insert(server.name, entry);
    }
    Ok(())
}
