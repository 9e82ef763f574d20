//! `codecrew query` and `codecrew execute`: resolve the mentions, run every job at once,
//! render as they go, and turn the reports into an exit code.

use std::process::ExitCode;

use std::sync::Arc;

use codecrew::cli::RunArgs;
use codecrew::output::color::{NOTICE, Palette};
use codecrew::output::console::{self, Text};
use codecrew::output::live::LiveView;
use codecrew::output::render::{JobLabel, Renderer, failure_line};
use codecrew::run::crew::{Crew, ExecutorFactory};
use codecrew::run::mention;
use codecrew::run::piped::{self, Piped};
use codecrew::run::session::{JobReport, Settings, StopReason};
use codecrew::run::thread::{self, Exchange, ThreadStore};
use codecrew::run::usage::JobUsage;
use codecrew_tools::Mode;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

pub async fn run(
    args: RunArgs,
    mode: Mode,
    options: super::ToolOptions,
) -> anyhow::Result<ExitCode> {
    let workspace = options.workspace.clone();
    let (loaded, policy) = super::config_and_policy(&workspace)?;
    let config = &loaded.config;
    let Some((tasks, piped)) = tasks_and_stdin(&args).await else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let mut jobs = mention::jobs(&tasks, &config.default_agent);
    for job in &mut jobs {
        job.task = piped.beside(&job.task);
    }
    // Before the toolbox starts any MCP server: a mistyped agent costs nothing (a usage
    // error: `main` prints it and exits 2).
    codecrew::run::jobs::check(&loaded, &jobs)?;
    // The thread as it stands now; each job records its exchange when it ends.
    let continued = match &args.thread {
        Some(name) => {
            let store = ThreadStore::in_workspace(&workspace);
            match store.load_to_continue(name, loaded.project_trusted) {
                Ok(thread) => Some((store, name.clone(), thread)),
                Err(error) => {
                    console::error(error);
                    return Ok(ExitCode::from(super::EXIT_USAGE));
                }
            }
        }
        None => None,
    };
    let settings = Settings {
        max_turns: args.max_turns.unwrap_or(config.limits.max_turns),
        turn_timeout: args.timeout.unwrap_or(config.limits.turn_timeout()),
        // Under an agent (its run_command ran codecrew), delegation goes on counting.
        depth: codecrew::run::crew::depth_from_env(),
        ..Settings::new(mode, &config.limits, workspace.clone())
    };
    // Lives until every job is done: it owns the MCP servers.
    let toolbox = super::toolbox_on_call(&loaded, &workspace, mode).await;
    // The agents the jobs may consult (`query_agent`, `execute_agent`): sub-agents get
    // their executors from the same factory, so the same policy, asker and hooks.
    let executor_for: ExecutorFactory = {
        let (options, policy) = (options.clone(), policy.clone());
        Arc::new(move |mode, registry, catalog| {
            super::executor_for(registry, catalog, mode, &options, policy.clone())
        })
    };
    let crew = Crew::new(
        loaded.clone(),
        toolbox.registry(),
        settings.clone(),
        executor_for,
    );
    let mut runs =
        codecrew::run::jobs::plan(&loaded, jobs, &settings, crew.registry(), |catalog| {
            crew.executor(mode, catalog)
        })?;
    super::warn_left_out(
        &loaded,
        &workspace,
        runs.iter()
            .map(|run| (run.job.agent.as_str(), &run.provider)),
    );
    if let Some((_, _, Some(thread))) = &continued {
        for run in &mut runs {
            let kind = run.provider.kind().name();
            run.continuation = thread.continuation(&run.job.agent, kind);
            if run.job.model.is_none() {
                run.job.model = thread.model_for(&run.job.agent, kind);
            }
        }
    }
    let tasks_of: Vec<String> = runs.iter().map(|run| run.job.task.clone()).collect();
    let labels: Vec<JobLabel> = runs
        .iter()
        .map(|run| JobLabel {
            agent: run.job.agent.clone(),
            provider: run.provider.kind().name().to_owned(),
            model: run
                .provider
                .model(run.job.model.as_deref())
                .map(str::to_owned),
            mode: mode.name(),
        })
        .collect();
    let mut saves = JoinSet::new();

    let (events_tx, mut events) = mpsc::unbounded_channel();
    let (cancel_tx, cancel) = watch::channel(false);
    // Each job's report arrives as soon as its answer is final; its task ends once its
    // CLI has shut down, which the answer does not wait for.
    let (answers_tx, mut answers) = mpsc::unbounded_channel();
    let mut tasks = JoinSet::new();
    let count = runs.len();
    for run in runs {
        let index = run.index;
        let events_tx = events_tx.clone();
        let answers_tx = answers_tx.clone();
        let cancel = cancel.clone();
        tasks.spawn(async move {
            run.run_reporting(events_tx, cancel, |report| {
                let _ = answers_tx.send((index, report));
            })
            .await;
        });
    }
    drop((events_tx, answers_tx));

    let colors = options.colors;
    // At a terminal: a status line per running agent on stderr, below the text.
    let mut live = (args.output == codecrew::cli::RunOutput::Text
        && !args.quiet
        && console::stderr_is_terminal())
    .then(|| LiveView::new(labels.iter().map(status_title).collect()));
    let many = count > 1;
    let stdout: Box<dyn std::io::Write + Send> = match &live {
        Some(view) => {
            codecrew::output::ask::set_screen(Some(view.screen()));
            console::set_live(Some(view.multi()));
            view.set_wanted(true);
            Box::new(view.stdout())
        }
        None => Box::new(console::stdout().into_inner()),
    };
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(120));
    let mut renderer =
        Renderer::new(args.output, args.raw, labels, stdout).with_palette(colors.stdout);
    // People at a terminal read the answer rendered; a pipe, --color never and NO_COLOR
    // get the model's markdown as it is (as do JSON and --raw: the renderer knows those).
    if colors.stdout.enabled() && console::stdout_is_terminal() {
        renderer = renderer.with_markdown(codecrew::output::markdown::terminal_width());
    }
    renderer.start()?;
    let mut reports: Vec<Option<JobReport>> = (0..count).map(|_| None).collect();
    let mut interrupted: Option<u8> = None;
    let signal = super::interrupted();
    tokio::pin!(signal);
    let mut answered = 0;
    // Until every job has answered (or ended without): events, answers, ticks, signals.
    loop {
        tokio::select! {
            // Events a job sent before its answer are rendered before it.
            biased;
            Some((index, event)) = events.recv() => {
                renderer.event(index, &event)?;
                if let Some(view) = &mut live {
                    view.event(index, &event);
                    // One agent's text streams mid-line, where nothing may be drawn.
                    view.set_wanted(many || args.raw || renderer.at_line_start());
                }
            }
            Some((index, report)) = answers.recv() => {
                if let Some(view) = &mut live {
                    view.done(index);
                }
                if let (false, codecrew::cli::RunOutput::Text, Some(error)) =
                    (report.success, args.output, &report.error)
                {
                    console::line(&failure_line(colors.stderr, &report.agent, error));
                }
                renderer.done(index, &report)?;
                if let (Some((store, name, _)), true) = (&continued, report.success) {
                    let exchange = Exchange::from_report(&tasks_of[index], &report, thread::now());
                    let (store, name) = (store.clone(), name.clone());
                    // Saved as soon as the job ends, so an interrupt later keeps it; the
                    // store's lock may wait for another process, so off the runtime.
                    saves.spawn_blocking(move || {
                        store.update(&name, thread::now(), |thread| thread.record(exchange))
                    });
                }
                reports[index] = Some(report);
                answered += 1;
                if answered == count {
                    break;
                }
            }
            code = &mut signal, if interrupted.is_none() => {
                interrupted = Some(stop_on_signal(code, &cancel_tx));
            }
            _ = ticks.tick(), if live.is_some() => {
                if let Some(view) = &mut live {
                    view.tick();
                }
            }
            // Only a job that stopped abnormally ends before its answer (the answers
            // channel is read first): with every job ended, nothing more will come.
            joined = tasks.join_next() => match joined {
                Some(Ok(())) => {}
                Some(Err(error)) => tracing::error!("a job stopped abnormally: {error}"),
                None => break,
            },
        }
    }
    if let Some(view) = &live {
        view.clear();
        codecrew::output::ask::set_screen(None);
        console::set_live(None);
    }
    let reports: Vec<JobReport> = reports.into_iter().flatten().collect();
    renderer.finish(&reports)?;
    if args.output == codecrew::cli::RunOutput::Text && !args.quiet {
        print_usage(&reports, colors.stderr);
    }
    // The answers are out (`finish` flushes); now the CLIs kept for the loop shut down
    // (a signal still stops them, and a second one ends codecrew at once).
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                Some(Ok(())) => {}
                Some(Err(error)) => tracing::error!("a job stopped abnormally: {error}"),
                None => break,
            },
            code = &mut signal, if interrupted.is_none() => {
                interrupted = Some(stop_on_signal(code, &cancel_tx));
            }
        }
    }
    let mut code = exit_code(&reports, interrupted, count);
    while let Some(saved) = saves.join_next().await {
        let error = match saved {
            Ok(Ok(_)) => continue,
            Ok(Err(error)) => error.to_string(),
            Err(error) => error.to_string(),
        };
        // The answer was printed but the thread does not have it: not a success.
        console::error(format_args!("the thread was not updated: {error}"));
        if code == 0 {
            code = 1;
        }
    }
    // The MCP servers exit cleanly (dropping the toolbox would only signal them).
    toolbox.shutdown().await;
    Ok(ExitCode::from(code))
}

