//! Claude Code (`claude`): `-p --output-format stream-json --verbose`, the prompt on
//! stdin; `--resume <id>` continues a session; kept for the loop with
//! `--input-format stream-json`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use codecrew_tools::Mode;

use super::{Cli, LongLived, TurnCommand, argv, wall};
use crate::drive::process::CommandSpec;
use crate::identifiers::SessionShape;
use codecrew_config::{CliKind, ProviderKind};

mod projects;

use projects::{main_repository, named_project, project_name};

/// Variables that make a CLI believe it runs inside another CLI session (set when
/// codecrew itself is run from Claude Code); they break headless runs.
const CLAUDE_MARKERS: [&str; 4] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SSE_PORT",
    "CLAUDE_CODE_SESSION_ID",
];

#[derive(Debug)]
pub struct Claude;

impl Cli for Claude {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cli(CliKind::Claude)
    }

    fn program(&self) -> &str {
        "claude"
    }

    fn install_hint(&self) -> String {
        "npm install -g @anthropic-ai/claude-code".to_owned()
    }

    /// Claude Code's aliases for its current models.
    fn model_aliases(&self) -> &'static [&'static str] {
        &["sonnet", "opus", "haiku"]
    }

    /// Its `auth login` (the `/login` of its interactive session).
    fn sign_in(&self) -> Option<&'static [&'static str]> {
        Some(&["auth", "login"])
    }

    fn session_shape(&self) -> SessionShape {
        SessionShape::Uuid
    }

    /// `--append-system-prompt`: the tools section is part of Claude Code's own system
    /// prompt, said once for the session rather than in each task's message.
    fn takes_system_prompt(&self) -> bool {
        true
    }

    fn failure_hint(&self, said: &str) -> Option<&'static str> {
        // Its own words send a user of `claude -p` to its interactive `/login`.
        said.contains("Not logged in").then_some(
            "sign in by running `claude` once in a terminal (its /login), or set \
             ANTHROPIC_API_KEY",
        )
    }

    /// `~/.claude` (or `$CLAUDE_CONFIG_DIR`) read only: its settings, hooks, skills,
    /// agents, commands, plugins and `CLAUDE.md`. Written: its transcripts and session
    /// records, backups, shell snapshots, to-dos and plans; its sign-in and `.claude.json`
    /// in place (beside the folder, or in it with `$CLAUDE_CONFIG_DIR`), whose MCP
    /// servers and per-project trust are put back after each command, as are its
    /// sessions' environment scripts and the shell snapshots there were before.
    fn state(&self) -> Option<wall::State> {
        let dir = config_dir()?;
        let global = match wall::custom_dir("CLAUDE_CONFIG_DIR") {
            Some(dir) => dir.join(".claude.json"),
            None => wall::home()?.join(".claude.json"),
        };
        Some(wall::State {
            write: WRITTEN.iter().map(|name| dir.join(name)).collect(),
            files: vec![dir.join(".credentials.json"), global.clone()],
            read: vec![dir.clone()],
            guarded: vec![
                wall::Guarded {
                    path: global,
                    hold: wall::Hold::Keys(GUARDED),
                },
                // A session's environment scripts, which Claude pastes before every
                // command of its shell when that session is resumed, outside codecrew
                // too (`<session>/sessionstart-hook-0.sh` …).
                wall::Guarded {
                    path: dir.join("session-env"),
                    hold: wall::Hold::Whole,
                },
                // The shell snapshots of its sessions, each of which sources its own
                // (`snapshot-<shell>-<time>-<random>.sh`) before every command: those of
                // the sessions outside codecrew held; the one this run makes is its own.
                wall::Guarded {
                    path: dir.join("shell-snapshots"),
                    hold: wall::Hold::Existing,
                },
            ],
            made: Vec::new(),
        })
    }

    /// Its folder under `projects/` for the workspace and for the repository it is in
    /// (transcripts, tool results, auto-memory; a linked worktree's memory is its main
    /// repository's), written; not the rest of `projects/`:
    /// each project's `memory/MEMORY.md` is given to every new session there as the
    /// user's own words, so a program in its wall that could write another project's
    /// would instruct Claude later, outside codecrew. Made (0700) when missing, so that
    /// the wall can grant it. The auto-memory of these two (`<project>/memory/`) is held
    /// as it was: what Claude itself remembers during the run is put back too.
    fn state_for(&self, cwd: &Path) -> wall::State {
        let Some(config) = config_dir() else {
            return wall::State::default();
        };
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        let repository = super::repository_root(&cwd);
        let main = repository.and_then(main_repository);
        let mut names: Vec<String> = std::iter::once(cwd.as_path())
            .chain(repository)
            .chain(main.as_deref())
            .map(project_name)
            .chain(named_project())
            .collect();
        names.dedup();
        let projects = config.join("projects");
        wall::State {
            write: names.iter().map(|name| projects.join(name)).collect(),
            guarded: names
                .iter()
                .map(|name| wall::Guarded {
                    path: projects.join(name).join("memory"),
                    hold: wall::Hold::Whole,
                })
                .collect(),
            ..wall::State::default()
        }
    }

    /// Kept, every call of its own asks codecrew first (its `PreToolUse` hook).
    fn judges_own_reads(&self) -> bool {
        true
    }

    /// It carries on without them: its wall keeps them out of reach too.
    fn runs_without_project_files(&self) -> bool {
        true
    }

    fn project_files(&self) -> &'static [&'static str] {
        PROJECT_FILES
    }

    fn turn_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        self.command(command, false)
    }

    fn long_lived(&self) -> Option<LongLived> {
        Some(LongLived::StreamJsonInput)
    }

    /// The turn's command, reading its user messages from stdin as stream-json, and
    /// asking codecrew before each of its own tool calls (see [`super::drive::claude_control`]).
    fn kept_command(&self, command: &TurnCommand<'_>) -> CommandSpec {
        self.command(command, true)
    }
}

