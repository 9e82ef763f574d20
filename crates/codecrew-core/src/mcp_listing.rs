//! The tool lists of MCP servers, kept between runs, so that a run can offer a server's
//! tools without starting it, and start it only when one of them is called (a server
//! can take seconds to start; see [`crate::toolbox::on_call`]).
//!
//! One file per server and workspace in the user's cache directory
//! (`$XDG_CACHE_HOME/codecrew/mcp-tools`, else `~/.cache/codecrew/mcp-tools`), named by a
//! digest of the workspace, the server's name and its whole `[mcp.<server>]` table, so a
//! changed config finds no list. Every run that starts a server writes its list afresh.
//! A list is read back through the same checks as the server's own answer (names,
//! bounded and neutralised descriptions). Never in the workspace: a repository could ship
//! one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use codecrew_tools::config::McpServerConfig;
use rmcp::model::Tool;
use sha2::{Digest, Sha256};

/// The lists `load` finds, by server name.
pub type Listings = BTreeMap<String, Vec<Tool>>;

/// Where the lists live, from the environment (none without a home).
pub fn dir() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| Path::new(dir).is_absolute())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))?;
    Some(cache.join("codecrew").join("mcp-tools"))
}

/// The stored list of each server of `servers` that has one for `workspace`.
pub fn load(dir: &Path, workspace: &Path, servers: &BTreeMap<String, McpServerConfig>) -> Listings {
    servers
        .iter()
        .filter_map(|(name, config)| {
            let path = file(dir, workspace, name, config)?;
            let bytes = std::fs::read(&path).ok()?;
            match serde_json::from_slice::<Vec<Tool>>(&bytes) {
                Ok(tools) => Some((name.clone(), tools)),
                Err(error) => {
                    tracing::debug!(path = %path.display(), %error, "ignoring an unreadable MCP tool list");
                    None
                }
            }
        })
        .collect()
}

/// Stores the list `name` (configured as `config`) sent for `workspace`. A failure only
/// costs a later command the server's start-up, so it is logged, not reported.
pub fn store(dir: &Path, workspace: &Path, name: &str, config: &McpServerConfig, tools: &[Tool]) {
    let Some(path) = file(dir, workspace, name, config) else {
        return;
    };
    if let Err(error) = write(dir, &path, tools) {
        tracing::debug!(path = %path.display(), %error, "could not keep an MCP tool list");
    }
}

fn write(dir: &Path, path: &Path, tools: &[Tool]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    serde_json::to_writer(&mut file, tools)?;
    file.flush()?;
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// The file of one server's list: a digest of what identifies it.
fn file(dir: &Path, workspace: &Path, name: &str, config: &McpServerConfig) -> Option<PathBuf> {
    let config = serde_json::to_vec(config).ok()?;
    let mut digest = Sha256::new();
    for part in [
        workspace.as_os_str().as_encoded_bytes(),
        name.as_bytes(),
        &config,
    ] {
        // Length-prefixed, so that no two different triples hash alike.
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part);
    }
    let hex: String = digest
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Some(dir.join(format!("{hex}.json")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(command: &str) -> McpServerConfig {
        toml::from_str(&format!("command = {command:?}")).unwrap()
    }

    #[test]
    fn a_stored_list_is_found_for_the_same_workspace_and_config_only() {
        let dir = tempfile::tempdir().unwrap();
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}
        }))
        .unwrap();
        let servers = BTreeMap::from([("e".to_owned(), config("node"))]);
        store(dir.path(), Path::new("/ws"), "e", &servers["e"], &[tool]);
        let found = load(dir.path(), Path::new("/ws"), &servers);
        assert_eq!(found["e"][0].name, "echo");
        assert!(load(dir.path(), Path::new("/other"), &servers).is_empty());
        let changed = BTreeMap::from([("e".to_owned(), config("deno"))]);
        assert!(load(dir.path(), Path::new("/ws"), &changed).is_empty());
    }
}
