//! Running the real `claude`, `gemini`, `codex` and `copilot` CLIs against a [`FakeModel`].
//!
//! * [`Clis::require`] finds the CLIs that `.ci/install-clis` put in
//!   `<CARGO_MANIFEST_DIR>/.clis/node_modules/.bin` (or in `$CODECREW_TEST_CLIS`). When they are
//!   missing it panics under CI (env `CI` set), and otherwise returns `None` after printing a
//!   note, so the test can return early (it is then reported as passed).
//! * [`TestHome::new`] makes a scratch folder under `CARGO_TARGET_TMPDIR` (not the system temp
//!   dir, where Codex warns about its helper binaries) with a `home/` and an empty `work/` cwd.
//!   Reuse one `TestHome` for every turn of a session: the CLIs keep their sessions there.
//! * [`claude_env`], [`gemini_env`], [`codex_env`] and [`copilot_env`] write what each CLI needs into the HOME and
//!   return a [`CliEnv`]: the variables to set and the inherited ones to remove. [`CliEnv::apply`]
//!   puts them on a child `Command`; tests never change their own environment.
//!   [`Clis::env_for`] / [`Clis::env_for_all`] add a `PATH` that starts with the CLIs' bin
//!   dir and `node`'s dir, so codecrew (which finds the CLIs on `PATH`) finds these.
//! * [`run`] runs a command with stdin null, a timeout, and its own process group.
//!
//! [`FakeModel`]: super::fake_model::FakeModel

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Env var naming another CLI install: a bin dir holding `claude`, `gemini`, `codex` and
/// `copilot`, or an npm prefix whose `node_modules/.bin` holds them.
pub const CLIS_ENV: &str = "CODECREW_TEST_CLIS";

/// The dummy API key handed to every CLI.
pub const FAKE_API_KEY: &str = "fake-key-0123456789ab";

/// The timeout the CLI tests use for one run.
pub const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// One of the seven real CLIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cli {
    Claude,
    Gemini,
    Codex,
    Copilot,
    Opencode,
    Qwen,
    Llm,
}

impl Cli {
    pub const ALL: [Cli; 7] = [
        Cli::Claude,
        Cli::Gemini,
        Cli::Codex,
        Cli::Copilot,
        Cli::Opencode,
        Cli::Qwen,
        Cli::Llm,
    ];

    /// The executable's name (as codecrew looks it up on PATH).
    pub fn bin_name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Gemini => "gemini",
            Cli::Codex => "codex",
            Cli::Copilot => "copilot",
            Cli::Opencode => "opencode",
            Cli::Qwen => "qwen",
            Cli::Llm => "llm",
        }
    }

    /// The exit code of a run that got an API error from the server.
    pub fn api_error_exit_code(self) -> i32 {
        match self {
            Cli::Claude | Cli::Codex | Cli::Copilot | Cli::Opencode | Cli::Qwen | Cli::Llm => 1,
            Cli::Gemini => 144,
        }
    }
}

/// The located CLI install: the npm CLIs' bin dir, and the virtualenv's for llm.
#[derive(Clone, Debug)]
pub struct Clis {
    bin_dir: PathBuf,
    python_bin_dir: PathBuf,
}

/// Whether this is CI, where every test that needs an installed program must run.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

