//! Turning calls into results: catalog lookup, schema validation, the mode check, the
//! permission decision, a timeout, caps on what comes back, and every failure as data.
//!
//! The permission decision ([`codecrew_policy::Policy`]) comes after validation and
//! before the tool runs: Deny is a `denied` result with `E_PERMISSION_DENIED`, the reason
//! and what would allow it; Ask goes to the [`Asker`] (a terminal prompt), or is allowed
//! with `--yes` ([`ToolExecutor::assume_yes`]), or denied when there is no terminal.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use codecrew_policy::sandbox::LinkedGit;
use codecrew_policy::{Asker, Grant, NonInteractive, Policy};

mod permission;

use super::middleware::{CallInfo, Middleware};
use super::{
    Caller, Decided, DecidedBy, ErrorCode, Mode, Status, ToolCatalog, ToolContext, ToolError,
    ToolRegistry, ToolResult,
};

/// One call to execute: the tool's name without prefix, and its input.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRequest {
    /// An id for this call; one is made when empty.
    pub id: String,
    pub tool: String,
    pub input: Value,
}

/// Runs calls for one run: the catalog says what is offered, the registry what exists.
pub struct ToolExecutor {
    registry: Arc<ToolRegistry>,
    catalog: Arc<ToolCatalog>,
    context: ToolContext,
    middleware: Vec<Arc<dyn Middleware>>,
    next_id: AtomicU64,
    policy: Arc<Policy>,
    asker: Arc<dyn Asker>,
    assume_yes: bool,
    /// Exact calls approved "always for this run".
    approved: Mutex<HashSet<String>>,
    /// How many of the CLI's own tool calls were judged ([`ToolExecutor::authorize`]).
    authorized: AtomicU64,
}

impl ToolExecutor {
    /// How many of a CLI's own tool calls this executor has judged, whatever it decided.
    pub fn authorized_calls(&self) -> u64 {
        self.authorized.load(Ordering::Relaxed)
    }

    pub fn new(
        registry: Arc<ToolRegistry>,
        catalog: Arc<ToolCatalog>,
        context: ToolContext,
    ) -> Self {
        ToolExecutor {
            registry,
            catalog,
            context,
            middleware: Vec::new(),
            next_id: AtomicU64::new(1),
            authorized: AtomicU64::new(0),
            policy: Arc::new(Policy::default()),
            asker: Arc::new(NonInteractive),
            assume_yes: false,
            approved: Mutex::new(HashSet::new()),
        }
    }

    /// The permission policy (the built-in defaults unless set). Its `pass_env` and
    /// `allow_network` become the settings of the commands this executor runs.
    pub fn with_policy(mut self, policy: Arc<Policy>) -> Self {
        self.context.exec.pass_env = policy.pass_env().to_vec();
        self.context.exec.allow_network = policy.allow_network();
        self.policy = policy;
        self
    }

    /// The executor of a job that works in `workspace` rather than the run's (a linked
    /// worktree codecrew made, whose repository's git data is `git`): its file tools and
    /// commands are confined there.
    pub fn in_workspace(mut self, workspace: PathBuf, git: LinkedGit) -> Self {
        self.context.workspace = workspace;
        self.context.exec.git = git;
        self
    }

