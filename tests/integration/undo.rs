//! `codecrew undo`: what a run of execute changed (through codecrew's tools, and the
//! CLI's own writes) put back exactly; a file changed since refuses it, named, and
//! `--force` goes on; a run whose codecrew was killed with SIGKILL needs `--force` and
//! lists what differs; a folder swapped for a link cannot make it write outside the
//! workspace. Through scripted `command` agents: one that writes with codecrew's
//! `write_file`, one whose own shell writes, creates and deletes files.

use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::binary::{assert_exit, text};
use crate::support::{AgentScript, Answer, Turn, World};

/// The longest a test waits for something a run does at once.
const LIMIT: Duration = Duration::from_secs(30);

/// `@tools` writes `edited.txt` through codecrew's write_file on its task `TASK-EDIT`;
/// `@native` (the CLI's own writes) creates `made/new.txt`, deletes `gone.sh`, and
/// rewrites `data.bin`.
fn world() -> World {
    let write = json!({"path": "edited.txt", "content": "after the run\n"});
    World::new()
        .agent(
            "tools",
            AgentScript::new()
                .turn(Turn::on_task("TASK-EDIT", Answer::call("", "write_file", write)).times(1))
                .otherwise(Answer::text("Done: edited\n")),
        )
        .shell_agent(
            "native",
            "cat >/dev/null\nmkdir -p made\necho created > made/new.txt\nrm gone.sh\n\
             printf 'run\\000bytes' > data.bin\necho Done: native\n",
            "",
        )
}

