//! The permission layer: for every tool call, Allow, Ask or Deny.
//!
//! ```text
//! call (tool, input) + ToolContext (mode, workspace) + Policy (rules of every layer) -> Decision
//! ```
//!
//! It decides; it runs nothing but the analysis. Above it, `codecrew-tools` asks it before
//! every call and runs what it allows; below it is nothing of codecrew. Besides the
//! decision it holds what the boundary is made of: the path guard ([`path`]), the path
//! classes ([`paths`]), codecrew's own state folder that no tool reaches
//! ([`state_folder`]), the shell analysis ([`shell`]), the Landlock rules ([`sandbox`]),
//! the secrets kept from commands ([`secrets`]) and the orphan sweep ([`process`]).
//!
//! Tool calls are untrusted: the model writes them, and the model may have read hostile
//! text. This module is the boundary between what the model asks for and what runs.
//!
//! A decision comes from, in order:
//! 1. the **mode**: `query` offers read-only tools and never asks (an Ask is a Deny);
//! 2. **deny rules** of any layer, and the built-in **deny list** of commands and special
//!    files: Deny, whatever the flags;
//! 3. **ask rules**, and built-in risks (sensitive reads, protected writes, shell
//!    constructs that hide what runs, paths outside the workspace): Ask;
//! 4. **allow rules** (built-in defaults, user config, trusted project config) and the
//!    safe list of commands: Allow when they cover every path and command of the call;
//! 5. anything else: Ask.
//!
//! Layers: built-in defaults < user config < project config. Deny and ask rules of every
//! layer apply; the project's allow rules, `pass_env` and `allow_network` apply only when
//! the user trusts the project folder, so a cloned repository can restrict but never
//! grant. The executor turns Ask into a prompt ([`ask`]), or Allow with `--yes`, or Deny
//! without a terminal; `--yes` never overrides a Deny.

pub mod ask;
mod clone_vm;
mod config;
mod context;
pub mod error;
mod facts;
pub mod git;
pub mod home;
pub mod lifeline;
pub mod path;
pub mod paths;
pub mod process;
pub mod rules;
pub mod sandbox;
pub mod secrets;
pub mod shell;
pub mod spawn;
pub mod state_folder;
pub mod teardown;
pub mod tracked;
pub mod workspace_reads;

use std::sync::Mutex;

use serde_json::Value;

use facts::{Facts, command_facts, path_facts, subjects};

pub use ask::{Answer, Asker, NonInteractive, Question};
pub use config::PermissionsConfig;
pub use context::{Caller, ExecSettings, Mode, ToolContext};
pub use error::{ErrorCode, ToolError};
pub use rules::{Layer, Rule, RuleError, Subject};

/// Why a call is asked about or denied, and what would allow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub message: String,
    /// A rule that would allow the call (for Ask), or what to do instead (for Deny).
    pub hint: Option<String>,
    /// Ask: because of what the call touches (a sensitive file, a protected one, a risky
    /// command), not for want of a rule. What such a call reads may be a secret.
    pub risk: bool,
}

impl Reason {
    pub fn new(message: impl Into<String>) -> Self {
        Reason {
            message: message.into(),
            hint: None,
            risk: false,
        }
    }

    /// The reason is what the call touches ([`Reason::risk`]).
    pub fn as_risk(mut self) -> Self {
        self.risk = true;
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What happens to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow(Grant),
    /// Needs the user's yes (a prompt, or `--yes`).
    Ask(Reason),
    /// Never runs.
    Deny(Reason),
}

/// Who let an allowed call run, which decides the sandbox of the commands it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grant {
    /// Nobody was asked: the safe list, an allow rule of the config, the built-in
    /// defaults. A command allowed this way runs in the read-only sandbox
    /// ([`sandbox::read_only_domain`]), so a mistake in the analysis cannot write or
    /// read outside the workspace.
    Unattended,
    /// The user said yes to this kind of call in this run ("always" at a prompt). Its
    /// commands run in the sandbox of the mode, as any approved call's.
    Approved,
}

