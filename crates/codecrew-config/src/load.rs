//! Finding, reading, checking and merging the config files.
//!
//! Layers, lowest first: the built-in defaults ([`Config::default`]), the user file
//! (`$CODECREW_CONFIG`, else `$XDG_CONFIG_HOME/codecrew/config.toml`, else
//! `~/.config/codecrew/config.toml`), the project file (`codecrew.toml` in the workspace or
//! the nearest parent up to the repository root). A file's agent replaces the agent of the
//! same id entirely; scalars override; permissions stay available per layer
//! ([`LoadedConfig::user_permissions`], [`LoadedConfig::project_permissions`]).
//!
//! The environment is read only by [`load`] and [`user_config_path`]; everything else takes
//! its inputs explicitly ([`load_from`]) so that it can be tested without touching the
//! process environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::error::{ConfigError, Diagnostic};
use super::keys;
use super::layer::{FileKind, FileLayer, ParsedFile, PermissionsLayer};
use super::spans::{Part, Seg, path_at, span_of};
use super::validate;
use super::{Config, PermissionsConfig, ProviderKind};
use crate::size::ByteSize;

/// The project file's name.
pub const PROJECT_FILE: &str = "codecrew.toml";
/// The environment variable naming the user config file (empty: no user file).
pub const CONFIG_ENV: &str = "CODECREW_CONFIG";

/// The merged configuration and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// Defaults < user file < project file. `config.permissions` is the *effective* policy:
    /// `deny` and `ask` rules of both files; `allow` and `pass_env` of the user file, and of
    /// the project file only when it is trusted; `allow_network` from the user file, which an
    /// untrusted project may turn off but not on.
    pub config: Config,
    /// The user file's `[permissions]`, when it has one.
    pub user_permissions: Option<PermissionsConfig>,
    /// The project file's `[permissions]`, when it has one (as written, trusted or not).
    pub project_permissions: Option<PermissionsConfig>,
    /// Whether the user trusts the project: its directory is in (or under) one of the user
    /// file's `trusted_projects`. An untrusted project may only restrict permissions.
    pub project_trusted: bool,
    /// The files read, in merge order (user, then project).
    pub sources: Vec<PathBuf>,
    /// The user file's `[mcp_server] token`: the token of `codecrew mcp --http`.
    pub mcp_token: Option<String>,
    /// The user file's `[logs] enabled`: whether runs are kept in the run store (true
    /// unless the user said otherwise; a project file cannot say).
    pub logs_enabled: bool,
    /// The user file's `[logs] max_size`: the run store's bound, past which the oldest
    /// runs are removed ([`DEFAULT_LOGS_MAX_SIZE`] unless the user said otherwise).
    pub logs_max_size: ByteSize,
    /// The user file's `[worktree] link`: folders linked into each agent's worktree.
    pub worktree_link: Vec<String>,
    /// The user file's `[worktree] setup`: a command run in each new worktree.
    pub worktree_setup: Option<String>,
    /// The user file, when one was read.
    pub user_file: Option<PathBuf>,
    /// The project file, when one was found.
    pub project_file: Option<PathBuf>,
    /// Which layer each agent of `config.agents` comes from.
    pub agent_origins: BTreeMap<String, Origin>,
    /// What of an untrusted project file is left out of `config` (by name, for
    /// messages): external tools and MCP servers (`tools.<name>`, `mcp.<name>`), which
    /// would run programs of the project's choosing, and an agent's `keep_alive = false`
    /// (`agents.<id>.keep_alive`), which would run a CLI whose own tools then ask no one.
    pub blocked: Vec<String>,
}

/// The run store's bound when the user sets none: 1 GiB.
pub const DEFAULT_LOGS_MAX_SIZE: ByteSize = ByteSize(1 << 30);

/// Where an agent is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    User,
    Project,
}

