//! The test world: a scratch machine for one test, in which `codecrew` runs.
//!
//! A [`World`] is a home, a workspace, a user config (agents, trust, whatever the test
//! adds), a project config, scripted agents ([`AgentScript`]), programs of the test's own
//! on `PATH`, and the environment every run of `codecrew` gets. It is built once, then
//! runs `codecrew` as many times as the test needs:
//!
//! ```ignore
//! let world = World::new()
//!     .agent("echo", AgentScript::new().turn(Turn::on_task("TASK-TOOL", call).times(1)))
//!     .trusted();
//! let output = world.run(&["query", "--raw", "@echo TASK-TOOL go"]);
//! ```
//!
//! [`World::with_real_clis`] is the same world with the real CLIs on `PATH`, each pointed
//! at a [`FakeModel`] with the test's [`Script`] (see [`RealClis`]).
//!
//! Its layout, under one scratch folder: `home/` (`HOME` and the XDG folders), `work/`
//! (the workspace, codecrew's working directory), `agents/<name>/` (each scripted agent
//! and what it kept), `bin/` (the test's programs) and `user.toml`.

use std::ffi::OsString;
use std::ops::Deref;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::agent_script::AgentScript;
use super::binary::{BIN, assert_exit, isolation, output_with_stdin, text};
use super::clis::{CliEnv, CliRun, Clis, TestHome, run};
use super::fake_model::{FakeModel, Script};

/// How long a run of [`World::codecrew`] may take before it is killed and the test fails.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// A scratch machine for one test. See the module docs.
pub struct World {
    /// The scratch folder: `home/`, `work/` and the rest.
    pub home: TestHome,
    /// What every run of `codecrew` gets: variables set and removed, its working directory.
    pub env: CliEnv,
    /// The user config's own text (beside the agents and the trust the world adds).
    user_config: String,
    /// The scripted agents' declarations, in the user config.
    agents: String,
    trusted: bool,
    /// Whether `codecrew` gets nothing of the caller's environment.
    alone: bool,
}

impl Default for World {
    fn default() -> World {
        World::new()
    }
}

impl World {
    /// An empty world in the system's temporary folder: no agent, no config, nothing of
    /// the developer's (see [`super::binary::codecrew`]), the inherited `PATH`.
    pub fn new() -> World {
        World::in_folder(TestHome::scratch())
    }

    /// An empty world as [`World::new`], under cargo's scratch folder for tests instead of
    /// the system's temporary folder: for a test about what a command may write outside
    /// the workspace, which the OS sandbox lets every command write in `/tmp`.
    pub fn outside_tmp() -> World {
        World::in_folder(TestHome::outside_tmp("world"))
    }

    fn in_folder(home: TestHome) -> World {
        let (set, removed) = isolation(&home.home());
        let mut env = CliEnv {
            workdir: Some(home.workdir()),
            ..CliEnv::default()
        }
        .without(&removed);
        for (name, value) in set {
            env = env.with(name, value);
        }
        World::of(home, env)
    }

    /// A world of `home` whose runs get `env`: no config, no agent, nothing trusted.
    fn of(home: TestHome, env: CliEnv) -> World {
        World {
            home,
            env,
            user_config: String::new(),
            agents: String::new(),
            trusted: false,
            alone: false,
        }
    }

    /// This world with the seven real CLIs on `PATH`, each set up against a fake model
    /// server answering `script`; `None` (the test returns early) when they are not
    /// installed, outside CI. Its folder is under cargo's scratch folder for tests, where
    /// Codex does not warn about its helpers.
    pub fn with_real_clis(test: &str, script: Script) -> Option<RealClis> {
        let clis = Clis::require(test)?;
        let home = TestHome::new(test);
        let server = FakeModel::start(script);
        // An empty CODECREW_CONFIG: no user config file, whatever the developer has.
        let env = clis
            .env_for_all(&home, &server.url())
            .with("CODECREW_CONFIG", "");
        let world = World::of(home, env);
        Some(RealClis { world, server })
    }

    /// The home directory (`HOME`).
    pub fn home_dir(&self) -> PathBuf {
        self.home.home()
    }

    /// The workspace: codecrew's working directory.
    pub fn workspace(&self) -> PathBuf {
        self.home.workdir()
    }