/// The workspace before the run.
fn seed(world: &World) {
    let workspace = world.workspace();
    std::fs::write(workspace.join("edited.txt"), "before\r\nthe run\n").unwrap();
    std::fs::write(workspace.join("gone.sh"), "#!/bin/sh\necho hi\n").unwrap();
    set_mode(&workspace.join("gone.sh"), 0o755);
    std::fs::write(workspace.join("data.bin"), b"\x00\x01binary\xff").unwrap();
    std::fs::write(workspace.join("kept.txt"), "untouched\n").unwrap();
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Runs both agents in one execute; the run's id.
fn execute(world: &World) -> String {
    // Two agents in one run, each writing other files: shared on purpose.
    let output = world.run(&[
        "execute",
        "--yes",
        "--shared-workspace",
        "@tools TASK-EDIT edit it",
        "@native write yours",
    ]);
    assert_exit(&output, 0);
    assert_eq!(read(world, "edited.txt"), "after the run\n");
    assert_eq!(read(world, "made/new.txt"), "created\n");
    assert!(!world.path("work/gone.sh").exists());
    let logs = world.run_json(&["logs", "--output", "json"]);
    logs["runs"][0]["id"].as_str().unwrap().to_owned()
}

fn read(world: &World, path: &str) -> String {
    std::fs::read_to_string(world.workspace().join(path)).unwrap()
}

fn undo_json(world: &World, args: &[&str]) -> (std::process::Output, Value) {
    let mut all = vec!["undo", "--output", "json"];
    all.extend_from_slice(args);
    let output = world.run(&all);
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", text(&output.stdout)));
    (output, value)
}

/// Both kinds of write, a creation and a deletion are put back byte for byte (modes
/// too), and each file is said, in text and in JSON; the run is then undone.
#[test]
fn an_execute_run_is_put_back_exactly_and_each_file_said() {
    let world = world();
    seed(&world);
    let id = execute(&world);

    let (output, outcome) = undo_json(&world, &[]);
    assert_exit(&output, 0);
    assert_eq!(outcome["run"], id.as_str());
    assert_eq!(outcome["status"], "undone");
    assert_eq!(outcome["ended"], true);
    let mut files: Vec<(String, String)> = outcome["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| {
            (
                file["path"].as_str().unwrap().to_owned(),
                file["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("data.bin", "restored"),
            ("edited.txt", "restored"),
            ("gone.sh", "recreated"),
            ("made/new.txt", "removed"),
        ]
        .map(|(path, action)| (path.to_owned(), action.to_owned()))
    );
    let workspace = world.workspace();
    assert_eq!(read(&world, "edited.txt"), "before\r\nthe run\n");
    assert_eq!(read(&world, "gone.sh"), "#!/bin/sh\necho hi\n");
    assert_eq!(mode(&workspace.join("gone.sh")), 0o755);
    assert_eq!(
        std::fs::read(workspace.join("data.bin")).unwrap(),
        b"\x00\x01binary\xff"
    );
    assert_eq!(read(&world, "kept.txt"), "untouched\n");
    assert!(
        !workspace.join("made").exists(),
        "the folder the run made is gone"
    );

    // Once undone, it is not undone again.
    let again = world.run(&["undo", &id]);
    assert_exit(&again, 1);
    assert!(
        text(&again.stderr).contains("already been undone"),
        "{}",
        text(&again.stderr)
    );
    let none = world.run(&["undo"]);
    assert_exit(&none, 2);
}

/// A file changed after the run refuses the undo, which names it and touches nothing;
/// `--force` puts everything back; the text output says each file.
#[test]
fn a_file_changed_since_refuses_the_undo_and_force_goes_on() {
    let world = world();
    seed(&world);
    let id = execute(&world);
    std::fs::write(world.workspace().join("made/new.txt"), "mine now\n").unwrap();

    let refused = world.run(&["undo"]);
    assert_exit(&refused, 1);
    let said = text(&refused.stderr);
    assert!(said.contains(&format!("run {id} was not undone")), "{said}");
    assert!(said.contains("\n  made/new.txt"), "{said}");
    assert!(
        !said.contains("edited.txt"),
        "only the changed file is named: {said}"
    );
    assert!(said.contains("--force"), "{said}");
    assert_eq!(
        read(&world, "edited.txt"),
        "after the run\n",
        "nothing touched"
    );

    let forced = world.run(&["undo", &id[..6], "--force"]);
    assert_exit(&forced, 0);
    let shown = text(&forced.stdout);
    assert!(shown.contains(&format!("Undid run {id}:")), "{shown}");
    assert!(shown.contains("removed   made/new.txt"), "{shown}");
    assert!(shown.contains("restored  edited.txt"), "{shown}");
    assert!(shown.contains("recreated gone.sh"), "{shown}");
    assert_eq!(read(&world, "edited.txt"), "before\r\nthe run\n");
    assert!(!world.workspace().join("made/new.txt").exists());
}

/// A codecrew killed with SIGKILL in the middle of a run records no end: undo refuses,
/// listing what differs from before the run, and `--force` puts it back.
#[test]
fn a_run_killed_with_sigkill_needs_force_and_lists_what_differs() {
    let world = World::new().shell_agent(
        "hang",
        "cat >/dev/null\necho half > half.txt\nrm kept.txt\necho $$ > started\nsleep 120\n",
        "",
    );
    std::fs::write(world.workspace().join("kept.txt"), "keep me\n").unwrap();
    let output = world.run(&["execute", "--detach", "--yes", "@hang go"]);
    assert_exit(&output, 0);
    let id = text(&output.stdout).trim().to_owned();
    wait_until("the agent to write", || world.path("work/started").exists());
    let runs = world.run_json(&["ps", "--output", "json"]);
    let pid = i32::try_from(runs["runs"][0]["pid"].as_i64().unwrap()).unwrap();
    kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    wait_until("the codecrew to die", || !alive(pid));

    let (refused, outcome) = undo_json(&world, &[]);
    assert_exit(&refused, 1);
    assert_eq!(outcome["run"], id.as_str());
    assert_eq!(outcome["status"], "not_ended");
    assert_eq!(outcome["ended"], false);
    assert_eq!(
        outcome["changed_since"],
        json!(["half.txt", "kept.txt", "started"])
    );
    assert!(
        world.workspace().join("half.txt").exists(),
        "nothing touched"
    );
    let said = text(&world.run(&["undo"]).stderr);
    assert!(said.contains("its end was never recorded"), "{said}");
    assert!(said.contains("\n  half.txt"), "{said}");

    let forced = world.run(&["undo", "--force"]);
    assert_exit(&forced, 0);
    assert!(!world.workspace().join("half.txt").exists());
    assert_eq!(read(&world, "kept.txt"), "keep me\n");
}

/// A folder the run wrote in, swapped since for a link to a folder outside the
/// workspace: undo refuses naming the file, and `--force` does not write through the
/// link (that file is said to have failed, the outside folder stays empty).
#[test]
fn a_planted_link_cannot_make_undo_write_outside_the_workspace() {
    let world = World::new().shell_agent(
        "nested",
        "cat >/dev/null\necho run > src/a.txt\necho Done\n",
        "",
    );
    let workspace = world.workspace();
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    std::fs::write(workspace.join("src/a.txt"), "before\n").unwrap();
    assert_exit(&world.run(&["execute", "--yes", "@nested go"]), 0);
    assert_eq!(read(&world, "src/a.txt"), "run\n");
    let outside = world.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(workspace.join("src")).unwrap();
    std::os::unix::fs::symlink(&outside, workspace.join("src")).unwrap();

    let refused = world.run(&["undo"]);
    assert_exit(&refused, 1);
    assert!(
        text(&refused.stderr).contains("\n  src/a.txt"),
        "{}",
        text(&refused.stderr)
    );
    let forced = world.run(&["undo", "--force"]);
    assert_exit(&forced, 1);
    let said = text(&forced.stderr);
    assert!(said.contains("could not put back src/a.txt"), "{said}");
    assert!(!outside.join("a.txt").exists(), "written through the link");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

/// A query records nothing to undo.
#[test]
fn a_query_records_nothing() {
    let world = World::new().shell_agent("q", "cat >/dev/null\necho answer\n", "");
    assert_exit(&world.run(&["query", "@q hi"]), 0);
    let output = world.run(&["undo"]);
    assert_exit(&output, 2);
    assert!(!world.state_dir().join("undo").exists());
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

/// In a chat, each line of execute is recorded: `/undo` puts back what the last one
/// changed, says each file, and the chat goes on.
#[test]
fn a_chat_s_undo_puts_back_its_last_line_of_execute() {
    use crate::support::binary::BIN;
    use crate::support::pty::Terminal;

    let world = World::new().shell_agent(
        "native",
        "cat >/dev/null\necho changed > notes.txt\necho made > made.txt\necho Done-writing\n",
        "",
    );
    std::fs::write(world.workspace().join("notes.txt"), "mine\n").unwrap();
    let env = world.env.clone().with("NO_COLOR", "1");
    let limit = Duration::from_secs(60);
    let mut terminal = Terminal::run(
        &env,
        Path::new(BIN),
        &["chat", "--yes", "--mode", "execute"],
    );
    terminal.wait_for("prompt", limit, |shown| shown.contains("execute> "));
    terminal.type_keys(b"@native write\r");
    terminal.wait_for("the answer", limit, |shown| {
        shown
            .split_once("Done-writing")
            .is_some_and(|(_, after)| after.contains("execute> "))
    });
    assert_eq!(read(&world, "notes.txt"), "changed\n");
    terminal.type_keys(b"/undo\r");
    terminal.wait_for("the undo", limit, |shown| {
        shown
            .split_once("removed   made.txt")
            .is_some_and(|(_, after)| after.contains("execute> "))
    });
    let shown = terminal.text();
    assert!(shown.contains("restored  notes.txt"), "{shown}");
    assert_eq!(read(&world, "notes.txt"), "mine\n");
    assert!(!world.workspace().join("made.txt").exists());
    terminal.type_keys(b"\x04");
    let status = terminal.wait(limit).expect("the chat ended");
    assert_eq!(status.code(), Some(0), "{}", terminal.text());
}

/// Without git, execute runs as before, and says that undo is unavailable.
#[test]
fn without_git_execute_runs_and_says_undo_is_unavailable() {
    let world = World::new().shell_agent(
        "native",
        "cat >/dev/null\necho made > made.txt\necho Done-writing\n",
        "",
    );
    // A PATH with what the agent needs, and no git.
    let bin = world.path("bin-without-git");
    std::fs::create_dir_all(&bin).unwrap();
    for program in ["sh", "cat", "echo"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(program))
            .find(|path| path.exists())
            .unwrap();
        std::os::unix::fs::symlink(found, bin.join(program)).unwrap();
    }
    let world = world.env("PATH", &bin);
    let output = world.run(&["execute", "--yes", "@native write"]);
    assert_exit(&output, 0);
    assert_eq!(read(&world, "made.txt"), "made\n");
    let said = text(&output.stderr);
    assert!(
        said.contains("`codecrew undo` is unavailable for this run: git is not installed"),
        "{said}"
    );
    assert_exit(&world.run(&["undo"]), 2);
}

/// A run in the home directory (`--allow-home`) is not recorded: a snapshot would copy
/// the whole home. The run says so, and goes on.
#[test]
fn a_run_in_the_home_is_not_recorded() {
    let world = World::new().started_in_the_home().shell_agent(
        "native",
        "cat >/dev/null\necho Done-writing\n",
        "",
    );
    let output = world.run(&["execute", "--allow-home", "--yes", "@native write"]);
    assert_exit(&output, 0);
    let said = text(&output.stderr);
    assert!(
        said.contains("`codecrew undo` is unavailable for this run"),
        "{said}"
    );
    assert!(said.contains("is your home directory"), "{said}");
    assert!(!world.state_dir().join("undo").exists());
}

/// What `codecrew apply` brings into the checkout from an agent's worktree is recorded
/// too: `codecrew undo` takes it back (the newest change here), and says it was an apply.
#[test]
fn an_apply_is_undone() {
    use crate::support::git::repository_with;

    let fixer = |content: &str| {
        AgentScript::new()
            .turn(
                Turn::always(Answer::call(
                    "",
                    "write_file",
                    json!({"path": "app.py", "content": content}),
                ))
                .times(1),
            )
            .otherwise(Answer::text("Done"))
    };
    let world = World::new()
        .agent("alpha", fixer("print(\"alpha\")\n"))
        .agent("beta", fixer("print(\"beta\")\n"));
    std::fs::write(world.workspace().join("app.py"), "print(\"bug\")\n").unwrap();
    repository_with(&world.workspace(), &["app.py"]);
    let document = world.run_json(&[
        "execute",
        "--yes",
        "--output",
        "json",
        "@alpha fix app.py",
        "@beta fix app.py",
    ]);
    let run = document["worktrees"][0]["run"].as_str().unwrap().to_owned();
    // The run wrote in its worktrees: nothing here to undo.
    assert_exit(&world.run(&["undo"]), 2);

    let applied = world.run(&["apply", &run, "beta"]);
    assert_exit(&applied, 0);
    assert!(
        text(&applied.stderr).contains("`codecrew undo "),
        "{}",
        text(&applied.stderr)
    );
    assert_eq!(read(&world, "app.py"), "print(\"beta\")\n");
    let (output, outcome) = undo_json(&world, &[]);
    assert_exit(&output, 0);
    assert_eq!(outcome["kind"], "apply");
    assert!(
        outcome["run"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{run}-apply-"))
    );
    assert_eq!(
        outcome["files"],
        json!([{"path": "app.py", "action": "restored"}])
    );
    assert_eq!(read(&world, "app.py"), "print(\"bug\")\n");
}
