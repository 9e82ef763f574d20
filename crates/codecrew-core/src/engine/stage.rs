//! What runs in one mode: the mode's tools and the crew that makes every executor.

use std::sync::Arc;

use codecrew_tools::{Mode, ToolRegistry, Toolbox};

use super::{Engine, Limits};
use crate::crew::{Crew, depth_from_env};
use crate::jobs::{self, PlanError};
use crate::mention::Job;
use crate::session::{JobRun, Place, Settings};

/// The tools of one mode (their MCP servers started in the mode's sandbox) and the crew
/// of agents that may consult each other, all under the engine's one policy. It owns the
/// MCP servers: it lives as long as anything runs, and [`Stage::shutdown`] ends them.
pub struct Stage {
    mode: Mode,
    toolbox: Toolbox,
    crew: Arc<Crew>,
    settings: Settings,
}

impl Engine {
    /// The stage of `mode`, the config's limits overridden by `limits`.
    pub async fn stage(&self, mode: Mode, limits: Limits) -> Stage {
        let config_limits = &self.config().config.limits;
        let settings = Settings {
            max_turns: limits.max_turns.unwrap_or(config_limits.max_turns),
            turn_timeout: limits.turn_timeout.unwrap_or(config_limits.turn_timeout()),
            // Under an agent (its run_command ran codecrew), delegation goes on counting.
            depth: depth_from_env(),
            answer: limits.answer,
            ..Settings::new(mode, config_limits, self.workspace().to_path_buf())
        };
        let toolbox = self.toolbox(mode).await;
        let crew = Crew::new(
            self.config().clone(),
            toolbox.registry(),
            settings.clone(),
            self.executor_factory(),
        );
        Stage {
            mode,
            toolbox,
            crew,
            settings,
        }
    }
}

impl Stage {
    /// The config's tools, without the agent tools (which the crew adds to its own).
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        self.toolbox.registry()
    }

    pub fn crew(&self) -> &Arc<Crew> {
        &self.crew
    }

    /// One run per job, each with its catalog and an executor of the crew's; checked
    /// first (an unknown agent, an empty task, a model that is not one).
    pub fn plan(&self, engine: &Engine, jobs: Vec<Job>) -> Result<Vec<JobRun>, PlanError> {
        self.plan_in(engine, jobs, &[])
    }

    /// [`Stage::plan`], each job in its own place (in order; none: the workspace).
    pub fn plan_in(
        &self,
        engine: &Engine,
        jobs: Vec<Job>,
        places: &[Place],
    ) -> Result<Vec<JobRun>, PlanError> {
        let crew = &self.crew;
        jobs::plan(
            engine.config(),
            jobs,
            &self.settings,
            crew.registry(),
            |catalog| crew.executor(self.mode, catalog),
            places,
        )
    }

    /// Ends the MCP servers cleanly (dropping the stage would only signal them).
    pub async fn shutdown(self) {
        self.toolbox.shutdown().await;
    }
}
