//! Runs in the background: `query --detach` returns with the run's id before the answer,
//! `ps` lists the run, `result --wait` prints its answer, `kill` stops it as Ctrl-C would,
//! a codecrew killed with `kill -9` leaves a run `ps` shows dead; a detached run asks
//! nobody and outlives the terminal it was started at. Through a scripted `command`
//! agent whose tasks say how slow it is.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::binary::{assert_exit, output_with_stdin, text};
use crate::support::{AgentScript, Answer, Turn, World};

/// The scripted CLI: answers with the `TASK-...` word of its task. `TASK-SLOW...`: after
/// 5 s; `TASK-HANG...`: never (it writes its pid to `pid-<task>` and sleeps);
/// `TASK-ASK...`: after 4 s it asks to run `touch made-by-agent` (a command that needs
/// the user's approval), then says how that went.
fn slow_agent() -> AgentScript {
    let touch = json!({"command": "touch made-by-agent"});
    AgentScript::new()
        .turn(Turn::on_task(
            "TASK-SLOW",
            Answer::text("The answer to {task}\n").after(Duration::from_secs(5)),
        ))
        .turn(Turn::on_task("TASK-HANG", Answer::hang()))
        .turn(
            Turn::on_task(
                "TASK-ASK",
                Answer::call("", "run_command", touch).after(Duration::from_secs(4)),
            )
            .times_per_task(1),
        )
        .turn(
            Turn::on_task("TASK-ASK", Answer::text("ASKED-NOBODY\n"))
                .and_prompt_has("no terminal to ask on"),
        )
        .turn(Turn::on_task("TASK-ASK", Answer::text("ASKED-SOMEONE\n")))
        .otherwise(Answer::text("The answer to {task}\n"))
}

/// The longest a test waits for something a run does at once.
const LIMIT: Duration = Duration::from_secs(30);

/// A world declaring `@echo` and `@other`, both the slow agent.
fn world() -> World {
    World::new()
        .agent("echo", slow_agent())
        .agent("other", slow_agent())
}

/// `query --detach ARGS...`: the run's id it printed.
fn detach(world: &World, args: &[&str]) -> String {
    let mut all = vec!["query", "--detach"];
    all.extend_from_slice(args);
    let output = world.run(&all);
    assert_exit(&output, 0);
    let id = text(&output.stdout).trim().to_owned();
    assert_eq!(id.len(), 16, "not a run's id: {id:?}");
    id
}

/// What `ps --output json` lists.
fn ps(world: &World) -> Vec<Value> {
    world.run_json(&["ps", "--output", "json"])["runs"]
        .as_array()
        .unwrap()
        .clone()
}

/// The pid the scripted agent `@name` wrote for `task`, once it has.
fn agent_pid(world: &World, name: &str, task: &str) -> i32 {
    let file = world.agent_dir(name).join(format!("pid-{task}"));
    wait_until("the agent to start", || file.exists());
    let mut pid = String::new();
    wait_until("the agent's pid", || {
        pid = std::fs::read_to_string(&file).unwrap_or_default();
        !pid.is_empty()
    });
    pid.trim().parse().unwrap()
}

#[track_caller]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "no {what} within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `pid` is a living process (not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.starts_with(" Z"))
    })
}

/// The detached run prints its id and returns at once: while its agents are still at
/// work `ps` lists it running and `result` says so; `result --wait` then prints each
/// agent's answer under its name.
#[test]
fn detach_returns_at_once_and_result_waits_for_the_answers() {
    let world = world();
    let output = world.run(&[
        "query",
        "--detach",
        "--output",
        "json",
        "@echo TASK-SLOW-A",
        "@other TASK-SLOW-B",
    ]);
    assert_exit(&output, 0);
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let id = printed["run"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 16, "{printed}");
    assert!(
        text(&output.stderr).contains(&format!("codecrew result {} --wait", &id[..6])),
        "{}",
        text(&output.stderr)
    );

    // Back before the answers (each agent takes 5 s).
    let running = world.run(&["result", &id]);
    assert_exit(&running, 75);
    assert!(
        text(&running.stderr).contains("is still running"),
        "{}",
        text(&running.stderr)
    );
    let listed = ps(&world);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["state"], "running");
    assert_eq!(listed[0]["agents"], json!(["echo", "other"]));
    let pid = i32::try_from(listed[0]["pid"].as_i64().unwrap()).unwrap();
    assert!(alive(pid), "the run's codecrew is not running");
    let table = text(&world.run(&["ps"]).stdout);
    assert!(
        table.contains(&id[..6]) && table.contains("running") && table.contains("@echo,@other"),
        "{table}"
    );

    let answered = world.run(&["result", &id[..8], "--wait"]);
    assert_exit(&answered, 0);
    let answers = text(&answered.stdout);
    assert_eq!(
        answers,
        "[@echo]\nThe answer to TASK-SLOW-A\n\n[@other]\nThe answer to TASK-SLOW-B\n"
    );
    let result = world.run_json(&["result", &id, "--output", "json"]);
    assert_eq!(result["state"], "ended");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["jobs"][1]["answer"], "The answer to TASK-SLOW-B");
    assert_eq!(result["jobs"][1]["success"], true);
    assert_eq!(ps(&world), Vec::<Value>::new());
    assert_eq!(
        text(&world.run(&["ps"]).stdout),
        "No run is going.\n",
        "nothing left going"
    );
}