    /// A path under the scratch folder.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.home.root().join(relative)
    }

    /// codecrew's state folder (`$XDG_STATE_HOME/codecrew`), where its run store is.
    pub fn state_dir(&self) -> PathBuf {
        self.home.home().join(".local/state/codecrew")
    }

    /// Adds `text` to the user config (after the trust, before the agents: a top-level
    /// key belongs here).
    pub fn user_config(mut self, text: &str) -> World {
        self.user_config.push_str(text);
        self.write_user_config();
        self
    }

    /// Writes `text` as the workspace's project config, `codecrew.toml`.
    pub fn project_config(self, text: &str) -> World {
        std::fs::write(self.workspace().join("codecrew.toml"), text).unwrap();
        self
    }

    /// The user config trusts the workspace (`trusted_projects`).
    pub fn trusted(mut self) -> World {
        self.trusted = true;
        self.write_user_config();
        self
    }

    /// Declares `@name`, a `command` agent answering as `script` says.
    pub fn agent(self, name: &str, script: AgentScript) -> World {
        self.agent_with(name, script, "")
    }

    /// [`World::agent`], with `extra` (TOML keys of `[agents.<name>]`) in its declaration.
    pub fn agent_with(self, name: &str, script: AgentScript, extra: &str) -> World {
        self.shell_agent(name, &script.to_shell(), extra)
    }

    /// Declares `@name`, a `command` agent run as `sh <file>` with `shell` in the file:
    /// for what a script of turns cannot say (its prompt inspected, its own files).
    pub fn shell_agent(mut self, name: &str, shell: &str, extra: &str) -> World {
        let dir = self.agent_dir(name);
        std::fs::create_dir_all(dir.join("prompts")).unwrap();
        let file = dir.join("agent.sh");
        std::fs::write(&file, shell).unwrap();
        self.agents.push_str(&format!(
            "[agents.{name}]\nprovider = \"command\"\ncommand = {{ argv = [\"sh\", {:?}] }}\n{extra}",
            file.display().to_string()
        ));
        self.write_user_config();
        self
    }

    /// The folder of the scripted agent `@name`: its script and what it kept.
    pub fn agent_dir(&self, name: &str) -> PathBuf {
        self.path("agents").join(name)
    }

    /// The prompts `@name` was sent, oldest first.
    pub fn prompts(&self, name: &str) -> Vec<String> {
        self.prompts_of(&[name])
    }

    /// The prompts the scripted agents `names` were sent, oldest first (their files are
    /// named by the time they came).
    pub fn prompts_of(&self, names: &[&str]) -> Vec<String> {
        let mut files: Vec<PathBuf> = names
            .iter()
            .flat_map(|name| std::fs::read_dir(self.agent_dir(name).join("prompts")).unwrap())
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        files
            .iter()
            .map(|file| std::fs::read_to_string(file).unwrap())
            .collect()
    }

    /// Puts the executable `name` with `script` in the world's `bin/`, which comes first
    /// on `PATH`: a fake CLI (a `claude` printing Claude's stream-json on cue), or any
    /// program a test wants found.
    pub fn program(mut self, name: &str, script: &str) -> World {
        let bin = self.path("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let file = bin.join(name);
        std::fs::write(&file, script).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        let rest = match self.env.get("PATH") {
            Some(path) => path.to_owned(),
            None if self.alone => OsString::from("/usr/bin:/bin"),
            None => std::env::var_os("PATH").unwrap_or_default(),
        };
        let mut dirs = vec![bin.clone()];
        dirs.extend(std::env::split_paths(&rest).filter(|dir| *dir != bin));
        self.env = self.env.with("PATH", std::env::join_paths(dirs).unwrap());
        self
    }

    /// A world whose `claude` is `script` (a shell script printing Claude's stream-json
    /// as the test needs it: what no real CLI can be made to do on cue, such as hold its
    /// exit or ignore SIGTERM), with nothing of the caller's environment and `NO_COLOR`.
    pub fn with_claude(script: &str) -> World {
        World::new()
            .alone()
            .program("claude", script)
            .env("NO_COLOR", "1")
    }

    /// The path of the program `name` put in the world's `bin/`, which names its process.
    pub fn program_path(&self, name: &str) -> PathBuf {
        self.path("bin").join(name)
    }

    /// Whether a process whose command line names the world's program `name` is running.
    pub fn program_runs(&self, name: &str) -> bool {
        running(&self.program_path(name))
    }

    /// Nothing of the caller's environment reaches `codecrew`: `PATH` is the world's
    /// `bin/`, `/usr/bin` and `/bin`. For a run compared byte for byte, or one that must
    /// find no program of the developer's.
    pub fn alone(mut self) -> World {
        self.alone = true;
        let bin = self.path("bin");
        self.env = self
            .env
            .with("PATH", format!("{}:/usr/bin:/bin", bin.display()));
        self
    }

    /// `codecrew` starts in the home instead of the workspace, as it does for a user who
    /// has not gone into a project.
    pub fn started_in_the_home(mut self) -> World {
        self.env.workdir = Some(self.home_dir());
        self
    }

    /// Sets a variable for every run of `codecrew`.
    pub fn env(mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) -> World {
        self.env = self.env.with(name, value);
        self
    }

    /// `codecrew ARGS` in the world, its output piped, not yet started.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_with(&self.env, args)
    }

    /// [`World::command`] with `env` instead of the world's.
    pub fn command_with(&self, env: &CliEnv, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        if self.alone {
            command.env_clear();
        }
        env.apply(&mut command);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Runs `codecrew ARGS` to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs `codecrew ARGS` with `stdin` piped in.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        output_with_stdin(&mut self.command(args), stdin)
    }

    /// Runs `codecrew ARGS`, which must exit 0 and print one JSON document: the document.
    #[track_caller]
    pub fn run_json(&self, args: &[&str]) -> Value {
        let output = self.run(args);
        assert_exit(&output, 0);
        serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", text(&output.stdout)))
    }

    /// Runs `codecrew ARGS` in a process group of its own, killed with all it started
    /// after [`RUN_TIMEOUT`] (the test then fails): for runs that start real CLIs.
    pub fn codecrew(&self, args: &[&str]) -> CliRun {
        self.codecrew_with(&self.env, args)
    }

    /// [`World::codecrew`] with `env` instead of the world's.
    pub fn codecrew_with(&self, env: &CliEnv, args: &[&str]) -> CliRun {
        run(&mut self.command_with(env, args), RUN_TIMEOUT)
    }

    /// `codecrew <mode> --output json <args>` as [`World::codecrew`] runs it, and its
    /// document.
    pub fn json(&self, mode: &str, args: &[&str]) -> (CliRun, Value) {
        let mut all = vec![mode, "--output", "json"];
        all.extend_from_slice(args);
        let run = self.codecrew(&all);
        let document = serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e})\n--- stdout\n{}\n--- stderr\n{}",
                run.stdout, run.stderr
            )
        });
        (run, document)
    }

    /// The world's environment with a user config that trusts the workspace (and nothing
    /// else): for one run trusted in an untrusted world.
    pub fn trusting(&self) -> CliEnv {
        let config = self.path("trusting.toml");
        std::fs::write(&config, trust_line(&self.workspace())).unwrap();
        self.env.clone().with("CODECREW_CONFIG", config)
    }

    /// Writes `user.toml` from the trust, the test's text and the agents, and points
    /// `CODECREW_CONFIG` at it.
    fn write_user_config(&mut self) {
        let file = self.path("user.toml");
        let trust = if self.trusted {
            trust_line(&self.workspace())
        } else {
            String::new()
        };
        std::fs::write(
            &file,
            format!("{trust}{}\n{}", self.user_config, self.agents),
        )
        .unwrap();
        self.env = self.env.clone().with("CODECREW_CONFIG", file);
    }
}

/// Whether a process whose command line names `program` is running.
pub fn running(program: &Path) -> bool {
    let needle = program.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline.windows(needle.len()).any(|w| w == needle))
    })
}

fn trust_line(workspace: &Path) -> String {
    format!(
        "trusted_projects = [{:?}]\n",
        workspace.display().to_string()
    )
}

/// A [`World`] whose CLIs are the real ones, and the fake model server they talk to.
pub struct RealClis {
    world: World,
    pub server: FakeModel,
}

impl Deref for RealClis {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

impl std::ops::DerefMut for RealClis {
    fn deref_mut(&mut self) -> &mut World {
        &mut self.world
    }
}