impl LoadedConfig {
    /// Only the built-in defaults, as if there were no config file.
    pub fn builtin() -> LoadedConfig {
        let config = Config::default();
        let agent_origins = config
            .agents
            .keys()
            .map(|id| (id.clone(), Origin::BuiltIn))
            .collect();
        LoadedConfig {
            config,
            user_permissions: None,
            project_permissions: None,
            project_trusted: false,
            sources: Vec::new(),
            mcp_token: None,
            logs_enabled: true,
            logs_max_size: DEFAULT_LOGS_MAX_SIZE,
            worktree_link: Vec::new(),
            worktree_setup: None,
            user_file: None,
            project_file: None,
            agent_origins,
            blocked: Vec::new(),
        }
    }

    /// The file that defines agent `id` (`None` for a built-in or unknown agent).
    pub fn agent_file(&self, id: &str) -> Option<&Path> {
        match self.agent_origins.get(id)? {
            Origin::BuiltIn => None,
            Origin::User => self.user_file.as_deref(),
            Origin::Project => self.project_file.as_deref(),
        }
    }

    /// Refuses to run agent `id` when an untrusted project defines it and it would run a
    /// program of the project's choosing (`provider = "command"`) or pass it extra CLI
    /// arguments (`args`), which could, say, switch off the CLI's own permission checks.
    /// Call it before spawning an agent's CLI.
    pub fn check_agent_allowed(&self, id: &str) -> Result<(), ConfigError> {
        if self.project_trusted || self.agent_origins.get(id) != Some(&Origin::Project) {
            return Ok(());
        }
        let (Some(agent), Some(path)) = (self.config.agents.get(id), &self.project_file) else {
            return Ok(());
        };
        let what = if agent.provider == ProviderKind::Command {
            "runs a program of its own (provider = \"command\")"
        } else if !agent.args.query.is_empty() || !agent.args.execute.is_empty() {
            "passes extra arguments to the CLI (args)"
        } else {
            return Ok(());
        };
        Err(ConfigError::UntrustedAgent {
            agent: id.to_owned(),
            path: path.clone(),
            what,
        })
    }
}

/// Loads the configuration for `workspace`, finding the user file from the environment
/// (see [`user_config_path`]).
pub fn load(workspace: &Path) -> Result<LoadedConfig, ConfigError> {
    let user_file = user_config_path()?;
    load_from(workspace, user_file.as_deref())
}

/// The user config file named by the environment: `$CODECREW_CONFIG` (empty: none; an error
/// when it names a missing file), else `$XDG_CONFIG_HOME/codecrew/config.toml` (when that
/// variable holds an absolute path), else `$HOME/.config/codecrew/config.toml`.
pub fn user_config_path() -> Result<Option<PathBuf>, ConfigError> {
    user_config_path_with(|name| std::env::var_os(name))
}

/// [`user_config_path`] with the environment given as a lookup function.
pub fn user_config_path_with(
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Option<PathBuf>, ConfigError> {
    if let Some(explicit) = env(CONFIG_ENV) {
        if explicit.is_empty() {
            return Ok(None);
        }
        let path = PathBuf::from(explicit);
        if !path.exists() {
            return Err(ConfigError::MissingUserFile { path });
        }
        return Ok(Some(path));
    }
    let base = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            env("HOME")
                .filter(|home| !home.is_empty())
                .map(|home| PathBuf::from(home).join(".config"))
        });
    Ok(base.map(|dir| dir.join("codecrew").join("config.toml")))
}

/// The project file for `workspace`: `codecrew.toml` in the workspace or its nearest
/// ancestor that has one, looking no higher than the repository root (the first ancestor
/// with a `.git`). Outside a repository only the workspace itself is looked at.
pub fn find_project_file(workspace: &Path) -> Option<PathBuf> {
    let start = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let repo_root = start.ancestors().find(|dir| dir.join(".git").exists());
    let last = repo_root.unwrap_or(&start);
    for dir in start.ancestors() {
        let file = dir.join(PROJECT_FILE);
        if file.is_file() {
            return Some(file);
        }
        if dir == last {
            break;
        }
    }
    None
}

