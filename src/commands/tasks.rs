//! What a `query` or `execute` command line asks for: the input piped to it, its tasks,
//! and the jobs they make (with the earlier run `-c`/`--resume` go on from). Read alike
//! by a run in the foreground and by `--detach`'s parent before it starts the child.

use codecrew::cli::RunArgs;
use codecrew::output::console;
use codecrew_core::engine::Engine;
use codecrew_core::mention::{self, Job};
use codecrew_core::piped::{self, Piped};
use codecrew_core::runs::Earlier;

/// What a pipe on stdin gives (nothing when it is a terminal, or `--no-stdin`). None
/// after a usage error, said.
pub(super) async fn read_stdin(args: &RunArgs) -> Option<Piped> {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if args.no_stdin || stdin.is_terminal() {
        return Some(Piped::Nothing);
    }
    let wait = args.stdin_timeout.unwrap_or(piped::DEFAULT_WAIT);
    // A file or `/dev/null` is read here: the thread a pipe's wait needs cost a plain
    // answer 0.1 ms (issue 52).
    let read = if piped::never_waits(&stdin) {
        Ok(piped::read(stdin, wait))
    } else {
        tokio::task::spawn_blocking(move || piped::read(stdin, wait)).await
    };
    let piped = match read {
        Ok(Ok(piped)) => piped,
        Ok(Err(error)) => {
            console::error(error);
            return None;
        }
        Err(error) => {
            console::error(format_args!("cannot read stdin: {error}"));
            return None;
        }
    };
    let piped = match piped {
        // A run in the background gets the input its parent read, which says whether it
        // was cut (the model is told), and said what the user should know of it.
        Piped::Text { text, cut } if args.background.run_id.is_some() => {
            return Some(Piped::Text {
                text,
                cut: cut || args.background.stdin_cut,
            });
        }
        piped => piped,
    };
    if let Some(notice) = piped.notice() {
        console::warn(notice);
    }
    Some(piped)
}

/// The command line's tasks, and what of `piped` goes beside them (nothing when it was
/// the task itself: `-`, or no task given). None after a usage error, said.
pub(super) fn tasks(args: &RunArgs, piped: Piped) -> Option<(Vec<String>, Piped)> {
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

/// The earlier run `-c` or `--resume` go on from, and the jobs: one per mention of the
/// tasks (a task with no mention goes to that run's agents, else to the default agent),
/// each with the piped input beside its task. None after a usage error, said.
pub(super) fn jobs(
    engine: &Engine,
    args: &RunArgs,
    tasks: &[String],
    piped: &Piped,
) -> Option<(Option<Earlier>, Vec<Job>)> {
    let continues = match args.resume().map(|which| engine.earlier(&which, None)) {
        Some(Ok(earlier)) => Some(earlier),
        Some(Err(error)) => {
            console::error(error);
            return None;
        }
        None => None,
    };
    let default_agent = engine.config().config.default_agent.as_str();
    let agents: Vec<&str> = match &continues {
        Some(earlier) => earlier.agents().collect(),
        None => vec![default_agent],
    };
    let mut jobs = mention::jobs_for(tasks, &agents);
    for job in &mut jobs {
        job.task = piped.beside(&job.task);
    }
    Some((continues, jobs))
}
