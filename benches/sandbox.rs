//! What the read-only sandbox costs a command that runs without asking.
//!
//! `cargo bench --bench sandbox` runs `git status` and `cat` in a small repository, each
//! many times, two ways:
//! - through the binary, `codecrew tools call run_command` as a user or a script would:
//!   confined (the safe list runs in the read-only sandbox) vs `CODECREW_SANDBOX=off
//!   --yes` (the same command approved, unconfined);
//! - in process, through the `ToolExecutor` alone (no start-up of codecrew), which shows
//!   the sandbox's own share with less noise.
//!
//! And the plan of what the sandbox (and an agent CLI's wall in `query`) lets a program
//! read, on a generated checkout of 120,000 files: made from the disk, and reused from
//! the last plan when nothing changed (the case of every command and CLI start after
//! the first), and `cat` through the binary in that checkout.
//!
//! Medians; figures from this machine are in docs/PERFORMANCE.md. The goal is ≤ 3 ms
//! added per command, and a few milliseconds to plan a large unchanged checkout.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use codecrew_tools::executor::CallRequest;
use codecrew_tools::{Mode, ToolCatalog, ToolContext, ToolExecutor, ToolRegistry};

const BINARY_RUNS: usize = 60;
const IN_PROCESS_RUNS: usize = 300;
const COMMANDS: [&str; 2] = ["git status --short", "cat README.md"];

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples
        .get(samples.len() / 2)
        .copied()
        .unwrap_or_default()
        .as_secs_f64()
        * 1e3
}

fn repository(dir: &Path) {
    let _ = std::fs::write(dir.join("README.md"), "# bench\n".repeat(200));
    for args in [
        &["init", "-q"][..],
        &["add", "README.md"],
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "bench",
        ],
    ] {
        let _ = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A checkout of 120,000 files: 10,000 directories two levels deep (12 files each), a
/// `.env` at the top and a key in one directory.
fn large_checkout(dir: &Path) {
    let _ = std::fs::write(dir.join("README.md"), "# bench\n");
    let _ = std::fs::write(dir.join(".env"), "TOKEN=secret\n");
    for outer in 0..100 {
        for inner in 0..100 {
            let leaf = dir.join(format!("pkg{outer}/mod{inner}"));
            if std::fs::create_dir_all(&leaf).is_err() {
                return;
            }
            for file in 0..12 {
                let _ = std::fs::File::create(leaf.join(format!("file{file}.rs")));
            }
        }
    }
    let _ = std::fs::write(dir.join("pkg7/mod7/deploy.pem"), "key\n");
}

/// Planning `root`'s grants with a cache of the last plan in `cache` (none: read
/// every directory).
fn planning_large(root: &Path, cache: Option<&Path>) -> f64 {
    let mut samples = Vec::with_capacity(20);
    for _ in 0..20 {
        let start = Instant::now();
        let reads = codecrew_policy::workspace_reads::plan_with_cache(
            root,
            &codecrew_policy::workspace_reads::Withheld::sensitive(),
            cache,
        );
        samples.push(start.elapsed());
        std::hint::black_box(reads);
    }
    median(samples)
}

fn through_the_binary(dir: &Path, command: &str, confined: bool) -> f64 {
    let input = json!({ "command": command }).to_string();
    let mut samples = Vec::with_capacity(BINARY_RUNS);
    for _ in 0..BINARY_RUNS {
        let mut run = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        run.arg("--workdir")
            .arg(dir)
            .args([
                "tools",
                "call",
                "run_command",
                "--mode",
                "execute",
                "--input",
            ])
            .arg(&input)
            .env("CODECREW_CONFIG", "")
            .env("XDG_CACHE_HOME", dir.with_extension("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if confined {
            run.env_remove("CODECREW_SANDBOX");
        } else {
            run.env("CODECREW_SANDBOX", "off").arg("--yes");
        }
        let start = Instant::now();
        if run.status().is_ok_and(|status| status.success()) {
            samples.push(start.elapsed());
        }
    }
    median(samples)
}

fn in_process(dir: &Path, command: &str, confined: bool) -> f64 {
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        return f64::NAN;
    };
    let registry = Arc::new(ToolRegistry::builtin(Arc::new(
        codecrew_tools::builtin::NoCommands,
    )));
    let Ok(catalog) = ToolCatalog::for_mode(&registry, Mode::Execute) else {
        return f64::NAN;
    };
    let mut context = ToolContext::new(dir.to_path_buf(), Mode::Execute);
    context.exec.sandbox = confined;
    let executor = ToolExecutor::new(registry, Arc::new(catalog), context).assume_yes(!confined);
    let call = CallRequest {
        id: String::new(),
        tool: "run_command".into(),
        input: json!({ "command": command }),
    };
    let mut samples = Vec::with_capacity(IN_PROCESS_RUNS);
    for _ in 0..IN_PROCESS_RUNS {
        let start = Instant::now();
        let result = runtime.block_on(executor.call(&call));
        if result.is_ok() {
            samples.push(start.elapsed());
        }
    }
    median(samples)
}

/// How long it takes to find the workspace's sensitive files (and so the grants of the
/// read-only domain), on this project's own checkout.
fn planning() -> f64 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut samples = Vec::with_capacity(50);
    for _ in 0..50 {
        let start = Instant::now();
        let reads = codecrew_policy::workspace_reads::plan(root);
        samples.push(start.elapsed());
        std::hint::black_box(reads);
    }
    median(samples)
}

fn main() {
    if codecrew_policy::sandbox::read_only_unavailable(true).is_some() {
        println!("this kernel cannot hold the read-only sandbox; nothing measured");
        return;
    }
    let Ok(dir) = tempfile::tempdir() else {
        println!("no temp dir; nothing measured");
        return;
    };
    let Ok(root) = dir.path().canonicalize() else {
        return;
    };
    repository(&root);
    println!(
        "planning the workspace grants (this checkout): {:.2} ms\n",
        planning()
    );
    let Ok(large) = tempfile::tempdir() else {
        return;
    };
    let Ok(large) = large.path().canonicalize() else {
        return;
    };
    large_checkout(&large);
    // A directory changed within the last two seconds is read again at every plan (its
    // stamp cannot be trusted yet): the checkout settles first, as a clone has by the
    // time an agent runs in it.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let cache = large.with_extension("plans");
    println!(
        "planning a 120,000-file checkout: {:.2} ms from the disk, {:.2} ms unchanged since the last plan",
        planning_large(&large, None),
        planning_large(&large, Some(&cache))
    );
    println!(
        "cat README.md in it, through the binary: {:.2} ms confined, {:.2} ms unconfined\n",
        through_the_binary(&large, "cat README.md", true),
        through_the_binary(&large, "cat README.md", false)
    );
    let _ = std::fs::remove_dir_all(&cache);
    let _ = std::fs::remove_dir_all(large.with_extension("cache"));
    let _ = std::fs::remove_dir_all(root.with_extension("cache"));
    println!("the read-only sandbox on an allowed command (medians, ms)\n");
    println!(
        "{:<34} {:>10} {:>10} {:>8}",
        "", "confined", "unconfined", "added"
    );
    for command in COMMANDS {
        for (how, measure) in [
            ("binary", through_the_binary as fn(&Path, &str, bool) -> f64),
            ("in process", in_process),
        ] {
            let confined = measure(&root, command, true);
            let open = measure(&root, command, false);
            println!(
                "{:<34} {confined:>10.2} {open:>10.2} {:>8.2}",
                format!("{command} ({how})"),
                confined - open
            );
        }
    }
}
