//! `codecrew logs`: its flags and subcommands, and how `--since` is read.

use clap::{Args, Subcommand, ValueEnum};

use super::OutputArg;
use super::spans::parse_age;

pub(super) const LOGS_HELP: &str = "\
Examples:
  codecrew logs                          # the last 20 runs, newest first
  codecrew logs --here --since 2h        # this workspace's runs of the last two hours
  codecrew logs --agent claude --status failed -n 5
  codecrew logs show 3f9a1c              # a run: each agent's task, answer, calls, usage
  codecrew logs search \"connection pool\"
  codecrew logs rm 3f9a1c
  codecrew logs prune --older-than 30d

Every run of query, execute and chat is kept as it goes (a run that was killed stays,
marked \"not finished\") in ~/.local/state/codecrew/runs.db ($XDG_STATE_HOME/codecrew/
runs.db), a SQLite database only you can read; codecrew's tools never read it. It holds
your tasks, the agents' answers and their tool calls (outputs cut at 64 KiB): --no-log
keeps a run out of it, `[logs] enabled = false` in your user config keeps every run out.
A run's id may be shortened to any prefix that no other run shares (6 characters shown).";

/// `codecrew logs`: the runs listed, or one of its subcommands.
#[derive(Debug, Args)]
pub struct LogsArgs {
    #[command(subcommand)]
    pub command: Option<LogsCommand>,
    #[command(flatten)]
    pub list: LogsListArgs,
}

/// Which runs `codecrew logs` lists.
#[derive(Debug, Args)]
pub struct LogsListArgs {
    /// How many runs to list, newest first
    #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Only the runs of this workspace (--workdir, or the current directory)
    #[arg(long)]
    pub here: bool,
    /// Only the runs with a job of this agent
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Only the runs started since then: a time ago (30m, 2h, 3d, 1w) or a date
    /// (2026-11-01, UTC)
    #[arg(long, value_name = "WHEN", value_parser = parse_since)]
    pub since: Option<Since>,
    /// Only the runs that ended well, failed, or have not finished (still running, or
    /// killed)
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: Option<LogsStatus>,
    /// Only the runs whose answers were held to this --schema (written as it was given
    /// there: JSON, @FILE or the compact form)
    #[arg(long, value_name = "SCHEMA", conflicts_with = "schema_multi")]
    pub schema: Option<String>,
    /// As --schema, for runs of --schema-multi
    #[arg(long, value_name = "SCHEMA")]
    pub schema_multi: Option<String>,
    /// With --schema: print the answers' checked data, one JSON line each, newest run
    /// first
    #[arg(long)]
    pub data: bool,
    #[arg(long, value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
}

/// `codecrew logs`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum LogsCommand {
    /// Show a run: each job's task, answer, tool calls and usage
    Show {
        /// The run's id, or a prefix of it no other run shares
        id: String,
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
    /// Find the runs whose task or answers hold every word of TEXT, newest first
    Search {
        /// The words to find
        #[arg(required = true, value_name = "TEXT")]
        text: Vec<String>,
        /// How many matches to list
        #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = 20)]
        limit: usize,
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
    /// Remove a run from the store
    Rm {
        /// The run's id, or a prefix of it no other run shares
        id: String,
    },
    /// Remove the runs started longer ago than DURATION
    Prune {
        /// e.g. 30d, 12h, 2w
        #[arg(long, value_name = "DURATION", value_parser = parse_age)]
        older_than: std::time::Duration,
        #[arg(long, value_enum, default_value_t = OutputArg::Text)]
        output: OutputArg,
    },
}

/// `--status` of `codecrew logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogsStatus {
    Ok,
    Failed,
    #[value(name = "not-finished")]
    NotFinished,
}

/// `--since`: a time ago, or a date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Ago(std::time::Duration),
    /// Days since the Unix epoch (a date, UTC midnight).
    Day(i64),
}

/// `--since`: [`parse_age`], or a date `YYYY-MM-DD`.
pub fn parse_since(text: &str) -> Result<Since, String> {
    let parts: Vec<&str> = text.trim().split('-').collect();
    if let [year, month, day] = parts.as_slice() {
        let number = |part: &str| part.parse::<i64>().ok();
        return match (number(year), number(month), number(day)) {
            (Some(y), Some(m @ 1..=12), Some(d @ 1..=31)) => {
                Ok(Since::Day(days_from_civil(y, m, d)))
            }
            _ => Err(format!("{text:?} is not a date; use YYYY-MM-DD")),
        };
    }
    parse_age(text).map(Since::Ago)
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted = (month + 9) % 12;
    let day_of_year = (153 * shifted + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}
