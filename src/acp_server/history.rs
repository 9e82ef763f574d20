//! An editor's history over the run store: `session/list` lists the sessions kept (each
//! a run of `codecrew acp`), `session/load` replays one and goes on from it.

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionInfo, SessionUpdate};

use codecrew_core::runs::{self, Filter, RunDetail, Store, StoreError};

/// The most sessions a listing gives.
const LISTED: usize = 200;

/// The command an editor's sessions are recorded under.
pub const COMMAND: &str = "acp";

/// The sessions kept, newest first; in `cwd` only when given.
pub fn list(cwd: Option<&str>) -> Result<Vec<SessionInfo>, StoreError> {
    let Some(store) = open()? else {
        return Ok(Vec::new());
    };
    let runs = store.list(&Filter {
        limit: LISTED,
        workspace: cwd.map(str::to_owned),
        command: Some(COMMAND.to_owned()),
        ..Filter::default()
    })?;
    Ok(runs
        .into_iter()
        .map(|run| {
            let updated = run.ended.clone().unwrap_or_else(|| run.started.clone());
            let title = run
                .task
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            SessionInfo::new(run.id, run.workspace)
                .title(title)
                .updated_at(updated)
        })
        .collect())
}

/// The session `id` as kept, when it is an editor's session.
pub fn find(id: &str) -> Result<Option<RunDetail>, StoreError> {
    // Only a whole id: the editor names a session by the id it was given.
    if id.len() != 16 || !id.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let Some(store) = open()? else {
        return Ok(None);
    };
    match store.show(id) {
        Ok(run) if run.run.command == COMMAND => Ok(Some(run)),
        Ok(_) | Err(StoreError::NotFound(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// The conversation as the editor replays it: each prompt once, then each agent's answer.
pub fn replay(run: &RunDetail) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut last_task: Option<&str> = None;
    // A crew call's job is its caller's business: the caller's answer holds what it gave.
    let lines: Vec<_> = run.jobs.iter().filter(|job| job.depth == 0).collect();
    let first = lines.first().map(|job| job.agent.as_str());
    let many = lines.iter().any(|job| Some(job.agent.as_str()) != first);
    for job in lines {
        if last_task != Some(job.task.as_str()) {
            updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                ContentBlock::from(job.task.clone()),
            )));
            last_task = Some(&job.task);
        }
        if let Some(answer) = &job.answer {
            let text = if many {
                format!("**@{}:** {answer}\n\n", job.agent)
            } else {
                answer.clone()
            };
            updates.push(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::from(text),
            )));
        }
    }
    updates
}

fn open() -> Result<Option<Store>, StoreError> {
    match runs::default_path() {
        Some(path) => Store::open_existing(&path),
        None => Ok(None),
    }
}
