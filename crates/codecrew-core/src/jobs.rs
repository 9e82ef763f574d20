//! From jobs to runnable [`JobRun`]s: every job's agent checked against the configuration,
//! then given its tool catalog (the mode's tools, narrowed by the agent's `tools` list) and
//! its executor. `codecrew query`/`execute` and the `query_agent`/`execute_agent` tools of
//! `codecrew mcp` plan their jobs here, so an agent runs the same way from either.

use std::sync::Arc;

use crate::mention::Job;
use crate::session::{Continuation, JobRun, Place, Settings};
use codecrew_agents::{Provider, identifiers};
use codecrew_config::{ConfigError, LoadedConfig};
use codecrew_tools::catalog::CatalogError;
use codecrew_tools::{ToolCatalog, ToolExecutor, ToolRegistry};

/// Why a set of jobs cannot run. Each message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("unknown agent @{agent}; known agents: {known} (define more in codecrew.toml)")]
    UnknownAgent { agent: String, known: String },
    /// An untrusted project defines the agent and it would run a program of its choosing.
    #[error(transparent)]
    NotAllowed(#[from] ConfigError),
    #[error("the task for @{agent} is empty; write what it should do after the mention")]
    EmptyTask { agent: String },
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The checkout ships something the agent's CLI would run whatever it is told.
    #[error("@{agent} cannot start here: {why}")]
    UntrustedCheckout { agent: String, why: String },
    /// The workspace holds the home directory, and the agent's CLI reads what its wall
    /// lets it without asking.
    #[error("@{agent} cannot start here: {why}")]
    NotInTheHome { agent: String, why: String },
    /// The run's `--schema` has no form the agent's CLI takes (Codex's strict mode).
    #[error("@{agent} cannot take this --schema: {why}")]
    SchemaNotTaken { agent: String, why: String },
    /// A model that its CLI could read as something else (an option, say).
    #[error("@{agent}: {why}")]
    NotAModel { agent: String, why: String },
}

/// Checks every job: all agents known, then all allowed, then no empty task. Cheap, so
/// a command can call it before it starts anything.
pub fn check(loaded: &LoadedConfig, jobs: &[Job]) -> Result<(), PlanError> {
    let config = &loaded.config;
    if let Some(unknown) = jobs
        .iter()
        .find(|job| !config.agents.contains_key(&job.agent))
    {
        let known: Vec<String> = config.agents.keys().map(|id| format!("@{id}")).collect();
        return Err(PlanError::UnknownAgent {
            agent: unknown.agent.clone(),
            known: known.join(", "),
        });
    }
    for job in jobs {
        loaded.check_agent_allowed(&job.agent)?;
        check_models(loaded, job)?;
    }
    if let Some(empty) = jobs.iter().find(|job| job.task.trim().is_empty()) {
        return Err(PlanError::EmptyTask {
            agent: empty.agent.clone(),
        });
    }
    Ok(())
}

/// The job's model (its mention's) and its agent's configured one are models' names:
/// either may come from a file the user did not write (a task piped in, a project's
/// `codecrew.toml`), and goes on the CLI's command line.
fn check_models(loaded: &LoadedConfig, job: &Job) -> Result<(), PlanError> {
    let configured = loaded
        .config
        .agents
        .get(&job.agent)
        .and_then(|agent| agent.model.as_deref());
    let chosen = [
        (job.model.as_deref(), "from the mention"),
        (configured, "from the agent's configuration"),
    ];
    for (model, from) in chosen {
        if let Some(model) = model.filter(|model| !identifiers::is_model_name(model)) {
            return Err(PlanError::NotAModel {
                agent: job.agent.clone(),
                why: identifiers::model_error(model, from),
            });
        }
    }
    Ok(())
}