impl Clis {
    /// The install at `$CODECREW_TEST_CLIS` or `<CARGO_MANIFEST_DIR>/.clis`, if all four CLIs
    /// are there; otherwise the reason they are not.
    pub fn locate() -> Result<Clis, String> {
        let root = match std::env::var_os(CLIS_ENV) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".clis"),
        };
        let nested = root.join("node_modules").join(".bin");
        let python = root.join("venv").join("bin");
        let bin_dir = if nested.is_dir() { nested } else { root };
        let python_bin_dir = if python.is_dir() {
            python
        } else {
            bin_dir.clone()
        };
        let clis = Clis {
            bin_dir,
            python_bin_dir,
        };
        let missing: Vec<&str> = Cli::ALL
            .into_iter()
            .filter(|cli| !clis.path(*cli).is_file())
            .map(Cli::bin_name)
            .collect();
        if missing.is_empty() {
            Ok(clis)
        } else {
            Err(format!(
                "the real CLIs ({}) are not installed in {} (run .ci/install-clis, or set {CLIS_ENV})",
                missing.join(", "),
                clis.bin_dir.display()
            ))
        }
    }

    /// [`Clis::locate`], for a test: panics under CI (env `CI`), else prints a skip note and
    /// returns `None`. Use as `let Some(clis) = Clis::require("test name") else { return };`.
    pub fn require(test: &str) -> Option<Clis> {
        match Clis::locate() {
            Ok(clis) => Some(clis),
            Err(why) if ci() => panic!("{test}: {why}; CI must run the real-CLI tests"),
            Err(why) => {
                eprintln!("note: skipping {test}: {why}");
                None
            }
        }
    }

    pub fn bin_dir(&self) -> &Path {
        &self.bin_dir
    }

    pub fn path(&self, cli: Cli) -> PathBuf {
        match cli {
            Cli::Llm => self.python_bin_dir.join(cli.bin_name()),
            _ => self.bin_dir.join(cli.bin_name()),
        }
    }

    /// `PATH` with the CLIs' bin dirs first, then `node`'s dir, then the inherited `PATH`.
    pub fn path_var(&self) -> OsString {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin_dir.clone()];
        if self.python_bin_dir != self.bin_dir {
            dirs.push(self.python_bin_dir.clone());
        }
        if let Some(node_dir) = std::env::split_paths(&inherited)
            .find(|dir| dir.join("node").is_file())
            .filter(|dir| *dir != self.bin_dir)
        {
            dirs.push(node_dir);
        }
        dirs.extend(std::env::split_paths(&inherited));
        std::env::join_paths(dirs).unwrap()
    }

    /// Writes `script` as the executable `dir/name`, in front of the real program of that
    /// name: the PATH that finds it first, then [`Clis::path_var`].
    pub fn path_with_wrapper(&self, dir: &Path, name: &str, script: &str) -> OsString {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir).unwrap();
        let wrapper = dir.join(name);
        std::fs::write(&wrapper, script).unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut path = OsString::from(dir);
        path.push(":");
        path.push(self.path_var());
        path
    }

    /// The environment for one CLI against `server_url`, with [`Clis::path_var`] as PATH.
    pub fn env_for(&self, cli: Cli, home: &TestHome, server_url: &str) -> CliEnv {
        let env = match cli {
            Cli::Claude => claude_env(home, server_url),
            Cli::Gemini => gemini_env(home, server_url),
            Cli::Codex => codex_env(home, server_url),
            Cli::Copilot => copilot_env(home, server_url),
            Cli::Opencode => opencode_env(home, server_url),
            Cli::Qwen => qwen_env(home, server_url),
            Cli::Llm => llm_env(home, server_url),
        };
        env.with("PATH", self.path_var())
    }

    /// The environment for all seven CLIs at once (for running codecrew).
    pub fn env_for_all(&self, home: &TestHome, server_url: &str) -> CliEnv {
        claude_env(home, server_url)
            .merge(gemini_env(home, server_url))
            .merge(codex_env(home, server_url))
            .merge(copilot_env(home, server_url))
            .merge(opencode_env(home, server_url))
            .merge(qwen_env(home, server_url))
            .merge(llm_env(home, server_url))
            .with("PATH", self.path_var())
    }

    /// A command for `cli` with `env` applied, cwd the home's work dir and stdin null.
    pub fn command(&self, cli: Cli, env: &CliEnv) -> Command {
        let mut command = Command::new(self.path(cli));
        env.apply(&mut command);
        command.stdin(Stdio::null());
        command
    }
}

