//! The run of a server front end (`mcp`): its clients call the tools themselves, so the
//! run is one job per client, each call recorded as it comes, and the crew calls they make
//! recorded under it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use super::Engine;
use super::job_log::KeptJob;
use crate::runs::{JobRow, NewJob, NewRun, RunLog};
use crate::session::{JobEvent, JobLog};
use codecrew_intercept::ToolCall;
use codecrew_tools::{Mode, ToolResult};

/// The longest client name kept: it is the client's text.
const MAX_CLIENT_NAME: usize = 64;

/// A served run, started in the store at its first call (a server that is started and
/// never called, as a CLI starts every MCP server it is given, leaves no run).
pub struct ServedRun {
    /// None: runs are not recorded.
    path: Option<PathBuf>,
    /// The store's bound in bytes.
    bound: u64,
    run: NewRun,
    log: OnceLock<Option<Arc<RunLog>>>,
    /// Each client's job, by the name it gave.
    clients: Mutex<BTreeMap<String, usize>>,
}

impl Engine {
    /// The run of a server in `mode` whose clients call the tools.
    pub fn served_run(&self, mode: Mode) -> ServedRun {
        ServedRun {
            path: self.runs_path(),
            bound: self.config().logs_max_size.0,
            run: NewRun {
                id: None,
                workspace: self.workspace().display().to_string(),
                command: self.options.log.command.to_owned(),
                mode: mode.name().to_owned(),
                task: format!("(codecrew's tools served, {} mode)", mode.name()),
                input: None,
                continues: None,
            },
            log: OnceLock::new(),
            clients: Mutex::new(BTreeMap::new()),
        }
    }
}

impl ServedRun {
    /// The log of the job of the client named `name` (as it introduced itself): the run
    /// and the job started in the store as needed. None when runs are not recorded.
    pub fn client(&self, name: &str) -> Option<Arc<dyn JobLog>> {
        let log = self
            .log
            .get_or_init(|| {
                let path = self.path.as_ref()?;
                RunLog::start(path, &self.run, self.bound).map(Arc::new)
            })
            .as_ref()?;
        let name = client_name(name);
        let mut clients = self.clients.lock().ok()?;
        let job = *clients.entry(name.clone()).or_insert_with(|| {
            log.job_started(&NewJob {
                agent: &name,
                cli: "mcp-client",
                model: None,
                task: &self.run.task,
                thread: None,
                parent: None,
                depth: 0,
            })
        });
        let row = JobRow {
            log: log.clone(),
            job,
        };
        KeptJob::log(Some(row), None)
    }

    /// Records one call a client made and its result (the call's id is the result's
    /// `tool_call_id`, given when the call came).
    pub fn call(log: &dyn JobLog, call: ToolCall, result: &ToolResult) {
        let id = result.tool_call_id.clone();
        log.event(&JobEvent::ToolCall { id, call });
        log.event(&JobEvent::ToolResult(result.clone()));
    }

    /// The server ends: each client's job and the run, with `exit_code`.
    pub fn finish(&self, exit_code: u8) {
        let Some(Some(log)) = self.log.get() else {
            return;
        };
        if let Ok(clients) = self.clients.lock() {
            for &job in clients.values() {
                log.job_served(job);
            }
        }
        log.ended(exit_code);
    }
}

/// The client's name as kept: printable, at most [`MAX_CLIENT_NAME`] characters, never
/// empty.
fn client_name(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_CLIENT_NAME)
        .collect();
    let kept = kept.trim();
    if kept.is_empty() {
        "mcp client".to_owned()
    } else {
        kept.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::client_name;

    #[test]
    fn a_clients_name_is_kept_printable_and_short() {
        assert_eq!(client_name("claude-code"), "claude-code");
        assert_eq!(client_name("evil\u{1b}[2Jname\n"), "evil[2Jname");
        assert_eq!(client_name(" \t"), "mcp client");
        assert_eq!(client_name(&"x".repeat(200)).len(), 64);
    }
}