/// The input piped to a detached run reaches its agent, as a run's piped input does; so
/// does a task read from stdin (`-`), on a thread the answer is recorded in.
#[test]
fn piped_input_is_handed_to_the_detached_run() {
    let world = world();
    let output = output_with_stdin(
        &mut world.command(&["query", "--detach", "-q", "@echo look at this"]),
        "the piped TASK-PIPED text\n",
    );
    assert_exit(&output, 0);
    assert_eq!(text(&output.stderr), "", "-q: no hint");
    let id = text(&output.stdout).trim().to_owned();
    let answered = world.run(&["result", &id, "--wait"]);
    assert_exit(&answered, 0);
    assert_eq!(text(&answered.stdout), "The answer to TASK-PIPED\n");
    let shown = world.run_json(&["logs", "show", &id, "--output", "json"]);
    assert_eq!(shown["input_bytes"], 26, "{shown:#}");

    let output = output_with_stdin(
        &mut world.command(&["query", "--detach", "--thread", "later", "-"]),
        "@other TASK-FROM-STDIN",
    );
    assert_exit(&output, 0);
    let id = text(&output.stdout).trim().to_owned();
    let answered = world.run(&["result", &id, "--wait"]);
    assert_exit(&answered, 0);
    assert_eq!(text(&answered.stdout), "The answer to TASK-FROM-STDIN\n");
    let thread = world.run(&["threads", "show", "later"]);
    assert_exit(&thread, 0);
    assert!(
        text(&thread.stdout).contains("The answer to TASK-FROM-STDIN"),
        "{}",
        text(&thread.stdout)
    );
}

/// `kill` interrupts the run as Ctrl-C would: its agent's CLI is stopped and the run
/// ends as interrupted (130), which `ps`, `logs` and `result` then say.
#[test]
fn kill_stops_a_detached_run_as_ctrl_c_would() {
    let world = world();
    let id = detach(&world, &["@echo TASK-HANG-KILL"]);
    let agent = agent_pid(&world, "echo", "TASK-HANG-KILL");
    assert!(alive(agent));

    let killed = world.run(&["kill", &id[..6]]);
    assert_exit(&killed, 0);
    assert_eq!(
        text(&killed.stdout),
        format!("Stopped run {} (exit code 130).\n", &id[..6])
    );
    wait_until("the agent's CLI to stop", || !alive(agent));
    assert_eq!(ps(&world), Vec::<Value>::new());
    let shown = world.run_json(&["logs", "show", &id, "--output", "json"]);
    assert_eq!(shown["status"], "failed", "{shown:#}");
    assert_eq!(shown["exit_code"], 130);
    assert_eq!(shown["jobs"][0]["stop_reason"], "interrupted");
    let result = world.run(&["result", &id]);
    assert_exit(&result, 130);
    assert!(
        text(&result.stderr).contains("@echo failed"),
        "{}",
        text(&result.stderr)
    );

    // Not running any more: said, exit 1.
    let again = world.run(&["kill", &id]);
    assert_exit(&again, 1);
    assert!(
        text(&again.stderr).contains("has already ended (exit code 130)"),
        "{}",
        text(&again.stderr)
    );

    // Killed as soon as `--detach` has returned, as a script would: the same.
    let id = detach(&world, &["@other TASK-HANG-AT-ONCE"]);
    let killed = world.run(&["kill", &id]);
    assert_exit(&killed, 0);
    assert!(
        text(&killed.stdout).ends_with("(exit code 130).\n"),
        "{}",
        text(&killed.stdout)
    );

    let unknown = world.run(&["kill", "ffffffffffff"]);
    assert_exit(&unknown, 2);
    assert!(text(&unknown.stderr).contains("no run has the id"));
}

