//! External tools and MCP servers: defaults, trust, and errors in place.

use pretty_assertions::assert_eq;

use super::*;

const TOOLS: &str = r#"
[tools.jira]
command = "python3"
args = ["tools/jira.py"]
timeout_secs = 30
env = { JIRA_URL = "https://jira.example.com" }
network = true

[[tools.jira.exports]]
name = "search"
description = "Search issues with JQL."
readonly = true
input_schema = { type = "object", properties = { jql = { type = "string" } }, required = ["jql"] }

[[tools.jira.exports]]
name = "comment"
description = "Comment on an issue."

[mcp.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
readonly_tools = ["read_text_file"]
"#;

#[test]
fn tools_and_mcp_servers_load_with_their_defaults() {
    let repo = Repo::new();
    repo.write_user(TOOLS);
    let loaded = repo.load().unwrap();
    let jira = &loaded.config.tools["jira"];
    assert_eq!(jira.command, "python3");
    assert_eq!(jira.timeout_secs, 30);
    assert!(jira.network && !jira.readonly);
    assert_eq!(jira.exports.len(), 2);
    assert!(jira.exports[0].is_readonly(jira));
    assert!(
        !jira.exports[1].is_readonly(jira),
        "readonly only when declared"
    );
    assert_eq!(
        jira.exports[1].input_schema,
        serde_json::json!({"type": "object"})
    );
    assert_eq!(jira.exports[0].input_schema["required"][0], "jql");
    let files = &loaded.config.mcp["files"];
    assert_eq!(files.args[1], "@modelcontextprotocol/server-filesystem");
    assert_eq!(files.startup_timeout_secs, 30);
    assert_eq!(files.timeout_secs, 60);
    assert!(loaded.blocked.is_empty());
}

#[test]
fn an_untrusted_project_cannot_add_tools_or_servers() {
    let repo = Repo::new();
    repo.write_project(TOOLS);
    let loaded = repo.load().unwrap();
    assert!(loaded.config.tools.is_empty() && loaded.config.mcp.is_empty());
    assert_eq!(loaded.blocked, ["tools.jira", "mcp.files"]);

    repo.write_user(&format!(
        "trusted_projects = [{:?}]\n",
        repo.root().display().to_string()
    ));
    let loaded = repo.load().unwrap();
    assert!(loaded.config.tools.contains_key("jira") && loaded.config.mcp.contains_key("files"));
    assert!(loaded.blocked.is_empty());
}

#[test]
fn broken_tool_definitions_are_reported_in_place() {
    let repo = Repo::new();
    let text = r#"[tools.my__tool]
command = ""
exports = []

[tools.ok]
command = "x"

[[tools.ok.exports]]
name = "run"
description = ""
input_schema = { type = "string" }

[[tools.ok.exports]]
name = "run"
description = "Again."
"#;
    let (path, message) = repo.user_error(text);
    assert_reported(
        &message,
        &path,
        1,
        8,
        &["`tools.my__tool` is not a valid name"],
    );
    assert_reported(
        &message,
        &path,
        2,
        11,
        &["`tools.my__tool` has an empty command"],
    );
    assert!(
        message.contains("tool `my__tool` has no exports"),
        "{message}"
    );
    assert_reported(&message, &path, 10, 15, &["has no description"]);
    assert_reported(
        &message,
        &path,
        11,
        16,
        &[
            "input_schema of `ok__run` is not usable",
            "tool inputs are objects",
        ],
    );
    assert_reported(&message, &path, 14, 8, &["tool `ok` exports `run` twice"]);
}

#[test]
fn an_mcp_server_needs_a_command_and_positive_timeouts() {
    let repo = Repo::new();
    let (path, message) =
        repo.user_error("[mcp.fs]\ncommand = \"npx\"\nstartup_timeout_secs = 0\n");
    assert_reported(
        &message,
        &path,
        3,
        24,
        &["startup_timeout_secs must be positive"],
    );
    let (path, message) = repo.user_error("[mcp.fs]\nargs = []\n");
    assert_reported(&message, &path, 1, 1, &["has no `command`"]);
}
