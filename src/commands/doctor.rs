//! `codecrew doctor`: what works and what does not, each with what to do about it.
//!
//! Checks, in order: the config files, the CLI of every agent (path and `--version`),
//! the OS sandbox, the programs of external tools, the MCP servers (started and asked
//! for their tools), and with `--live` one short question to each agent, through
//! `codecrew query` itself so that the check takes the same path as real use.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use codecrew::cli::{DoctorArgs, OutputArg};
use codecrew::output::console::{self, Text};
use codecrew_agents::Provider;
use codecrew_agents::drive::refused;
use codecrew_agents::wall::install::find_program;
use codecrew_config::{LoadedConfig, ProviderKind};
use codecrew_policy::sandbox::{self, Support};
use codecrew_tools::Mode;
use serde::Serialize;
use serde_json::Value;

/// How long `<cli> --version` may take (node CLIs start slowly on a cold cache).
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one live question may take.
const LIVE_TIMEOUT: Duration = Duration::from_secs(180);
/// The live question: short, and answerable without tools.
const LIVE_TASK: &str = "Reply with the single word ok and nothing else.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    /// Worth knowing, not broken (a CLI no agent in use needs).
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    area: &'static str,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

impl Check {
    fn new(area: &'static str, status: Status, detail: impl Into<String>) -> Check {
        Check {
            area,
            status,
            detail: detail.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Check {
        self.hint = Some(hint.into());
        self
    }
}

pub async fn run(args: DoctorArgs, workspace: &Path) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    let loaded = match codecrew_config::load(workspace) {
        Ok(loaded) => {
            checks.push(config_check(&loaded));
            checks.extend(checkout_check(&loaded, workspace));
            checks.extend(
                codecrew::home::doctor_note(workspace)
                    .map(|(detail, hint)| Check::new("workspace", Status::Warn, detail).hint(hint)),
            );
            loaded
        }
        Err(error) => {
            checks.push(
                Check::new("config", Status::Fail, error.to_string())
                    .hint("fix the file at the place shown; docs/CONFIG.md describes every key"),
            );
            // The rest is still worth knowing, with the built-in agents.
            LoadedConfig::builtin()
        }
    };
    let found = cli_checks(&loaded, workspace, &mut checks).await;
    checks.push(sandbox_check());
    tool_checks(&loaded, workspace, &mut checks);
    mcp_checks(&loaded, workspace, &mut checks).await;
    if args.live {
        live_checks(&args.agents, &loaded, &found, workspace, &mut checks).await;
    }

    match args.output {
        OutputArg::Json => console::stdout().json_pretty(&checks)?,
        OutputArg::Text => {
            // A check quotes what a CLI, a server or a tool program printed.
            let mut out = String::new();
            writeln!(out, "codecrew {}", env!("CARGO_PKG_VERSION"))?;
            for check in &checks {
                let status = match check.status {
                    Status::Ok => "ok",
                    Status::Warn => "warn",
                    Status::Fail => "FAIL",
                };
                let mut lines = check.detail.lines();
                let first = lines.next().unwrap_or_default();
                writeln!(out, "{status:<5} {:<8} {first}", check.area)?;
                for line in lines {
                    writeln!(out, "{:14}{line}", "")?;
                }
                if let Some(hint) = &check.hint {
                    writeln!(out, "{:14}→ {hint}", "")?;
                }
            }
            console::stdout().show(&Text::plain(&out))?;
        }
    }
    let failed = checks.iter().any(|check| check.status == Status::Fail);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What the checkout ships for the agent CLIs that they start without, the project
/// being untrusted; none when there is nothing of the kind or the project is trusted.
fn checkout_check(loaded: &LoadedConfig, workspace: &Path) -> Option<Check> {
    let left_out: Vec<String> = loaded
        .config
        .agents
        .iter()
        .filter_map(|(id, agent)| {
            let files = Provider::new(id, agent.clone())
                .trusting_project(loaded.project_trusted)
                .left_out(workspace);
            (!files.is_empty()).then(|| format!("@{id} ({})", files.join(", ")))
        })
        .collect();
    if left_out.is_empty() {
        return None;
    }
    Some(
        Check::new(
            "checkout",
            Status::Warn,
            format!(
                "the project is not trusted: the agent CLIs start without the configuration \
                 it ships for them: {}",
                left_out.join("; ")
            ),
        )
        .hint(codecrew::home::checkout_hint(workspace)),
    )
}

fn config_check(loaded: &LoadedConfig) -> Check {
    let files = if loaded.sources.is_empty() {
        "no config file; the built-in defaults apply".to_owned()
    } else {
        let names: Vec<String> = loaded
            .sources
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        format!("valid: {}", names.join(", "))
    };
    let mut check = Check::new("config", Status::Ok, files);
    if !loaded.blocked.is_empty() {
        check.status = Status::Warn;
        check.detail = format!(
            "{}\nthe project's {} are ignored until you trust the folder",
            check.detail,
            loaded.blocked.join(", ")
        );
        check = check.hint("add the project's directory to trusted_projects in your user config");
    }
    check
}

/// One line per CLI program (agents sharing a program share the line). Returns which
/// agents have their CLI installed.
async fn cli_checks(
    loaded: &LoadedConfig,
    workspace: &Path,
    checks: &mut Vec<Check>,
) -> BTreeMap<String, PathBuf> {
    let config = &loaded.config;
    let reads = cli_read(loaded);
    let mut by_program: BTreeMap<String, (Provider, Vec<String>)> = BTreeMap::new();
    for (id, agent) in &config.agents {
        let provider = Provider::new(id, agent.clone());
        let program = provider.program();
        by_program
            .entry(program)
            .or_insert_with(|| (provider, Vec::new()))
            .1
            .push(format!("@{id}"));
    }
    let default_agent = format!("@{}", config.default_agent);
    let mut found = BTreeMap::new();
    for (program, (provider, agents)) in by_program {
        let agents_text = agents.join(", ");
        match codecrew_agents::locate(&provider) {
            Some(path) => {
                if provider.reports_version()
                    && provider.is_walled()
                    && let Err(stderr) = version_in_wall(&provider, &path, workspace, &reads).await
                    && version(&path).await.is_some()
                {
                    // It answers outside the wall and not inside: the wall refused it.
                    let refused_path = refused::refused_path(&stderr);
                    let mut readable = vec![workspace.to_path_buf()];
                    readable.extend(reads.iter().cloned());
                    let grant = refused::to_grant(&path, refused_path.as_deref(), &|folder| {
                        refused::readable_anyway(folder, &readable)
                    });
                    let refused = match (&refused_path, &grant.what) {
                        (Some(refused), _) => format!("it was refused {}", refused.display()),
                        (None, Some(_)) => format!(
                            "it could not start, and what it loads from outside its \
                             installation is not readable there: {}",
                            grant.described()
                        ),
                        (None, None) => "it could not start".to_owned(),
                    };
                    let let_it = match &grant.what {
                        Some(what) => format!("let the wall read {what}"),
                        None => "let the wall read its installation".to_owned(),
                    };
                    checks.push(
                        Check::new(
                            "cli",
                            Status::Fail,
                            format!(
                                "{program} ({}), for {agents_text}: answers on its own but not \
                                 inside the wall codecrew runs it in: {refused}",
                                path.display()
                            ),
                        )
                        .hint(format!(
                            "{let_it}: add `{}` under [permissions] in your user config",
                            grant.config_line()
                        )),
                    );
                    continue;
                }
                let version = if provider.reports_version() {
                    version(&path).await
                } else {
                    None
                };
                let walled = if provider.reports_version() && provider.is_walled() {
                    "; starts inside its wall"
                } else {
                    ""
                };
                let detail = match version {
                    Some(version) => {
                        format!(
                            "{program} {version} ({}), for {agents_text}{walled}",
                            path.display()
                        )
                    }
                    None => format!("{program} ({}), for {agents_text}{walled}", path.display()),
                };
                checks.push(Check::new("cli", Status::Ok, detail));
                for agent in agents {
                    found.insert(agent.trim_start_matches('@').to_owned(), path.clone());
                }
            }
            None => {
                let needed = agents.contains(&default_agent);
                let status = if needed { Status::Fail } else { Status::Warn };
                let why = if needed {
                    format!(" (the default agent {default_agent} needs it)")
                } else {
                    String::new()
                };
                let detail = if program.is_empty() {
                    format!("{agents_text}: no program configured{why}")
                } else {
                    format!("{program} not found on PATH, for {agents_text}{why}")
                };
                checks.push(Check::new("cli", status, detail).hint(
                    if provider.kind() == ProviderKind::Command {
                        "install the program, or fix command.argv of the agent in the config"
                            .to_owned()
                    } else {
                        format!("install it: {}", provider.install_hint())
                    },
                ));
            }
        }
    }
    found
}

/// `cli_read`'s folders as the policy reads them (`~` expanded); none when the
/// permissions do not parse (the config check says why).
fn cli_read(loaded: &LoadedConfig) -> Vec<PathBuf> {
    codecrew_policy::Policy::from_layers(
        &codecrew_policy::builtin_defaults(),
        loaded.user_permissions.as_ref(),
        loaded.project_permissions.as_ref(),
        loaded.project_trusted,
    )
    .map(|policy| policy.cli_read().to_vec())
    .unwrap_or_default()
}

/// Runs `<program> --version` inside the wall a `query` turn would get: Ok when it
/// answers, else its stderr.
async fn version_in_wall(
    provider: &Provider,
    path: &Path,
    workspace: &Path,
    reads: &[PathBuf],
) -> Result<(), String> {
    let spec = provider.version_command(path, workspace, reads);
    let limits = codecrew_agents::drive::process::RunLimits {
        timeout: VERSION_TIMEOUT,
        max_stdout_bytes: 1024 * 1024,
    };
    let (_cancel, cancelled) = tokio::sync::watch::channel(false);
    // A job prepares the CLI before its first turn (Copilot unpacks its package, which
    // its wall then only reads); so does the check, or a fresh install would fail here
    // where a job would not.
    if let Some(mut prepare) = provider.preparation_command(path, workspace) {
        prepare.read_also(reads);
        let limits = codecrew_agents::drive::process::RunLimits {
            timeout: codecrew_agents::drive::transport::PREPARATION_TIMEOUT,
            ..limits
        };
        let _ = codecrew_agents::drive::process::run(&prepare, &limits, cancelled.clone(), |_| {})
            .await;
    }
    let mut printed = false;
    let outcome = codecrew_agents::drive::process::run(&spec, &limits, cancelled, |bytes| {
        printed |= !bytes.is_empty();
    })
    .await
    .map_err(|error| error.to_string())?;
    match outcome.ending {
        codecrew_agents::drive::process::Ending::Exited(0) if printed => Ok(()),
        _ => Err(outcome.stderr_tail),
    }
}

/// The first line `<program> --version` prints, if it answers in time.
async fn version(path: &Path) -> Option<String> {
    let child = tokio::process::Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(VERSION_TIMEOUT, child)
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
    Some(line.chars().take(80).collect())
}

fn sandbox_check() -> Check {
    if !codecrew_core::toolbox::sandbox_enabled() {
        return Check::new(
            "sandbox",
            Status::Warn,
            "CODECREW_SANDBOX=off: approved commands and the agent CLIs run unconfined, and \
             nothing runs without asking (the safe list asks; query runs no commands)",
        )
        .hint("unset CODECREW_SANDBOX to turn the OS sandbox back on");
    }
    match sandbox::support() {
        Support::Full => Check::new(
            "sandbox",
            Status::Ok,
            "Landlock: commands that run without asking (the safe list, allow rules, query) \
             read only the workspace and system directories and write nothing; approved \
             commands write only in the workspace and /tmp; network off unless allowed; \
             the agent CLIs read no more of your home than their own folders",
        ),
        Support::FilesOnly => Check::new(
            "sandbox",
            Status::Warn,
            "Landlock confines writes, but this kernel cannot restrict the network (needs \
             Linux 6.7), so nothing runs without asking (the safe list asks; query runs no \
             commands)",
        )
        .hint("use Linux 6.7+ for the read-only sandbox"),
        Support::Unsupported => Check::new(
            "sandbox",
            Status::Warn,
            "no Landlock on this kernel: nothing runs without asking (the safe list asks; \
             query runs no commands), and approved commands and the agent CLIs run \
             unconfined",
        )
        .hint("use Linux 6.7+ with landlock in the LSM list for the OS sandbox"),
    }
}

fn tool_checks(loaded: &LoadedConfig, workspace: &Path, checks: &mut Vec<Check>) {
    for (name, tool) in &loaded.config.tools {
        let exports = tool.exports.len();
        let program = if tool.command.contains('/') {
            let path = workspace.join(&tool.command);
            path.is_file().then_some(path)
        } else {
            find_program(&tool.command)
        };
        checks.push(match program {
            Some(path) => Check::new(
                "tool",
                Status::Ok,
                format!(
                    "{name}: {} ({}), {exports} export(s)",
                    tool.command,
                    path.display()
                ),
            ),
            None => Check::new(
                "tool",
                Status::Fail,
                format!("{name}: the program {} is not found", tool.command),
            )
            .hint(format!(
                "install it or fix `command` in [tools.{name}] (a name on PATH, or a path \
                 relative to the workspace)"
            )),
        });
    }
}

async fn mcp_checks(loaded: &LoadedConfig, workspace: &Path, checks: &mut Vec<Check>) {
    if loaded.config.mcp.is_empty() {
        return;
    }
    let toolbox = codecrew_core::toolbox::start(
        &loaded.config,
        workspace,
        Mode::Query,
        std::sync::Arc::new(codecrew::cli::CliHelp),
    )
    .await;
    let started: Vec<&str> = toolbox.mcp_servers().collect();
    for name in loaded.config.mcp.keys() {
        if !started.contains(&name.as_str()) {
            // The notice says why; its wording is the client's, so it is only shown.
            let why = toolbox
                .notices()
                .iter()
                .find(|notice| notice.contains(&format!("mcp.{name} ")))
                .cloned()
                .unwrap_or_else(|| format!("mcp.{name} did not start"));
            checks.push(Check::new("mcp", Status::Fail, why).hint(format!(
                "check command, args and env of [mcp.{name}]; run the command by hand to see \
                 its errors"
            )));
            continue;
        }
        let prefix = format!("{name}__");
        let tools: Vec<&str> = toolbox
            .registry()
            .names()
            .filter_map(|tool| tool.strip_prefix(&prefix))
            .collect();
        checks.push(Check::new(
            "mcp",
            Status::Ok,
            format!(
                "{name}: started, {} tool(s): {}",
                tools.len(),
                tools.join(", ")
            ),
        ));
    }
    toolbox.shutdown().await;
}

async fn live_checks(
    wanted: &[String],
    loaded: &LoadedConfig,
    found: &BTreeMap<String, PathBuf>,
    workspace: &Path,
    checks: &mut Vec<Check>,
) {
    let agents: Vec<String> = if wanted.is_empty() {
        found.keys().cloned().collect()
    } else {
        wanted
            .iter()
            .map(|agent| agent.trim_start_matches('@').to_owned())
            .collect()
    };
    if agents.is_empty() {
        checks.push(
            Check::new("live", Status::Fail, "no agent has its CLI installed")
                .hint("install a CLI (see the cli lines above)"),
        );
    }
    for agent in agents {
        if !loaded.config.agents.contains_key(&agent) {
            checks.push(Check::new(
                "live",
                Status::Fail,
                format!("@{agent}: no such agent (codecrew agents list shows them)"),
            ));
            continue;
        }
        checks.push(live_check(&agent, workspace).await);
    }
}

/// One question to one agent through `codecrew query`.
async fn live_check(agent: &str, workspace: &Path) -> Check {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            return Check::new(
                "live",
                Status::Fail,
                format!("@{agent}: cannot find codecrew's own program: {error}"),
            );
        }
    };
    let timeout = format!("{}s", LIVE_TIMEOUT.as_secs());
    let child = tokio::process::Command::new(exe)
        .arg("--workdir")
        .arg(workspace)
        .args(["query", "--output", "json", "--max-turns", "1", "--timeout"])
        .arg(&timeout)
        .arg(format!("@{agent} {LIVE_TASK}"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let output = match tokio::time::timeout(LIVE_TIMEOUT + Duration::from_secs(10), child).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            return Check::new(
                "live",
                Status::Fail,
                format!("@{agent}: could not run: {error}"),
            );
        }
        Err(_) => {
            return Check::new(
                "live",
                Status::Fail,
                format!("@{agent}: no answer within {timeout}"),
            );
        }
    };
    let report: Option<Value> = serde_json::from_slice(&output.stdout).ok();
    let result = report
        .as_ref()
        .and_then(|report| report["results"].get(0))
        .cloned()
        .unwrap_or(Value::Null);
    if result["success"] == true {
        let answer: String = result["response"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .chars()
            .take(60)
            .collect();
        let ms = result["duration_ms"].as_u64().unwrap_or_default();
        Check::new(
            "live",
            Status::Ok,
            format!(
                "@{agent} answered {answer:?} in {:.1} s",
                ms as f64 / 1000.0
            ),
        )
    } else {
        let error = result["error"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| String::from_utf8_lossy(&output.stderr).trim().to_owned());
        Check::new("live", Status::Fail, format!("@{agent} failed: {error}"))
            .hint("check the CLI's login or API key, and run the query by hand with -v")
    }
}