/// Loads the configuration for `workspace` with an explicit user file (`None`: no user
/// file; a path that does not exist counts as no user file).
pub fn load_from(workspace: &Path, user_file: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    let user = match user_file {
        Some(path) => read_file(path, FileKind::User)?,
        None => None,
    };
    let project = match find_project_file(workspace) {
        Some(path) => read_file(&path, FileKind::Project)?,
        None => None,
    };
    let mut diagnostics = Vec::new();
    for file in user.iter().chain(&project) {
        diagnostics.extend(validate::file(file));
    }
    if !diagnostics.is_empty() {
        return Err(ConfigError::Invalid(diagnostics));
    }

    let trusted = user
        .as_ref()
        .and_then(|user| user.layer.trusted_projects.as_deref())
        .unwrap_or_default();
    let project_dir = match &project {
        Some(project) => project.path.parent().map(Path::to_path_buf),
        None => Some(workspace.to_path_buf()),
    };
    let project_trusted = project_dir.is_some_and(|dir| is_trusted(&dir, trusted));

    let mut loaded = LoadedConfig::builtin();
    loaded.project_trusted = project_trusted;
    loaded.mcp_token = user
        .as_ref()
        .and_then(|user| user.layer.mcp_server.as_ref())
        .and_then(|server| server.token.clone());
    loaded.logs_enabled = user
        .as_ref()
        .and_then(|user| user.layer.logs.as_ref())
        .and_then(|logs| logs.enabled)
        .unwrap_or(true);
    loaded.logs_max_size = user
        .as_ref()
        .and_then(|user| user.layer.logs.as_ref())
        .and_then(|logs| logs.max_size)
        .unwrap_or(DEFAULT_LOGS_MAX_SIZE);
    if let Some(worktree) = user.as_ref().and_then(|user| user.layer.worktree.as_ref()) {
        loaded.worktree_link = worktree.link.clone().unwrap_or_default();
        loaded.worktree_setup = worktree.setup.clone();
    }
    let mut default_set_by: Option<&ParsedFile> = None;
    for file in user.iter().chain(&project) {
        let layer = &file.layer;
        let origin = match file.kind {
            FileKind::User => Origin::User,
            FileKind::Project => Origin::Project,
        };
        if let Some(agent) = &layer.default_agent {
            loaded.config.default_agent.clone_from(agent);
            default_set_by = Some(file);
        }
        for (id, agent) in &layer.agents {
            let mut agent = agent.clone();
            // A kept CLI asks codecrew before each of its own tool calls; run per turn,
            // some of them do not ask. Only the user may trade that for a process a turn.
            if file.kind == FileKind::Project && !project_trusted && agent.keep_alive == Some(false)
            {
                agent.keep_alive = None;
                loaded.blocked.push(format!("agents.{id}.keep_alive"));
            }
            // Text set before codecrew's own prompt speaks to the model with codecrew's
            // voice: a checkout the user has not trusted does not get it.
            if file.kind == FileKind::Project && !project_trusted && agent.system_prompt.is_some() {
                agent.system_prompt = None;
                loaded.blocked.push(format!("agents.{id}.system_prompt"));
            }
            loaded.config.agents.insert(id.clone(), agent);
            loaded.agent_origins.insert(id.clone(), origin);
        }
        // A project's tools and servers run programs it chose: only from a trusted folder.
        let runs_programs = file.kind == FileKind::User || project_trusted;
        for (name, tool) in &layer.tools {
            if runs_programs {
                loaded.config.tools.insert(name.clone(), tool.clone());
            } else {
                loaded.blocked.push(format!("tools.{name}"));
            }
        }
        for (name, server) in &layer.mcp {
            if runs_programs {
                loaded.config.mcp.insert(name.clone(), server.clone());
            } else {
                loaded.blocked.push(format!("mcp.{name}"));
            }
        }
        if let Some(limits) = &layer.limits {
            let merged = &mut loaded.config.limits;
            if let Some(value) = limits.max_turns {
                merged.max_turns = value;
            }
            if let Some(value) = limits.turn_timeout_secs {
                merged.turn_timeout_secs = value;
            }
            if let Some(value) = limits.max_calls_per_message {
                merged.max_calls_per_message = value;
            }
        }
        loaded.sources.push(file.path.clone());
        match file.kind {
            FileKind::User => loaded.user_file = Some(file.path.clone()),
            FileKind::Project => loaded.project_file = Some(file.path.clone()),
        }
    }

    if let Some(file) = default_set_by {
        let id = &loaded.config.default_agent;
        if !loaded.config.agents.contains_key(id) {
            let known: Vec<&str> = loaded.config.agents.keys().map(String::as_str).collect();
            let span = span_of(&file.text, &[Seg::Key("default_agent")], Part::Value);
            let hint = match keys::closest(id, known.iter().copied()) {
                Some(close) => format!(
                    "did you mean `{close}`? Set it to a defined agent ({}), or define \
                     [agents.{id}]",
                    known.join(", ")
                ),
                None => format!(
                    "set it to a defined agent ({}), or define [agents.{id}]",
                    known.join(", ")
                ),
            };
            return Err(ConfigError::Invalid(vec![Diagnostic::at(
                &file.path,
                &file.text,
                span,
                format!("default_agent is `{id}`, but there is no agent `{id}`"),
                hint,
            )]));
        }
    }

    let user_permissions = user
        .as_ref()
        .and_then(|file| file.layer.permissions.clone());
    let project_permissions = project
        .as_ref()
        .and_then(|file| file.layer.permissions.clone());
    loaded.config.permissions = effective_permissions(
        user_permissions.as_ref(),
        project_permissions.as_ref(),
        project_trusted,
    );
    loaded.user_permissions = user_permissions.map(PermissionsLayer::into_config);
    loaded.project_permissions = project_permissions.map(PermissionsLayer::into_config);
    Ok(loaded)
}

