//! A racing process against every file tool: one thread swaps a workspace directory for a
//! link to a directory outside, thousands of times, while the tools read, write, edit,
//! list, glob and grep through it. Zero bytes may land outside and zero outside bytes
//! may come back: the path a tool checked is opened beneath the workspace by the kernel
//! (`codecrew_tools::beneath`), so a link swapped in between fails the call instead.

// Test code may unwrap and panic (the workspace lints deny them in library code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use codecrew_tools::builtin::NoCommands;
use codecrew_tools::{Mode, Tool, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use tempfile::TempDir;

const SECRET: &str = "OUTSIDE-SECRET-c0dec4ew";
const ONLY_OUTSIDE: &str = "only-outside-name.txt";
const ORIGINAL: &str = "AAAA original outside\n";
/// Calls per tool at least; the flipper swaps continuously meanwhile.
const CALLS: usize = 1000;
/// Swaps at least, per tool: "thousands of times".
const SWAPS: usize = 2000;
/// The longest one tool's race may take.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// One race at a time: in parallel they starve each other's flipper of the two cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Race {
    _dirs: (TempDir, TempDir),
    root: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    flipper: Option<std::thread::JoinHandle<()>>,
}

impl Race {
    fn start() -> Race {
        let inside_dir = TempDir::new().unwrap();
        let outside_dir = TempDir::new().unwrap();
        let root = inside_dir.path().canonicalize().unwrap();
        let outside = outside_dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("flip")).unwrap();
        std::fs::write(root.join("flip/file.txt"), "harmless inside\n").unwrap();
        std::fs::write(root.join("flip/victim.txt"), "AAAA inside\n").unwrap();
        std::fs::create_dir(root.join("flip/deep")).unwrap();
        std::fs::write(root.join("flip/deep/victim.txt"), "AAAA inside\n").unwrap();
        std::fs::write(outside.join("file.txt"), format!("{SECRET}\n")).unwrap();
        // The same first word as inside, so an edit that escaped would succeed.
        std::fs::write(outside.join("victim.txt"), ORIGINAL).unwrap();
        std::fs::create_dir(outside.join("deep")).unwrap();
        std::fs::write(outside.join("deep/victim.txt"), ORIGINAL).unwrap();
        std::fs::write(outside.join(ONLY_OUTSIDE), format!("{SECRET}\n")).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let flipper = {
            let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
            let (root, outside) = (root.clone(), outside.clone());
            std::thread::spawn(move || {
                let flip = root.join("flip");
                let parked = root.join("parked");
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::rename(&flip, &parked);
                    let _ = symlink(&outside, &flip);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&flip);
                    let _ = std::fs::rename(&parked, &flip);
                    swaps.fetch_add(1, Ordering::Relaxed);
                    std::thread::yield_now();
                }
            })
        };
        Race {
            _dirs: (inside_dir, outside_dir),
            root,
            outside,
            stop,
            swaps,
            flipper: Some(flipper),
        }
    }

    /// Nothing outside changed and nothing new appeared there.
    fn assert_outside_untouched(&self) {
        for victim in ["victim.txt", "deep/victim.txt"] {
            assert_eq!(
                std::fs::read_to_string(self.outside.join(victim)).unwrap(),
                ORIGINAL,
                "a write landed outside the workspace, in {victim}"
            );
        }
        assert_eq!(
            std::fs::read_dir(self.outside.join("deep"))
                .unwrap()
                .count(),
            1,
            "a file (a temporary one?) was created outside the workspace"
        );
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["deep", "file.txt", ONLY_OUTSIDE, "victim.txt"],
            "a file (a temporary one?) was created outside the workspace"
        );
    }

    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(flipper) = self.flipper.take() {
            flipper.join().unwrap();
        }
        self.assert_outside_untouched();
        self.swaps.load(Ordering::Relaxed)
    }
}

fn tool(name: &str) -> Arc<dyn Tool> {
    ToolRegistry::builtin(Arc::new(NoCommands))
        .get(name)
        .unwrap()
        .clone()
}

/// Runs [`CALLS`] calls of one tool during the race; every result goes through `check`.
/// Some calls must fail on a swapped link, or the race was not exercised.
async fn during_race(name: &str, inputs: &[Value], check: impl Fn(&Value)) {
    let _serial = SERIAL.lock().await;
    let race = Race::start();
    let tool = tool(name);
    let ctx = ToolContext::new(race.root.clone(), Mode::Execute);
    let mut failures = 0usize;
    let started = std::time::Instant::now();
    let mut n = 0;
    while n < CALLS || (race.swaps.load(Ordering::Relaxed) < SWAPS && started.elapsed() < LIMIT) {
        n += 1;
        let input = inputs[n % inputs.len()].clone();
        match tool.execute(&ctx, input).await {
            Ok(output) => {
                let text = output.to_string();
                assert!(
                    !text.contains(SECRET),
                    "{name} returned outside bytes: {text}"
                );
                assert!(
                    !text.contains(ONLY_OUTSIDE),
                    "{name} listed an outside name: {text}"
                );
                check(&output);
            }
            Err(error) => {
                assert!(!error.message.contains(SECRET), "{name}: {error}");
                failures += 1;
            }
        }
        if n % 100 == 0 {
            race.assert_outside_untouched();
        }
    }
    let swaps = race.finish();
    assert!(
        swaps >= SWAPS,
        "{name}: the flipper only swapped {swaps} times"
    );
    assert!(
        failures > 0,
        "{name}: no call ever met the swapped link, so the race was not exercised"
    );
    eprintln!("{name}: {n} calls, {failures} refused, {swaps} swaps");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file() {
    during_race("read_file", &[json!({"path": "flip/file.txt"})], |output| {
        assert!(
            output["content"]
                .as_str()
                .unwrap()
                .contains("harmless inside")
        )
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file() {
    during_race(
        "write_file",
        &[
            json!({"path": "flip/victim.txt", "content": "WRITTEN\n"}),
            json!({"path": "flip/deep/victim.txt", "content": "WRITTEN\n"}),
        ],
        |_| {},
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_file() {
    // Alternate the edit and its reverse, so the old string is there every other call.
    during_race(
        "edit_file",
        &[
            json!({"path": "flip/victim.txt", "old_string": "AAAA", "new_string": "BBBB"}),
            json!({"path": "flip/deep/victim.txt", "old_string": "AAAA", "new_string": "BBBB"}),
            json!({"path": "flip/victim.txt", "old_string": "BBBB", "new_string": "AAAA"}),
            json!({"path": "flip/deep/victim.txt", "old_string": "BBBB", "new_string": "AAAA"}),
        ],
        |_| {},
    )
    .await;
}

/// Not a file tool, but its `cwd` is a checked path too: the command starts in the
/// directory that was checked, never in one swapped in for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_cwd() {
    during_race(
        "run_command",
        &[json!({"command": "cat file.txt", "cwd": "flip"})],
        |output| {
            let stdout = output["stdout"].as_str().unwrap();
            assert!(
                stdout.is_empty() || stdout.contains("harmless inside"),
                "{output}"
            );
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_directory() {
    during_race("list_directory", &[json!({"path": "flip"})], |_| {}).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob() {
    during_race(
        "glob",
        &[json!({"pattern": "**/*.txt", "path": "flip"})],
        |_| {},
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep() {
    during_race(
        "grep",
        &[
            json!({"pattern": "OUTSIDE|harmless", "path": "flip", "output_mode": "content"}),
            json!({"pattern": "OUTSIDE", "path": "flip/file.txt", "output_mode": "content"}),
        ],
        |_| {},
    )
    .await;
}