/// The command line's tasks, and what a pipe on stdin gives beside them (nothing when
/// stdin was the task itself: `-`, or no task given). None after a usage error, said.
async fn tasks_and_stdin(args: &RunArgs) -> Option<(Vec<String>, Piped)> {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    let piped = if args.no_stdin || stdin.is_terminal() {
        Piped::Nothing
    } else {
        let wait = args.stdin_timeout.unwrap_or(piped::DEFAULT_WAIT);
        let read = tokio::task::spawn_blocking(move || piped::read(stdin, wait)).await;
        match read {
            Ok(Ok(piped)) => piped,
            Ok(Err(error)) => {
                console::error(error);
                return None;
            }
            Err(error) => {
                console::error(format_args!("cannot read stdin: {error}"));
                return None;
            }
        }
    };
    if let Some(notice) = piped.notice() {
        console::warn(notice);
    }
    let wants_stdin = args.tasks.is_empty() || args.tasks.iter().any(|task| task == "-");
    if !wants_stdin {
        return Some((args.tasks.clone(), piped));
    }
    let Piped::Text { text, .. } = &piped else {
        console::error(
            "no task: give one as an argument (codecrew query \"@claude how does X work?\"), \
             or pipe it on stdin (`-` reads the task from stdin)",
        );
        return None;
    };
    let tasks = if args.tasks.is_empty() {
        vec![text.clone()]
    } else {
        let task = |given: &String| {
            if given == "-" {
                text.clone()
            } else {
                given.clone()
            }
        };
        args.tasks.iter().map(task).collect()
    };
    Some((tasks, Piped::Nothing))
}

