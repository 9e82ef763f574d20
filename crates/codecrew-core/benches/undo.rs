//! What recording a run for `codecrew undo` costs, and what undoing it does.
//!
//! `cargo bench -p codecrew-core --bench undo` builds a workspace of `PROJECT` files
//! (1,000 and 10,000, 4 KiB each, in folders of 100), then, per round, times:
//!
//! - `record_before` on a store that has seen the workspace before (every run but the
//!   first in a workspace): the cost added before the agents start;
//! - a run writing `WRITTEN` = 100 files (50 rewritten, 50 new), then `finish`: the cost
//!   added as the run ends;
//! - `undo` of those 100 files.
//!
//! and once, the first `record_before` in a workspace (the store made, every file read).
//! The median of 7 rounds is printed, in milliseconds. Figures from this machine are in
//! docs/PERFORMANCE.md. git does the work: the figures are mostly git's.

use std::path::Path;
use std::time::{Duration, Instant};

use codecrew_core::undo::{self, RecordKind};

const WRITTEN: usize = 100;
const ROUNDS: usize = 7;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for project in [1_000, 10_000] {
        measure(project)?;
    }
    Ok(())
}

fn measure(project: usize) -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let root = scratch.path().canonicalize()?;
    let (state, workspace) = (root.join("state"), root.join("ws"));
    let body = "x".repeat(4095) + "\n";
    for index in 0..project {
        let dir = workspace.join(format!("src/d{}", index / 100));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("f{index}.txt")), &body)?;
    }
    let start = Instant::now();
    let first = undo::record_before_in(&state, &workspace, "first", RecordKind::Execute)?;
    let first_record = start.elapsed();
    first.finish()?;

    let (mut before, mut after, mut undone) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let id = format!("run{round}");
        let start = Instant::now();
        let recording = undo::record_before_in(&state, &workspace, &id, RecordKind::Execute)?;
        before.push(start.elapsed());
        write_files(&workspace, round)?;
        let start = Instant::now();
        recording.finish()?;
        after.push(start.elapsed());
        let start = Instant::now();
        let outcome = undo::undo_in(&state, &workspace, Some(&id), false)?;
        undone.push(start.elapsed());
        assert_eq!(outcome.files.len(), WRITTEN, "{outcome:?}");
    }
    println!(
        "{project} files, a run writing {WRITTEN}: first record {:.1} ms; \
         before a run {:.1} ms, after it {:.1} ms, undo {:.1} ms (medians of {ROUNDS})",
        ms(first_record),
        ms(median(&mut before)),
        ms(median(&mut after)),
        ms(median(&mut undone)),
    );
    Ok(())
}

/// What the run writes: 50 of the project's files rewritten, 50 new ones.
fn write_files(workspace: &Path, round: usize) -> std::io::Result<()> {
    for index in 0..WRITTEN / 2 {
        let file = workspace.join(format!("src/d0/f{index}.txt"));
        std::fs::write(file, format!("rewritten in round {round}\n"))?;
        let new = workspace.join(format!("new/n{index}.txt"));
        std::fs::create_dir_all(workspace.join("new"))?;
        std::fs::write(new, format!("new in round {round}\n"))?;
    }
    Ok(())
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