/// A scratch folder for one test (or one chain of resumed turns): `home/` and `work/`.
/// Removed when dropped, unless env `CODECREW_KEEP_TEST_HOMES` is set.
pub struct TestHome {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl TestHome {
    pub fn new(label: &str) -> TestHome {
        TestHome::new_in(
            label,
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-homes"),
        )
    }

    /// As [`TestHome::new`], never under `/tmp`, which the OS sandbox lets every command
    /// write: under cargo's scratch folder, or `/var/tmp` when the checkout itself lies in
    /// `/tmp`.
    pub fn outside_tmp(label: &str) -> TestHome {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
        if target.starts_with("/tmp") {
            TestHome::new_in(label, Path::new("/var/tmp/codecrew-test-homes"))
        } else {
            TestHome::new_in(label, &target.join("cli-homes"))
        }
    }

    fn new_in(label: &str, parent: &Path) -> TestHome {
        let parent = parent.to_path_buf();
        std::fs::create_dir_all(&parent).unwrap();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{label}-"))
            .tempdir_in(&parent)
            .unwrap();
        // As the kernel resolves it: what codecrew reports of it is compared with it.
        let path = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(path.join("home")).unwrap();
        std::fs::create_dir_all(path.join("work")).unwrap();
        let keep = std::env::var_os("CODECREW_KEEP_TEST_HOMES").is_some();
        TestHome {
            dir: if keep {
                let _ = dir.keep();
                None
            } else {
                Some(dir)
            },
            path,
        }
    }

    /// The same layout in the system's temporary folder, for a test that starts no real
    /// CLI (and whose workspace must not lie inside this repository's checkout).
    pub fn scratch() -> TestHome {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        std::fs::create_dir_all(path.join("home")).unwrap();
        std::fs::create_dir_all(path.join("work")).unwrap();
        TestHome {
            dir: Some(dir),
            path,
        }
    }

    /// The HOME handed to the CLIs.
    pub fn home(&self) -> PathBuf {
        self.path.join("home")
    }

    /// An empty working directory for the CLIs.
    pub fn workdir(&self) -> PathBuf {
        self.path.join("work")
    }

    pub fn root(&self) -> &Path {
        &self.path
    }
}

impl Drop for TestHome {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

/// Environment changes for a child process: variables to set, inherited ones to remove, and
/// the working directory.
#[derive(Clone, Debug, Default)]
pub struct CliEnv {
    pub set: BTreeMap<OsString, OsString>,
    pub remove: Vec<OsString>,
    pub workdir: Option<PathBuf>,
}

/// Inherited variables removed for every CLI: proxies (the fake is on loopback) and XDG dirs
/// (so that everything lands in the test HOME).
const COMMON_REMOVE: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
];

impl CliEnv {
    fn base(home: &TestHome) -> CliEnv {
        CliEnv {
            workdir: Some(home.workdir()),
            ..CliEnv::default()
        }
        .with("HOME", home.home())
        .with("NO_COLOR", "1")
        .with("NO_PROXY", "127.0.0.1,localhost")
        .with("no_proxy", "127.0.0.1,localhost")
        .without(COMMON_REMOVE)
    }

    /// The same, with a user config (written into `home`) that runs every CLI of the
    /// seven per turn (`keep_alive = false`).
    pub fn per_turn(&self, home: &TestHome) -> CliEnv {
        let config = home.root().join("per-turn.toml");
        let agents: String = Cli::ALL
            .iter()
            .map(|cli| {
                let name = cli.bin_name();
                format!("[agents.{name}]\nprovider = \"{name}\"\nkeep_alive = false\n")
            })
            .collect();
        std::fs::write(&config, agents).unwrap();
        self.clone().with("CODECREW_CONFIG", &config)
    }

