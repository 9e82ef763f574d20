//! Codex (`codex`): `exec --json`, the prompt on stdin (`-`); `exec … resume <id>`
//! continues a thread; kept for the loop as `codex app-server` (see
//! [`super::drive::app_server`]), where codecrew decides each of its own commands and patches.
//! Run per turn it cannot ask, so its own shell is off and its sandbox read-only (its
//! patches are refused) in either mode: codecrew's tools do that work.

use std::path::{Path, PathBuf};

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::drive::process::CommandSpec;
use crate::identifiers::SessionShape;
use codecrew_config::{CliKind, ProviderKind};

#[derive(Debug)]
pub struct Codex;

impl Cli for Codex {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Codex)
    }

    fn program(&self) -> &str {
        "codex"
    }

    fn install_hint(&self) -> String {
        "npm install -g @openai/codex".to_owned()
    }

    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&["login"])
    }

    fn session_shape(&self) -> SessionShape {
        SessionShape::Uuid
    }

    /// `~/.codex` (or `$CODEX_HOME`): written whole, since Codex opens its databases
    /// (and their journals) beside its settings. What makes it run programs later there
    /// — `config.toml` (MCP servers, hooks, `notify`, project trust), `hooks.json`,
    /// `rules/`, `skills/` (but the bundled ones Codex writes itself), `plugins/` and its
    /// `AGENTS.md` — is held as it was and put back after each command.
    fn state(&self) -> Option<wall::State> {
        let home = wall::dir_from_env("CODEX_HOME", ".codex")?;
        Some(wall::State {
            guarded: HELD
                .iter()
                .map(|name| wall::Guarded {
                    path: home.join(name),
                    hold: wall::Hold::Whole,
                })
                .chain([wall::Guarded {
                    path: home.join("skills"),
                    // Codex writes its bundled skills there itself, at every start.
                    hold: wall::Hold::WholeBut(&[".system"]),
                }])
                .collect(),
            write: vec![home],
            ..wall::State::default()
        })
    }

    fn project_files(&self) -> &'static [&'static str] {
        &[".codex"]
    }

    /// Kept (`codex app-server`, `approvalPolicy: untrusted`), every command it runs asks
    /// codecrew first, and it reads the workspace through its commands.
    fn judges_own_reads(&self) -> bool {
        true
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check"]
            .map(String::from)
            .to_vec();
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        args.extend(reasoning_effort(command.effort));
        args.extend(["--sandbox", "read-only", "--disable", "shell_tool"].map(String::from));
        args.extend(project_trust(command.cwd, command.trusted));
        args.extend(command.extra.iter().cloned());
        // Exec options come before `resume`; `-` reads the prompt from stdin. The id
        // comes after `--`: `resume` takes it as a positional argument, which codex's
        // parser would otherwise read as one of its flags if it looked like one.
        if let Some(session) = turn.session {
            args.extend(["resume".to_owned(), "--".to_owned(), session.to_owned()]);
        }
        args.push("-".to_owned());
        let mut spec = command.spec();
        spec.args = argv(args);
        spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        spec
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::AppServer)
    }

    /// Codex's `outputSchema` (its `--output-schema`) takes the strict form only
    /// ([`crate::strict_schema`]); a schema with none is refused before Codex starts.
    fn native_schema(
        &self,
        schema: &serde_json::Value,
    ) -> Result<Option<serde_json::Value>, String> {
        crate::strict_schema::rewrite(schema).map(Some)
    }

    /// `codex app-server`: the thread's model, sandbox and session go in its requests.
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        let mut spec = command.spec();
        // Without this, a model server that refuses connections makes Codex retry
        // forever instead of failing the turn.
        let mut args = vec![
            "app-server".to_owned(),
            "--disable".to_owned(),
            "unbounded_connection_retries".to_owned(),
        ];
        args.extend(reasoning_effort(command.effort));
        args.extend(project_trust(command.cwd, command.trusted));
        spec.args = argv(args);
        spec
    }

    /// Codex's `turn.completed` counts the whole thread, earlier resumed runs included.
    fn reports_session_usage(&self) -> bool {
        true
    }
}

/// `-c model_reasoning_effort="high"`: Codex's effort is a setting of its config, set
/// for this run on its command line (the level is one the config check let through).
fn reasoning_effort(effort: Option<&str>) -> Vec<String> {
    effort
        .map(|level| vec!["-c".to_owned(), format!("model_reasoning_effort={level:?}")])
        .unwrap_or_default()
}

/// What of `~/.codex` makes Codex run programs later (see [`Codex::state`]).
/// (`.env`: Codex loads variables from it at every start.)
const HELD: &[&str] = &[
    "config.toml",
    ".env",
    "hooks.json",
    "AGENTS.md",
    "rules",
    "plugins",
];

/// `-c projects={…}`: the workspace, and the repository it lies in (Codex keys a
/// project by its repository's root), trusted or untrusted as the user trusts the
/// project in codecrew. An inline table: Codex ignores the dotted form
/// (`projects."<path>".trust_level`) on its command line.
fn project_trust(cwd: &Path, trusted: bool) -> [String; 2] {
    let level = if trusted { "trusted" } else { "untrusted" };
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut roots = vec![cwd.clone()];
    if let Some(repository) = super::repository_root(&cwd)
        && repository != cwd
    {
        roots.push(repository.to_path_buf());
    }
    let entries: Vec<String> = roots
        .iter()
        .map(|root: &PathBuf| {
            let key = toml::Value::String(root.display().to_string());
            format!("{key}={{trust_level=\"{level}\"}}")
        })
        .collect();
    [
        "-c".to_owned(),
        format!("projects={{{}}}", entries.join(",")),
    ]
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use codecrew_tools::Mode;

    use super::super::testing::*;

    #[test]
    fn exec_options_come_before_resume() {
        // A folder in no repository: the trust names it alone.
        let folder = tempfile::tempdir().unwrap();
        let cwd = folder.path().canonicalize().unwrap();
        let trust = format!(
            "projects={{{}={{trust_level=\"untrusted\"}}}}",
            toml::Value::String(cwd.display().to_string())
        );
        let spec =
            provider("codex").command(Path::new("codex"), &turn(Some("t1"), Mode::Execute), &cwd);
        assert_eq!(
            args(&spec),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--model=haiku",
                "--sandbox",
                "read-only",
                "--disable",
                "shell_tool",
                "-c",
                &trust,
                "resume",
                "--",
                "t1",
                "-"
            ]
        );
    }

    #[test]
    fn codex_is_told_whether_the_project_and_its_repository_are_trusted() {
        let repository = tempfile::tempdir().unwrap();
        let root = repository.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let kept = provider("codex").resident_command(
            Path::new("codex"),
            &turn(None, Mode::Query),
            &root.join("sub"),
        );
        let args = args(&kept);
        let at = args.iter().position(|a| a == "-c").unwrap();
        let value: toml::Table = toml::from_str(&args[at + 1]).unwrap();
        let projects = value["projects"].as_table().unwrap();
        for dir in [root.join("sub"), root.clone()] {
            assert_eq!(
                projects[&dir.display().to_string()]["trust_level"].as_str(),
                Some("untrusted")
            );
        }
        let trusted = provider("codex").trusting_project(true).command(
            Path::new("codex"),
            &turn(None, Mode::Query),
            &root,
        );
        assert!(
            super::super::testing::args(&trusted)
                .iter()
                .any(|a| a.contains("trust_level=\"trusted\""))
        );
    }
}