/// The built-in defaults layer: the read-only tools (asking another agent, read-only,
/// included) and the workspace file writers are allowed (protected and sensitive paths
/// still ask); `run_command` relies on the safe list, anything else (`execute_agent`
/// among them) asks.
pub fn builtin_defaults() -> PermissionsConfig {
    PermissionsConfig {
        allow: [
            "help",
            "query_agent",
            "read_file",
            "list_directory",
            "glob",
            "grep",
            "write_file",
            "edit_file",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect(),
        ..PermissionsConfig::default()
    }
}

/// The merged policy of one run.
#[derive(Debug)]
pub struct Policy {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    /// Allow rules of an untrusted project: never applied, only named in messages.
    untrusted_allow: Vec<Rule>,
    /// Rules approved "always for this run" at a prompt.
    session: Mutex<Vec<Rule>>,
    pass_env: Vec<String>,
    allow_network: bool,
    /// Folders the agent CLIs may also read (`cli_read`), `~/` expanded.
    cli_read: Vec<std::path::PathBuf>,
}

impl Default for Policy {
    /// The built-in defaults alone.
    fn default() -> Self {
        // Unreachable fallback (the built-in rules parse): an empty policy asks for everything.
        Policy::from_layers(&builtin_defaults(), None, None, false)
            .unwrap_or_else(|_| Policy::empty())
    }
}

impl Policy {
    /// No rules at all: every call that is not denied by the built-in checks asks.
    fn empty() -> Policy {
        Policy {
            allow: Vec::new(),
            ask: Vec::new(),
            deny: Vec::new(),
            untrusted_allow: Vec::new(),
            session: Mutex::new(Vec::new()),
            pass_env: Vec::new(),
            allow_network: false,
            cli_read: Vec::new(),
        }
    }

    /// Merges the layers. Deny and ask rules of every layer apply; the project's allow
    /// rules, `pass_env` and `cli_read` only when `project_trusted`. The network comes from
    /// [`Policy::with_network`].
    pub fn from_layers(
        builtin: &PermissionsConfig,
        user: Option<&PermissionsConfig>,
        project: Option<&PermissionsConfig>,
        project_trusted: bool,
    ) -> Result<Policy, RuleError> {
        let mut policy = Policy::empty();
        let layers = [
            (Layer::Builtin, Some(builtin)),
            (Layer::User, user),
            (Layer::Project, project),
        ];
        for (layer, config) in layers {
            let Some(config) = config else {
                continue;
            };
            let grants = layer != Layer::Project || project_trusted;
            for text in &config.deny {
                policy.deny.push(Rule::parse(text, layer, true)?);
            }
            for text in &config.ask {
                policy.ask.push(Rule::parse(text, layer, true)?);
            }
            for text in &config.allow {
                let rule = Rule::parse(text, layer, false)?;
                if grants {
                    policy.allow.push(rule);
                } else {
                    policy.untrusted_allow.push(rule);
                }
            }
            if grants {
                policy.pass_env.extend(config.pass_env.iter().cloned());
                policy
                    .cli_read
                    .extend(config.cli_read.iter().filter_map(|dir| expand_home(dir)));
            }
        }
        Ok(policy)
    }

    /// Whether commands may use the network: the config's merged `allow_network`
    /// (`LoadedConfig::config.permissions`), the one place that knows a project set it to
    /// false rather than left it out. Off unless set.
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.allow_network = allowed;
        self
    }

    /// Variables passed to commands despite the environment scrub.
    pub fn pass_env(&self) -> &[String] {
        &self.pass_env
    }

    /// Whether run_command may use the network inside the sandbox.
    pub fn allow_network(&self) -> bool {
        self.allow_network
    }

    /// The folders the agent CLIs may also read inside their wall.
    pub fn cli_read(&self) -> &[std::path::PathBuf] {
        &self.cli_read
    }

    /// Adds an allow rule for the rest of this run ("always" at a prompt).
    pub fn allow_for_run(&self, rule: &str) -> Result<(), RuleError> {
        let rule = Rule::parse(rule, Layer::Session, false)?;
        if let Ok(mut session) = self.session.lock() {
            session.push(rule);
        }
        Ok(())
    }

    /// The decision for one call of `tool` (readonly as the tool says) with `input`.
    ///
    /// `run_command` is offered in `query` too: there, as everywhere, a command that
    /// would run without asking runs in the read-only sandbox, and one that would ask is
    /// denied. Where that sandbox cannot be had (no Landlock, or `CODECREW_SANDBOX=off`),
    /// nothing runs without asking: what the safe list or an allow rule would let through
    /// asks instead.
    pub fn decide(&self, tool: &str, readonly: bool, input: &Value, ctx: &ToolContext) -> Decision {
        let command = tool == rules::COMMAND_TOOL;
        if ctx.mode == Mode::Query && !readonly && !command {
            return Decision::Deny(
                Reason::new(format!(
                    "codecrew:{tool} can change files or run commands; query mode is read-only"
                ))
                .with_hint("run the task in execute mode (`codecrew execute`, or --mode execute)"),
            );
        }
        let mut decision = self.decide_in_mode(tool, readonly, input, ctx);
        if command
            && decision == Decision::Allow(Grant::Unattended)
            && let Some(why) = sandbox::read_only_unavailable(ctx.exec.sandbox)
        {
            decision = Decision::Ask(Reason::new(format!(
                "commands run without asking only inside the read-only OS sandbox, and {why}"
            )));
        }
        match (ctx.mode, decision) {
            (Mode::Query, Decision::Ask(reason)) => Decision::Deny(Reason {
                message: format!(
                    "query mode never asks, and this call needs approval: {}",
                    reason.message
                ),
                hint: Some(match reason.hint {
                    Some(rule) => format!(
                        "add \"{rule}\" to `allow` under [permissions] in your user config, or run in execute mode"
                    ),
                    None => "run the task in execute mode, where codecrew can ask".to_owned(),
                }),
                risk: reason.risk,
            }),
            // In query an approval of this run ("always") cannot widen the sandbox.
            (Mode::Query, Decision::Allow(_)) => Decision::Allow(Grant::Unattended),
            (_, decision) => decision,
        }
    }

    fn decide_in_mode(
        &self,
        tool: &str,
        readonly: bool,
        input: &Value,
        ctx: &ToolContext,
    ) -> Decision {
        let facts = match tool {
            rules::COMMAND_TOOL => command_facts(input, ctx),
            _ if rules::READ_TOOLS.contains(&tool) || rules::WRITE_TOOLS.contains(&tool) => {
                path_facts(tool, input, ctx)
            }
            _ => Facts::default(),
        };
        let subjects = subjects(tool, &facts);

        if let Some(rule) = first_match(&self.deny, &subjects) {
            return Decision::Deny(
                Reason::new(format!(
                    "denied by the rule \"{}\" in the {}",
                    rule.text,
                    rule.layer.name()
                ))
                .with_hint("a deny rule cannot be overridden by --yes or a prompt; change the config to allow it"),
            );
        }
        if !facts.deny.is_empty() {
            let mut hint =
                "this is on codecrew's built-in deny list; no flag, rule or prompt allows it"
                    .to_owned();
            for better in &facts.deny_hints {
                hint.push_str("; ");
                hint.push_str(better);
            }
            return Decision::Deny(Reason::new(facts.deny.join("; ")).with_hint(hint));
        }
        if let Some(rule) = first_match(&self.ask, &subjects) {
            return Decision::Ask(Reason::new(format!(
                "the rule \"{}\" in the {} asks first",
                rule.text,
                rule.layer.name()
            )));
        }
        if !facts.risks.is_empty() {
            return Decision::Ask(Reason::new(facts.risks.join("; ")).as_risk());
        }
        // An external or MCP tool (`resource__name`) the user declared read-only in the
        // config runs like the built-in readers; the others ask unless a rule allows them.
        if readonly && is_extension_tool(tool) {
            return Decision::Allow(Grant::Unattended);
        }
        self.allowed(tool, &facts)
    }

    /// Allow when allow rules (or the safe list) cover everything the call touches; the
    /// grant is [`Grant::Approved`] when a rule approved at a prompt was needed.
    fn allowed(&self, tool: &str, facts: &Facts) -> Decision {
        // A poisoned lock counts as no rules approved at a prompt.
        let session = self.session.lock().ok();
        let allowed_by = |subject: Subject<'_>| {
            if self.allow.iter().any(|rule| rule.matches(subject)) {
                Some(Grant::Unattended)
            } else {
                session
                    .iter()
                    .flat_map(|rules| rules.iter())
                    .any(|rule| rule.matches(subject))
                    .then_some(Grant::Approved)
            }
        };
        let untrusted = |subject: Subject<'_>| {
            self.untrusted_allow
                .iter()
                .find(|rule| rule.matches(subject))
        };
        let project_note = |rule: Option<&Rule>| {
            rule.map(|rule| {
                format!(
                    " (the project config allows it with \"{}\", but the project folder is not \
                     trusted, so a project can only restrict)",
                    rule.text
                )
            })
            .unwrap_or_default()
        };
        let mut grant = Grant::Unattended;
        if tool == rules::COMMAND_TOOL {
            for words in &facts.unsafe_commands {
                let subject = Subject::Command(words);
                match allowed_by(subject) {
                    Some(by) => grant = grant.max(by),
                    None => {
                        return Decision::Ask(
                            Reason::new(format!(
                                "`{}` is not on the safe list of read-only commands and no allow \
                                 rule matches it{}",
                                words.join(" "),
                                project_note(untrusted(subject))
                            ))
                            .with_hint(rules::suggest_command_rule(words)),
                        );
                    }
                }
            }
            return Decision::Allow(grant);
        }
        if facts.paths.is_empty() {
            let subject = Subject::Call { tool };
            return match allowed_by(subject) {
                Some(grant) => Decision::Allow(grant),
                None => Decision::Ask(
                    Reason::new(format!(
                        "no allow rule covers codecrew:{tool}{}",
                        project_note(untrusted(subject))
                    ))
                    .with_hint(tool.to_owned()),
                ),
            };
        }
        for path in &facts.paths {
            let subject = Subject::Path { tool, path };
            match allowed_by(subject) {
                Some(by) => grant = grant.max(by),
                None => {
                    return Decision::Ask(
                        Reason::new(format!(
                            "no allow rule covers codecrew:{tool} on {path}{}",
                            project_note(untrusted(subject))
                        ))
                        .with_hint(format!("{tool}({path})")),
                    );
                }
            }
        }
        Decision::Allow(grant)
    }
}

/// `dir` as an absolute path, `~/` being the home directory; None (with a warning) for a
/// relative path, which would depend on where codecrew runs.
fn expand_home(dir: &str) -> Option<std::path::PathBuf> {
    let path = match dir.strip_prefix("~/") {
        Some(rest) => std::path::PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => std::path::PathBuf::from(dir),
    };
    if path.is_absolute() {
        Some(path)
    } else {
        tracing::warn!("cli_read: {dir:?} is not an absolute path or under ~/; left out");
        None
    }
}

/// External tools and MCP tools are named `<resource>__<name>`; built-ins never are.
pub fn is_extension_tool(tool: &str) -> bool {
    tool.contains("__")
}

fn first_match<'r>(rules: &'r [Rule], subjects: &[Subject<'_>]) -> Option<&'r Rule> {
    rules
        .iter()
        .find(|rule| subjects.iter().any(|subject| rule.matches(*subject)))
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
