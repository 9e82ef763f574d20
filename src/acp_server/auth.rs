//! Signing in from the editor: a `terminal` auth method per agent whose CLI has a
//! sign-in of its own. The editor runs `codecrew acp` again in a terminal with the
//! method's arguments (`--sign-in claude`), which runs the CLI's own sign-in there
//! (`claude auth login`): codecrew itself holds no credentials, each CLI keeps its own.
//!
//! Offered only to an editor that can run them: its `auth.terminal` capability, or
//! the `terminal-auth` flag in its capabilities' `_meta` that clients sent before the
//! capability existed (the ACP registry's check sends that one).

use std::path::Path;

use agent_client_protocol::v1::schema::{AuthMethod, AuthMethodTerminal, ClientCapabilities};

use codecrew_agents::Provider;
use codecrew_config::Config;

/// The argument of `codecrew acp` that runs an agent's sign-in instead of the server.
pub const SIGN_IN_FLAG: &str = "--sign-in";

/// The sign-ins the editor may offer: the agents of the config found in `workspace`
/// (the built-in agents where it cannot be read), the default agent first.
pub fn methods(client: &ClientCapabilities, workspace: &Path) -> Vec<AuthMethod> {
    if !runs_terminal_auth(client) {
        return Vec::new();
    }
    let config = codecrew_config::load(workspace)
        .map(|loaded| loaded.config)
        .unwrap_or_default();
    sign_ins(&config)
}

fn runs_terminal_auth(client: &ClientCapabilities) -> bool {
    let flagged = client
        .meta
        .as_ref()
        .and_then(|meta| meta.get("terminal-auth"))
        .is_some_and(|flag| flag.as_bool() == Some(true) || flag.is_object());
    client.auth.terminal || flagged
}

fn sign_ins(config: &Config) -> Vec<AuthMethod> {
    let mut agents: Vec<_> = config.agents.iter().collect();
    agents.sort_by_key(|(id, _)| **id != config.default_agent);
    agents
        .into_iter()
        .filter_map(|(id, agent)| {
            let provider = Provider::new(id, agent.clone());
            let (program, args) = provider.sign_in()?;
            let command = std::iter::once(program).chain(args).collect::<Vec<_>>();
            let method =
                AuthMethodTerminal::new(format!("sign-in-{id}"), format!("Sign in to @{id}"))
                    .description(format!(
                        "Runs `{}` in a terminal: the {} CLI's own sign-in",
                        command.join(" "),
                        agent.provider.name()
                    ))
                    .args(vec![SIGN_IN_FLAG.to_owned(), id.clone()]);
            Some(AuthMethod::Terminal(method))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::AuthCapabilities;
    use serde_json::json;

    use super::*;

    #[test]
    fn an_editor_that_runs_terminals_gets_a_sign_in_per_cli_that_has_one() {
        let config = Config::default();
        let methods = serde_json::to_value(sign_ins(&config)).unwrap();
        let first = &methods[0];
        assert_eq!(first["type"], "terminal");
        assert_eq!(first["id"], format!("sign-in-{}", config.default_agent));
        assert_eq!(first["args"], json!(["--sign-in", config.default_agent]));
        let ids: Vec<&str> = methods
            .as_array()
            .unwrap()
            .iter()
            .map(|method| method["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"sign-in-codex"), "{ids:?}");
        assert!(!ids.contains(&"sign-in-llm"), "{ids:?}");

        let plain = ClientCapabilities::new();
        assert!(!runs_terminal_auth(&plain));
        assert!(runs_terminal_auth(
            &ClientCapabilities::new().auth(AuthCapabilities::new().terminal(true))
        ));
        let mut meta = serde_json::Map::new();
        meta.insert("terminal-auth".to_owned(), json!(true));
        assert!(runs_terminal_auth(&ClientCapabilities::new().meta(meta)));
    }
}
