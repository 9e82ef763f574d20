//! `codecrew query` and `codecrew execute`: resolve the mentions, run every job at once,
//! render as they go, and turn the reports into an exit code.

use std::process::ExitCode;
use std::sync::Arc;

use codecrew::cli::{RunArgs, RunOutput};
use codecrew::output::color::{NOTICE, Palette};
use codecrew::output::console::{self, Text};
use codecrew::output::live::LiveView;
use codecrew::output::render::{Renderer, failure_line, last_attempt};
use codecrew_core::engine::{Engine, JobLabel, Limits, Request, Run, StartError, Update};
use codecrew_core::session::{self, Failure, JobReport};
use codecrew_core::usage::JobUsage;
use codecrew_policy::NonInteractive;
use codecrew_tools::Mode;

use super::tasks;

pub async fn run(
    args: RunArgs,
    mode: Mode,
    options: super::ToolOptions,
) -> anyhow::Result<ExitCode> {
    // A schema that is not one is refused before anything starts.
    let answer = match args.answer_shape() {
        Ok(answer) => answer,
        Err(error) => {
            console::error(error);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
    };
    if args.background.detach {
        return super::detach::start(args, options).await;
    }
    let mut engine = options.engine()?;
    let mut early_signals = None;
    if args.background.run_id.is_some() {
        // A run in the background (`--detach`'s child): nobody is there to answer, and
        // it has no terminal to ask at; every question is a denial, at once.
        engine = engine.asking(Arc::new(NonInteractive));
        // `codecrew kill` may interrupt it as soon as its run is recorded, which
        // `Engine::start` does before it returns: listened for from before then.
        early_signals = super::Signals::new();
    }
    let Some(piped) = tasks::read_stdin(&args).await else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let Some((tasks, piped)) = tasks::tasks(&args, piped) else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let Some((continues, jobs)) = tasks::jobs(&engine, &args, &tasks, &piped) else {
        return Ok(ExitCode::from(super::EXIT_USAGE));
    };
    let isolation =
        match super::crew_table::isolation(&args.isolation, mode, jobs.len(), &options.workspace) {
            Ok(isolation) => isolation,
            Err(message) => {
                console::error(message);
                return Ok(ExitCode::from(super::EXIT_USAGE));
            }
        };
    let request = Request {
        jobs,
        mode,
        limits: Limits {
            max_turns: args.max_turns,
            turn_timeout: args.timeout,
            answer: answer.clone(),
        },
        thread: args.thread.clone(),
        input: piped.digest(),
        run_id: args.background.run_id.clone(),
        continues,
        isolation,
    };
    let mut run = match engine.start(request).await {
        Ok(run) => run,
        Err(StartError::Thread(error)) => {
            console::error(error);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
        Err(error @ (StartError::Worktree(_) | StartError::SharedWorkspace(_))) => {
            console::error(error);
            return Ok(ExitCode::from(super::EXIT_USAGE));
        }
        // A usage error: `main` prints it and exits 2.
        Err(StartError::Plan(error)) => return Err(error.into()),
    };
    let labels = run.labels().to_vec();
    let count = labels.len();
    if let Some((base, places)) = run.worktrees()
        && args.output == RunOutput::Text
        && !args.quiet
    {
        for (index, path) in places {
            let agent = labels.get(index).map(JobLabel::mention).unwrap_or_default();
            console::line(&Text::styled(
                options.colors.stderr,
                NOTICE,
                &format!(
                    "{agent} works in {} (from {})\n",
                    path.display(),
                    base.get(..12).unwrap_or(base)
                ),
            ));
        }
    }

    let colors = options.colors;
    // At a terminal: a status line per running agent on stderr, below the text.
    let mut live = (args.output == RunOutput::Text && !args.quiet && console::stderr_is_terminal())
        .then(|| LiveView::new(labels.iter().map(JobLabel::mention).collect()));
    let many = count > 1;
    let stdout: Box<dyn std::io::Write + Send> = match &live {
        Some(view) => {
            view.set_wanted(true);
            Box::new(view.stdout())
        }
        None => Box::new(console::stdout().into_inner()),
    };
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(120));
    let shaped = answer.is_some() && args.output == RunOutput::Text;
    let mut renderer = if shaped {
        Renderer::data(&labels, stdout)
    } else {
        Renderer::new(args.output, args.raw, labels, stdout).with_palette(colors.stdout)
    };
    // People at a terminal read the answer rendered; a pipe, --color never and NO_COLOR
    // get the model's markdown as it is (as do JSON and --raw: the renderer knows those).
    if colors.stdout.enabled() && console::stdout_is_terminal() && !shaped {
        renderer = renderer.with_markdown(codecrew::output::markdown::terminal_width());
    }
    renderer.start()?;
    let mut reports: Vec<Option<JobReport>> = (0..count).map(|_| None).collect();
    let mut interrupted: Option<u8> = None;
    let mut unsaved = false;
    // Stdout could not be written (its reader went away, a full disk): nobody gets the
    // answer, so the jobs are stopped and nothing more is written.
    let mut unwritable: Option<std::io::Error> = None;
    let signal = super::interrupted_on(early_signals);
    tokio::pin!(signal);
    // Until every job has answered (or ended without): events, answers, ticks, signals.
    loop {
        tokio::select! {
            update = run.next() => match update {
                Some(Update::Event(index, event)) => {
                    if unwritable.is_none() {
                        written(renderer.event(index, &event), &mut unwritable, &run);
                    }
                    if let Some(view) = &mut live {
                        view.event(index, &event);
                        // One agent's text streams mid-line, where nothing may be drawn.
                        view.set_wanted(many || args.raw || renderer.at_line_start());
                    }
                }
                Some(Update::Answer(index, report)) => {
                    if let Some(view) = &mut live {
                        view.done(index);
                    }
                    // A job stopped because its answer could not be written is no news.
                    if let (false, RunOutput::Text, Some(error), None) =
                        (report.success, args.output, &report.error, &unwritable)
                    {
                        console::line(&failure_line(colors.stderr, &report.agent, error));
                        if report.failure == Some(Failure::SchemaMismatch) {
                            console::line(&last_attempt(colors.stderr, &report));
                        }
                    }
                    if unwritable.is_none() {
                        written(renderer.done(index, &report), &mut unwritable, &run);
                    }
                    if let Some(slot) = reports.get_mut(index) {
                        *slot = Some(*report);
                    }
                }
                Some(Update::Unsaved(error)) => {
                    // The answer was printed but the thread does not have it: not a success.
                    console::error(format_args!("the thread was not updated: {error}"));
                    unsaved = true;
                }
                None => break,
            },
            code = &mut signal, if interrupted.is_none() => {
                interrupted = Some(stop_on_signal(code, &run));
            }
            _ = ticks.tick(), if live.is_some() => {
                if let Some(view) = &mut live {
                    view.tick();
                }
            }
        }
    }
    // The status lines go before anything else is said on stderr.
    drop(live);
    let reports: Vec<JobReport> = reports.into_iter().flatten().collect();
    // Worktrees are settled once no CLI writes there any more: committed, measured,
    // checked; the table comes after the answers, and JSON has it as `worktrees`.
    let mut table = None;
    if let Some((base, _)) = run.worktrees() {
        let base = base.to_owned();
        loop {
            tokio::select! {
                () = run.wind_down() => break,
                code = &mut signal, if interrupted.is_none() => {
                    interrupted = Some(stop_on_signal(code, &run));
                }
            }
        }
        let settled = run.settle_worktrees().await;
        let ranking = match &args.isolation.judge {
            Some(judge) if interrupted.is_none() => {
                if args.output == RunOutput::Text && !args.quiet {
                    console::line(&Text::styled(
                        colors.stderr,
                        NOTICE,
                        &format!("asking {judge} to rank the changes…\n"),
                    ));
                }
                let task = tasks.join("\n\n");
                Some(super::judge::rank(&engine, judge, &task, &settled).await)
            }
            _ => None,
        };
        renderer.set_worktrees(super::crew_table::json(&settled, ranking.as_ref()));
        table = Some(super::crew_table::table(
            &settled,
            &reports,
            &base,
            ranking.as_ref(),
            colors.stdout,
        ));
    }
    if unwritable.is_none() {
        written(renderer.finish(&reports), &mut unwritable, &run);
    }
    if let (Some(table), RunOutput::Text, None) = (&table, args.output, &unwritable) {
        if shaped {
            // Stdout is the answers' data alone (`| jq`): the table goes to the person.
            console::line(table);
        } else {
            written(super::worktrees::show(table), &mut unwritable, &run);
        }
    }
    if args.output == RunOutput::Text && !args.quiet && unwritable.is_none() {
        print_usage(&reports, colors.stderr);
    }
    // The answers are out (`finish` flushes); now the CLIs kept for the loop shut down
    // (a signal still stops them, and a second one ends codecrew at once).
    loop {
        tokio::select! {
            () = run.wind_down() => break,
            code = &mut signal, if interrupted.is_none() => {
                interrupted = Some(stop_on_signal(code, &run));
            }
        }
    }
    // A signal's own code (130, 143, 129) first; else the jobs' gravest failure.
    let mut code = interrupted.unwrap_or_else(|| session::exit_code(&reports, count));
    if unsaved && code == 0 {
        code = 1;
    }
    match unwritable {
        // The reader went away (`codecrew query ... | head`): it had what it wanted, and
        // the jobs it did not wait for were stopped; not an error.
        Some(error) if error.kind() == std::io::ErrorKind::BrokenPipe => code = 0,
        Some(error) => {
            console::error(format_args!(
                "could not write the answer to stdout: {error}"
            ));
            code = code.max(1);
        }
        None => {}
    }
    run.finish(code).await;
    Ok(ExitCode::from(code))
}

/// Keeps the first error writing stdout, and stops every job at it: nobody will read
/// the rest of their answers.
fn written(result: std::io::Result<()>, unwritable: &mut Option<std::io::Error>, run: &Run) {
    if let Err(error) = result {
        run.stop();
        *unwritable = Some(error);
    }
}

/// The first interrupt: every job is told to stop. A second one ends the process at
/// once, dropping nothing: the CLIs' groups are killed first, then what their walls hold
/// is put back (which dropping their commands would have done).
fn stop_on_signal(code: u8, run: &Run) -> u8 {
    run.stop();
    tokio::spawn(async move {
        let code = super::interrupted().await;
        Engine::stop_now(code);
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