impl Claude {
    /// Per turn, Claude cannot ask codecrew, so it loses every tool no one would judge:
    /// its reads, searches, writes, shell and web fetches are not offered (the model
    /// reaches for codecrew's, which the policy decides, deny rules included). Kept,
    /// every call of its own asks codecrew first through a `PreToolUse` hook on the
    /// control pipe (`--permission-prompt-tool stdio` for the questions Claude adds
    /// itself), in its default permission mode; only its writes are not offered in
    /// `query`.
    fn command(&self, command: &TurnCommand<'_>, kept: bool) -> CommandSpec {
        let turn = command.turn;
        let mut args: Vec<String> = vec!["-p".to_owned()];
        if kept {
            args.extend(
                [
                    "--input-format",
                    "stream-json",
                    "--permission-prompt-tool",
                    "stdio",
                ]
                .map(String::from),
            );
        }
        args.extend(["--output-format", "stream-json", "--verbose"].map(String::from));
        if let Some(model) = command.model {
            args.push(format!("--model={model}"));
        }
        if let Some(effort) = command.effort {
            args.push(format!("--effort={effort}"));
        }
        if let Some(session) = turn.session {
            args.push(format!("--resume={session}"));
        }
        let disallowed = match (turn.mode, kept) {
            (_, false) => Some(UNJUDGED_PER_TURN),
            // Not even offered in query: the model reaches for codecrew's tools.
            (Mode::Query, true) => Some("Edit,Write,NotebookEdit"),
            (Mode::Execute, true) => None,
        };
        if let Some(disallowed) = disallowed {
            args.extend(["--disallowedTools".to_owned(), disallowed.to_owned()]);
        }
        let mut system: Vec<String> = turn.system.map(str::to_owned).into_iter().collect();
        if !command.trusted {
            args.extend(["--setting-sources".to_owned(), "user".to_owned()]);
            system.extend(project_instructions(command.cwd));
        }
        if !system.is_empty() {
            args.extend([
                "--append-system-prompt".to_owned(),
                fit_in_one_argument(system.join("\n\n")),
            ]);
        }
        args.extend(command.extra.iter().cloned());
        let mut spec = command.spec();
        spec.args = argv(args);
        if !kept {
            spec.stdin = Some(turn.prompt.as_bytes().to_vec());
        }
        spec.env_remove = CLAUDE_MARKERS.iter().map(OsString::from).collect();
        spec
    }
}

