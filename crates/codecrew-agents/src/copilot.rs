//! Copilot CLI (`copilot`): kept for the loop as an ACP agent (`copilot --acp`, see
//! [`super::drive::acp`]); per turn (a job with `keep_alive = false`) `--output-format
//! json`, the prompt on stdin (piped stdin is its non-interactive mode, like `-p`), and
//! `--resume=<id>` to continue a session. Either way a stored session goes on: its ACP
//! agent loads one (`session/load`) whichever mode made it. Secrets are named to it so
//! that it strips them from its shell and redacts them from its output.
//!
//! Kept, Copilot asks its client before each edit, each shell command and each read
//! outside the workspace, and codecrew's policy answers as for the codecrew call each
//! amounts to: an allowed edit runs without `--yes`, one of a protected file is refused.
//! Its reads inside the workspace do not ask and stay inside its wall (without the
//! sensitive files). In `query` its edit and shell tools are not offered and denied
//! outright (a denial it gets from codecrew would end its turn). What its ACP stream
//! needs is in [`Copilot::acp_dialect`].
//!
//! Run per turn, Copilot cannot ask codecrew about its own tools, and its permission
//! flags cannot say what codecrew's policy says (its `write(path)` matches names, not
//! classes like `.env*`), so its own write and shell tools are off in either mode and
//! codecrew's tools do that work; its reading tools stay, inside its wall. `--yes`
//! allows what would ask: in `execute` its write and shell tools then run.

use std::ffi::OsString;

use codecrew_tools::Mode;

use std::path::{Path, PathBuf};

use super::{Cli, LongLived, Preparation, TurnCommand, argv, drive, wall};
use crate::drive::process::CommandSpec;
use crate::identifiers::SessionShape;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Copilot;