    /// Sets a variable (and stops removing it).
    pub fn with(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> CliEnv {
        let key = key.as_ref().to_os_string();
        self.remove.retain(|k| *k != key);
        self.set.insert(key, value.as_ref().to_os_string());
        self
    }

    /// Removes inherited variables (unless this env sets them).
    pub fn without(mut self, keys: &[&str]) -> CliEnv {
        for key in keys {
            let key = OsString::from(key);
            if !self.set.contains_key(&key) && !self.remove.contains(&key) {
                self.remove.push(key);
            }
        }
        self
    }

    /// Both sets of changes (`other` wins on conflicts).
    pub fn merge(mut self, other: CliEnv) -> CliEnv {
        for key in other.remove {
            if !self.set.contains_key(&key) && !self.remove.contains(&key) {
                self.remove.push(key);
            }
        }
        for (key, value) in other.set {
            self = self.with(key, value);
        }
        self.workdir = other.workdir.or(self.workdir);
        self
    }

    /// Claude as root with `--dangerously-skip-permissions` needs `IS_SANDBOX=1`; set it only
    /// when running as root.
    pub fn with_claude_root_bypass(self) -> CliEnv {
        if running_as_root() {
            self.with("IS_SANDBOX", "1")
        } else {
            self
        }
    }

    pub fn get(&self, key: &str) -> Option<&OsStr> {
        self.set.get(OsStr::new(key)).map(OsString::as_os_str)
    }

    /// Applies the removals, the variables and the working directory to `command`.
    pub fn apply<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        for key in &self.remove {
            command.env_remove(key);
        }
        command.envs(&self.set);
        if let Some(dir) = &self.workdir {
            command.current_dir(dir);
        }
        command
    }
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Claude Code (README §4.2): base URL and key by env, config in `<home>/.claude`, no retries,
/// no non-essential traffic.
pub fn claude_env(home: &TestHome, server_url: &str) -> CliEnv {
    let config_dir = home.home().join(".claude");
    std::fs::create_dir_all(&config_dir).unwrap();
    CliEnv::base(home)
        .with("ANTHROPIC_BASE_URL", server_url)
        .with("ANTHROPIC_API_KEY", FAKE_API_KEY)
        .with("CLAUDE_CONFIG_DIR", config_dir)
        .with("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .with("DISABLE_AUTOUPDATER", "1")
        .with("DISABLE_TELEMETRY", "1")
        .with("DISABLE_ERROR_REPORTING", "1")
        .with("DISABLE_BUG_COMMAND", "1")
        .with("CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1")
        .with("CLAUDE_CODE_MAX_RETRIES", "0")
        .with("API_TIMEOUT_MS", "60000")
        .without(&[
            "CLAUDECODE",
            "CLAUDE_CODE_ENTRYPOINT",
            "CLAUDE_CODE_SSE_PORT",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
            "CLAUDE_CODE_USE_FOUNDRY",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_SMALL_FAST_MODEL",
            "ANTHROPIC_DEFAULT_OPUS_MODEL",
            "ANTHROPIC_DEFAULT_SONNET_MODEL",
            "ANTHROPIC_DEFAULT_HAIKU_MODEL",
            "ANTHROPIC_CUSTOM_HEADERS",
            "CLAUDE_CODE_SESSION_ID",
            "IS_SANDBOX",
        ])
}

/// Gemini CLI (README §5.2): `settings.json` selecting API-key auth (else exit 41), a trusted
/// workspace (else exit 55), HOME and GEMINI_CLI_HOME both the test HOME.
pub fn gemini_env(home: &TestHome, server_url: &str) -> CliEnv {
    let dir = home.home().join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        // Not the deprecated `disableAutoUpdate`/`disableUpdateNag`, which Gemini
        // rewrites in place at every start.
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    CliEnv::base(home)
        .with("GOOGLE_GEMINI_BASE_URL", server_url)
        .with("GEMINI_API_KEY", FAKE_API_KEY)
        .with("GEMINI_CLI_HOME", home.home())
        .with("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .without(&[
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GENAI_USE_GCA",
            "GOOGLE_API_KEY",
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_CLOUD_LOCATION",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GEMINI_MODEL",
            "GEMINI_CLI",
            "GEMINI_SYSTEM_MD",
        ])
}

/// Codex (README §6.2): `$CODEX_HOME/config.toml` with the `fake` provider (base_url ending in
/// `/v1`, no retries), rewritten on every call since the port changes.
pub fn codex_env(home: &TestHome, server_url: &str) -> CliEnv {
    let codex_home = home.home().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        r#"model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
"#
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    CliEnv::base(home)
        .with("CODEX_HOME", codex_home)
        .with("FAKE_OPENAI_API_KEY", FAKE_API_KEY)
        .without(&[
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "CODEX_API_KEY",
            "CODEX_SANDBOX",
            "CODEX_SANDBOX_NETWORK_DISABLED",
            "CODEX_THREAD_ID",
            "CODEX_MANAGED_BY_NPM",
        ])
}

/// Copilot CLI (realcli captures/copilot): offline, no GitHub login, "bring your own key"
/// against the fake's Anthropic Messages API; state in `<home>/.copilot`, no updates.
/// It answers a 5xx only after five retries (about 16 s), so the tests script 4xx errors.
pub fn copilot_env(home: &TestHome, server_url: &str) -> CliEnv {
    let copilot_home = home.home().join(".copilot");
    std::fs::create_dir_all(&copilot_home).unwrap();
    CliEnv::base(home)
        .with("COPILOT_OFFLINE", "true")
        .with("COPILOT_PROVIDER_BASE_URL", server_url)
        .with("COPILOT_PROVIDER_TYPE", "anthropic")
        // The key is longer than any text it could be mistaken for: Copilot redacts the
        // values of secret variables wherever they appear in its output.
        .with("COPILOT_PROVIDER_API_KEY", FAKE_API_KEY)
        .with("COPILOT_MODEL", "claude-haiku-4-5")
        .with("COPILOT_HOME", copilot_home)
        .with("COPILOT_AUTO_UPDATE", "false")
        .without(&[
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "COPILOT_ALLOW_ALL",
            "COPILOT_PROVIDER_BEARER_TOKEN",
            "COPILOT_PROVIDER_API_KEY_COMMAND",
            "COPILOT_PROVIDER_WIRE_API",
            "COPILOT_PROVIDER_HEADERS",
            "COPILOT_CUSTOM_INSTRUCTIONS_DIRS",
        ])
}

/// opencode: its `anthropic` provider pointed at the fake by `OPENCODE_CONFIG_CONTENT`
/// (no config file written), no model list fetched, no updates, state under the test HOME
/// (the XDG variables are removed).
pub fn opencode_env(home: &TestHome, server_url: &str) -> CliEnv {
    let config = serde_json::json!({
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("{server_url}/v1"), "apiKey": FAKE_API_KEY}}},
        "model": "anthropic/claude-haiku-4-5",
    });
    CliEnv::base(home)
        .with("OPENCODE_CONFIG_CONTENT", config.to_string())
        .with("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .with("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .without(&[
            "OPENCODE_CONFIG",
            "OPENCODE_CONFIG_DIR",
            "OPENCODE_PERMISSION",
            "OPENCODE_API_KEY",
        ])
}