/// The first interrupt: every job is told to stop. A second one ends the process at
/// once, dropping nothing: the CLIs' groups are killed first, then what their walls hold
/// is put back (which dropping their commands would have done).
fn stop_on_signal(code: u8, cancel: &watch::Sender<bool>) -> u8 {
    let _ = cancel.send(true);
    tokio::spawn(async move {
        let code = super::interrupted().await;
        codecrew_policy::process::kill_all();
        codecrew::clis::wall::guard::restore_all_now();
        std::process::exit(i32::from(code));
    });
    code
}

/// One line per agent on stderr: what it used (and the sum, for more than one). A job
/// that failed before its first turn (its CLI missing) used nothing: its error says all.
fn print_usage(reports: &[JobReport], palette: Palette) {
    let reports: Vec<&JobReport> = reports.iter().filter(|r| r.usage.turns > 0).collect();
    for report in &reports {
        let model = report
            .model
            .as_deref()
            .map(|m| format!(":{m}"))
            .unwrap_or_default();
        let line = format!("@{}{model}: {}", report.agent, report.usage.summary());
        console::line(&Text::styled(palette, NOTICE, &line));
    }
    if reports.len() > 1 {
        let total = JobUsage::total(reports.iter().map(|r| &r.usage));
        let line = format!("total: {}", total.summary());
        console::line(&Text::styled(palette, NOTICE, &line));
    }
}

/// Interrupted (130, or 143/129 for SIGTERM/SIGHUP) > 124 timed out > 3 CLI missing >
/// 1 any failure > 0.
fn exit_code(reports: &[JobReport], interrupted: Option<u8>, expected: usize) -> u8 {
    if let Some(code) = interrupted {
        code
    } else if reports
        .iter()
        .any(|r| r.stop_reason == StopReason::Interrupted)
    {
        130
    } else if reports.iter().any(|r| r.timed_out) {
        124
    } else if reports.iter().any(|r| r.missing_cli) {
        3
    } else if reports.len() < expected || reports.iter().any(|r| !r.success) {
        1
    } else {
        0
    }
}

/// `@claude:haiku`, the name of an agent's status line.
fn status_title(label: &JobLabel) -> String {
    match &label.model {
        Some(model) => format!("@{}:{model}", label.agent),
        None => format!("@{}", label.agent),
    }
}