fn is_trusted(dir: &Path, trusted: &[PathBuf]) -> bool {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    trusted.iter().any(|entry| {
        let entry = entry.canonicalize().unwrap_or_else(|_| entry.clone());
        dir.starts_with(entry)
    })
}

fn effective_permissions(
    user: Option<&PermissionsLayer>,
    project: Option<&PermissionsLayer>,
    project_trusted: bool,
) -> PermissionsConfig {
    let mut merged = PermissionsConfig::default();
    if let Some(user) = user {
        merged = user.clone().into_config();
    }
    if let Some(project) = project {
        merged.deny.extend(project.deny.iter().cloned());
        merged.ask.extend(project.ask.iter().cloned());
        if project_trusted {
            merged.allow.extend(project.allow.iter().cloned());
            merged.pass_env.extend(project.pass_env.iter().cloned());
            merged.cli_read.extend(project.cli_read.iter().cloned());
            if let Some(network) = project.allow_network {
                merged.allow_network = network;
            }
        } else if project.allow_network == Some(false) {
            merged.allow_network = false;
        }
    }
    for list in [
        &mut merged.allow,
        &mut merged.ask,
        &mut merged.deny,
        &mut merged.pass_env,
        &mut merged.cli_read,
    ] {
        dedup_in_order(list);
    }
    merged
}

fn dedup_in_order(list: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|item| seen.insert(item.clone()));
}

const READ_HINT: &str = "make the file readable UTF-8 text, or move it out of the way";

/// Reads and deserializes one file; `Ok(None)` when it does not exist.
fn read_file(path: &Path, kind: FileKind) -> Result<Option<ParsedFile>, ConfigError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
                hint: READ_HINT,
            });
        }
    };
    let text = String::from_utf8(bytes).map_err(|error| ConfigError::Read {
        path: path.to_path_buf(),
        error: io::Error::new(io::ErrorKind::InvalidData, error),
        hint: READ_HINT,
    })?;
    parse(path, text, kind)
        .map(Some)
        .map_err(|diagnostic| ConfigError::Invalid(vec![diagnostic]))
}

/// Deserializes one file's text, turning a `toml` error into a located diagnostic.
pub(crate) fn parse(path: &Path, text: String, kind: FileKind) -> Result<ParsedFile, Diagnostic> {
    match toml::from_str::<FileLayer>(&text) {
        Ok(layer) => Ok(ParsedFile {
            path: path.to_path_buf(),
            text,
            kind,
            layer,
        }),
        Err(error) => Err(diagnose(path, &text, &error)),
    }
}