/// Qwen Code: `settings.json` choosing its OpenAI-compatible auth with the fake's URL, key
/// and a model, no telemetry or updates. (In settings, not `OPENAI_*` variables, which
/// the Codex environment removes.)
pub fn qwen_env(home: &TestHome, server_url: &str) -> CliEnv {
    let dir = home.home().join(".qwen");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = serde_json::json!({
        "security": {"auth": {"selectedType": "openai", "apiKey": FAKE_API_KEY,
                              "baseUrl": format!("{server_url}/v1")}},
        "model": {"name": "fake-qwen"},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        // Not the deprecated `disableAutoUpdate`/`disableUpdateNag`, which Gemini
        // rewrites in place at every start.
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
    });
    std::fs::write(
        dir.join("settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    CliEnv::base(home).without(&[
        "DASHSCOPE_API_KEY",
        "QWEN_CODE_SYSTEM_SETTINGS_PATH",
        "QWEN_CODE_MODEL",
    ])
}

/// llm: `LLM_USER_PATH` holding a model `fake` (the default) served by the fake's OpenAI
/// Chat Completions, and its key; `fake-schema`, the same model declared able to take a
/// JSON Schema (llm's `--schema`).
pub fn llm_env(home: &TestHome, server_url: &str) -> CliEnv {
    let dir = home.home().join(".llm");
    std::fs::create_dir_all(&dir).unwrap();
    let models = format!(
        "- model_id: fake\n  model_name: fake-llm\n  api_base: \"{server_url}/v1\"\n  api_key_name: fake\n\
         - model_id: fake-schema\n  model_name: fake-llm\n  api_base: \"{server_url}/v1\"\n  \
         api_key_name: fake\n  supports_schema: true\n"
    );
    std::fs::write(dir.join("extra-openai-models.yaml"), models).unwrap();
    std::fs::write(dir.join("default_model.txt"), "fake").unwrap();
    std::fs::write(
        dir.join("keys.json"),
        serde_json::json!({"fake": FAKE_API_KEY}).to_string(),
    )
    .unwrap();
    CliEnv::base(home)
        .with("LLM_USER_PATH", dir)
        .without(&["LLM_MODEL", "LLM_OPENAI_SHOW_RESPONSES"])
}

