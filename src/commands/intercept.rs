//! `codecrew intercept`: an LLM CLI's output on stdin; the calls in it found and run.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;

use codecrew::cli::{InterceptArgs, OutputArg};
use codecrew::output::color::{NOTICE, Palette, WARNING};
use codecrew::output::console::{self, Inert, Out, Text};
use codecrew_intercept::decode::Event;
use codecrew_intercept::{
    Interceptor, Item, Rejection, ScannerLimits, Segment, ToolCall, neutralise_envelopes,
    neutralise_value,
};
use codecrew_tools::executor::CallRequest;
use codecrew_tools::{Mode, Status, ToolError, ToolExecutor, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;

const CHUNK: usize = 64 * 1024;

pub async fn run(args: InterceptArgs, options: super::ToolOptions) -> anyhow::Result<ExitCode> {
    let mode = Mode::from(args.mode);
    // A dry run runs nothing, so it starts no MCP server (they can take seconds); its
    // json report looks up the servers its calls name, to say whether they have the tool.
    let mut engine = options.engine()?;
    // Their tools' schemas are the servers': a dry run does not check calls to them.
    let mcp_servers: BTreeSet<String> = engine.config_mut().config.mcp.keys().cloned().collect();
    if args.dry_run {
        engine.config_mut().config.mcp.clear();
    }
    let (executor, toolbox) = engine.executor(mode).await?;
    let registry = toolbox.registry().clone();
    let mut report = Report::new(
        args.output,
        executor,
        args.dry_run,
        registry,
        options.colors.stdout,
    );
    report.mcp_servers = mcp_servers;
    let mut interceptor = Interceptor::new(args.from, ScannerLimits::default());
    let mut stdin = tokio::io::stdin();
    let mut buffer = vec![0u8; CHUNK];
    let mut items = Vec::new();
    loop {
        let read = stdin.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        interceptor.feed(&buffer[..read], &mut items);
        for item in items.drain(..) {
            report.item(item).await?;
        }
    }
    interceptor.finish(&mut items);
    for item in items.drain(..) {
        report.item(item).await?;
    }
    if args.dry_run && args.output == OutputArg::Json {
        report.look_up_mcp_tools(mode, &options).await?;
    }
    report.finish()
}

/// Collects (json) or prints as it goes (text) what the output held.
struct Report {
    output: OutputArg,
    /// Runs the calls, or in a dry run only checks them as it would before running.
    executor: ToolExecutor,
    dry_run: bool,
    registry: Arc<ToolRegistry>,
    /// The MCP servers of the config, whose tools a dry run does not check.
    mcp_servers: BTreeSet<String>,
    /// The MCP tools a dry run's calls name, found by starting their servers.
    mcp_tools: BTreeSet<String>,
    calls: Vec<ToolCall>,
    /// A dry run's calls that the executor would refuse, and why (by the call's index).
    refused: Vec<Option<(Status, ToolError)>>,
    results: Vec<ToolResult>,
    rejected: Vec<Rejection>,
    /// The assistant text (json output only; text output prints it as it comes).
    text: String,
    /// Whether what was output so far (printed or collected) ends mid-line.
    open_line: bool,
    /// A message ended mid-line: the next text starts on a new line.
    needs_separator: bool,
    stdout: Out<console::Stdout>,
    /// The CLI's text as a stream, made inert for the terminal.
    stream: Inert,
    /// Styles for codecrew's own lines in the text output.
    palette: Palette,
}

impl Report {
    fn new(
        output: OutputArg,
        executor: ToolExecutor,
        dry_run: bool,
        registry: Arc<ToolRegistry>,
        palette: Palette,
    ) -> Self {
        Report {
            output,
            executor,
            dry_run,
            registry,
            mcp_servers: BTreeSet::new(),
            mcp_tools: BTreeSet::new(),
            calls: Vec::new(),
            refused: Vec::new(),
            results: Vec::new(),
            rejected: Vec::new(),
            text: String::new(),
            open_line: false,
            needs_separator: false,
            stdout: console::stdout(),
            stream: Inert::default(),
            palette,
        }
    }

    async fn item(&mut self, item: Item) -> anyhow::Result<()> {
        match item {
            Item::Segment(Segment::Text(text)) => self.text(&text)?,
            Item::Segment(Segment::Call(call)) => self.call(call).await?,
            Item::Segment(Segment::Rejected(rejection)) => {
                if self.output == OutputArg::Text {
                    let line = format!("[codecrew] rejected: {}", rejection.reason);
                    self.line(&Text::styled(self.palette, WARNING, &line))?;
                }
                self.rejected.push(rejection);
            }
            Item::MessageEnd => self.needs_separator = self.open_line,
            Item::Event(Event::Malformed { reason, raw }) => {
                tracing::warn!("{reason}");
                self.rejected.push(Rejection { reason, raw });
            }
            Item::Event(Event::Error(message)) => {
                console::error(format_args!("the CLI reported an error: {message}"))
            }
            Item::Event(other) => tracing::debug!(event = ?other, "CLI event"),
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> anyhow::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let separator = if std::mem::take(&mut self.needs_separator) {
            "\n"
        } else {
            ""
        };
        self.open_line = !text.ends_with('\n');
        match self.output {
            OutputArg::Json => {
                self.text.push_str(separator);
                self.text.push_str(text);
            }
            OutputArg::Text => {
                let mut shown = Text::plain(separator);
                shown.push_streamed(&mut self.stream, text);
                self.stdout.show(&shown)?;
            }
        }
        Ok(())
    }

    /// A line of codecrew's own, on a line of its own.
    fn line(&mut self, line: &Text) -> anyhow::Result<()> {
        let mut shown = Text::new();
        shown.finish_stream(&mut self.stream);
        if std::mem::take(&mut self.open_line) {
            shown.push("\n");
        }
        self.needs_separator = false;
        shown.append(line).push("\n");
        self.stdout.show(&shown)?;
        Ok(())
    }

    async fn call(&mut self, call: ToolCall) -> anyhow::Result<()> {
        if self.output == OutputArg::Text {
            let input = serde_json::to_string(&call.input)?;
            let line = format!("[codecrew] call {} {input}", call.name);
            self.line(&Text::styled(self.palette, NOTICE, &line))?;
        }
        // Its id where it is found, as a query's calls get theirs.
        let request = CallRequest {
            id: codecrew_core::session::new_call_id(),
            tool: call.tool.clone(),
            input: call.input.clone(),
        };
        if self.dry_run {
            let refused = self.check(&request);
            if let (OutputArg::Text, Some((_, error))) = (self.output, &refused) {
                // The message may quote the input: inert, as results are.
                let line = neutralise_envelopes(&format!("[codecrew] would be refused: {error}"));
                self.line(&Text::styled(self.palette, WARNING, &line))?;
            }
            self.refused.push(refused);
        } else {
            let mut result = self.executor.call(&request).await;
            // What a tool returns may quote hostile text; printed results may be fed back
            // to a model, so no envelope in them may read as a call.
            neutralise_value(&mut result.output);
            if let Some(error) = &mut result.error {
                error.message = neutralise_envelopes(&error.message);
            }
            if self.output == OutputArg::Text {
                let rendered =
                    String::from_utf8_lossy(&console::json::to_vec_pretty(&result)?).into_owned();
                self.line(&Text::plain(&neutralise_envelopes(&rendered)))?;
            }
            self.results.push(result);
        }
        self.calls.push(call);
        Ok(())
    }

    /// What the executor would refuse the call for (the catalog's schema, the mode),
    /// unless it names an MCP server's tool: its schema is the server's, unchecked here.
    fn check(&self, request: &CallRequest) -> Option<(Status, ToolError)> {
        let of_a_server = !self.registry.contains(&request.tool)
            && request
                .tool
                .split_once("__")
                .is_some_and(|(server, _)| self.mcp_servers.contains(server));
        if of_a_server {
            return None;
        }
        self.executor.check(request).err()
    }

    /// Notes which of the MCP tools the calls name (`<server>__<tool>`) their servers
    /// have: from the tool lists an earlier run kept, else by starting those servers.
    async fn look_up_mcp_tools(
        &mut self,
        mode: Mode,
        options: &super::ToolOptions,
    ) -> anyhow::Result<()> {
        let servers: BTreeSet<&str> = self
            .calls
            .iter()
            .filter(|call| !self.registry.contains(&call.tool))
            .filter_map(|call| call.tool.split_once("__").map(|(server, _)| server))
            .collect();
        if servers.is_empty() {
            return Ok(());
        }
        let mut engine = options.engine()?;
        let loaded = engine.config_mut();
        loaded
            .config
            .mcp
            .retain(|name, _| servers.contains(name.as_str()));
        // Said when the run started.
        loaded.blocked.clear();
        let toolbox = engine.toolbox(mode).await;
        let registry = toolbox.registry();
        self.mcp_tools = self
            .calls
            .iter()
            .filter(|call| registry.contains(&call.tool))
            .map(|call| call.tool.clone())
            .collect();
        toolbox.shutdown().await;
        Ok(())
    }

    fn finish(self) -> anyhow::Result<ExitCode> {
        let failed = self.results.iter().any(|result| !result.is_ok());
        if self.output == OutputArg::Json {
            let calls: Vec<Value> = self
                .calls
                .iter()
                .enumerate()
                .map(|(at, call)| {
                    let known =
                        self.registry.contains(&call.tool) || self.mcp_tools.contains(&call.tool);
                    let mut shown = json!({
                        "name": call.name,
                        "tool": call.tool,
                        "input": call.input,
                        "known": known,
                    });
                    if self.dry_run {
                        // What running it would refuse, before asking anyone: an unknown
                        // tool, one the mode does not offer, an input its schema refuses.
                        // null: it would reach the permission policy.
                        shown["refused"] = match self.refused.get(at).cloned().flatten() {
                            Some((status, error)) => json!({"status": status, "error": error}),
                            None => Value::Null,
                        };
                    }
                    shown
                })
                .collect();
            let document = if !self.dry_run {
                json!({
                    "calls": calls,
                    "results": self.results,
                    "text": self.text,
                    "rejected": self.rejected,
                })
            } else {
                json!({ "calls": calls, "text": self.text, "rejected": self.rejected })
            };
            let mut stdout = self.stdout;
            stdout.json_line(&document)?;
        } else {
            let mut stdout = self.stdout;
            let mut stream = self.stream;
            stdout.show(Text::new().finish_stream(&mut stream))?;
        }
        Ok(if failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }
}
