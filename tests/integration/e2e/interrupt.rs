//! Ctrl-C stops every agent, and nothing is left running.

use super::*;

/// Processes whose working directory is `dir`: the CLIs a test started there.
pub(super) fn processes_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// `codecrew <args>` started in the test's world, its output piped.
pub(super) fn spawn(world: &World, args: &[&str]) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
    world.env.apply(&mut command);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C to `child`: it exits 130 and leaves nothing running in `workspace`.
pub(super) fn interrupt_exits_130_leaving_nothing(child: std::process::Child, workspace: &Path) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted"));
    assert_eq!(
        processes_in(workspace),
        Vec::<String>::new(),
        "a CLI outlived codecrew"
    );
}

#[test]
fn an_interrupt_stops_every_agent_and_exits_130() {
    let script = Script::new().rule(Rule::on_prompt("E2E-INT", Reply::hang()));
    let Some(world) = World::new("e2e-interrupt", script) else {
        return;
    };
    let workspace = world.workspace().canonicalize().unwrap();
    let child = spawn(&world, &["query", "@claude @codex E2E-INT"]);
    // Wait until both CLIs have asked the model (they are running, and hanging).
    let asked = world
        .server
        .wait_for_model_requests(2, Duration::from_secs(60));
    assert!(asked.len() >= 2, "the CLIs never called the model");
    assert!(
        !processes_in(&workspace).is_empty(),
        "the CLIs run in the workspace"
    );
    interrupt_exits_130_leaving_nothing(child, &workspace);
}

/// Processes running in `dir` whose command line holds `word`.
fn running_in(dir: &Path, word: &str) -> Vec<String> {
    processes_in(dir)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline)
                    .replace('\0', " ")
                    .contains(word)
            })
        })
        .collect()
}

/// `kill -9` (or the OOM killer) gives codecrew no chance to sweep: the kept claude of
/// the run and the command a tool started, with its background job, must die with it all
/// the same (the parent-death signal and the watchdog).
#[test]
fn nothing_outlives_a_codecrew_killed_mid_turn() {
    let sleeper = json!({"command": "sleep 97 & sleep 98"});
    let script = Script::new()
        .rule(Rule::on_prompt(
            "E2E-KILL",
            Reply::text(fenced(&[envelope("run_command", sleeper)])),
        ))
        .on_tool_result(FOLLOW_UP, Reply::hang());
    let Some(mut world) = World::new("e2e-kill", script) else {
        return;
    };
    // A temporary folder of the test's own: any codecrew started meanwhile (another
    // test's) sweeps the folders of the killed ones it finds in its own, and would
    // remove this run's before the next run of this test could.
    let private = world.home.root().join("tmp");
    std::fs::create_dir_all(&private).unwrap();
    world.env = world.env.clone().with("TMPDIR", &private);
    let workspace = world.workspace().canonicalize().unwrap();
    let mut child = spawn(&world, &["query", "@claude E2E-KILL"]);
    // Wait until the tool's command runs (both sleeps), the kept claude beside it.
    let start = std::time::Instant::now();
    while running_in(&workspace, "sleep 9").len() < 2 && start.elapsed() < TIMEOUT {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if running_in(&workspace, "sleep 9").len() < 2 {
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        panic!(
            "the tool's command never ran:\n{}\n{}\nrequests: {:#?}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            world
                .server
                .requests()
                .iter()
                .map(|r| r.summary())
                .collect::<Vec<_>>()
        );
    }
    let claude = running_in(&workspace, "claude");
    assert!(!claude.is_empty(), "claude runs");
    // Its private temporary directory, which nothing removes at a `kill -9`.
    let temp = claude
        .iter()
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/environ")).ok())
        .flat_map(|environ| {
            environ
                .split(|byte| *byte == 0)
                .filter_map(|pair| pair.strip_prefix(b"TMPDIR="))
                .map(|dir| std::path::PathBuf::from(String::from_utf8_lossy(dir).into_owned()))
                // Not codecrew's own (its command line names claude too).
                .filter(|dir| dir.starts_with(&private))
                .filter(|dir| dir != &private)
                .collect::<Vec<_>>()
        })
        .next()
        .expect("the kept claude has a TMPDIR of its own");
    child.kill().unwrap();
    let _ = child.wait();
    let killed = std::time::Instant::now();
    // The watchdog acts within a fraction of a second; the bound is generous so that a
    // machine busy with other builds does not make the test fail (it measures nothing).
    while !processes_in(&workspace).is_empty() && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = processes_in(&workspace);
    for pid in &left {
        let _ = Command::new("kill").args(["-9", pid]).status();
    }
    assert_eq!(
        left,
        Vec::<String>::new(),
        "processes outlived a killed codecrew"
    );
    // The next codecrew to start a CLI removes the directory the killed one left.
    assert!(temp.is_dir(), "{} was removed already", temp.display());
    let next = world.codecrew(&["query", "@claude E2E-SWEEP hello"]);
    assert!(
        !temp.exists(),
        "{} outlived the next run: {}",
        temp.display(),
        next.stderr
    );
}

/// `kill -9` (or the OOM killer) gives codecrew no chance to put back what its CLI's wall
/// holds: a session script planted in Claude's `session-env/` (which a resumed session
/// pastes before every command, outside codecrew) is written down before Claude starts,
/// and the next codecrew puts it back before it starts any CLI, saying so.
#[test]
fn what_a_killed_codecrew_held_is_put_back_by_the_next() {
    let Some(world) = World::new("e2e-kill-plant", Script::new()) else {
        return;
    };
    let workspace = world.workspace().canonicalize().unwrap();
    let session_env = world.home.home().join(".claude/session-env");
    let planted = workspace.join("planted");
    let plant = "dir=\"$CLAUDE_CONFIG_DIR/session-env/$CLAUDE_CODE_SESSION_ID\" \
                 && mkdir -p \"$dir\" && echo 'echo planted' > \"$dir/sessionstart-hook-0.sh\" \
                 && touch planted && sleep 96";
    world.server.set_script(Script::new().on_prompt(
        "E2E-KILL-PLANT",
        Reply::tool("Bash", json!({"command": plant, "description": "plant"})),
    ));
    let mut child = spawn(&world, &["execute", "--yes", "@claude E2E-KILL-PLANT"]);
    let start = std::time::Instant::now();
    while !planted.exists() && start.elapsed() < TIMEOUT {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let hooks = || -> Vec<_> {
        files_under(&session_env)
            .into_iter()
            .filter(|path| path.to_string_lossy().contains("hook"))
            .collect()
    };
    if !planted.exists() {
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        panic!(
            "the plant never ran:\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(!hooks().is_empty(), "no session script was planted");
    child.kill().unwrap();
    let _ = child.wait();
    let killed = std::time::Instant::now();
    while !processes_in(&workspace).is_empty() && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !hooks().is_empty(),
        "the killed codecrew put it back itself"
    );
    let next = world.codecrew(&["doctor"]);
    assert_eq!(hooks(), Vec::<std::path::PathBuf>::new(), "{}", next.stderr);
    assert!(
        next.stderr.contains("killed before it could put it back"),
        "{}",
        next.stderr
    );
    let journal = world.home.home().join(".local/state/codecrew/held");
    assert_eq!(
        std::fs::read_dir(&journal)
            .map(|dir| dir.count())
            .unwrap_or(0),
        0,
        "a journal stays: {}",
        next.stderr
    );
}
