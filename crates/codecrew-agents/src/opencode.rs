//! opencode (`opencode`): kept for the loop as an ACP agent (`opencode acp`, see
//! [`super::drive::acp`]), which takes its model over the protocol (`session/set_model`)
//! and continues a stored session with `session/load`, whichever mode made it; per turn
//! (`keep_alive = false`) `run --format json`, the prompt on stdin, `-s <id>` to continue
//! a session.
//!
//! Kept, opencode asks its client before each edit, shell command and web fetch, and
//! codecrew's policy answers as for the codecrew call each amounts to ([`permission`]'s
//! `ask`); what it asks with too little to judge stays a pattern: its reads may not open
//! the sensitive files, and it never leaves the workspace. A refusal ends its turn; the
//! ACP client tells the model why and it goes on ([`Opencode::acp_dialect`]).
//!
//! Run per turn, opencode cannot ask codecrew about its own tools, so codecrew tells it
//! beforehand, in `OPENCODE_PERMISSION` (merged over every config file it reads), what
//! codecrew's policy would: its reads may not open the sensitive files, its edits in
//! `execute` may not touch the protected ones (both as patterns: [`permission`]), and
//! in `query` nothing of its own edits; its shell and web fetches are off and it never
//! leaves the workspace. `--yes` allows what would ask: its edits, reads and shell then
//! run (still inside its wall, never outside the workspace). `--title` (kept: its title
//! agent turned off) spares the extra model request opencode otherwise makes to title
//! each new session.
//!
//! opencode makes and migrates its SQLite database (`~/.local/share/opencode/opencode.db`)
//! when a process first opens it, and two doing so at once collide: one stops before it
//! answers, "database is locked" or a failed `CREATE TABLE` on its stderr. Its first start
//! goes alone, and a start that failed so is made again ([`drive::start`]).
//!
//! In a project the user has not trusted, opencode starts with
//! `OPENCODE_DISABLE_PROJECT_CONFIG` (no `opencode.json`, no `.opencode/` plugins,
//! tools, agents or commands, nothing installed into the checkout), and its wall does
//! not let it read them: opencode 1.18 imports a checkout's plugins even with that
//! variable set. The project's `AGENTS.md` is passed back as an instruction file.

use codecrew_policy::home::HomeInWorkspace;
use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv, drive, wall};
use crate::drive::process::CommandSpec;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Opencode;