impl Cli for Copilot {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Copilot)
    }

    fn program(&self) -> &str {
        "copilot"
    }

    fn install_hint(&self) -> String {
        "npm install -g @github/copilot".to_owned()
    }

    /// `auto` lets Copilot pick the model.
    fn model_aliases(&self) -> &'static [&'static str] {
        &["auto"]
    }

    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&["login"])
    }

    fn session_shape(&self) -> SessionShape {
        SessionShape::Uuid
    }

    /// `~/.copilot` (or `$COPILOT_HOME`) written whole, since Copilot keeps its session
    /// database and locks beside its settings. What makes it run programs later there is
    /// held as it was and put back after each command: its settings (hooks), MCP
    /// servers, plugins, and the folders its config trusts. Its cache, `~/.cache/copilot`,
    /// read only: Copilot runs its JavaScript from the package it unpacks there, so a
    /// program in its wall could otherwise change what `copilot` runs next, outside
    /// codecrew; a missing package is unpacked first ([`Copilot::preparation`]).
    fn state(&self) -> Option<wall::State> {
        let home = wall::dir_from_env("COPILOT_HOME", ".copilot")?;
        let whole = |name: &str| wall::Guarded {
            path: home.join(name),
            hold: wall::Hold::Whole,
        };
        Some(wall::State {
            guarded: vec![
                // Its global instructions, given to every session.
                whole("copilot-instructions.md"),
                whole("settings.json"),
                whole("mcp-config.json"),
                whole("installed-plugins"),
                whole("hooks"),
                whole("agents"),
                whole("skills"),
                // Its loader also runs the newest package it finds here (where its own
                // auto-update may unpack one), over the bundled one.
                whole("pkg"),
                wall::Guarded {
                    path: home.join("config.json"),
                    hold: wall::Hold::Keys(&[&["trustedFolders"], &["trusted_folders"]]),
                },
            ],
            write: vec![home],
            read: package_cache().into_iter().collect(),
            ..wall::State::default()
        })
    }

    /// `copilot --version`, with its cache written, when the package of the installed
    /// version is not unpacked there yet (a new install or an upgrade): Copilot unpacks
    /// it before anything else, and that run takes no prompt.
    fn preparation(&self, program: &Path) -> Option<Preparation> {
        let cache = package_cache()?;
        if unpacked(program, &cache) {
            return None;
        }
        Some(Preparation {
            // Without `--no-auto-update` the loader would run the newest package of any
            // folder it searches, not unpack the bundled one.
            args: vec!["--no-auto-update".to_owned(), "--version".to_owned()],
            write: vec![cache],
        })
    }

    /// Its workspace MCP servers and hooks (it also reads Claude's project hooks),
    /// which it runs in a folder it trusts.
    /// It carries on without them: its wall keeps them out of reach too.
    fn runs_without_project_files(&self) -> bool {
        true
    }

    fn project_files(&self) -> &'static [&'static str] {
        &[
            ".github/copilot",
            ".github/hooks",
            ".github/mcp.json",
            ".mcp.json",
            ".claude",
        ]
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::Acp)
    }

    /// `copilot --acp`. The session's folder is the one ACP's `session/new` names.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut args: Vec<String> = ["--acp", "--no-auto-update"].map(String::from).to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(effort) = command.effort {
            args.push(format!("--reasoning-effort={effort}"));
        }
        match command.turn.mode {
            Mode::Query => args.extend(
                [
                    "--available-tools=view,grep,glob",
                    "--deny-tool=write,shell",
                ]
                .map(String::from),
            ),
            // Its own sub-agents (`task`) and SQL store are left out: what they would do
            // is not asked about as one call.
            Mode::Execute => args.push(format!("--available-tools={}", EXECUTE_TOOLS.join(","))),
        }
        let mut spec = command.spec();
        spec.args = argv(args);
        self.common(command, &mut spec);
        spec
    }

    /// Copilot CLI 1.0.102's ACP agent: loads stored sessions; reports the usage of the
    /// whole process so far with each prompt; writes its notices (`Info: Disabled
    /// tools: …`, `Warning: …`) into the answer's text as chunks of their own, and a
    /// failed model call as `Error: …` text with an ordinary end; and ends its turn when
    /// one of its tool calls is refused.
    fn acp_dialect(&self, _model: Option<&str>) -> drive::acp::Dialect {
        drive::acp::Dialect {
            loads_sessions: true,
            usage_is_running_total: true,
            notices_in_text: true,
            refusal_ends_turn: true,
            model: None,
        }
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        // The prompt goes on stdin, so no prompt size hits the argv limit and none
        // reads as a flag.
        let mut args: Vec<String> = ["--output-format", "json", "--no-auto-update"]
            .map(String::from)
            .to_vec();
        args.extend(["-C".to_owned(), command.cwd.display().to_string()]);
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(effort) = command.effort {
            args.push(format!("--reasoning-effort={effort}"));
        }
        if let Some(session) = turn.session {
            // `=`: --resume takes an optional value.
            args.push(format!("--resume={session}"));
        }
        if turn.mode == Mode::Execute && turn.assume_yes {
            args.push("--allow-tool=write,shell".to_owned());
        } else {
            // Only its reading tools exist for the model.
            args.extend(
                [
                    "--available-tools=view,grep,glob",
                    "--deny-tool=write,shell",
                ]
                .map(String::from),
            );
        }
        // Its trusted folders are the workspace, not the system's temporary folder.
        args.push("--disallow-temp-dir".to_owned());
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        self.common(command, &mut spec);
        spec
    }

    fn failure_hint(&self, said: &str) -> Option<&'static str> {
        said.contains("authenticate").then_some(
            "sign in with `copilot login` (or set COPILOT_GITHUB_TOKEN), or run Copilot \
             offline against a local model with COPILOT_OFFLINE=true and \
             COPILOT_PROVIDER_BASE_URL (see `codecrew query --help`)",
        )
    }
}

/// Where Copilot unpacks its package (`~/.cache/copilot`, as its loader finds it).
fn package_cache() -> Option<PathBuf> {
    wall::custom_dir("COPILOT_PKG_CACHE_HOME")
        .or_else(|| wall::custom_dir("COPILOT_CACHE_HOME"))
        .or_else(|| wall::xdg("XDG_CACHE_HOME", ".cache", "copilot"))
}

/// Whether the package of the Copilot installed as `program` is unpacked in `cache`:
/// its version from the npm package beside the program (`@github/copilot`), the files
/// its loader looks for. False when the version cannot be told (another kind of install).
fn unpacked(program: &Path, cache: &Path) -> bool {
    let Ok(program) = program.canonicalize() else {
        return false;
    };
    let version = program.ancestors().skip(1).take(3).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let package: serde_json::Value = serde_json::from_str(&text).ok()?;
        (package["name"] == "@github/copilot")
            .then(|| package["version"].as_str().map(str::to_owned))?
    });
    let (Some(version), Some(platform)) = (version, platform()) else {
        return false;
    };
    let unpacked = cache.join("pkg").join(platform).join(version);
    ["index.js", "app.js", "cli-main.js"]
        .iter()
        .all(|file| unpacked.join(file).is_file())
}