/// What a finished run printed.
#[derive(Debug)]
pub struct CliRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl CliRun {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The stdout lines that parse as JSON (JSONL output).
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The JSON lines whose `type` is `kind`.
    pub fn events(&self, kind: &str) -> Vec<Value> {
        self.json_lines()
            .into_iter()
            .filter(|e| e["type"] == kind)
            .collect()
    }

    /// Panics with both outputs unless the exit code is `code`.
    pub fn assert_code(&self, code: i32) -> &CliRun {
        assert_eq!(
            self.code(),
            Some(code),
            "unexpected exit ({:?})\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Runs `command` with stdin null and stdout/stderr captured, in its own process group. On
/// timeout, kills the group and panics with what was printed. When the main process exits, any
/// process it left in its group is killed too, so a stray grandchild cannot hold the pipes.
pub fn run(command: &mut Command, timeout: Duration) -> CliRun {
    run_with_stdin(command, Stdio::null(), None, timeout)
}

/// [`run`] with `stdin` (a pipe: `feed` is written to it from a thread, then closed).
pub fn run_with_stdin(
    command: &mut Command,
    stdin: Stdio,
    feed: Option<Vec<u8>>,
    timeout: Duration,
) -> CliRun {
    let start = Instant::now();
    let stdin = if feed.is_some() {
        Stdio::piped()
    } else {
        stdin
    };
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {command:?}: {e}"));
    let pid = child.id();
    if let (Some(feed), Some(mut input)) = (feed, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = input.write_all(&feed);
        });
    }
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let kill_group = || {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > timeout {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    kill_group();
    let status = match status {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout.join().unwrap_or_default();
            let err = stderr.join().unwrap_or_default();
            panic!("{command:?} timed out after {timeout:?}\n--- stdout\n{out}\n--- stderr\n{err}");
        }
    };
    CliRun {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}

/// Starts `command` with stdout piped and stderr dropped, its stdin `stdin` written and
/// closed (or none): a CLI's headless run as the benches time it.
pub fn spawn_fed(command: &mut Command, stdin: Option<&str>) -> std::io::Result<Child> {
    command.stdout(Stdio::piped()).stderr(Stdio::null());
    command.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = command.spawn()?;
    if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
        let _ = input.write_all(text.as_bytes());
    }
    Ok(child)
}