/// Claude's own tools that act on files, commands or the web: per turn nothing would
/// judge them (the hook is registered on the kept process's control pipe).
const UNJUDGED_PER_TURN: &str =
    "Bash,Edit,MultiEdit,Write,NotebookEdit,Read,NotebookRead,Grep,Glob,LS,WebFetch,WebSearch";

/// Claude's own folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_dir() -> Option<PathBuf> {
    wall::custom_dir("CLAUDE_CONFIG_DIR").or_else(|| wall::home().map(|home| home.join(".claude")))
}

/// The folders of `~/.claude` Claude writes during a run (found with strace on the
/// real CLI): nothing in them makes it run a program later (`session-env/` and
/// `shell-snapshots/`, which do, are held). Of `projects/`, only the workspace's own
/// folders ([`Claude::state_for`]).
const WRITTEN: &[&str] = &[
    "sessions",
    "backups",
    "session-env",
    "shell-snapshots",
    "todos",
    "plans",
    "file-history",
    "paste-cache",
    "statsig",
    "debug",
];

/// The keys of `.claude.json` that start programs or lift Claude's own checks: MCP
/// servers (user and local scope), which of a project's `.mcp.json` servers run, the
/// tools a project allowed, and whether its folder is trusted (which loads its hooks in
/// an interactive Claude).
const GUARDED: &[&[&str]] = &[
    &["mcpServers"],
    &["projects", "*", "mcpServers"],
    &["projects", "*", "enabledMcpjsonServers"],
    &["projects", "*", "enableAllProjectMcpServers"],
    &["projects", "*", "allowedTools"],
    &["projects", "*", "hasTrustDialogAccepted"],
];

/// The checkout's own configuration for Claude: its settings (hooks, `env`, helper
/// programs, permission rules), skills, agents and commands in `.claude/`, and its MCP
/// servers.
const PROJECT_FILES: &[&str] = &[".claude", ".mcp.json"];

/// The instruction files Claude loads from the project, read by codecrew when Claude
/// may not load the project itself.
const INSTRUCTIONS: &[&str] = &["CLAUDE.md", ".claude/CLAUDE.md"];

/// The most of one instruction file passed on.
const MAX_INSTRUCTIONS: u64 = 64 * 1024;

/// Claude in a project the user has not trusted gets only the user's own settings
/// (`--setting-sources user`: no project or local settings, so none of their hooks,
/// `env`, helper programs or permission rules, no `.mcp.json` server, no project skill,
/// agent or command). That also drops the project's `CLAUDE.md`, which is only text
/// for the model: codecrew reads it and appends it to the system prompt instead.
///
/// The files are opened as codecrew's `read_file` opens them: beneath the workspace, no
/// link, regular, no other hard link, so a `CLAUDE.md` that leads to `~/.ssh/id_rsa`
/// puts nothing in the prompt.
fn project_instructions(cwd: &Path) -> Option<String> {
    let root = cwd.canonicalize().ok();
    let beneath = root
        .as_deref()
        .and_then(|root| codecrew_tools::beneath::Beneath::open(root).ok());
    let instructions: Vec<String> = INSTRUCTIONS
        .iter()
        .filter_map(|name| {
            use std::io::Read;
            let file = beneath
                .as_ref()?
                .open_read(&root.as_ref()?.join(name))
                .ok()?;
            let mut text = String::new();
            file.take(MAX_INSTRUCTIONS).read_to_string(&mut text).ok()?;
            (!text.trim().is_empty())
                .then(|| format!("Contents of {name} (project instructions):\n\n{text}"))
        })
        .collect();
    (!instructions.is_empty()).then(|| instructions.join("\n\n"))
}

/// The longest single argument Linux passes to a program (`MAX_ARG_STRLEN`, 32 pages),
/// less a margin.
const MAX_ARGUMENT: usize = 128 * 1024 - 1024;