/// Copilot's name for this machine's platform (`linux-x64`).
fn platform() -> Option<String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        _ => return None,
    };
    Some(format!("{}-{arch}", std::env::consts::OS))
}

impl Copilot {
    /// What every command of Copilot's has: the secrets named, and in a project the user
    /// has not trusted, none of the variables that would trust it.
    fn common(&self, command: &TurnCommand<'_>, spec: &mut CommandSpec) {
        let secrets = secret_names(std::env::vars_os());
        if !secrets.is_empty() {
            spec.args
                .push(format!("--secret-env-vars={}", secrets.join(",")).into());
        }
        if !command.trusted {
            spec.env_remove
                .extend(TRUSTING_VARIABLES.iter().map(OsString::from));
        }
    }
}

/// Copilot's tools a kept `execute` offers: reading, editing, its shell (and the tools
/// that follow a command running on).
const EXECUTE_TOOLS: &[&str] = &[
    "view",
    "grep",
    "glob",
    "edit",
    "create",
    "bash",
    "read_bash",
    "stop_bash",
    "list_bash",
];

/// The secret variables (by codecrew's rule) Copilot should strip from the environment of
/// its own shell and MCP servers and redact from its output.
///
/// Copilot redacts every occurrence of a listed variable's value in everything it prints,
/// its JSON included: a short value such as `1` would corrupt the JSON lines codecrew
/// reads (`"exitCode":1`), so values shorter than a credential are left out.
fn secret_names(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<String> {
    const SHORTEST_SECRET: usize = 8;
    let mut names: Vec<String> = vars
        .filter(|(_, value)| value.len() >= SHORTEST_SECRET)
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| codecrew_policy::secrets::is_secret(name) && !name.contains(','))
        .collect();
    names.sort();
    names
}

