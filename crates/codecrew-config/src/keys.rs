//! What each config key expects, with an example: the source of the hints in error messages.

use std::borrow::Cow;

use super::{OutputFormat, ProviderKind};

/// `(path, what it expects, an example)`; `*` stands for any agent id.
pub(crate) const KEYS: &[(&str, &str, &str)] = &[
    (
        "default_agent",
        "the id of a defined agent",
        r#"default_agent = "claude""#,
    ),
    (
        "agents",
        "a table of agents by id",
        r#"[agents.claude] provider = "claude""#,
    ),
    (
        "agents.*",
        "an agent table with at least a provider",
        r#"[agents.mine] provider = "claude""#,
    ),
    ("agents.*.provider", ONE_OF, r#"provider = "claude""#),
    ("agents.*.model", "a model name", r#"model = "sonnet""#),
    (
        "agents.*.system_prompt",
        "a string",
        r#"system_prompt = "Answer briefly.""#,
    ),
    (
        "agents.*.args",
        "a table with `query` and `execute` lists of strings",
        r#"args = { query = [], execute = ["--verbose"] }"#,
    ),
    (
        "agents.*.args.query",
        "a list of strings",
        r#"query = ["--verbose"]"#,
    ),
    (
        "agents.*.args.execute",
        "a list of strings",
        r#"execute = ["--verbose"]"#,
    ),
    (
        "agents.*.tools",
        "a list of built-in tool names",
        r#"tools = ["read_file", "grep"]"#,
    ),
    ("agents.*.keep_alive", "true or false", "keep_alive = false"),
    (
        "agents.*.effort",
        "a level of the CLI's reasoning effort (claude: low..max; codex: none..xhigh; copilot: none..max)",
        r#"effort = "high""#,
    ),
    (
        "agents.*.prompt",
        r#""full" (the default) or "compact""#,
        r#"prompt = "compact""#,
    ),
    (
        "agents.*.command",
        "a table with argv, prompt and output",
        r#"command = { argv = ["llm", "-m", "{model}"], prompt = "stdin" }"#,
    ),
    (
        "agents.*.command.argv",
        "a non-empty list of strings, the program first",
        r#"argv = ["llm", "-m", "{model}"]"#,
    ),
    (
        "agents.*.command.prompt",
        r#""stdin" (the default) or "arg" (replaces {prompt} in argv)"#,
        r#"prompt = "arg""#,
    ),
    ("agents.*.command.output", ONE_OF, r#"output = "text""#),
    (
        "permissions",
        "a table with allow, ask, deny, pass_env, allow_network and cli_read",
        r#"[permissions] deny = ["read_file(secrets/**)"]"#,
    ),
    (
        "permissions.allow",
        "a list of rules `tool` or `tool(pattern)`",
        r#"allow = ["run_command(git diff *)"]"#,
    ),
    (
        "permissions.ask",
        "a list of rules `tool` or `tool(pattern)`",
        r#"ask = ["write_file(src/**)"]"#,
    ),
    (
        "permissions.deny",
        "a list of rules `tool` or `tool(pattern)`",
        r#"deny = ["read_file(secrets/**)"]"#,
    ),
    (
        "permissions.pass_env",
        "a list of environment variable names",
        r#"pass_env = ["CARGO_HOME"]"#,
    ),
    (
        "permissions.allow_network",
        "true or false",
        "allow_network = false",
    ),
    (
        "permissions.cli_read",
        "a list of absolute folders or folders under ~/",
        r#"cli_read = ["~/.asdf"]"#,
    ),
    (
        "limits",
        "a table with max_turns, turn_timeout_secs and max_calls_per_message",
        "[limits] max_turns = 8",
    ),
    ("limits.max_turns", "a positive integer", "max_turns = 8"),
    (
        "limits.turn_timeout_secs",
        "a positive number of seconds",
        "turn_timeout_secs = 600",
    ),
    (
        "limits.max_calls_per_message",
        "a positive integer",
        "max_calls_per_message = 16",
    ),
    (
        "tools",
        "a table of external tools by resource name",
        r#"[tools.jira] command = "python3""#,
    ),
    (
        "tools.*",
        "a tool table with command, args and [[tools.<name>.exports]]",
        r#"[tools.jira] command = "python3""#,
    ),
    (
        "tools.*.command",
        "the program to run (no shell)",
        r#"command = "python3""#,
    ),
    (
        "tools.*.args",
        "a list of strings, before the export's name",
        r#"args = ["tools/jira.py"]"#,
    ),
    (
        "tools.*.timeout_secs",
        "a positive number of seconds",
        "timeout_secs = 60",
    ),
    (
        "tools.*.env",
        "a table of environment variables",
        r#"env = { JIRA_URL = "https://jira.example.com" }"#,
    ),
    (
        "tools.*.cwd",
        "a directory, relative to the workspace",
        r#"cwd = "tools""#,
    ),
    ("tools.*.readonly", "true or false", "readonly = true"),
    ("tools.*.network", "true or false", "network = true"),
    (
        "tools.*.exports",
        "an array of tables with name, description and input_schema",
        r#"[[tools.jira.exports]] name = "search""#,
    ),
    (
        "tools.*.exports.*",
        "a table with name, description, input_schema and readonly",
        r#"[[tools.jira.exports]] name = "search""#,
    ),
    (
        "tools.*.exports.*.name",
        "a name of letters, digits, `-` and `_`",
        r#"name = "search""#,
    ),
    (
        "tools.*.exports.*.description",
        "a string for the model",
        r#"description = "Search issues with JQL.""#,
    ),
    (
        "tools.*.exports.*.input_schema",
        "a JSON Schema for an object, as a TOML table",
        r#"input_schema = { type = "object", properties = { jql = { type = "string" } } }"#,
    ),
    (
        "tools.*.exports.*.readonly",
        "true or false",
        "readonly = true",
    ),
    (
        "mcp",
        "a table of MCP servers by name",
        r#"[mcp.files] command = "npx""#,
    ),
    (
        "mcp.*",
        "a server table with command, args and env",
        r#"[mcp.files] command = "npx""#,
    ),
    (
        "mcp.*.command",
        "the program to run (no shell)",
        r#"command = "npx""#,
    ),
    (
        "mcp.*.args",
        "a list of strings",
        r#"args = ["-y", "@modelcontextprotocol/server-filesystem", "."]"#,
    ),
    (
        "mcp.*.env",
        "a table of environment variables",
        r#"env = { LOG_LEVEL = "warn" }"#,
    ),
    (
        "mcp.*.cwd",
        "a directory, relative to the workspace",
        r#"cwd = ".""#,
    ),
    (
        "mcp.*.readonly_tools",
        "a list of the server's tool names",
        r#"readonly_tools = ["read_text_file"]"#,
    ),
    (
        "mcp.*.startup_timeout_secs",
        "a positive number of seconds",
        "startup_timeout_secs = 30",
    ),
    (
        "mcp.*.timeout_secs",
        "a positive number of seconds",
        "timeout_secs = 60",
    ),
    ("mcp.*.network", "true or false", "network = true"),
    (
        "trusted_projects",
        "a list of absolute directory paths (user config file only)",
        r#"trusted_projects = ["/home/me/src/myproject"]"#,
    ),
    (
        "mcp_server",
        "a table with the `token` of `codecrew mcp --http` (user config file only)",
        r#"[mcp_server] token = "a-long-random-string""#,
    ),
    (
        "mcp_server.token",
        "a string of at least 16 printable characters (user config file only)",
        r#"token = "a-long-random-string""#,
    ),
    (
        "logs",
        "a table saying whether runs are kept for `codecrew logs` (user config file only)",
        "[logs] enabled = false",
    ),
    (
        "logs.enabled",
        "true or false (user config file only)",
        "enabled = false",
    ),
    (
        "worktree",
        "a table saying how `execute --worktrees` sets up each agent's worktree (user config file only)",
        "[worktree] link = [\"node_modules\"]",
    ),
    (
        "worktree.link",
        "a list of the checkout's folders linked into each worktree rather than copied (user config file only)",
        "link = [\"node_modules\", \".venv\"]",
    ),
    (
        "worktree.setup",
        "a shell command run in each new worktree (user config file only)",
        "setup = \"npm ci\"",
    ),
    (
        "logs.max_size",
        "the run store's bound, past which the oldest runs are removed: a size such as \"1GiB\" or \"500MB\" (user config file only)",
        "max_size = \"500MB\"",
    ),
];

/// What a key whose values are a list of names expects: [`describe`] adds the list
/// ([`values`]), derived from the registry of CLIs.
const ONE_OF: &str = "one of";

/// The names a key takes, when it takes one of a list.
fn values(pattern: &str) -> &'static [&'static str] {
    match pattern {
        "agents.*.provider" => &ProviderKind::NAMES,
        "agents.*.command.output" => &OutputFormat::NAMES,
        _ => &[],
    }
}

/// The valid provider names, for messages.
pub(crate) fn providers() -> String {
    ProviderKind::NAMES.join(", ")
}

/// What the key at `path` expects and an example, if it is a known key.
pub(crate) fn describe(path: &[String]) -> Option<(Cow<'static, str>, &'static str)> {
    let &(pattern, expected, example) =
        KEYS.iter().find(|(pattern, _, _)| matches(pattern, path))?;
    let expected = if expected == ONE_OF {
        Cow::Owned(format!("{ONE_OF} {}", values(pattern).join(", ")))
    } else {
        Cow::Borrowed(expected)
    };
    Some((expected, example))
}

fn matches(pattern: &str, path: &[String]) -> bool {
    let parts: Vec<&str> = pattern.split('.').collect();
    parts.len() == path.len()
        && parts
            .iter()
            .zip(path)
            .all(|(part, seg)| *part == "*" || *part == seg.as_str())
}

/// The hint for a value at `path`: "expected X, e.g. `Y`".
pub(crate) fn hint_for(path: &[String]) -> Option<String> {
    describe(path).map(|(expected, example)| format!("expected {expected}, e.g. `{example}`"))
}

/// The closest candidate to `word` by edit distance, if close enough to be a likely typo.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(word, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= (candidate.len().max(word.len()) / 3).max(1))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: Levenshtein plus transpositions (`modle` -> `model`
/// is 1).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

/// Checks the shape of a permission rule: `tool` or `tool(pattern)` with a non-empty pattern.
/// Returns the tool name, or what is wrong.
pub(crate) fn rule_tool(rule: &str) -> Result<&str, &'static str> {
    let rule = rule.trim();
    if rule.is_empty() {
        return Err("an empty permission rule");
    }
    let name = match rule.find('(') {
        None => {
            if rule.contains(')') {
                return Err("a `)` without `(`");
            }
            rule
        }
        Some(open) => {
            let Some(pattern) = rule[open + 1..].strip_suffix(')') else {
                return Err("a rule with `(` must end with `)`");
            };
            if pattern.trim().is_empty() {
                return Err(
                    "an empty pattern in `()`; write the tool name alone to match every call",
                );
            }
            rule[..open].trim_end()
        }
    };
    if name.is_empty() {
        return Err("a rule without a tool name");
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn describes_keys_with_agent_wildcards() {
        assert_eq!(
            describe(&path("agents.mine.command.argv")).map(|d| d.0),
            Some("a non-empty list of strings, the program first".into())
        );
        assert_eq!(
            describe(&path("agents.mine.provider")).map(|d| d.0),
            Some(format!("one of {}", ProviderKind::NAMES.join(", ")).into())
        );
        assert_eq!(
            describe(&path("agents.mine.command.output")).map(|d| d.0),
            Some(format!("one of {}", OutputFormat::NAMES.join(", ")).into())
        );
        assert!(describe(&path("agents.mine.nope")).is_none());
        assert!(
            hint_for(&path("limits.max_turns"))
                .unwrap()
                .contains("max_turns = 8")
        );
    }

    #[test]
    fn closest_suggests_likely_typos_only() {
        let keys = [
            "provider",
            "model",
            "system_prompt",
            "args",
            "tools",
            "command",
        ];
        assert_eq!(closest("modle", keys), Some("model"));
        assert_eq!(closest("provder", keys), Some("provider"));
        assert_eq!(closest("xyz", keys), None);
    }

    #[test]
    fn rules_are_a_tool_name_and_an_optional_pattern() {
        assert_eq!(rule_tool("run_command(git diff *)"), Ok("run_command"));
        assert_eq!(rule_tool("read_file"), Ok("read_file"));
        assert_eq!(rule_tool(" grep "), Ok("grep"));
        assert!(rule_tool("").is_err());
        assert!(rule_tool("read_file(").is_err());
        assert!(rule_tool("read_file()").is_err());
        assert!(rule_tool("(x)").is_err());
        assert!(rule_tool("read_file)").is_err());
    }
}
