//! Checks on one deserialized file beyond what its types say: ids, tool names, command
//! providers, permission rules, limits, and keys a project file may not set. Every problem
//! found is reported (not only the first), each at its place in the file.

use super::error::Diagnostic;
use super::keys;
use super::layer::{FileKind, ParsedFile};
use super::spans::{Part, Seg, span_of};
use super::{AgentConfig, ExternalToolConfig, McpServerConfig, PromptVia, ProviderKind};
use codecrew_tools::catalog::schema_problem;

/// Every problem in `file`, in the order of the file.
pub(crate) fn file(file: &ParsedFile) -> Vec<Diagnostic> {
    let mut check = Checker {
        file,
        diagnostics: Vec::new(),
    };
    let layer = &file.layer;
    if layer.mcp_server.is_some() && file.kind == FileKind::Project {
        check.report(
            &[Seg::Key("mcp_server")],
            Part::Key,
            "mcp_server cannot be set in a project file",
            "a checkout that set the MCP server's token would know it: move this table to \
             your user config file ($CODECREW_CONFIG or ~/.config/codecrew/config.toml)",
        );
    }
    if layer.logs.is_some() && file.kind == FileKind::Project {
        check.report(
            &[Seg::Key("logs")],
            Part::Key,
            "logs cannot be set in a project file",
            "whether codecrew keeps your runs is yours to say: move this table to your user \
             config file ($CODECREW_CONFIG or ~/.config/codecrew/config.toml)",
        );
    }
    if layer.worktree.is_some() && file.kind == FileKind::Project {
        check.report(
            &[Seg::Key("worktree")],
            Part::Key,
            "worktree cannot be set in a project file",
            "its setup command would run outside every wall on a checkout's word: move this \
             table to your user config file ($CODECREW_CONFIG or ~/.config/codecrew/config.toml)",
        );
    }
    if let Some(trusted) = &layer.trusted_projects {
        match file.kind {
            FileKind::Project => check.report(
                &[Seg::Key("trusted_projects")],
                Part::Key,
                "trusted_projects cannot be set in a project file",
                "a project cannot trust itself: move this key to your user config file \
                 ($CODECREW_CONFIG or ~/.config/codecrew/config.toml)",
            ),
            FileKind::User => {
                for (i, dir) in trusted.iter().enumerate() {
                    if !dir.is_absolute() {
                        check.report(
                            &[Seg::Key("trusted_projects"), Seg::Index(i)],
                            Part::Value,
                            format!(
                                "trusted project `{}` is not an absolute path",
                                dir.display()
                            ),
                            "write the full path from `/` (`~` is not expanded), e.g. \
                             `trusted_projects = [\"/home/me/src/myproject\"]`",
                        );
                    }
                }
            }
        }
    }
    if let Some(agent) = &layer.default_agent
        && agent.trim().is_empty()
    {
        check.report(
            &[Seg::Key("default_agent")],
            Part::Value,
            "default_agent is empty",
            "name a defined agent, e.g. `default_agent = \"claude\"`, or remove the key",
        );
    }
    // The names only: the help tool's text does not matter here.
    let builtin = codecrew_tools::ToolRegistry::builtin(std::sync::Arc::new(
        codecrew_tools::builtin::NoCommands,
    ));
    let mut known_tools: Vec<String> = builtin.names().map(str::to_owned).collect();
    known_tools.extend(
        [
            crate::agent_tools::QUERY_AGENT,
            crate::agent_tools::EXECUTE_AGENT,
        ]
        .map(str::to_owned),
    );
    for (id, agent) in &layer.agents {
        check.agent(id, agent, &known_tools);
    }
    if let Some(permissions) = &layer.permissions {
        for (list, rules) in [
            ("allow", &permissions.allow),
            ("ask", &permissions.ask),
            ("deny", &permissions.deny),
        ] {
            for (i, rule) in rules.iter().enumerate() {
                check.rule(list, i, rule, &known_tools);
            }
        }
        for (i, name) in permissions.pass_env.iter().enumerate() {
            if !is_env_name(name) {
                check.report(
                    &[Seg::Key("permissions"), Seg::Key("pass_env"), Seg::Index(i)],
                    Part::Value,
                    format!("`{name}` is not an environment variable name"),
                    "use letters, digits and `_`, not starting with a digit, e.g. \
                     `pass_env = [\"CARGO_HOME\"]`",
                );
            }
        }
    }
    for (name, tool) in &layer.tools {
        check.external_tool(name, tool);
    }
    for (name, server) in &layer.mcp {
        check.mcp_server(name, server);
    }
    if let Some(limits) = &layer.limits {
        for (key, value) in [
            ("max_turns", limits.max_turns.map(u64::from)),
            ("turn_timeout_secs", limits.turn_timeout_secs),
            (
                "max_calls_per_message",
                limits.max_calls_per_message.map(|v| v as u64),
            ),
        ] {
            if value == Some(0) {
                let hint =
                    keys::hint_for(&["limits".to_owned(), key.to_owned()]).unwrap_or_default();
                check.report(
                    &[Seg::Key("limits"), Seg::Key(key)],
                    Part::Value,
                    format!("limits.{key} must be positive, not 0"),
                    hint,
                );
            }
        }
    }
    let mut diagnostics = check.diagnostics;
    diagnostics.sort_by_key(|d| (d.line, d.column));
    diagnostics
}

