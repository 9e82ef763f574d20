//! A run's jobs in git worktrees of their own (`execute --worktrees`): made before any
//! CLI starts, settled once every job has ended.

use std::path::PathBuf;

use super::{Engine, Run};
use crate::mention::Job;
use crate::runs::RunLog;
use crate::session::Place;
use crate::worktree::make::{self, Isolation, Made, MakeError};
use crate::worktree::settle::{self, CheckSpec};
use crate::worktree::{Record, Repository, kept};

/// Why a run's worktrees could not be made. Nothing was left behind.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error(
        "{} is not in a git repository: agents can work in worktrees of their own only \
         in one (run `git init` and commit, or give the agents one at a time)",
        .0.display()
    )]
    NotARepository(PathBuf),
    #[error(transparent)]
    Make(#[from] MakeError),
}

/// The worktrees of one run, each job's by its index.
pub struct RunWorktrees {
    repo: Repository,
    folder: PathBuf,
    made: Vec<Made>,
    check: Option<CheckSpec>,
}

/// One job's worktree once settled, for the front end's table.
#[derive(Debug, Clone)]
pub struct Settled {
    pub index: usize,
    pub record: Record,
    /// Where it is (gone when the agent changed nothing).
    pub path: PathBuf,
    /// Why it could not be settled (its figures are then missing).
    pub error: Option<String>,
}

impl Engine {
    /// One worktree per job, named by the run and the job's agent (`-2`, `-3`... for an
    /// agent given several jobs), from the same base; the places the jobs work in.
    pub(super) fn make_worktrees(
        &self,
        run: &str,
        jobs: &[Job],
        isolation: &Isolation,
        check: Option<String>,
    ) -> Result<RunWorktrees, WorktreeError> {
        let repo = Repository::find(self.workspace())
            .ok_or_else(|| WorktreeError::NotARepository(self.workspace().to_path_buf()))?;
        // What the user's `[worktree]` adds to each.
        let isolation = &Isolation {
            link: self.config().worktree_link.clone(),
            setup: self.config().worktree_setup.clone(),
            ..isolation.clone()
        };
        let base = make::base(&repo, isolation)?;
        let root = crate::worktree::root().ok_or(MakeError::NoRoot)?;
        let folder = repo.folder(&root);
        let abandoned = kept::list(&folder)
            .iter()
            .filter(|kept| kept.record.abandoned())
            .count();
        if abandoned > 0 {
            codecrew_agents::notices::warn(&format!(
                "{abandoned} worktree(s) of runs whose codecrew died before settling them are \
                 left in {}: `codecrew worktrees` lists them, `codecrew worktrees prune` \
                 removes them",
                folder.display()
            ));
        }
        let mut made: Vec<Made> = Vec::with_capacity(jobs.len());
        for job in jobs {
            let name = job_name(&job.agent, made.iter().map(|m| m.record.agent.as_str()));
            match make::make(&repo, &base, run, &name, isolation) {
                Ok(one) => made.push(one),
                Err(error) => {
                    // Half a crew isolated is no crew: what was made goes.
                    for one in &made {
                        let _ = kept::remove(&repo, &folder, &one.record);
                    }
                    let half = crate::worktree::Record::file(&folder, run, &name);
                    if let Ok(record) = crate::worktree::Record::read(&half) {
                        let _ = kept::remove(&repo, &folder, &record);
                    }
                    return Err(error.into());
                }
            }
        }
        for note in made.iter().flat_map(|one| &one.notes) {
            codecrew_agents::notices::warn(note);
        }
        let policy = self.policy();
        let check = check.map(|command| CheckSpec {
            command,
            pass_env: policy.pass_env().to_vec(),
            allow_network: policy.allow_network(),
            sandbox: crate::toolbox::sandbox_enabled(),
        });
        Ok(RunWorktrees {
            repo,
            folder,
            made,
            check,
        })
    }
}

/// The name of a job's worktree: its agent's, numbered when the agent has one already.
fn job_name<'a>(agent: &str, taken: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut name = agent.to_owned();
    let mut n = 1;
    while taken.clone().any(|other| other == name) {
        n += 1;
        name = format!("{agent}-{n}");
    }
    name
}

impl RunWorktrees {
    /// Each job's place, in order.
    pub fn places(&self) -> Vec<Place> {
        self.made
            .iter()
            .map(|one| Place {
                workspace: one.workspace.clone(),
                git: one.outside.clone(),
            })
            .collect()
    }

    /// Writes job `index`'s worktree down in the run store, as its job `row`.
    pub(super) fn record_start(&self, index: usize, log: &RunLog, row: usize) {
        if let Some(one) = self.made.get(index) {
            log.job_worktree(row, &one.record.summary(&one.path));
        }
    }

    /// Removes every worktree (the run did not start).
    pub(super) fn remove_all(&self) {
        for one in &self.made {
            if let Err(error) = kept::remove(&self.repo, &self.folder, &one.record) {
                tracing::warn!("{error}");
            }
        }
    }

    /// The base commit every worktree started from.
    pub fn base(&self) -> Option<&str> {
        self.made.first().map(|one| one.record.base.as_str())
    }
}

impl Run {
    /// The run's worktrees, when its jobs have them: the base and each one's place.
    pub fn worktrees(&self) -> Option<(&str, Vec<(usize, PathBuf)>)> {
        let worktrees = self.worktrees.as_ref()?;
        let places = worktrees
            .made
            .iter()
            .enumerate()
            .map(|(index, one)| (index, one.path.clone()))
            .collect();
        Some((worktrees.base().unwrap_or_default(), places))
    }

    /// After [`Run::wind_down`] (no CLI writes any more): each worktree's work
    /// committed, measured and checked; the unchanged ones removed.
    pub async fn settle_worktrees(&mut self) -> Vec<Settled> {
        let Some(worktrees) = self.worktrees.as_mut() else {
            return Vec::new();
        };
        let mut settled = Vec::with_capacity(worktrees.made.len());
        for (index, one) in worktrees.made.iter_mut().enumerate() {
            let result = settle::settle(
                &worktrees.repo,
                &worktrees.folder,
                &mut one.record,
                worktrees.check.as_ref(),
                &one.outside,
            )
            .await;
            if let (Some(log), Some(Some(row))) = (&self.log, self.rows.get(index)) {
                log.job_worktree(*row, &one.record.summary(&one.path));
            }
            settled.push(Settled {
                index,
                record: one.record.clone(),
                path: one.path.clone(),
                error: result.err().map(|error| error.to_string()),
            });
        }
        settled
    }
}