    /// Who answers when a call needs approval ([`NonInteractive`] unless set).
    pub fn with_asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = asker;
        self
    }

    /// `--yes`: calls that would be asked about are allowed. Denied calls stay denied.
    pub fn assume_yes(mut self, yes: bool) -> Self {
        self.assume_yes = yes;
        self
    }

    /// The permission policy calls are decided by.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Whether calls that would ask are allowed (`--yes`).
    pub fn assumes_yes(&self) -> bool {
        self.assume_yes
    }

    /// Adds a hook that sees every call before and after it runs.
    pub fn with_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    pub fn catalog(&self) -> &ToolCatalog {
        &self.catalog
    }

    pub fn context(&self) -> &ToolContext {
        &self.context
    }

    /// Runs calls in order. Consecutive read-only calls run concurrently: they cannot
    /// see each other's effects, so their order does not matter, only the results' order.
    pub async fn call_all(&self, calls: &[CallRequest]) -> Vec<ToolResult> {
        self.call_all_by(calls, None).await
    }

    /// As [`ToolExecutor::call_all`], the calls made by `caller` (the tools see it as
    /// their context's [`ToolContext::caller`]).
    pub async fn call_all_by(
        &self,
        calls: &[CallRequest],
        caller: Option<&Caller>,
    ) -> Vec<ToolResult> {
        let mut results = Vec::with_capacity(calls.len());
        let mut start = 0;
        while start < calls.len() {
            let end = start
                + calls[start..]
                    .iter()
                    .take_while(|call| self.is_readonly(&call.tool))
                    .count();
            if end > start {
                let batch = calls[start..end]
                    .iter()
                    .map(|call| self.call_by(call, caller));
                results.extend(join_all(batch).await);
                start = end;
            } else {
                results.push(self.call_by(&calls[start], caller).await);
                start += 1;
            }
        }
        results
    }

    fn is_readonly(&self, tool: &str) -> bool {
        self.catalog
            .get(tool)
            .is_some_and(|entry| entry.tool.readonly())
    }

    /// Runs one call and returns its result; never fails.
    pub async fn call(&self, call: &CallRequest) -> ToolResult {
        self.call_by(call, None).await
    }

    /// As [`ToolExecutor::call`], the call made by `caller`.
    pub async fn call_by(&self, call: &CallRequest, caller: Option<&Caller>) -> ToolResult {
        let id = if call.id.is_empty() {
            format!("call_{}", self.next_id.fetch_add(1, Ordering::Relaxed))
        } else {
            call.id.clone()
        };
        let info = self.announce(id.clone(), call);
        let started = Instant::now();
        let Outcome {
            status,
            result: outcome,
            max_error_chars,
            decided,
        } = self.run(call, caller).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (output, error) = match outcome {
            Ok(output) => (output, None),
            Err(error) => (Value::Null, Some(cap_error(error, max_error_chars))),
        };
        let result = ToolResult {
            tool_call_id: id,
            tool: call.tool.clone(),
            status,
            output,
            error,
            duration_ms,
            decided,
        };
        self.report(&info, &result);
        result
    }

    /// What the hooks learn of a call before it runs; they are told.
    fn announce(&self, id: String, call: &CallRequest) -> CallInfo {
        let info = CallInfo {
            id,
            tool: call.tool.clone(),
            input: call.input.clone(),
            mode: self.context.mode,
        };
        for hook in &self.middleware {
            hook.before(&info);
        }
        info
    }

    /// Tells the hooks how a call ended.
    fn report(&self, info: &CallInfo, result: &ToolResult) {
        for hook in &self.middleware {
            hook.after(info, result);
        }
    }

    /// What this executor would refuse `call` for before it asks the policy or runs
    /// anything: a tool the run does not offer or does not have, an input the tool's
    /// schema refuses, a writing tool in query. `codecrew intercept --dry-run` says it.
    pub fn check(&self, call: &CallRequest) -> Result<(), (Status, ToolError)> {
        match self.screen(call) {
            Ok(_) => Ok(()),
            Err(Outcome {
                status,
                result: Err(error),
                ..
            }) => Err((status, error)),
            Err(Outcome { result: Ok(_), .. }) => Ok(()),
        }
    }

    /// The call's tool, or the outcome that refuses it before the policy is asked.
    fn screen(&self, call: &CallRequest) -> Result<&super::catalog::CatalogEntry, Outcome> {
        let default_cap = super::DEFAULT_MAX_ERROR_CHARS;
        let Some(entry) = self.catalog.get(&call.tool) else {
            let offered: Vec<&str> = self.catalog.names().collect();
            let (status, error) = if let Some(tool) = self.registry.get(&call.tool) {
                let why = if self.context.mode == Mode::Query && !tool.readonly() {
                    " because it can change files and this run is read-only (query mode)"
                } else {
                    ""
                };
                let error = ToolError::new(
                    ErrorCode::ToolNotInCatalog,
                    format!(
                        "the tool codecrew:{} is not offered in this run{why}",
                        call.tool
                    ),
                )
                .with_suggestion(format!("use one of: {}", prefixed(&offered)));
                (Status::Denied, error)
            } else {
                let error = ToolError::new(
                    ErrorCode::UnknownTool,
                    format!("there is no tool named codecrew:{}", call.tool),
                )
                .with_suggestion(format!("available tools: {}", prefixed(&offered)));
                (Status::Error, error)
            };
            let decided = (status == Status::Denied).then_some(Decided::by(DecidedBy::Mode));
            return Err(Outcome::failed(status, error, default_cap, decided));
        };
        let tool = &entry.tool;
        let cap = tool.max_error_chars();
        if let Err(problems) = entry.validate(&call.input) {
            let error = ToolError::new(ErrorCode::InvalidInput, problems.join("; "))
                .with_suggestion(format!(
                    "`codecrew tools show {}` prints the input schema",
                    tool.name()
                ));
            return Err(Outcome::failed(Status::Error, error, cap, None));
        }
        if self.context.mode == Mode::Query && !tool.readonly() && !tool.offered_in_query() {
            let error = ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "the tool codecrew:{} can change files; query mode is read-only",
                    tool.name()
                ),
            )
            .with_suggestion("run the task with `codecrew execute` instead");
            let decided = Some(Decided::by(DecidedBy::Mode));
            return Err(Outcome::failed(Status::Denied, error, cap, decided));
        }
        Ok(entry)
    }

    async fn run(&self, call: &CallRequest, caller: Option<&Caller>) -> Outcome {
        let entry = match self.screen(call) {
            Ok(entry) => entry,
            Err(refused) => return refused,
        };
        let tool = &entry.tool;
        let cap = tool.max_error_chars();
        let (verdict, decided) = self
            .permit(
                Some(call.id.as_str()).filter(|id| !id.is_empty()),
                tool.name(),
                tool.readonly(),
                &call.input,
            )
            .await;
        let grant = match verdict {
            Ok(grant) => grant,
            Err(error) => return Outcome::failed(Status::Denied, error, cap, Some(decided)),
        };
        // The grant picks the sandbox of the commands this call starts.
        let mut context = self.context.clone();
        context.exec.grant = grant;
        context.caller = caller.cloned();
        let timeout = tool.timeout();
        let outcome =
            match tokio::time::timeout(timeout, tool.execute(&context, call.input.clone())).await {
                Ok(outcome) => outcome,
                Err(_) => Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "the tool codecrew:{} did not finish within {} ms",
                        tool.name(),
                        timeout.as_millis()
                    ),
                )),
            };
        let status = if outcome.is_ok() {
            Status::Ok
        } else {
            Status::Error
        };
        Outcome {
            status,
            result: outcome,
            max_error_chars: cap,
            decided: Some(decided),
        }
    }
}

