//! The `grep` tool against ripgrep on a tree of 50,000 small files.
//!
//! Run with `cargo bench --bench grep`. The tree is built once in a temporary directory;
//! each tool then searches it several times (after one warm-up run, so both read from
//! the page cache) and the table shows the median wall time. ripgrep gets the same
//! filters as the tool (`--hidden --no-require-git`: hidden files searched, .gitignore
//! respected outside git repositories). The goal: codecrew within 1.5x of rg.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use codecrew_tools::{Mode, ToolContext, ToolRegistry};
use serde_json::{Value, json};

const FILES: usize = 50_000;
const PER_DIR: usize = 100;
/// One file in this many contains the pattern.
const MATCH_EVERY: usize = 50;
const RUNS: usize = 7;
const PATTERN: &str = "needle_[0-9]+";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::TempDir::new()?;
    let root = dir.path().canonicalize()?;
    let started = Instant::now();
    build_tree(&root)?;
    println!(
        "tree: {FILES} files in {} directories, built in {:.1} s",
        FILES / PER_DIR,
        started.elapsed().as_secs_f64()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let registry = ToolRegistry::builtin(std::sync::Arc::new(codecrew_tools::builtin::NoCommands));
    let grep = registry.get("grep").ok_or("no grep tool")?.clone();
    let ctx = ToolContext::new(root.clone(), Mode::Query);
    let rg_present = Command::new("rg").arg("--version").output().is_ok();
    if !rg_present {
        println!("note: `rg` is not installed (apt-get install ripgrep); timing codecrew only");
    }

    println!();
    println!(
        "{:<20} {:>12} {:>12} {:>8} {:>9}",
        "mode", "codecrew", "rg", "ratio", "results"
    );
    for (mode, rg_flags) in [
        ("files_with_matches", &["--files-with-matches"][..]),
        (
            "content",
            &["--line-number", "--no-heading", "--with-filename"][..],
        ),
    ] {
        let input = json!({"pattern": PATTERN, "output_mode": mode, "max_results": 10_000});
        let (ours, results) = time(|| {
            let output = runtime.block_on(grep.execute(&ctx, input.clone()));
            output.map(|value| count(&value)).unwrap_or(0)
        });
        let rg = rg_present.then(|| {
            time(|| {
                Command::new("rg")
                    .args(["--hidden", "--no-require-git", "--no-config"])
                    .args(rg_flags)
                    .arg(PATTERN)
                    .arg(&root)
                    .output()
                    .map(|output| {
                        output
                            .stdout
                            .split(|&b| b == b'\n')
                            .filter(|l| !l.is_empty())
                            .count()
                    })
                    .unwrap_or(0)
            })
        });
        match rg {
            Some((theirs, rg_results)) => {
                println!(
                    "{mode:<20} {:>10.1}ms {:>10.1}ms {:>7.2}x {:>9}",
                    ms(ours),
                    ms(theirs),
                    ours.as_secs_f64() / theirs.as_secs_f64(),
                    results
                );
                if rg_results != results {
                    println!("  warning: rg found {rg_results} results, codecrew {results}");
                }
            }
            None => println!(
                "{mode:<20} {:>10.1}ms {:>12} {:>8} {results:>9}",
                ms(ours),
                "-",
                "-"
            ),
        }
    }
    Ok(())
}

/// Files in directories of PER_DIR; every MATCH_EVERY-th holds the pattern once.
fn build_tree(root: &Path) -> std::io::Result<()> {
    for n in 0..FILES {
        let dir = root.join(format!("d{:03}", n / PER_DIR));
        if n % PER_DIR == 0 {
            std::fs::create_dir(&dir)?;
        }
        let mut text = String::new();
        for line in 0..20 {
            text.push_str(&format!("fn item_{n}_{line}() -> usize {{ {line} * 2 }}\n"));
        }
        if n % MATCH_EVERY == 0 {
            text.push_str(&format!("// needle_{n} is here\n"));
        }
        std::fs::write(dir.join(format!("f{n}.rs")), text)?;
    }
    Ok(())
}

/// Runs `work` once to warm up, then RUNS times; the median time and the last result.
fn time(mut work: impl FnMut() -> usize) -> (Duration, usize) {
    let mut result = work();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            result = work();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[RUNS / 2], result)
}

fn count(output: &Value) -> usize {
    ["files", "matches"]
        .iter()
        .find_map(|key| output.get(key).and_then(Value::as_array))
        .map_or(0, Vec::len)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