/// [`check`]s the jobs and builds one [`JobRun`] per job, in order, starting afresh (no
/// [`crate::session::Continuation`]). `executor_for` makes the executor of one job from
/// its catalog: the caller decides the policy, the asker and the hooks. `places`, when
/// not empty, has each job's own place (its git worktree), in order.
pub fn plan(
    loaded: &LoadedConfig,
    jobs: Vec<Job>,
    settings: &Settings,
    registry: &Arc<ToolRegistry>,
    executor_for: impl Fn(Arc<ToolCatalog>) -> ToolExecutor,
    places: &[Place],
) -> Result<Vec<JobRun>, PlanError> {
    check(loaded, &jobs)?;
    let config = &loaded.config;
    let mut runs = Vec::with_capacity(jobs.len());
    for (index, job) in jobs.into_iter().enumerate() {
        let Some(agent) = config.agents.get(&job.agent).cloned() else {
            // Checked above; kept as an error rather than an index that could panic.
            return Err(PlanError::UnknownAgent {
                agent: job.agent,
                known: String::new(),
            });
        };
        let offered = ToolCatalog::for_mode(registry, settings.mode)?;
        let catalog = match &agent.tools {
            Some(names) => ToolCatalog::from_tools(
                offered
                    .tools()
                    .filter(|tool| names.iter().any(|n| n == tool.name()))
                    .cloned(),
            )?,
            None => offered,
        };
        let provider = Provider::new(&job.agent, agent).trusting_project(loaded.project_trusted);
        let mut settings = settings.clone();
        if let Some(place) = places.get(index) {
            settings.workspace = place.workspace.clone();
            settings.git = place.git.clone();
        }
        if let Some(shape) = &settings.answer
            && let Err(why) = provider.native_schema(shape.schema.json())
        {
            return Err(PlanError::SchemaNotTaken {
                agent: job.agent,
                why,
            });
        }
        if let Some(why) = provider.refuses(&settings.workspace) {
            return Err(PlanError::UntrustedCheckout {
                agent: job.agent,
                why,
            });
        }
        if let Some(why) = provider.refuses_in_the_home(&settings.workspace, settings.mode) {
            return Err(PlanError::NotInTheHome {
                agent: job.agent,
                why,
            });
        }
        let mut executor = executor_for(Arc::new(catalog));
        if let Some(place) = places.get(index) {
            executor = executor.in_workspace(place.workspace.clone(), place.git.clone());
        }
        runs.push(JobRun {
            index,
            job,
            provider,
            executor: Arc::new(executor),
            settings,
            continuation: Continuation::default(),
        });
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use codecrew_config::LimitsConfig;
    use codecrew_tools::{Mode, ToolContext};

    fn job(agent: &str, task: &str) -> Job {
        Job {
            agent: agent.to_owned(),
            model: None,
            task: task.to_owned(),
        }
    }

    fn plan_of(jobs: Vec<Job>, mode: Mode) -> Result<Vec<JobRun>, PlanError> {
        let loaded = LoadedConfig::builtin();
        let settings = Settings::new(mode, &LimitsConfig::default(), PathBuf::from("/tmp"));
        let registry = Arc::new(crate::toolbox::builtin(Arc::new(
            codecrew_tools::builtin::NoCommands,
        )));
        plan(
            &loaded,
            jobs,
            &settings,
            &registry,
            |catalog| {
                ToolExecutor::new(
                    registry.clone(),
                    catalog,
                    ToolContext::new(PathBuf::from("/tmp"), mode),
                )
            },
            &[],
        )
    }

    #[test]
    fn one_run_per_job_with_the_modes_tools() {
        let runs = plan_of(vec![job("claude", "a"), job("codex", "b")], Mode::Query).unwrap();
        let agents: Vec<(usize, &str)> = runs
            .iter()
            .map(|run| (run.index, run.job.agent.as_str()))
            .collect();
        assert_eq!(agents, [(0, "claude"), (1, "codex")]);
        let tools: Vec<&str> = runs[0].executor.catalog().names().collect();
        assert!(tools.contains(&"read_file"), "{tools:?}");
        assert!(!tools.contains(&"write_file"), "{tools:?}");
    }

    #[test]
    fn unknown_agents_and_empty_tasks_are_refused_with_what_to_do() {
        let error = plan_of(vec![job("claude", "a"), job("nobody", "b")], Mode::Query)
            .err()
            .unwrap();
        assert!(matches!(error, PlanError::UnknownAgent { .. }));
        assert!(error.to_string().contains("@nobody"), "{error}");
        assert!(error.to_string().contains("@claude"), "{error}");
        let error = plan_of(vec![job("claude", "  ")], Mode::Query)
            .err()
            .unwrap();
        assert_eq!(
            error.to_string(),
            "the task for @claude is empty; write what it should do after the mention"
        );
    }
}