/// How a call ended, before it is a [`ToolResult`].
struct Outcome {
    status: Status,
    result: Result<Value, ToolError>,
    /// How much of an error's message the tool lets through.
    max_error_chars: usize,
    decided: Option<Decided>,
}

impl Outcome {
    fn failed(
        status: Status,
        error: ToolError,
        max_error_chars: usize,
        decided: Option<Decided>,
    ) -> Outcome {
        Outcome {
            status,
            result: Err(error),
            max_error_chars,
            decided,
        }
    }
}

impl ToolExecutor {
    /// The decision on a call an agent CLI's own tool is about to make (its Write, its
    /// shell), judged as `call`, the codecrew call it amounts to: the mode, the policy,
    /// the asker or `--yes`, and the audit log (the call's id names the CLI's tool). Nothing
    /// runs here; the CLI runs its tool when this says yes.
    pub async fn authorize(&self, call: &CallRequest) -> Result<Grant, ToolError> {
        self.authorized.fetch_add(1, Ordering::Relaxed);
        let info = self.announce(call.id.clone(), call);
        let started = Instant::now();
        // A tool codecrew has no equivalent of (a web fetch) counts as one that changes
        // things: refused in query, asked about in execute.
        let (readonly, offered) = self
            .registry
            .get(&call.tool)
            .map_or((false, false), |tool| {
                (tool.readonly(), tool.offered_in_query())
            });
        let (verdict, decided) = if self.context.mode == Mode::Query && !readonly && !offered {
            let refused = ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "query mode is read-only: {} can change files or reach out",
                    call.tool
                ),
            )
            .with_suggestion("run the task with `codecrew execute` instead");
            (Err(refused), Decided::by(DecidedBy::Mode))
        } else {
            // The call's id is the CLI's, not one the editor was shown: not said.
            self.permit(None, &call.tool, readonly, &call.input).await
        };
        let result = ToolResult {
            tool_call_id: call.id.clone(),
            tool: call.tool.clone(),
            status: if verdict.is_ok() {
                Status::Ok
            } else {
                Status::Denied
            },
            output: Value::Null,
            error: verdict.as_ref().err().cloned(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            decided: Some(decided),
        };
        self.report(&info, &result);
        verdict
    }
}

fn prefixed(names: &[&str]) -> String {
    if names.is_empty() {
        return "(none)".to_owned();
    }
    names
        .iter()
        .map(|name| format!("codecrew:{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Caps an error's message and suggestion at `max` characters each.
fn cap_error(mut error: ToolError, max: usize) -> ToolError {
    error.message = truncate_chars(&error.message, max);
    error.suggestion = error.suggestion.map(|s| truncate_chars(&s, max));
    error
}

/// The first `max` characters of `text`, with a marker when something was cut.
pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let dropped = text[cut..].chars().count();
            format!("{}… [{dropped} more characters]", &text[..cut])
        }
    }
}

/// Polls futures concurrently on the current task and returns their outputs in order.
async fn join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for future in futures {
        set.push(Box::pin(future));
    }
    let mut outputs: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in set.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
