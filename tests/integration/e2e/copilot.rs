//! Copilot's own tools under codecrew, kept for the loop as `copilot --acp`.

use super::*;

/// In `query` the model is offered only Copilot's reading tools, and its shell is
/// denied outright; in `execute` its shell asks codecrew, whose policy refuses a command
/// it would ask the user about when there is nobody to ask: either way nothing runs, and
/// the model reads why and goes on within the turn.
#[test]
fn copilots_own_shell_runs_nothing_codecrew_would_not_run() {
    let shell = Reply::tool(
        "bash",
        json!({"command": "touch made-by-copilot-shell", "description": "touch",
               "mode": "sync", "initial_wait": 10}),
    );
    // Copilot reports a shell that ran as "<shellId: 0 completed with exit code 0>".
    let script = Script::new()
        .on_tool_result("completed with exit code", Reply::text("The shell ran."))
        .on_tool_result("", Reply::text("The shell was refused."))
        .on_prompt("codecrew's policy refused", Reply::text("Told why."))
        .on_prompt("E2E-COPILOT-TOOLS", shell);
    let Some(world) = World::new("e2e-copilot-tools", script) else {
        return;
    };
    let marker = world.workspace().join("made-by-copilot-shell");
    for mode in ["query", "execute"] {
        let before = world.server.model_requests().len();
        let (run, doc) = world.json(mode, &["@copilot E2E-COPILOT-TOOLS"]);
        run.assert_code(0);
        assert!(!marker.exists(), "{mode}: Copilot's shell ran: {doc}");
        let requests = world.server.model_requests();
        let first = requests[before..]
            .iter()
            .find(|r| {
                r.prompt
                    .as_deref()
                    .is_some_and(|p| p.contains("E2E-COPILOT-TOOLS"))
            })
            .unwrap_or_else(|| panic!("{mode}: no request"));
        let offered: Vec<&str> = first.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        let answer = match mode {
            "query" => {
                assert_eq!(offered, ["view", "grep", "glob"], "{mode}");
                "The shell was refused."
            }
            _ => {
                assert!(offered.contains(&"bash"), "{offered:?}");
                assert!(!offered.contains(&"task"), "{offered:?}");
                // Copilot stops at a refusal: codecrew told the model why.
                "Told why."
            }
        };
        assert_eq!(result(&doc)["response"], answer, "{mode}: {doc}");
    }
}

/// Kept, Copilot asks codecrew before its own edits: an ordinary file is written without
/// `--yes`, a `.env` is refused (and its notice of disabled tools is not in the answer).
#[test]
fn copilots_own_edit_is_allowed_for_an_ordinary_file_and_refused_for_env() {
    let Some(world) = World::new("e2e-copilot-edit", Script::new()) else {
        return;
    };
    let ordinary = world.workspace().join("notes.txt");
    let secret = world.workspace().join(".env");
    world.server.set_script(
        Script::new()
            .on_tool_result("", Reply::text("Edited."))
            .on_prompt(
                "codecrew's policy refused",
                Reply::text("Refused, told why."),
            )
            .on_prompt(
                "E2E-COPILOT-EDIT-ENV",
                Reply::tool(
                    "create",
                    json!({"path": secret, "file_text": "TOKEN=pwned\n"}),
                ),
            )
            .on_prompt(
                "E2E-COPILOT-EDIT",
                Reply::tool(
                    "create",
                    json!({"path": ordinary, "file_text": "by copilot\n"}),
                ),
            ),
    );
    let (run, doc) = world.json("execute", &["@copilot E2E-COPILOT-EDIT"]);
    run.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&ordinary).unwrap_or_default(),
        "by copilot\n",
        "{doc}"
    );
    assert_eq!(result(&doc)["response"], "Edited.", "{doc}");
    assert_eq!(result(&doc)["usage"]["native_tool_calls"], 1, "{doc}");

    let (run, doc) = world.json("execute", &["@copilot E2E-COPILOT-EDIT-ENV"]);
    run.assert_code(0);
    assert!(!secret.exists(), "Copilot wrote .env: {doc}");
    assert_eq!(result(&doc)["response"], "Refused, told why.", "{doc}");
    let told = world
        .server
        .model_requests()
        .into_iter()
        .filter_map(|r| r.prompt)
        .find(|p| p.contains("codecrew's policy refused"))
        .unwrap_or_default();
    assert!(told.contains(".env"), "{told}");
}

/// Copilot runs its JavaScript from the package it unpacks into `~/.cache/copilot`: a
/// command its own shell runs under codecrew (approved here with `--yes`) cannot change
/// what `copilot` runs next, outside codecrew. A fresh home gets the package unpacked
/// first, by a run that takes no prompt.
#[test]
fn a_program_in_copilots_wall_cannot_plant_code_in_its_unpacked_package() {
    let Some(world) = World::new("e2e-copilot-package", Script::new()) else {
        return;
    };
    let cache = world.home.home().join(".cache/copilot/pkg");
    assert!(!cache.exists(), "a fresh home");
    // Its loader also runs the newest package under `~/.copilot/pkg`, over the bundled
    // one: a newer version planted there would run at the next `copilot`.
    let plant = "for f in $(find ~/.cache/copilot/pkg -name app.js); do \
                 echo 'PLANTED' >> \"$f\"; done; \
                 mkdir -p ~/.copilot/pkg/linux-x64/99.0.0 && \
                 echo 'PLANTED' > ~/.copilot/pkg/linux-x64/99.0.0/index.js; touch shell-ran";
    world.server.set_script(
        Script::new()
            .on_tool_result("", Reply::text("Tried."))
            .on_prompt(
                "E2E-COPILOT-PLANT",
                Reply::tool(
                    "bash",
                    json!({"command": plant, "description": "plant", "mode": "sync",
                           "initial_wait": 30}),
                ),
            ),
    );
    let (run, doc) = world.json("execute", &["--yes", "@copilot E2E-COPILOT-PLANT"]);
    run.assert_code(0);
    assert!(
        world.workspace().join("shell-ran").exists(),
        "the shell ran: {doc}"
    );
    let unpacked: Vec<std::path::PathBuf> = files_under(&cache)
        .into_iter()
        .filter(|path| path.ends_with("app.js"))
        .collect();
    assert!(!unpacked.is_empty(), "the package was unpacked first");
    for app in unpacked {
        let text = std::fs::read_to_string(&app).unwrap();
        assert!(!text.contains("PLANTED"), "{} was changed", app.display());
    }
    let newer = world
        .home
        .home()
        .join(".copilot/pkg/linux-x64/99.0.0/index.js");
    assert!(!newer.exists(), "{} stays", newer.display());
}
