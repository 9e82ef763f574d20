//! `codecrew chat` in a real terminal (tmux): two questions to @claude and one to @gemini,
//! each agent's follow-up answered by the CLI process that answered its first; a switch
//! to execute with a permission question answered at the prompt; an answer stopped with
//! Ctrl-C and the chat going on; Ctrl-D ending it; the thread it leaves.

use super::live::Tmux;
use super::warm::Counted;
use super::*;

fn script() -> Script {
    let write = fenced(&[envelope(
        "write_file",
        json!({"path": ".env", "content": "WRITTEN_IN_THE_CHAT=1\n"}),
    )]);
    Script::new()
        .rule(Rule::on_prompt(FOLLOW_UP, Reply::text("Written it.")))
        .rule(Rule::on_prompt("E2E-CHAT-ONE", Reply::text("Answer one.")))
        .rule(Rule::on_prompt("E2E-CHAT-TWO", Reply::text("Answer two.")))
        .rule(Rule::on_prompt(
            "E2E-CHAT-THREE",
            Reply::text("Answer three."),
        ))
        .rule(Rule::on_prompt(
            "E2E-CHAT-FOUR",
            Reply::text("Answer four."),
        ))
        .rule(Rule::on_prompt("E2E-CHAT-WRITE", Reply::text(write)))
        .rule(Rule::on_prompt(
            "E2E-CHAT-SLOW",
            Reply::text("Too late.").with_delay_ms(60_000),
        ))
        .rule(Rule::on_prompt(
            "E2E-CHAT-AFTER",
            Reply::text("Still here."),
        ))
        .rule(Rule::on_prompt(
            "E2E-CHAT-MARKDOWN",
            Reply::text(
                "## Plan\n\n- one step\n\n| Step | Cost |\n|---|---:|\n| a | 1 |\n\n\
                 ```rust\nfn main() {}\n```\n",
            ),
        ))
}

#[test]
fn a_chat_keeps_each_agents_cli_asks_stops_and_leaves_a_thread() {
    let Some(world) = World::new("e2e-chat", script()) else {
        return;
    };
    let claude = Counted::new(&world, &world.env, "claude");
    let gemini = Counted::new(&world, &claude.env, "gemini");
    let codecrew = env!("CARGO_BIN_EXE_codecrew");
    let command =
        format!("{codecrew} --color always chat --thread talk; echo CHAT-EXIT=$?; sleep 60");
    let Some(tmux) = Tmux::start_with(
        &world,
        &gemini.env,
        &format!("codecrew-chat-{}", std::process::id()),
        &command,
    ) else {
        return;
    };
    // The prompt stands on the last line, empty: the chat waits for the next one.
    let prompted = |screen: &str| {
        let last = screen.lines().rfind(|line| !line.trim().is_empty());
        last.is_some_and(|line| matches!(line.trim_end(), "query>" | "execute>"))
    };
    let ask = |line: &str, answer: &str| {
        tmux.send_keys(&["-l", line]);
        tmux.send_keys(&["Enter"]);
        tmux.wait_for(answer, |screen| {
            prompted(screen) && tmux.history().matches(answer).count() == 1
        })
    };
    tmux.wait_for("the prompt", prompted);
    ask("@claude first E2E-CHAT-ONE", "Answer one.");
    // No mention: the agent last addressed.
    ask("second E2E-CHAT-TWO", "Answer two.");
    ask("@gemini third E2E-CHAT-THREE", "Answer three.");
    ask("fourth E2E-CHAT-FOUR", "Answer four.");
    assert_eq!(
        claude.starts(),
        1,
        "claude's second answer came from a new process"
    );
    assert_eq!(
        gemini.starts(),
        1,
        "gemini's second answer came from a new process"
    );
    // The answer rendered: no markdown markup, the table drawn, the code indented.
    ask("@claude rendered E2E-CHAT-MARKDOWN", "Step │ Cost");
    let shown = tmux.history();
    for expected in ["Plan", "• one step", "a    │    1", "  fn main() {}"] {
        assert!(
            shown.lines().any(|line| line.trim_end() == expected),
            "{expected:?} not shown:\n{shown}"
        );
    }
    assert!(
        !shown.contains("## Plan") && !shown.contains("```"),
        "{shown}"
    );

    // Execute: the write of a protected file is asked about at the prompt, and answered.
    tmux.send_keys(&["-l", "/mode execute"]);
    tmux.send_keys(&["Enter"]);
    tmux.wait_for("the execute prompt", |screen| {
        prompted(screen) && screen.trim_end().ends_with("execute>")
    });
    tmux.send_keys(&["-l", "@claude write it E2E-CHAT-WRITE"]);
    tmux.send_keys(&["Enter"]);
    tmux.wait_for("the question", |screen| screen.contains("Allow?"));
    tmux.send_keys(&["o", "Enter"]);
    tmux.wait_for("the answer after the write", |screen| {
        prompted(screen) && tmux.history().contains("Written it.")
    });
    assert_eq!(
        std::fs::read_to_string(world.workspace().join(".env")).unwrap(),
        "WRITTEN_IN_THE_CHAT=1\n"
    );

    // Ctrl-C stops a slow answer; the chat goes on.
    tmux.send_keys(&["-l", "@claude slow E2E-CHAT-SLOW"]);
    tmux.send_keys(&["Enter"]);
    world
        .server
        .wait_for_model_requests(8, Duration::from_secs(60));
    tmux.send_keys(&["C-c"]);
    tmux.wait_for("the stop", |screen| {
        prompted(screen) && screen.contains("stopping the answer")
    });
    ask("after E2E-CHAT-AFTER", "Still here.");
    assert!(!tmux.history().contains("Too late."));

    // Ctrl-D at an empty line ends it.
    tmux.send_keys(&["C-d"]);
    let end = tmux.wait_for("the end", |_| tmux.history().contains("CHAT-EXIT="));
    let all = tmux.history();
    assert!(all.contains("CHAT-EXIT=0"), "{all}\n{end}");
    assert!(all.contains("thread talk"), "{all}");

    let shown = world.codecrew(&["threads", "show", "talk"]);
    shown.assert_code(0);
    for said in [
        "Answer one.",
        "Answer two.",
        "Answer three.",
        "Answer four.",
        "Written it.",
        "Still here.",
    ] {
        assert!(
            shown.stdout.contains(said),
            "{said} not in the thread:\n{}",
            shown.stdout
        );
    }
    assert!(shown.stdout.contains("@gemini"), "{}", shown.stdout);

    // The chat is one run in the run store, each answer a job of it, found by a word.
    let logs = world.codecrew(&["logs", "--output", "json"]);
    logs.assert_code(0);
    let listed: Value = serde_json::from_str(&logs.stdout).unwrap();
    let run = &listed["runs"][0];
    assert_eq!(run["command"], "chat", "{listed:#}");
    assert_eq!(run["agents"], json!(["claude", "gemini"]), "{listed:#}");
    let id = run["id"].as_str().unwrap();
    let shown = world.codecrew(&["logs", "show", id]);
    shown.assert_code(0);
    for said in ["Answer one.", "Answer three.", "Written it."] {
        assert!(shown.stdout.contains(said), "{said}:\n{}", shown.stdout);
    }
    let found = world.codecrew(&["logs", "search", "Answer", "three", "--output", "json"]);
    let found: Value = serde_json::from_str(&found.stdout).unwrap();
    assert_eq!(found["matches"][0]["id"], id, "{found:#}");
}
