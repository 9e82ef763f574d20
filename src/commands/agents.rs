//! `codecrew agents list`: the agents of the merged configuration and the files it came from.

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use codecrew::cli::{AgentsCommand, OutputArg};
use codecrew::output::console::{self, Text};
use codecrew_config::{LoadedConfig, Origin, ProviderKind};
use serde_json::{Value, json};

use super::EXIT_USAGE;

pub fn run(command: &AgentsCommand, workspace: &Path) -> anyhow::Result<ExitCode> {
    match command {
        AgentsCommand::List { output } => list(*output, workspace),
    }
}

fn list(output: OutputArg, workspace: &Path) -> anyhow::Result<ExitCode> {
    let found = codecrew_config::user_config_path().and_then(|user_file| {
        let loaded = codecrew_config::load_from(workspace, user_file.as_deref())?;
        Ok((user_file, loaded))
    });
    let (user_file, loaded) = match found {
        Ok(found) => found,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    match output {
        OutputArg::Json => {
            console::stdout().json_pretty(&to_json(&loaded, user_file.as_deref(), workspace))?;
        }
        OutputArg::Text => {
            // Agent names and models come from config files, a checkout's included.
            let mut out = String::new();
            write_text(&mut out, &loaded, user_file.as_deref(), workspace)?;
            console::stdout().show(&Text::plain(&out))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

struct Row {
    id: String,
    provider: &'static str,
    model: String,
    default: bool,
    defined_in: String,
}

fn rows(loaded: &LoadedConfig) -> Vec<Row> {
    loaded
        .config
        .agents
        .iter()
        .map(|(id, agent)| Row {
            id: id.clone(),
            provider: agent.provider.name(),
            model: agent.model.clone().unwrap_or_else(|| "-".to_owned()),
            default: *id == loaded.config.default_agent,
            defined_in: match (loaded.agent_file(id), loaded.check_agent_allowed(id)) {
                (None, _) => "built-in".to_owned(),
                (Some(path), Ok(())) => path.display().to_string(),
                (Some(path), Err(_)) => format!("{} (blocked until trusted)", path.display()),
            },
        })
        .collect()
}

fn write_text(
    out: &mut String,
    loaded: &LoadedConfig,
    user_file: Option<&Path>,
    workspace: &Path,
) -> std::fmt::Result {
    let rows = rows(loaded);
    let width =
        |f: fn(&Row) -> usize, title: &str| rows.iter().map(f).max().unwrap_or(0).max(title.len());
    let id_w = width(|r| r.id.len(), "AGENT");
    let provider_w = width(|r| r.provider.len(), "PROVIDER");
    let model_w = width(|r| r.model.chars().count(), "MODEL");
    let default_w = "DEFAULT".len();
    writeln!(
        out,
        "{:<id_w$}  {:<provider_w$}  {:<model_w$}  {:<default_w$}  DEFINED IN",
        "AGENT", "PROVIDER", "MODEL", "DEFAULT"
    )?;
    for row in &rows {
        let default = if row.default { "yes" } else { "" };
        writeln!(
            out,
            "{:<id_w$}  {:<provider_w$}  {:<model_w$}  {default:<default_w$}  {}",
            row.id, row.provider, row.model, row.defined_in
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Config files:")?;
    match (&loaded.user_file, user_file) {
        (Some(path), _) => writeln!(out, "  user     {}", path.display())?,
        (None, Some(looked)) => {
            writeln!(out, "  user     none ({} does not exist)", looked.display())?
        }
        (None, None) => writeln!(out, "  user     none")?,
    }
    match &loaded.project_file {
        Some(path) => {
            let trust = if loaded.project_trusted {
                "trusted"
            } else {
                "not trusted: it may only restrict permissions"
            };
            writeln!(out, "  project  {} ({trust})", path.display())?;
        }
        None => writeln!(
            out,
            "  project  none (`codecrew init` writes a starter codecrew.toml)"
        )?,
    }
    let left_out: Vec<(String, Vec<&str>)> = loaded
        .config
        .agents
        .keys()
        .map(|id| (format!("@{id}"), left_out(loaded, id, workspace)))
        .filter(|(_, files)| !files.is_empty())
        .collect();
    if !left_out.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "The checkout's own CLI configuration, left out until you trust the project:"
        )?;
        for (agent, files) in left_out {
            writeln!(out, "  {agent}  {}", files.join(", "))?;
        }
    }
    Ok(())
}

/// What the checkout ships for agent `id`'s CLI and the CLI starts without.
fn left_out(loaded: &LoadedConfig, id: &str, workspace: &Path) -> Vec<&'static str> {
    match loaded.config.agents.get(id) {
        Some(agent) => codecrew_agents::Provider::new(id, agent.clone())
            .trusting_project(loaded.project_trusted)
            .left_out(workspace),
        None => Vec::new(),
    }
}

fn to_json(loaded: &LoadedConfig, user_file: Option<&Path>, workspace: &Path) -> Value {
    let agents: Vec<Value> = loaded
        .config
        .agents
        .iter()
        .map(|(id, agent)| {
            let origin = match loaded.agent_origins.get(id) {
                Some(Origin::User) => "user",
                Some(Origin::Project) => "project",
                Some(Origin::BuiltIn) | None => "builtin",
            };
            let mut entry = json!({
                "id": id,
                "provider": agent.provider.name(),
                "model": agent.model,
                "default": *id == loaded.config.default_agent,
                "origin": origin,
                "defined_in": loaded.agent_file(id).map(display),
                "allowed": loaded.check_agent_allowed(id).is_ok(),
                "left_out": left_out(loaded, id, workspace),
            });
            if agent.provider == ProviderKind::Command
                && let (Some(command), Some(map)) = (&agent.command, entry.as_object_mut())
            {
                map.insert("argv".to_owned(), json!(command.argv));
            }
            entry
        })
        .collect();
    json!({
        "default_agent": loaded.config.default_agent,
        "agents": agents,
        "files": {
            "user": loaded.user_file.as_deref().map(display),
            "user_searched": user_file.map(display),
            "project": loaded.project_file.as_deref().map(display),
            "project_trusted": loaded.project_trusted,
        },
        "sources": loaded.sources.iter().map(|p| display(p)).collect::<Vec<_>>(),
    })
}

fn display(path: &Path) -> String {
    path.display().to_string()
}