struct Checker<'a> {
    file: &'a ParsedFile,
    diagnostics: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn report(
        &mut self,
        path: &[Seg<'_>],
        part: Part,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let span = span_of(&self.file.text, path, part);
        self.diagnostics.push(Diagnostic::at(
            &self.file.path,
            &self.file.text,
            span,
            message,
            hint,
        ));
    }

    fn agent(&mut self, id: &str, agent: &AgentConfig, known_tools: &[String]) {
        let base = [Seg::Key("agents"), Seg::Key(id)];
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'_>> {
            base.iter().copied().chain(rest.iter().copied()).collect()
        };
        if !is_agent_id(id) {
            self.report(
                &base,
                Part::Key,
                format!("agent id `{id}` has characters other than letters, digits, `_` and `-`"),
                "rename it so that `@id` can name it in a task, e.g. [agents.my-agent]",
            );
        }
        if agent.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            self.report(
                &at(&[Seg::Key("model")]),
                Part::Value,
                format!("agent `{id}` has an empty model"),
                "name a model, e.g. `model = \"sonnet\"`, or remove the key to use the CLI's default",
            );
        }
        if let Some(effort) = &agent.effort {
            let levels = agent.provider.effort_levels();
            if levels.is_empty() {
                self.report(
                    &at(&[Seg::Key("effort")]),
                    Part::Key,
                    format!(
                        "agent `{id}`'s CLI ({}) has no reasoning-effort setting",
                        agent.provider.name()
                    ),
                    "remove the key; claude, codex and copilot have one",
                );
            } else if !levels.contains(&effort.as_str()) {
                self.report(
                    &at(&[Seg::Key("effort")]),
                    Part::Value,
                    format!("agent `{id}` has an effort its CLI does not know: {effort:?}"),
                    format!("one of {}", levels.join(", ")),
                );
            }
        }
        if let Some(tools) = &agent.tools {
            for (i, tool) in tools.iter().enumerate() {
                // `resource__export` names external and MCP tools, not all known here.
                if tool.contains("__") || known_tools.iter().any(|known| known == tool) {
                    continue;
                }
                let bare = tool
                    .strip_prefix("codecrew:")
                    .or_else(|| tool.strip_prefix("codecrew__"));
                let hint = match bare {
                    Some(bare) if known_tools.iter().any(|k| k == bare) => {
                        format!("write `{bare}`, without the prefix")
                    }
                    _ => match keys::closest(tool, known_tools.iter().map(String::as_str)) {
                        Some(close) => format!(
                            "did you mean `{close}`? Known tools: {}",
                            known_tools.join(", ")
                        ),
                        None => format!("known tools: {}", known_tools.join(", ")),
                    },
                };
                self.report(
                    &at(&[Seg::Key("tools"), Seg::Index(i)]),
                    Part::Value,
                    format!("agent `{id}` lists unknown tool `{tool}`"),
                    hint,
                );
            }
        }
        match (&agent.command, agent.provider) {
            (None, ProviderKind::Command) => self.report(
                &base,
                Part::Key,
                format!("agent `{id}` has provider = \"command\" but no `command` table"),
                format!(
                    "describe how to run the CLI: [agents.{id}.command] with \
                     argv = [\"llm\", \"-m\", \"{{model}}\"]"
                ),
            ),
            (Some(_), provider) if provider != ProviderKind::Command => self.report(
                &at(&[Seg::Key("command")]),
                Part::Key,
                format!(
                    "agent `{id}` has a `command` table, which only provider = \"command\" uses \
                     (its provider is {})",
                    provider.name()
                ),
                "remove the `command` table, or set provider = \"command\"",
            ),
            (Some(command), _) => {
                let argv_path = at(&[Seg::Key("command"), Seg::Key("argv")]);
                if command.argv.is_empty() {
                    self.report(
                        &argv_path,
                        Part::Value,
                        format!("agent `{id}` has an empty command.argv"),
                        "give the program and its arguments, e.g. \
                         argv = [\"llm\", \"-m\", \"{model}\"]",
                    );
                } else if command.argv[0].trim().is_empty() {
                    let program = at(&[Seg::Key("command"), Seg::Key("argv"), Seg::Index(0)]);
                    self.report(
                        &program,
                        Part::Value,
                        format!("agent `{id}` has an empty program name in command.argv"),
                        "the first element of argv is the program to run, e.g. \"llm\"",
                    );
                }
                let with_prompt = command.argv.iter().position(|a| a.contains("{prompt}"));
                match (command.prompt, with_prompt) {
                    (PromptVia::Arg, None) if !command.argv.is_empty() => self.report(
                        &at(&[Seg::Key("command"), Seg::Key("prompt")]),
                        Part::Value,
                        format!(
                            "agent `{id}` has prompt = \"arg\" but no `{{prompt}}` in command.argv"
                        ),
                        "put \"{prompt}\" where the prompt goes, e.g. \
                         argv = [\"ollama\", \"run\", \"{model}\", \"{prompt}\"], \
                         or use prompt = \"stdin\"",
                    ),
                    (PromptVia::Stdin, Some(i)) => self.report(
                        &at(&[Seg::Key("command"), Seg::Key("argv"), Seg::Index(i)]),
                        Part::Value,
                        format!(
                            "agent `{id}` has `{{prompt}}` in command.argv but sends the prompt \
                             on stdin"
                        ),
                        "set prompt = \"arg\" to pass the prompt as this argument, or remove \
                         {prompt} to keep it on stdin",
                    ),
                    _ => {}
                }
            }
            (None, _) => {}
        }
    }

    fn external_tool(&mut self, name: &str, tool: &ExternalToolConfig) {
        let base = [Seg::Key("tools"), Seg::Key(name)];
        self.extension_name("tools", name, &base);
        self.program("tools", name, &tool.command, tool.timeout_secs, &tool.env);
        if tool.exports.is_empty() {
            self.report(
                &base,
                Part::Key,
                format!("tool `{name}` has no exports"),
                format!(
                    "add at least one: [[tools.{name}.exports]] with name, description and \
                     input_schema"
                ),
            );
        }
        let mut seen = Vec::new();
        for (i, export) in tool.exports.iter().enumerate() {
            let at = |key: &'static str| {
                vec![
                    Seg::Key("tools"),
                    Seg::Key(name),
                    Seg::Key("exports"),
                    Seg::Index(i),
                    Seg::Key(key),
                ]
            };
            if !is_resource_name(&export.name) {
                self.report(
                    &at("name"),
                    Part::Value,
                    format!(
                        "export `{}` of tool `{name}` is not a valid name",
                        export.name
                    ),
                    NAME_HINT,
                );
            } else if seen.contains(&export.name.as_str()) {
                self.report(
                    &at("name"),
                    Part::Value,
                    format!("tool `{name}` exports `{}` twice", export.name),
                    "give each export a different name",
                );
            }
            seen.push(export.name.as_str());
            if export.description.trim().is_empty() {
                self.report(
                    &at("description"),
                    Part::Value,
                    format!(
                        "export `{}` of tool `{name}` has no description",
                        export.name
                    ),
                    "say what it does and when to use it: the model chooses tools by it",
                );
            }
            if let Some(problem) = schema_problem(&export.input_schema) {
                self.report(
                    &at("input_schema"),
                    Part::Value,
                    format!(
                        "the input_schema of `{name}__{}` is not usable: {problem}",
                        export.name
                    ),
                    "write a JSON Schema for an object, e.g. input_schema = { type = \"object\", \
                     properties = { query = { type = \"string\" } }, required = [\"query\"] }",
                );
            }
        }
    }

    fn mcp_server(&mut self, name: &str, server: &McpServerConfig) {
        let base = [Seg::Key("mcp"), Seg::Key(name)];
        self.extension_name("mcp", name, &base);
        self.program(
            "mcp",
            name,
            &server.command,
            server.timeout_secs,
            &server.env,
        );
        if server.startup_timeout_secs == 0 {
            self.report(
                &[
                    Seg::Key("mcp"),
                    Seg::Key(name),
                    Seg::Key("startup_timeout_secs"),
                ],
                Part::Value,
                format!("mcp.{name}.startup_timeout_secs must be positive, not 0"),
                "e.g. `startup_timeout_secs = 30`",
            );
        }
    }

    fn extension_name(&mut self, table: &'static str, name: &str, base: &[Seg<'_>]) {
        if !is_resource_name(name) {
            self.report(
                base,
                Part::Key,
                format!("`{table}.{name}` is not a valid name"),
                NAME_HINT,
            );
        }
    }

    /// The program, timeout and environment shared by tools and MCP servers.
    fn program(
        &mut self,
        table: &'static str,
        name: &str,
        command: &str,
        timeout_secs: u64,
        env: &std::collections::BTreeMap<String, String>,
    ) {
        if command.trim().is_empty() {
            self.report(
                &[Seg::Key(table), Seg::Key(name), Seg::Key("command")],
                Part::Value,
                format!("`{table}.{name}` has an empty command"),
                "name the program to run, e.g. `command = \"python3\"`, and its arguments in \
                 `args`",
            );
        }
        if timeout_secs == 0 {
            self.report(
                &[Seg::Key(table), Seg::Key(name), Seg::Key("timeout_secs")],
                Part::Value,
                format!("{table}.{name}.timeout_secs must be positive, not 0"),
                "e.g. `timeout_secs = 60`",
            );
        }
        for variable in env.keys() {
            if !is_env_name(variable) {
                self.report(
                    &[
                        Seg::Key(table),
                        Seg::Key(name),
                        Seg::Key("env"),
                        Seg::Key(variable),
                    ],
                    Part::Key,
                    format!("`{variable}` is not an environment variable name"),
                    "use letters, digits and `_`, not starting with a digit",
                );
            }
        }
    }

    fn rule(&mut self, list: &'static str, i: usize, rule: &str, known_tools: &[String]) {
        let path = [Seg::Key("permissions"), Seg::Key(list), Seg::Index(i)];
        let example = "e.g. \"run_command(git diff *)\", \"write_file(src/**)\", \"read_file\"";
        match keys::rule_tool(rule) {
            Err(problem) => self.report(
                &path,
                Part::Value,
                format!("permission rule `{rule}` is malformed: {problem}"),
                format!("write `tool` or `tool(pattern)`, {example}"),
            ),
            Ok(tool) => {
                // `resource__export` names external tools, which are not known here.
                if tool.contains("__") || known_tools.iter().any(|k| k == tool) {
                    return;
                }
                let hint = match keys::closest(tool, known_tools.iter().map(String::as_str)) {
                    Some(close) => format!(
                        "did you mean `{close}`? Known tools: {}",
                        known_tools.join(", ")
                    ),
                    None => format!("known tools: {}", known_tools.join(", ")),
                };
                self.report(
                    &path,
                    Part::Value,
                    format!("permission rule `{rule}` names unknown tool `{tool}`"),
                    hint,
                );
            }
        }
    }
}

const NAME_HINT: &str = "use letters, digits, `-` and single `_` (a tool is offered as \
     `codecrew:<resource>__<export>`, so `__` cannot be part of a name), e.g. `jira` or `search_issues`";

/// A resource or export name: `[A-Za-z0-9_-]+` without `__` and not starting or ending
/// with `_`, so that `resource__export` splits one way only.
pub(crate) fn is_resource_name(name: &str) -> bool {
    is_agent_id(name) && !name.contains("__") && !name.starts_with('_') && !name.ends_with('_')
}

/// `[A-Za-z0-9_-]+`
pub(crate) fn is_agent_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
