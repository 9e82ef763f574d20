//! The MCP client against real MCP servers: `@modelcontextprotocol/server-everything` and
//! `@modelcontextprotocol/server-filesystem`, pinned in tests/clis/package.json and
//! installed by `.ci/install-clis` next to the agent CLIs. They run with `node` (never
//! `npx`: the tests have no network).
//!
//! The first half drives the library (`Toolbox`, `ToolExecutor`); the second runs the
//! binary (`codecrew tools list|call`) with a scratch user config declaring the servers
//! (a project's `[mcp.*]` would be ignored unless trusted). Like the real-CLI tests they
//! are skipped with a note when the install is missing, and fail under CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use codecrew_config::{Config, McpServerConfig};
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{
    ErrorCode, Mode, Status, ToolCatalog, ToolContext, ToolExecutor, ToolResult, Toolbox,
};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::binary::codecrew;
use crate::support::binary::{output_with_stdin, text, tool_result, tools_call_args};
use crate::support::clis::Clis;

/// The installed servers and the `node` that runs them.
struct Servers {
    node: PathBuf,
    everything: PathBuf,
    filesystem: PathBuf,
}

impl Servers {
    /// The servers of the `.clis` install, or `None` (after a note) when it is missing
    /// outside CI; see [`Clis::require`].
    fn require(test: &str) -> Option<Servers> {
        let clis = Clis::require(test)?;
        let shim = |name: &str| {
            let path = clis.bin_dir().join(name);
            assert!(
                path.exists(),
                "{test}: {} is missing; run .ci/install-clis (tests/clis/package.json pins \
                 the MCP servers)",
                path.display()
            );
            path
        };
        let node = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join("node"))
            .find(|node| node.is_file())
            .unwrap_or_else(|| panic!("{test}: node is not on PATH; the MCP servers need it"));
        Some(Servers {
            node,
            everything: shim("mcp-server-everything"),
            filesystem: shim("mcp-server-filesystem"),
        })
    }

    fn server(&self, entry: &Path, args: &[&str], readonly: &[&str]) -> McpServerConfig {
        let mut all = vec![entry.to_string_lossy().into_owned()];
        all.extend(args.iter().map(|arg| (*arg).to_owned()));
        McpServerConfig {
            command: self.node.to_string_lossy().into_owned(),
            args: all,
            env: BTreeMap::new(),
            cwd: None,
            readonly_tools: readonly.iter().map(|name| (*name).to_owned()).collect(),
            startup_timeout_secs: 30,
            timeout_secs: 30,
            network: false,
        }
    }

    /// `[mcp.everything]`, `echo` declared read-only.
    fn everything(&self) -> McpServerConfig {
        self.server(&self.everything, &["stdio"], &["echo"])
    }

    /// `[mcp.files]` over the workspace (the server's cwd), its reads declared read-only.
    fn files(&self, readonly: &[&str]) -> McpServerConfig {
        self.server(&self.filesystem, &["."], readonly)
    }

    /// The same servers as a user config file.
    fn toml(&self, servers: &BTreeMap<&str, McpServerConfig>) -> String {
        let mut text = String::new();
        for (name, server) in servers {
            text.push_str(&format!(
                "[mcp.{name}]\ncommand = {}\nargs = {}\nreadonly_tools = {}\n\n",
                json!(server.command),
                json!(server.args),
                json!(server.readonly_tools)
            ));
        }
        text
    }
}

/// A workspace (with `notes.txt`) and a user config beside it. The servers run in the
/// workspace, which is how the leak checks find them.
struct Ws {
    _dir: TempDir,
    root: PathBuf,
    user_config: PathBuf,
    /// The home codecrew runs with: the folder that holds the workspace.
    home: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        Ws::new_in(Path::new(env!("CARGO_TARGET_TMPDIR")))
    }

    /// A workspace the OS sandbox does not let commands write to: never under `/tmp`,
    /// which it always allows (the checkout itself may live there).
    fn outside_tmp() -> Ws {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
        if target.starts_with("/tmp") {
            Ws::new_in(Path::new("/var/tmp"))
        } else {
            Ws::new_in(target)
        }
    }

    fn new_in(base: &Path) -> Ws {
        std::fs::create_dir_all(base).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("mcp-client-")
            .tempdir_in(base)
            .unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(root.join("notes.txt"), "first line\nsecond line\n").unwrap();
        let user_config = dir.path().join("user.toml");
        std::fs::write(&user_config, "").unwrap();
        Ws {
            home: dir.path().to_path_buf(),
            _dir: dir,
            root,
            user_config,
        }
    }

    fn config(servers: BTreeMap<&str, McpServerConfig>) -> Config {
        Config {
            mcp: servers
                .into_iter()
                .map(|(name, server)| (name.to_owned(), server))
                .collect(),
            ..Config::default()
        }
    }

    fn executor(&self, toolbox: &Toolbox, mode: Mode) -> ToolExecutor {
        let registry = Arc::clone(toolbox.registry());
        let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode).unwrap());
        ToolExecutor::new(registry, catalog, ToolContext::new(self.root.clone(), mode))
    }

    fn codecrew(&self, args: &[&str]) -> Output {
        codecrew(&self.home)
            .arg("--workdir")
            .arg(&self.root)
            .args(args)
            .env("CODECREW_CONFIG", &self.user_config)
            .env("XDG_CACHE_HOME", self.cache())
            .output()
            .unwrap()
    }

    /// The user cache directory of this workspace's runs (where MCP tool lists are kept).
    fn cache(&self) -> PathBuf {
        self.user_config.with_file_name("cache")
    }

    /// `codecrew tools call TOOL --input INPUT --mode MODE [--yes]`; the result and stderr.
    fn call(&self, mode: &str, yes: bool, tool: &str, input: Value) -> (Value, String) {
        let input = input.to_string();
        let args = tools_call_args(tool, &input, mode, yes);
        let output = self.codecrew(&args);
        (tool_result(&output), text(&output.stderr))
    }

    /// Live processes working in this workspace: the servers (their cwd is the
    /// workspace; codecrew's and the test's are not).
    fn servers_running(&self) -> Vec<i32> {
        codecrew_policy::process::pids()
            .into_iter()
            .filter(|pid| {
                codecrew_policy::process::stat(*pid).is_some_and(|s| !s.zombie)
                    && std::fs::read_link(format!("/proc/{pid}/cwd"))
                        .is_ok_and(|cwd| cwd == self.root)
            })
            .collect()
    }

    /// Fails (and cleans up) when a server of this workspace outlives codecrew by more
    /// than a moment.
    #[track_caller]
    fn assert_no_server_left(&self) {
        let start = Instant::now();
        while !self.servers_running().is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = self.servers_running();
        for pid in &left {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
        assert!(left.is_empty(), "MCP servers left running: {left:?}");
    }
}

async fn call(executor: &ToolExecutor, tool: &str, input: Value) -> ToolResult {
    executor
        .call(&CallRequest {
            id: String::new(),
            tool: tool.to_owned(),
            input,
        })
        .await
}

mod binary;
mod library;