impl Cli for Opencode {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Opencode)
    }

    fn program(&self) -> &str {
        "opencode"
    }

    fn install_hint(&self) -> String {
        "npm install -g opencode-ai".to_owned()
    }

    /// Signs in to one of its providers, which it asks for.
    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&["auth", "login"])
    }

    /// Its XDG folders: `~/.local/share/opencode` (sign-in, sessions, logs, snapshots)
    /// and `~/.local/state/opencode` written; `~/.config/opencode` written too (opencode
    /// stops when it cannot write its `.gitignore` there, and installs its plugins'
    /// packages there), with what makes it run programs later held as it was and put
    /// back after each command: its settings, plugins, tools, agents and commands, and
    /// the packages installed for its plugins (`node_modules`; by their stamps when too large to copy).
    /// `~/.cache/opencode` (the helper programs it downloads) read only.
    fn state(&self) -> Option<wall::State> {
        let dir = |(variable, default): (&str, &str)| wall::xdg(variable, default, "opencode");
        let config = dir(("XDG_CONFIG_HOME", ".config"))?;
        let cache = dir(("XDG_CACHE_HOME", ".cache"))?;
        Some(wall::State {
            guarded: HELD
                .iter()
                .map(|name| wall::Guarded {
                    path: config.join(name),
                    hold: wall::Hold::Whole,
                })
                .collect(),
            made: vec![cache.join("bin")],
            read: vec![cache],
            write: [
                ("XDG_DATA_HOME", ".local/share"),
                ("XDG_STATE_HOME", ".local/state"),
            ]
            .into_iter()
            .filter_map(dir)
            .chain([config])
            .collect(),
            ..wall::State::default()
        })
    }

    fn project_files(&self) -> &'static [&'static str] {
        &[".opencode", "opencode.json", "opencode.jsonc"]
    }

    fn shares_start_up(&self) -> bool {
        true
    }

    fn collided_at_start(&self, stderr: &str) -> bool {
        collided(stderr)
    }

    /// opencode 1.18 imports a checkout's plugins whatever it is told
    /// (`OPENCODE_DISABLE_PROJECT_CONFIG` leaves out the rest), and stops at a
    /// configuration it cannot read, so its wall cannot keep them out either: in a
    /// project the user has not trusted that ships one, opencode does not start.
    fn refuses(&self, cwd: &std::path::Path, trusted: bool) -> Option<String> {
        if trusted {
            return None;
        }
        let plugins = shipped_plugins(cwd);
        (!plugins.is_empty()).then(|| {
            format!(
                "this checkout ships opencode plugins ({}), which opencode runs even when \
                 codecrew tells it to leave the project's configuration out; trust the \
                 project (trusted_projects in your user config) or remove them",
                plugins.join(", ")
            )
        })
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["run", "--format", "json", "--title", "codecrew"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            // opencode names a model `provider/model`.
            args.push(format!("--model={model}"));
        }
        if let Some(session) = turn.session {
            args.push(format!("--session={session}"));
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        with_environment(
            &mut spec,
            command,
            permission(
                turn.mode,
                turn.assume_yes,
                &HomeInWorkspace::of(command.cwd),
            ),
            false,
        );
        // opencode reads a piped stdin as the message.
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `opencode acp`: its model comes over the protocol ([`Opencode::acp_dialect`]), its
    /// own tools ask ([`kept_permission`]).
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut spec = command.spec();
        spec.args = argv(["acp"]);
        let home = HomeInWorkspace::of(command.cwd);
        with_environment(
            &mut spec,
            command,
            kept_permission(command.turn.mode, &home),
            true,
        );
        spec
    }

    /// opencode 1.18's ACP agent takes no model on its command line (`session/set_model`
    /// instead), loads stored sessions (its own per-turn runs' too), and ends its turn at
    /// a refused tool call.
    fn acp_dialect(&self, model: Option<&str>) -> drive::acp::Dialect {
        drive::acp::Dialect {
            model: model.map(str::to_owned),
            loads_sessions: true,
            refusal_ends_turn: true,
            ..drive::acp::Dialect::default()
        }
    }
}

/// Whether opencode's `stderr` shows its database set up by another process at the same
/// moment: SQLite busy ("database is locked", opencode 1.18 setting the journal mode
/// before its busy timeout), or a statement of its schema failing (the other process
/// made the table first: opencode prints the failed query, not SQLite's reason).
fn collided(stderr: &str) -> bool {
    if stderr.contains("database is locked") || stderr.contains("SQLITE_BUSY") {
        return true;
    }
    stderr
        .split_once("Failed query:")
        .is_some_and(|(_, query)| query.trim_start().starts_with("CREATE "))
}

/// What every opencode command is told by environment: `permission` for its own tools,
/// and, in a project the user has not trusted, to leave the project's configuration out;
/// the inline config ([`inline_config`], `untitled` for a kept agent).
fn with_environment(
    spec: &mut CommandSpec,
    command: &TurnCommand<'_>,
    permission: String,
    untitled: bool,
) {
    spec.env
        .push(("OPENCODE_PERMISSION".into(), permission.into()));
    if !command.trusted {
        spec.env
            .push(("OPENCODE_DISABLE_PROJECT_CONFIG".into(), "1".into()));
    }
    if let Some(config) = inline_config(command.cwd, command.trusted, untitled) {
        spec.env
            .push(("OPENCODE_CONFIG_CONTENT".into(), config.into()));
    }
}

