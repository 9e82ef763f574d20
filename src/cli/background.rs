//! Runs in the background: `--detach` of query and execute, and `ps`, `kill` and
//! `result`, which follow such a run (or any other) through the run store.

use clap::Args;

use super::OutputArg;

pub(super) const PS_HELP: &str = "\
Examples:
  codecrew query --detach \"@claude review src/\"   # prints the run's id
  codecrew ps
  codecrew ps --output json

Lists every run of query, execute and chat that has not ended, newest first: those going
on (in the background, or at another terminal) and those whose codecrew died without
ending them (killed with `kill -9`, or the machine restarted), shown as dead. A run is
running only while the process that records it lives: its pid, started by the time the
run was, and yours. `codecrew logs rm ID` removes a dead one from the store.";

pub(super) const KILL_HELP: &str = "\
Examples:
  codecrew kill 3f9a1c

codecrew interrupts the run as Ctrl-C would (SIGINT): its agents' CLIs are stopped, what
their walls hold is put back, and the run ends as interrupted (exit code 130). A run that
has not ended 10 seconds later gets a second interrupt, which stops it at once (as a
second Ctrl-C does); it then stays \"not finished\" in the store.

Exit code 0 when the run stopped, 1 when it was not running (it had ended, or its process
was gone) or did not stop, 2 when no run has the id.";

pub(super) const RESULT_HELP: &str = "\
Examples:
  id=$(codecrew query --detach \"@claude review src/\")
  codecrew result \"$id\" --wait
  codecrew result 3f9a1c --output json

Each agent's answer as its text (escape sequences in it shown, never sent), under the
agent's name when there are several; an agent that failed is said on stderr. `codecrew
logs show ID` has the rest: the tasks, the tool calls, what each agent used.

Exit code: the run's own once it has ended (0 ok, 1 an agent failed, 3, 124, 130 ...);
75 when it is still running (without --wait); 1 when its codecrew died before the run
ended (the answers that were final are printed); 2 when no run has the id.";

/// `--detach` of query and execute, and what a detached run is handed by the codecrew
/// that started it (hidden: nobody types them).
#[derive(Debug, Args)]
pub struct DetachArgs {
    /// Run in the background: print the run's id and return at once. The run goes on
    /// without a terminal, so what would be asked is denied (--yes allows it); `codecrew
    /// ps` lists it, `codecrew result ID --wait` prints its answer, `codecrew kill ID`
    /// stops it
    #[arg(long, conflicts_with = "run_id")]
    pub detach: bool,
    /// The id the run is recorded under: a detached run's, which its parent printed
    #[arg(long, hide = true, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,
    /// The input a detached run's parent hands on (on stdin) was cut at its limit
    #[arg(long, hide = true, requires = "run_id")]
    pub stdin_cut: bool,
}

/// `codecrew ps`.
#[derive(Debug, Args)]
pub struct PsArgs {
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}

/// `codecrew kill`.
#[derive(Debug, Args)]
pub struct KillArgs {
    /// The run's id, or a prefix of it no other run shares
    pub id: String,
}

/// `codecrew result`.
#[derive(Debug, Args)]
pub struct ResultArgs {
    /// The run's id, or a prefix of it no other run shares
    pub id: String,
    /// Wait until the run has ended (or its codecrew died), then print its answers
    #[arg(long)]
    pub wait: bool,
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}

/// A run's whole id: 16 hexadecimal digits, as the run store makes them.
fn parse_run_id(text: &str) -> Result<String, String> {
    if text.len() == 16 && text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!(
            "{text:?} is not a run's id (16 hexadecimal digits)"
        ))
    }
}