/// Variables that make Copilot trust the folder, or load a workspace's MCP servers,
/// hooks or extensions headless: not passed on in a project the user has not trusted.
const TRUSTING_VARIABLES: &[&str] = &[
    "COPILOT_ALLOW_ALL",
    "GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP",
    "GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS",
    "GITHUB_COPILOT_PROMPT_MODE_EXTENSIONS",
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;

    #[test]
    fn the_prompt_goes_on_stdin_and_its_own_tools_are_limited() {
        let cwd = Path::new("/work/space");
        let query =
            provider("copilot").command(Path::new("copilot"), &turn(Some("s1"), Mode::Query), cwd);
        let args = args(&query);
        assert_eq!(
            args[..9],
            [
                "--output-format",
                "json",
                "--no-auto-update",
                "-C",
                "/work/space",
                "--model=haiku",
                "--resume=s1",
                "--available-tools=view,grep,glob",
                "--deny-tool=write,shell",
            ]
        );
        assert!(!args.iter().any(|arg| arg.contains("the prompt")));
        assert_eq!(query.stdin.as_deref(), Some(&b"the prompt"[..]));

        // It cannot ask codecrew: its write and shell tools are off in execute too, but
        // with --yes.
        let mut execute_turn = turn(None, Mode::Execute);
        let execute = provider("copilot").command(Path::new("copilot"), &execute_turn, cwd);
        let args = super::super::testing::args(&execute);
        assert!(
            args.contains(&"--deny-tool=write,shell".to_owned()),
            "{args:?}"
        );
        assert!(args.contains(&"--disallow-temp-dir".to_owned()), "{args:?}");
        assert!(!args.iter().any(|arg| arg.starts_with("--resume")));
        execute_turn.assume_yes = true;
        let approved = provider("copilot").command(Path::new("copilot"), &execute_turn, cwd);
        let args = super::super::testing::args(&approved);
        assert!(
            args.contains(&"--allow-tool=write,shell".to_owned()),
            "{args:?}"
        );
        assert!(
            !args
                .iter()
                .any(|arg| arg.contains("deny-tool") || arg.contains("allow-all"))
        );
    }

    #[test]
    fn kept_its_edits_and_shell_ask_in_execute_and_are_not_offered_in_query() {
        let cwd = Path::new("/work/space");
        let kept = |mode| {
            let spec =
                provider("copilot").resident_command(Path::new("copilot"), &turn(None, mode), cwd);
            super::super::testing::args(&spec)
        };
        let query = kept(Mode::Query);
        assert_eq!(
            query[..5],
            [
                "--acp",
                "--no-auto-update",
                "--model=haiku",
                "--available-tools=view,grep,glob",
                "--deny-tool=write,shell"
            ]
        );
        let execute = kept(Mode::Execute);
        let offered = execute
            .iter()
            .find_map(|arg| arg.strip_prefix("--available-tools="))
            .unwrap();
        assert!(
            offered.contains("edit") && offered.contains("bash"),
            "{offered}"
        );
        assert!(!offered.contains("task"), "its sub-agents are not offered");
        // Nothing is allowed ahead: each edit and command asks codecrew.
        assert!(
            !execute
                .iter()
                .any(|arg| arg.contains("allow") || arg.contains("deny-tool")),
            "{execute:?}"
        );
        let dialect = provider("copilot").acp_dialect(None);
        assert!(dialect.loads_sessions && dialect.refusal_ends_turn);
    }

    #[test]
    fn its_package_is_unpacked_first_when_the_installed_version_is_not() {
        let root = tempfile::tempdir().unwrap();
        let package = root.path().join("node_modules/@github/copilot");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "@github/copilot", "version": "9.8.7"}"#,
        )
        .unwrap();
        let program = package.join("npm-loader.js");
        std::fs::write(&program, "").unwrap();
        let cache = root.path().join("cache");
        assert!(!unpacked(&program, &cache));
        let version = cache.join("pkg").join(platform().unwrap()).join("9.8.7");
        std::fs::create_dir_all(&version).unwrap();
        for file in ["index.js", "app.js"] {
            std::fs::write(version.join(file), "").unwrap();
        }
        assert!(!unpacked(&program, &cache), "cli-main.js is missing");
        std::fs::write(version.join("cli-main.js"), "").unwrap();
        assert!(unpacked(&program, &cache));
        // Another version installed: unpacked again.
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "@github/copilot", "version": "9.9.0"}"#,
        )
        .unwrap();
        assert!(!unpacked(&program, &cache));
        // An install codecrew cannot read the version of: always prepared.
        assert!(!unpacked(Path::new("/bin/sh"), &cache));
    }

    /// The run that unpacks the package writes Copilot's cache: nothing a checkout or a
    /// program in the query wall left may run in it.
    #[test]
    fn the_preparation_runs_the_bundled_package_away_from_the_checkout() {
        let program = Path::new("/opt/copilot/bin/copilot");
        let Some(spec) = provider("copilot").preparation_command(program, Path::new("/work/ws"))
        else {
            return; // no home directory here: no cache to prepare
        };
        // Not the newest package of the folders its loader searches: the bundled one.
        assert_eq!(spec.args, argv(["--no-auto-update", "--version"]));
        // Not the checkout, whose `.tool-versions` a version manager's shim would read.
        assert_eq!(spec.cwd.as_deref(), Some(Path::new("/opt/copilot/bin")));
        assert!(
            spec.env
                .iter()
                .all(|(name, _)| name != "NODE_COMPILE_CACHE"),
            "the query wall's compile cache"
        );
    }

    #[test]
    fn not_signed_in_is_told_both_ways_in() {
        let stderr = "To authenticate, you can use any of the following methods:";
        let hint = provider("copilot").failure_hint(stderr).unwrap();
        assert!(
            hint.contains("copilot login") && hint.contains("COPILOT_OFFLINE"),
            "{hint}"
        );
        assert_eq!(provider("copilot").failure_hint("boom"), None);
        assert_eq!(provider("claude").failure_hint(stderr), None);
    }

    #[test]
    fn only_secrets_long_enough_to_redact_are_named() {
        let vars = [
            ("GITHUB_TOKEN", "ghp_0123456789abcdef"),
            ("COPILOT_PROVIDER_API_KEY", "sk-local-0123456789"),
            ("SOME_AUTH", "1"),
            ("HOME", "/home/someone/for/long/enough"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        assert_eq!(
            secret_names(vars.into_iter()),
            ["COPILOT_PROVIDER_API_KEY", "GITHUB_TOKEN"]
        );
    }
}
