//! `execute` with several agents: whether each works in a worktree of its own, and the
//! table that compares what they did once they are done.

use super::judge::Ranking;
use codecrew::cli::{DirtyArg, IsolationArgs};
use codecrew::output::color::{LABEL, NOTICE, Palette};
use codecrew::output::console::{self, Text};
use codecrew_core::engine::Settled;
use codecrew_core::session::JobReport;
use codecrew_core::worktree::Repository;
use codecrew_core::worktree::make::{DirtyChoice, Isolation};
use codecrew_tools::Mode;
use serde_json::{Value, json};

/// How the run's jobs are kept apart: None in the one workspace; Some(worktrees); an
/// error (a usage error, said) when they cannot be kept apart and were not told to share.
pub fn isolation(
    args: &IsolationArgs,
    mode: Mode,
    jobs: usize,
    workspace: &std::path::Path,
) -> Result<Option<(Isolation, Option<String>)>, String> {
    if mode == Mode::Query {
        if args.wants_worktrees() {
            return Err(
                "--worktrees, --base, --dirty, --check and --judge are for `codecrew execute`: \
                 query never writes"
                    .into(),
            );
        }
        return Ok(None);
    }
    let isolation = || {
        let dirty = match args.dirty {
            None | Some(DirtyArg::Refuse) => DirtyChoice::Refuse,
            Some(DirtyArg::Ignore) => DirtyChoice::Ignore,
            Some(DirtyArg::CopyTracked) => DirtyChoice::CopyTracked,
            Some(DirtyArg::CopyAll) => DirtyChoice::CopyAll,
        };
        Some((
            Isolation {
                base: args.base.clone(),
                dirty,
                ..Isolation::default()
            },
            args.check.clone(),
        ))
    };
    if args.wants_worktrees() {
        return Ok(isolation());
    }
    if jobs < 2 || args.shared_workspace {
        return Ok(None);
    }
    if Repository::find(workspace).is_some() {
        console::line(&Text::styled(
            console::colors().stderr,
            NOTICE,
            &format!(
                "{jobs} agents execute at once: each works in a git worktree of its own \
                 (--shared-workspace lets them share this one)\n"
            ),
        ));
        return Ok(isolation());
    }
    Err(format!(
        "{jobs} agents would write {} at once, and it is not a git repository where each \
         could have a worktree of its own: give them one at a time, or pass \
         --shared-workspace to let them share it",
        workspace.display()
    ))
}