/// What of `~/.config/opencode` makes opencode run programs later, or tells every session
/// what to do ([`Opencode::state`]).
const HELD: &[&str] = &[
    // Its global instructions, given to every session.
    "AGENTS.md",
    "opencode.json",
    "opencode.jsonc",
    "config.json",
    "package.json",
    "plugin",
    "plugins",
    "tool",
    "tools",
    "agent",
    "agents",
    "command",
    "commands",
    "mode",
    "modes",
    "skill",
    "skills",
    // The terminal interface's own configuration, whose `plugin` list it loads.
    "tui.json",
    "tui.jsonc",
    // The packages its plugins import, installed there (by npm, or by the user with
    // bun), and what says which: code it loads at every start. Large, they are held by
    // their stamps; what changes there is removed.
    "node_modules",
    "package-lock.json",
    "bun.lock",
    "bun.lockb",
];

/// The plugins opencode would import from `cwd` and the folders above it up to the
/// repository's root: files in `.opencode/plugin(s)/`, and a `plugin` or `plugins` list
/// in an `opencode.json(c)` there or in `.opencode/`.
fn shipped_plugins(cwd: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    for dir in cwd.ancestors() {
        for folder in [".opencode/plugin", ".opencode/plugins"] {
            if let Ok(entries) = std::fs::read_dir(dir.join(folder)) {
                found.extend(
                    entries
                        .flatten()
                        .map(|entry| entry.path().display().to_string()),
                );
            }
        }
        for config in [
            "opencode.json",
            "opencode.jsonc",
            ".opencode/opencode.json",
            ".opencode/opencode.jsonc",
        ] {
            let path = dir.join(config);
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            // JSON with comments: a key is looked for as text, which errs on the side
            // of refusing.
            if text.contains("\"plugin\"") || text.contains("\"plugins\"") {
                found.push(path.display().to_string());
            }
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    found
}

/// The inline config (`OPENCODE_CONFIG_CONTENT`, the user's own if set) with what
/// codecrew adds: in a project the user has not trusted, its `AGENTS.md` among the
/// instruction files (opencode does not load it from a project whose configuration it
/// leaves out); kept (`untitled`), its title agent off, which would otherwise ask the
/// model for a title on each new session. None when nothing is added or the user's
/// inline config is not a JSON object (left as it is).
fn inline_config(cwd: &std::path::Path, trusted: bool, untitled: bool) -> Option<String> {
    let agents = cwd
        .canonicalize()
        .ok()
        .map(|cwd| cwd.join("AGENTS.md"))
        .filter(|agents| !trusted && agents.is_file());
    if agents.is_none() && !untitled {
        return None;
    }
    let mut config = match std::env::var("OPENCODE_CONFIG_CONTENT") {
        Ok(text) => serde_json::from_str::<serde_json::Value>(&text).ok()?,
        Err(_) => serde_json::json!({}),
    };
    let object = config.as_object_mut()?;
    if let Some(agents) = agents {
        let instructions = object
            .entry("instructions")
            .or_insert_with(|| serde_json::json!([]));
        instructions
            .as_array_mut()?
            .push(agents.display().to_string().into());
    }
    if untitled {
        let agent = object
            .entry("agent")
            .or_insert_with(|| serde_json::json!({}));
        agent
            .as_object_mut()?
            .insert("title".to_owned(), serde_json::json!({"disable": true}));
    }
    Some(config.to_string())
}

/// The `OPENCODE_PERMISSION` of opencode kept for the loop in `mode`: its edits, shell
/// commands and web fetches ask in `execute` (codecrew's policy answers, `--yes`
/// included), and are off in `query`, where a refusal from codecrew would only end its
/// turn. Its reads keep their patterns (it asks about a read without naming the file),
/// and a folder outside the workspace stays out. `home` is the workspace's.
fn kept_permission(mode: Mode, home: &HomeInWorkspace) -> String {
    let read = except(codecrew_policy::paths::sensitive_globs(home));
    let own = match mode {
        Mode::Query => "deny",
        Mode::Execute => "ask",
    };
    format!(
        "{{\"read\":{read},\"edit\":\"{own}\",\"bash\":\"{own}\",\"webfetch\":\"{own}\",\
         \"external_directory\":\"deny\"}}"
    )
}

/// A permission that allows everything but `globs`. opencode matches a pattern against
/// the path relative to its worktree, and the last pattern that matches decides, so `*`
/// comes first and the exceptions after it (written out in order, not through a map
/// that might sort them).
fn except(globs: Vec<String>) -> String {
    let denied: Vec<String> = globs
        .iter()
        .map(|glob| format!("{}:\"deny\"", serde_json::Value::from(glob.as_str())))
        .collect();
    format!("{{\"*\":\"allow\",{}}}", denied.join(","))
}

/// The `OPENCODE_PERMISSION` of opencode run per turn in `mode`, `yes` being `--yes`, in
/// the workspace whose `home` it is.
fn permission(mode: Mode, yes: bool, home: &HomeInWorkspace) -> String {
    let approved = yes && mode == Mode::Execute;
    let read = if approved {
        "\"allow\"".to_owned()
    } else {
        except(codecrew_policy::paths::sensitive_globs(home))
    };
    let edit = match mode {
        Mode::Query => "\"deny\"".to_owned(),
        Mode::Execute if approved => "\"allow\"".to_owned(),
        Mode::Execute => except(codecrew_policy::paths::protected_globs(home)),
    };
    let others = if approved { "allow" } else { "deny" };
    format!(
        "{{\"read\":{read},\"edit\":{edit},\"bash\":\"{others}\",\"webfetch\":\"{others}\",\
         \"external_directory\":\"deny\"}}"
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn a_turn_continues_its_session_with_the_prompt_on_stdin() {
        let spec = provider("opencode").command(
            Path::new("opencode"),
            &turn(Some("ses_1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "run",
                "--format",
                "json",
                "--title",
                "codecrew",
                "--model=haiku",
                "--session=ses_1"
            ]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
    }

    #[test]
    fn kept_it_takes_its_model_over_acp_and_asks_before_its_own_tools_in_execute() {
        let kept = |mode| {
            provider("opencode").resident_command(
                Path::new("opencode"),
                &turn(None, mode),
                Path::new("."),
            )
        };
        let execute = kept(Mode::Execute);
        assert_eq!(args(&execute), ["acp"]);
        assert_eq!(
            provider("opencode")
                .acp_dialect(Some("anthropic/x"))
                .model
                .as_deref(),
            Some("anthropic/x")
        );
        let permission: serde_json::Value =
            serde_json::from_str(env(&execute, "OPENCODE_PERMISSION").unwrap()).unwrap();
        for own in ["edit", "bash", "webfetch"] {
            assert_eq!(permission[own], "ask", "{own}");
        }
        // What it asks about without naming the file stays a pattern.
        assert_eq!(permission["read"][".env"], "deny");
        assert_eq!(permission["external_directory"], "deny");
        let query = kept(Mode::Query);
        let permission: serde_json::Value =
            serde_json::from_str(env(&query, "OPENCODE_PERMISSION").unwrap()).unwrap();
        assert_eq!(permission["edit"], "deny");
        assert_eq!(permission["bash"], "deny");
        // No extra model request to title the session.
        let config: serde_json::Value =
            serde_json::from_str(env(&query, "OPENCODE_CONFIG_CONTENT").unwrap()).unwrap();
        assert_eq!(config["agent"]["title"]["disable"], true);
    }

    fn permission_of(mode: Mode, yes: bool) -> serde_json::Value {
        let mut turn = turn(None, mode);
        turn.assume_yes = yes;
        let spec = provider("opencode").command(Path::new("opencode"), &turn, Path::new("."));
        serde_json::from_str(env(&spec, "OPENCODE_PERMISSION").unwrap()).unwrap()
    }

    #[test]
    fn a_start_that_collided_on_its_database_is_recognised() {
        // Both as opencode 1.18 printed them, four processes starting on a fresh folder.
        let locked = "\u{1b}[91m\u{1b}[1mError: \u{1b}[0mUnexpected error\n\ndatabase is locked\n";
        let made_first = "\u{1b}[91m\u{1b}[1mError: \u{1b}[0mUnexpected error\n\nFailed query: \n        \
             CREATE TABLE `workspace` (\n          `id` text PRIMARY KEY,\n        );\n      \nparams: \n";
        for stderr in [locked, made_first, "SqliteError: SQLITE_BUSY"] {
            assert!(Opencode.collided_at_start(stderr), "{stderr}");
        }
        assert!(Opencode.shares_start_up());
        for stderr in [
            "",
            "Error: Unexpected error\n\nFailed query: \n  INSERT INTO `session` (`id`) VALUES (?)",
            "AI_APICallError: Cannot connect to API",
            "Error: Model not found: anthropic/x",
        ] {
            assert!(!Opencode.collided_at_start(stderr), "{stderr}");
        }
        // The other CLIs start as they always have.
        assert!(!provider("gemini").shares_start_up());
        assert!(!provider("gemini").collided_at_start(locked));
    }

    #[test]
    fn every_way_a_checkout_ships_a_plugin_keeps_opencode_from_starting_untrusted() {
        let shipped = |files: &[(&str, &str)]| {
            let repository = tempfile::tempdir().unwrap();
            std::fs::create_dir(repository.path().join(".git")).unwrap();
            let workspace = repository.path().join("packages/app");
            std::fs::create_dir_all(&workspace).unwrap();
            for (file, text) in files {
                let path = repository.path().join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            let refused = Opencode.refuses(&workspace, false);
            assert!(Opencode.refuses(&workspace, true).is_none(), "trusted");
            refused
        };
        for attack in [
            &[("packages/app/.opencode/plugin/a.js", "")][..],
            &[("packages/app/.opencode/plugins/a.ts", "")],
            // In a folder above the workspace, up to the repository's root.
            &[(".opencode/plugins/a.ts", "")],
            &[("opencode.jsonc", "{ // x\n \"plugin\": [\"evil-pkg\"] }")],
            &[(
                "packages/app/.opencode/opencode.json",
                r#"{"plugins": ["x"]}"#,
            )],
        ] {
            assert!(shipped(attack).is_some(), "{attack:?}");
        }
        // An MCP server alone is left out by OPENCODE_DISABLE_PROJECT_CONFIG instead.
        assert!(shipped(&[("opencode.json", r#"{"mcp": {}}"#)]).is_none());
    }

    #[test]
    fn its_own_tools_follow_codecrews_classes_and_run_a_shell_only_under_yes() {
        let query = permission_of(Mode::Query, true);
        assert_eq!(query["edit"], "deny", "--yes changes nothing in query");
        assert_eq!(query["bash"], "deny");
        assert_eq!(query["read"]["*"], "allow");
        assert_eq!(query["read"][".env"], "deny");
        let execute = permission_of(Mode::Execute, false);
        assert_eq!(execute["bash"], "deny");
        assert_eq!(execute["edit"]["AGENTS.md"], "deny");
        assert_eq!(execute["edit"]["*/.github/workflows/*"], "deny");
        assert_eq!(execute["external_directory"], "deny");
        // `*` first: the last matching pattern decides.
        let text = env(
            &provider("opencode").command(
                Path::new("opencode"),
                &turn(None, Mode::Execute),
                Path::new("."),
            ),
            "OPENCODE_PERMISSION",
        )
        .unwrap()
        .to_owned();
        assert!(text.contains(r#""edit":{"*":"allow","#), "{text}");
        let approved = permission_of(Mode::Execute, true);
        assert_eq!(approved["edit"], "allow");
        assert_eq!(approved["bash"], "allow");
        assert_eq!(approved["external_directory"], "deny");
    }
}
