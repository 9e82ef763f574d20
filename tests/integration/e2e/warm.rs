//! One CLI process for the whole tool loop (Claude's stream-json input): counted by a
//! wrapper that logs every start of the real CLI; the per-turn resume still selectable;
//! a kept CLI killed mid-loop.

use super::*;
use crate::support::clis::Clis;

/// A `claude` on PATH before the real one that logs each start, then runs it.
struct Counted {
    env: CliEnv,
    log: std::path::PathBuf,
}

impl Counted {
    fn new(world: &World, env: &CliEnv) -> Counted {
        let clis = Clis::require("e2e::warm").unwrap();
        let dir = world.home.root().join("counting-bin");
        std::fs::create_dir_all(&dir).unwrap();
        let log = world.home.root().join("claude-starts.log");
        let real = clis.bin_dir().join("claude");
        let wrapper = dir.join("claude");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let mut path = std::ffi::OsString::from(&dir);
        path.push(":");
        path.push(clis.path_var());
        Counted {
            env: env.clone().with("PATH", path),
            log,
        }
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .count()
    }
}

/// Two reads, one per turn, then the answer: three turns.
fn three_turns() -> Script {
    let first = fenced(&[envelope("read_file", json!({"path": "a.txt"}))]);
    let second = fenced(&[envelope("read_file", json!({"path": "b.txt"}))]);
    Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("Read WARM-A and WARM-B.")).and_prompt("WARM-B"),
        )
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text(second)).and_prompt("WARM-A"))
        .rule(Rule::on_prompt("E2E-WARM", Reply::text(first)))
}

#[test]
fn one_claude_process_serves_the_whole_loop_unless_keep_alive_is_off() {
    let Some(world) = World::new("e2e-warm", three_turns()) else {
        return;
    };
    std::fs::write(world.workspace().join("a.txt"), "WARM-A\n").unwrap();
    std::fs::write(world.workspace().join("b.txt"), "WARM-B\n").unwrap();
    let counted = Counted::new(&world, &world.env);
    let (run, doc) = {
        let run = world.codecrew_with(
            &counted.env,
            &["query", "--output", "json", "@claude E2E-WARM read both"],
        );
        let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
        (run, doc)
    };
    run.assert_code(0);
    assert_eq!(result(&doc)["response"], "Read WARM-A and WARM-B.", "{doc}");
    assert_eq!(result(&doc)["turns"], 3);
    assert_eq!(counted.starts(), 1, "one process for three turns");
    // The kept process reports its cost as a running total; each turn counts its own part
    // (three turns of about the same size cost about the same).
    let run = world.codecrew_with(
        &counted.env,
        &[
            "query",
            "--output",
            "stream-json",
            "@claude E2E-WARM read both",
        ],
    );
    run.assert_code(0);
    let costs: Vec<f64> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "turn_end")
        .map(|e| e["usage"]["cost_usd"].as_f64().unwrap())
        .collect();
    assert_eq!(costs.len(), 3, "{}", run.stdout);
    assert!(
        costs.iter().all(|c| *c > 0.0 && *c < costs[0] * 1.5),
        "{costs:?}"
    );

    // keep_alive = false: the per-turn resume, one process per turn, the same answer.
    let per_turn = super::config::with_user_config(
        &world,
        "[agents.claude]\nprovider = \"claude\"\nkeep_alive = false\n",
    );
    let counted = Counted::new(&world, &per_turn);
    let before = counted.starts();
    let run = world.codecrew_with(
        &counted.env,
        &["query", "--output", "json", "@claude E2E-WARM read both"],
    );
    run.assert_code(0);
    let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(result(&doc)["response"], "Read WARM-A and WARM-B.", "{doc}");
    assert_eq!(counted.starts() - before, 3, "one process per turn");
}

/// The pids of the real CLI processes running in `dir` (not codecrew itself).
fn cli_processes(dir: &Path, name: &str) -> Vec<i32> {
    super::interrupt::processes_in(dir)
        .into_iter()
        .filter_map(|pid| pid.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            cmdline.contains(name) && !cmdline.contains("codecrew")
        })
        .collect()
}

#[test]
fn a_kept_claude_killed_mid_loop_is_retried_once_by_resuming_the_session() {
    let call = fenced(&[envelope("read_file", json!({"path": "a.txt"}))]);
    let script = Script::new()
        .rule(
            Rule::on_prompt(
                FOLLOW_UP,
                Reply::text("Survived: WARM-A.").with_delay_ms(3000),
            )
            .and_prompt("WARM-A"),
        )
        .rule(Rule::on_prompt("E2E-KILLED", Reply::text(call)));
    let Some(world) = World::new("e2e-warm-killed", script) else {
        return;
    };
    std::fs::write(world.workspace().join("a.txt"), "WARM-A\n").unwrap();
    let counted = Counted::new(&world, &world.env);
    let workspace = world.workspace().canonicalize().unwrap();
    let child = {
        let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
        counted.env.apply(&mut command);
        command
            .args([
                "query",
                "--output",
                "stream-json",
                "@claude E2E-KILLED read it",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // While the model takes its time over the second turn, the CLI is killed.
    let started = std::time::Instant::now();
    while !world
        .server
        .requests()
        .iter()
        .any(|r| r.prompt.as_deref().is_some_and(|p| p.contains(FOLLOW_UP)))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no second turn"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let victims = cli_processes(&workspace, "claude");
    assert!(!victims.is_empty(), "the kept claude is running");
    for pid in victims {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let notice = events.iter().find(|e| e["type"] == "error").unwrap();
    assert!(
        notice["message"].as_str().unwrap().contains("runs again"),
        "{notice}"
    );
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["response"], "Survived: WARM-A.", "{done}");
    assert_eq!(done["turns"], 2, "{done}");
    assert_eq!(counted.starts(), 2, "the kept process, then one resume");
}