/// The table: one row per agent (and the judge's place for each, when one ranked them).
pub fn table(
    settled: &[Settled],
    reports: &[JobReport],
    base: &str,
    ranking: Option<&Ranking>,
    palette: Palette,
) -> Text {
    let mut text = Text::new();
    text.push("\n");
    text.push_styled(
        palette,
        LABEL,
        &format!("worktrees (from {})\n", base.get(..12).unwrap_or(base)),
    );
    let header = format!(
        "{:<12} {:<9} {:<10} {:>5} {:>7} {:>7} {:<10} {:<8} {:>7} {:>9} {:>4}  {}\n",
        "AGENT",
        "STATUS",
        "STOP",
        "FILES",
        "+",
        "-",
        "CHECK",
        "MERGES",
        "TIME",
        "TOKENS",
        "RANK",
        "ANSWER"
    );
    text.push_styled(palette, NOTICE, &header);
    for one in settled {
        let report = reports.get(one.index);
        let change = one.record.change.as_ref();
        let status = report.map_or("?", |r| if r.success { "ok" } else { "failed" });
        let stop = report.map_or_else(String::new, |r| {
            serde_json::to_value(r.stop_reason)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        });
        let check = one.record.check.as_ref().map_or("-".to_owned(), |check| {
            if check.passed {
                "passed".to_owned()
            } else {
                match check.exit_code {
                    Some(code) => format!("failed {code}"),
                    None => "failed".to_owned(),
                }
            }
        });
        let merges = change
            .and_then(|c| c.merges_cleanly)
            .map_or("-", |clean| if clean { "clean" } else { "conflict" });
        let time = report.map_or(String::new(), |r| {
            format!("{:.1}s", r.duration_ms as f64 / 1000.0)
        });
        let tokens = report.map_or(0, |r| {
            let usage = &r.usage.reported;
            usage.input_tokens.unwrap_or(0) + usage.output_tokens.unwrap_or(0)
        });
        let answer: String = report
            .and_then(|r| r.response.lines().find(|line| !line.trim().is_empty()))
            .unwrap_or_default()
            .chars()
            .take(50)
            .collect();
        let rank = ranking
            .and_then(|ranking| ranking.places.get(&one.record.agent))
            .map_or("-".to_owned(), |(place, _)| place.to_string());
        let line = format!(
            "{:<12} {:<9} {:<10} {:>5} {:>7} {:>7} {:<10} {:<8} {:>7} {:>9} {:>4}  {}\n",
            format!("@{}", one.record.agent),
            status,
            stop,
            change.map_or(0, |c| c.files),
            change.map_or(0, |c| c.added),
            change.map_or(0, |c| c.removed),
            check,
            merges,
            time,
            tokens,
            rank,
            answer,
        );
        text.push(&line);
        if let Some(error) = &one.error {
            text.push_styled(palette, NOTICE, &format!("  (not settled: {error})\n"));
        }
    }
    if let Some(ranking) = ranking {
        match &ranking.error {
            Some(error) => {
                text.push_styled(
                    palette,
                    NOTICE,
                    &format!("@{} did not rank the changes: {error}\n", ranking.judge),
                );
            }
            None => {
                let mut places: Vec<(&String, &(usize, String))> = ranking.places.iter().collect();
                places.sort_by_key(|(_, (place, _))| *place);
                text.push_styled(palette, NOTICE, &format!("@{}'s ranking:\n", ranking.judge));
                for (agent, (place, reason)) in places {
                    text.push(&format!("  {place}. @{agent}: {reason}\n"));
                }
            }
        }
    }
    let run = settled
        .first()
        .map(|one| one.record.run.as_str())
        .unwrap_or_default();
    let changed: Vec<&Settled> = settled
        .iter()
        .filter(|one| one.record.change.as_ref().is_some_and(|c| !c.is_empty()))
        .collect();
    if let Some(suggested) = suggested(&changed, ranking) {
        let agent = &suggested.record.agent;
        text.push_styled(
            palette,
            NOTICE,
            &format!(
                "codecrew diff {run} {agent}    codecrew apply {run} {agent}    \
                 codecrew worktrees rm {run}\n"
            ),
        );
    } else {
        text.push_styled(
            palette,
            NOTICE,
            "no agent changed anything; the worktrees are removed\n",
        );
    }
    text
}

/// The changed worktree the closing hint names: the judge's first, else the first whose
/// `--check` passed, else the first.
fn suggested<'a>(changed: &[&'a Settled], ranking: Option<&Ranking>) -> Option<&'a Settled> {
    let place = |one: &Settled| {
        ranking
            .and_then(|ranking| ranking.places.get(&one.record.agent))
            .map_or(usize::MAX, |(place, _)| *place)
    };
    let passed = |one: &Settled| one.record.check.as_ref().is_some_and(|check| check.passed);
    changed
        .iter()
        .copied()
        .min_by_key(|one| (place(one), !passed(one)))
}

/// The worktrees as `--output json`'s `worktrees` (with the judge's place and reason).
pub fn json(settled: &[Settled], ranking: Option<&Ranking>) -> Value {
    Value::Array(
        settled
            .iter()
            .map(|one| {
                let kept = one.record.change.as_ref().is_some_and(|c| !c.is_empty());
                json!({
                    "job": one.index,
                    "agent": one.record.agent,
                    "run": one.record.run,
                    "path": kept.then_some(&one.path),
                    "branch": kept.then_some(&one.record.branch),
                    "base": one.record.base,
                    "kept": kept,
                    "change": one.record.change,
                    "check": one.record.check,
                    "error": one.error,
                    "judge": ranking.and_then(|ranking| ranking.places.get(&one.record.agent))
                        .map(|(place, reason)| json!({"rank": place, "reason": reason})),
                })
            })
            .collect(),
    )
}