fn diagnose(path: &Path, text: &str, error: &toml::de::Error) -> Diagnostic {
    let span = error.span().unwrap_or(0..0);
    let raw = error.message().trim();
    let key = path_at(text, span.start);
    let dotted = key.join(".");
    let (message, hint) = if let Some(rest) = raw.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or_default();
        let allowed = backticked(rest.split_once("expected").map_or("", |(_, e)| e));
        let parent = key
            .split_last()
            .map(|(_, parent)| parent.join("."))
            .unwrap_or_default();
        let place = if parent.is_empty() {
            "at the top level".to_owned()
        } else {
            format!("in `{parent}`")
        };
        let message = format!(
            "unknown key `{field}` {place}; the keys allowed there are: {}",
            allowed.join(", ")
        );
        let hint = match keys::closest(field, allowed.iter().map(String::as_str)) {
            Some(close) => {
                format!("did you mean `{close}`? Every key is described in docs/CONFIG.md")
            }
            None if field == "trusted_projects" => {
                "trusted_projects belongs in the user config file".to_owned()
            }
            None => {
                "remove it or fix its spelling; every key is described in docs/CONFIG.md".to_owned()
            }
        };
        (message, hint)
    } else if let Some(rest) = raw.strip_prefix("unknown variant `") {
        let value = rest.split('`').next().unwrap_or_default();
        let allowed = backticked(rest.split_once("expected").map_or("", |(_, e)| e)).join(", ");
        let message = if key.last().is_some_and(|k| k == "provider") {
            format!("unknown provider `{value}`; valid providers: {allowed}")
        } else {
            format!("unknown value `{value}` for `{dotted}`; expected one of: {allowed}")
        };
        let hint = if key.last().is_some_and(|k| k == "provider") {
            format!(
                "use one of {}; `command` runs any other CLI described by an \
                 [agents.<id>.command] table",
                keys::providers()
            )
        } else {
            keys::hint_for(&key).unwrap_or_else(|| format!("use one of: {allowed}"))
        };
        (message, hint)
    } else if let Some(rest) = raw.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or_default();
        let mut field_path = key.clone();
        field_path.push(field.to_owned());
        let is_agent = key.len() == 2 && key[0] == "agents";
        let message = if is_agent {
            format!("agent `{}` has no `{field}`", key[1])
        } else if dotted.is_empty() {
            format!("missing key `{field}`")
        } else {
            format!("`{dotted}` has no `{field}`")
        };
        let mut hint = match keys::describe(&field_path) {
            Some((expected, example)) => format!("add `{field}`: {expected}, e.g. `{example}`"),
            None => format!("add `{field}`"),
        };
        if is_agent && field == "provider" {
            let id = key[1].as_str();
            if Config::default().agents.contains_key(id) {
                hint = format!(
                    "add `provider = \"{id}\"`: an agent in a file replaces the built-in agent \
                     of the same id entirely, so it needs every required key"
                );
            }
        }
        (message, hint)
    } else if raw.starts_with("invalid type") || raw.starts_with("invalid value") {
        let detail = raw.replacen("invalid type: ", "found ", 1);
        let detail = detail.replacen("invalid value: ", "found ", 1);
        let message = if dotted.is_empty() {
            format!("wrong value: {detail}")
        } else {
            format!("wrong value for `{dotted}`: {detail}")
        };
        let hint = keys::hint_for(&key)
            .unwrap_or_else(|| "see docs/CONFIG.md for what each key expects".to_owned());
        (message, hint)
    } else {
        let message = raw.lines().map(str::trim).filter(|l| !l.is_empty());
        let message = message.collect::<Vec<_>>().join("; ");
        let hint = if is_valid_toml(text) {
            keys::hint_for(&key)
                .unwrap_or_else(|| "see docs/CONFIG.md for what each key expects".to_owned())
        } else {
            "this is not valid TOML; fix the syntax at this place (TOML reference: https://toml.io)"
                .to_owned()
        };
        (message, hint)
    };
    Diagnostic::at(path, text, span, message, hint)
}

fn is_valid_toml(text: &str) -> bool {
    toml::de::DeTable::parse(text).is_ok()
}

/// The names quoted in backticks in a serde "expected one of `a`, `b`" list.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}