/// `text` cut to [`MAX_ARGUMENT`] bytes at a character's boundary: the tools section
/// (bounded by the caller) comes first, a project's instructions after it are what is
/// cut, rather than Claude failing to start.
fn fit_in_one_argument(mut text: String) -> String {
    if text.len() > MAX_ARGUMENT {
        let mut end = MAX_ARGUMENT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testing::*;
    use super::*;
    use crate::Turn;

    #[test]
    fn not_signed_in_says_how_to_sign_in() {
        let hint = Claude.failure_hint("Not logged in · Please run /login\n");
        assert!(hint.is_some_and(|hint| hint.contains("ANTHROPIC_API_KEY")));
        assert_eq!(Claude.failure_hint("the CLI exited with code 1"), None);
    }

    #[test]
    fn project_folders_are_named_as_claude_names_them() {
        assert_eq!(project_name(Path::new("/work/main")), "-work-main");
        assert_eq!(project_name(Path::new("/home/a b/x.y")), "-home-a-b-x-y");
        // One `-` per UTF-16 unit: two for a character beyond the BMP.
        assert_eq!(project_name(Path::new("/w/é😀x")), "-w----x");
        // Past 200, cut and followed by the path's hash (Claude's own, run in node).
        let long = format!("/home/u/{}/é😀x", "a".repeat(210));
        let name = project_name(Path::new(&long));
        assert_eq!(name.len(), 200 + 1 + 6);
        assert!(name.starts_with("-home-u-aaa"));
        assert!(name.ends_with("a-77tzmo"), "{name}");
    }

    #[test]
    fn only_the_workspaces_project_folders_are_written_and_their_memory_held() {
        let home = tempfile::tempdir().unwrap();
        let workspace = home.path().join("repo/sub");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(home.path().join("repo/.git")).unwrap();
        let workspace = workspace.canonicalize().unwrap();
        let config = wall::custom_dir("CLAUDE_CONFIG_DIR")
            .or_else(|| wall::home().map(|home| home.join(".claude")))
            .unwrap();
        let state = Claude.state_for(&workspace);
        let projects = config.join("projects");
        let own = projects.join(project_name(&workspace));
        let repository = projects.join(project_name(workspace.parent().unwrap()));
        assert_eq!(state.write[..2], [own.clone(), repository.clone()]);
        assert!(
            Claude
                .state()
                .unwrap()
                .write
                .iter()
                .all(|dir| !dir.starts_with(&projects)),
            "all of projects/ is written"
        );
        let held: Vec<_> = state.guarded.iter().map(|held| held.path.clone()).collect();
        assert_eq!(held[..2], [own.join("memory"), repository.join("memory")]);

        // A linked worktree: its main repository's folder too, where its memory is.
        let main = home.path().join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        std::fs::write(main.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        let worktree = home.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        // Git's name for it, back in the main repository.
        std::fs::write(
            main.join(".git/worktrees/wt/gitdir"),
            format!("{}\n", worktree.join(".git").display()),
        )
        .unwrap();
        let main = main.canonicalize().unwrap();
        let worktree = worktree.canonicalize().unwrap();
        assert_eq!(main_repository(&worktree), Some(main.clone()));
        // A checkout whose `.git` names that repository's worktree is not it: no write
        // to the other repository's folder.
        let impostor = home.path().join("impostor");
        std::fs::create_dir_all(&impostor).unwrap();
        std::fs::copy(worktree.join(".git"), impostor.join(".git")).unwrap();
        assert_eq!(main_repository(&impostor.canonicalize().unwrap()), None);
        assert_eq!(
            Claude.state_for(&worktree).write[..2],
            [
                projects.join(project_name(&worktree)),
                projects.join(project_name(&main))
            ]
        );
    }

    #[test]
    fn a_turn_resumes_its_session_and_keeps_claudes_writes_out_of_query() {
        let spec = provider("claude").command(
            Path::new("claude"),
            &turn(Some("s1"), Mode::Query),
            Path::new("."),
        );
        assert_eq!(
            args(&spec),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model=haiku",
                "--resume=s1",
                "--disallowedTools",
                UNJUDGED_PER_TURN,
                "--setting-sources",
                "user"
            ]
        );
        assert_eq!(spec.stdin.as_deref(), Some(&b"the prompt"[..]));
        assert!(spec.env_remove.contains(&OsString::from("CLAUDECODE")));
    }

    #[test]
    fn the_kept_process_reads_stream_json_and_asks_codecrew_before_its_own_tools() {
        let spec = provider("claude").resident_command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        let args = args(&spec);
        assert_eq!(
            args[..5],
            [
                "-p",
                "--input-format",
                "stream-json",
                "--permission-prompt-tool",
                "stdio"
            ]
        );
        assert!(
            !args
                .iter()
                .any(|a| a == "acceptEdits" || a == "--disallowedTools")
        );
        assert!(spec.stdin.is_none());
    }

    #[test]
    fn per_turn_claude_loses_every_tool_no_one_would_judge() {
        let spec = provider("claude").command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            Path::new("."),
        );
        let args = args(&spec);
        let at = args.iter().position(|a| a == "--disallowedTools").unwrap();
        for tool in ["Bash", "Read", "Write", "Edit", "Grep", "Glob", "WebFetch"] {
            assert!(args[at + 1].split(',').any(|t| t == tool), "{tool}");
        }
        assert!(!args.iter().any(|a| a == "acceptEdits"));
    }

    #[test]
    fn in_an_untrusted_project_claude_loads_only_the_users_settings_and_the_instructions() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("CLAUDE.md"), "Use tabs.").unwrap();
        // A link to a file outside never reaches the prompt.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        std::fs::create_dir(workspace.path().join(".claude")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("id_rsa"),
            workspace.path().join(".claude/CLAUDE.md"),
        )
        .unwrap();
        let untrusted = provider("claude").resident_command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            workspace.path(),
        );
        let args = args(&untrusted);
        let at = args.iter().position(|a| a == "--setting-sources").unwrap();
        assert_eq!(args[at + 1], "user");
        let at = args
            .iter()
            .position(|a| a == "--append-system-prompt")
            .unwrap();
        assert!(args[at + 1].contains("CLAUDE.md") && args[at + 1].contains("Use tabs."));
        assert!(!args[at + 1].contains("PRIVATE KEY"));

        let trusted = provider("claude").trusting_project(true).resident_command(
            Path::new("claude"),
            &turn(None, Mode::Execute),
            workspace.path(),
        );
        let args = super::super::testing::args(&trusted);
        assert!(
            !args
                .iter()
                .any(|a| a == "--setting-sources" || a == "--append-system-prompt")
        );
    }

    /// codecrew's tools section is Claude's system prompt, kept or per turn, with an
    /// untrusted project's instructions after it in the same (single) flag; the message
    /// on stdin is the task alone.
    #[test]
    fn the_tools_section_is_appended_to_claudes_system_prompt() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("CLAUDE.md"), "Use tabs.").unwrap();
        let with_system = |mut turn: Turn<'static>| {
            turn.system = Some("# Tools from codecrew");
            turn
        };
        let claude = provider("claude");
        let kept = claude.resident_command(
            Path::new("claude"),
            &with_system(turn(None, Mode::Query)),
            workspace.path(),
        );
        let per_turn = claude.command(
            Path::new("claude"),
            &with_system(turn(
                Some("4a0d1c0e-0000-4000-8000-000000000001"),
                Mode::Query,
            )),
            workspace.path(),
        );
        for spec in [&kept, &per_turn] {
            let args = args(spec);
            let flags: Vec<usize> = args
                .iter()
                .enumerate()
                .filter(|(_, a)| *a == "--append-system-prompt")
                .map(|(at, _)| at)
                .collect();
            assert_eq!(flags.len(), 1, "{args:?}");
            let system = &args[flags[0] + 1];
            assert!(system.starts_with("# Tools from codecrew\n\n"), "{system}");
            assert!(system.contains("Use tabs."), "{system}");
        }
        assert_eq!(per_turn.stdin.as_deref(), Some(b"the prompt".as_slice()));

        let trusted = claude.trusting_project(true).resident_command(
            Path::new("claude"),
            &with_system(turn(None, Mode::Query)),
            workspace.path(),
        );
        let args = args(&trusted);
        let at = args
            .iter()
            .position(|a| a == "--append-system-prompt")
            .unwrap();
        assert_eq!(args[at + 1], "# Tools from codecrew");
    }

    #[test]
    fn a_system_prompt_too_long_for_one_argument_is_cut_at_a_character() {
        let long = "é".repeat(MAX_ARGUMENT);
        let cut = fit_in_one_argument(long);
        assert!(cut.len() <= MAX_ARGUMENT && cut.len() >= MAX_ARGUMENT - 1);
        assert_eq!(fit_in_one_argument("short".to_owned()), "short");
    }
}