/// A codecrew killed with `kill -9` cannot end its run: the run stays not finished, `ps`
/// shows it dead, `result` and `kill` say its codecrew is gone.
#[test]
fn a_run_whose_codecrew_was_killed_is_shown_dead() {
    let world = world();
    let id = detach(&world, &["@echo TASK-HANG-NINE"]);
    let agent = agent_pid(&world, "echo", "TASK-HANG-NINE");
    let listed = ps(&world);
    assert_eq!(listed[0]["state"], "running", "{listed:#?}");
    let pid = i32::try_from(listed[0]["pid"].as_i64().unwrap()).unwrap();
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    wait_until("the codecrew to die", || !alive(pid));
    // What it started dies with it.
    wait_until("the agent's CLI to die with it", || !alive(agent));

    let listed = ps(&world);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["state"], "dead");
    let table = world.run(&["ps"]);
    assert!(
        text(&table.stdout).contains("dead"),
        "{}",
        text(&table.stdout)
    );
    assert!(
        text(&table.stderr).contains("codecrew logs rm ID"),
        "{}",
        text(&table.stderr)
    );
    let not_finished = world.run_json(&["logs", "--status", "not-finished", "--output", "json"]);
    assert_eq!(not_finished["runs"][0]["id"], id.as_str());
    for args in [
        vec!["result", id.as_str(), "--wait"],
        vec!["kill", id.as_str()],
    ] {
        let output = world.run(&args);
        assert_exit(&output, 1);
        assert!(
            text(&output.stderr).contains(&format!("its codecrew (pid {pid}) is gone")),
            "{args:?}: {}",
            text(&output.stderr)
        );
    }
}

/// What a detached run would ask is denied at once: it has no terminal, even started at
/// one, where the same run asks. Closing that terminal does not end it.
#[test]
fn a_detached_run_asks_nobody_and_outlives_its_terminal() {
    use crate::support::pty::Terminal;

    let world = world();
    let env = world.env.clone().with("NO_COLOR", "1");
    let program = Path::new(env!("CARGO_BIN_EXE_codecrew"));

    // At the terminal, the run asks; the answer is no.
    let mut terminal = Terminal::run(&env, program, &["execute", "@echo TASK-ASK-HERE"]);
    terminal.wait_for("the question", LIMIT, |shown| {
        shown.contains("wants to call codecrew:run_command")
    });
    terminal.type_keys(b"n\r");
    let status = terminal.wait(LIMIT).expect("the run ended");
    assert_eq!(status.code(), Some(0), "{}", terminal.text());
    assert!(
        terminal.text().contains("ASKED-SOMEONE"),
        "{}",
        terminal.text()
    );

    // Detached from the same terminal: nobody is asked.
    let mut terminal = Terminal::run(
        &env,
        program,
        &["execute", "--detach", "@echo TASK-ASK-AWAY"],
    );
    let status = terminal.wait(LIMIT).expect("--detach returned");
    let shown = terminal.text();
    assert_eq!(status.code(), Some(0), "{shown}");
    let id = shown
        .split_whitespace()
        .find(|word| word.len() == 16 && word.bytes().all(|byte| byte.is_ascii_hexdigit()))
        .unwrap_or_else(|| panic!("no run id shown: {shown}"))
        .to_owned();
    terminal.hang_up();
    // The agent takes 4 s before its call: the run outlives the terminal's end.
    assert_eq!(ps(&world)[0]["state"], "running");
    let answered = world.run(&["result", &id, "--wait"]);
    assert_exit(&answered, 0);
    assert_eq!(text(&answered.stdout), "ASKED-NOBODY\n");
    assert!(
        !terminal.text().contains("wants to call"),
        "{}",
        terminal.text()
    );
    assert!(!world.workspace().join("made-by-agent").exists());
    let shown = world.run_json(&["logs", "show", &id, "--output", "json"]);
    let call = &shown["jobs"][0]["tool_calls"][0];
    assert_eq!(call["name"], "run_command", "{shown:#}");
    assert_eq!(call["status"], "denied", "{shown:#}");
}

/// What can be checked before a run starts is an error at once (exit 2), and no run is
/// left behind; so is what the run's own codecrew refuses before it records the run.
#[test]
fn a_mistake_is_said_at_once_and_starts_nothing() {
    let world = world();
    let unknown = world.run(&["query", "--detach", "@nobody TASK-X"]);
    assert_exit(&unknown, 2);
    assert!(
        text(&unknown.stderr).contains("unknown agent @nobody"),
        "{}",
        text(&unknown.stderr)
    );
    assert_eq!(text(&unknown.stdout), "");

    let unkept = world.run(&["query", "--detach", "--no-log", "@echo TASK-X"]);
    assert_exit(&unkept, 2);
    assert!(
        text(&unkept.stderr).contains("drop --no-log"),
        "{}",
        text(&unkept.stderr)
    );

    // A thread the run cannot continue: said by the run's codecrew, relayed.
    let threads = world.workspace().join(".codecrew/threads");
    std::fs::create_dir_all(&threads).unwrap();
    std::fs::write(threads.join("broken.json"), "{}").unwrap();
    let broken = world.run(&["query", "--detach", "--thread", "broken", "@echo TASK-X"]);
    assert_exit(&broken, 2);
    assert!(
        text(&broken.stderr).contains("cannot be read as a thread"),
        "{}",
        text(&broken.stderr)
    );
    assert_eq!(text(&broken.stdout), "");

    let none = world.run_json(&["logs", "--output", "json"]);
    assert_eq!(none["runs"], json!([]), "no run was recorded");
    let missing = world.run(&["result", "abcdef"]);
    assert_exit(&missing, 2);
    assert!(text(&missing.stderr).contains("no run has the id"));
}
