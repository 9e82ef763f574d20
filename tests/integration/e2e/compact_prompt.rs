//! The compact prompt (`prompt = "compact"`) with every CLI: the model reads each tool on
//! one line, writes its call as a small model does (bare, one closing brace too many),
//! codecrew repairs and runs it, and the model answers from the result.

use super::config::with_user_config;
use super::*;

per_cli!(a_call_written_to_the_compact_prompt_runs);

fn a_call_written_to_the_compact_prompt_runs(agent: &str) {
    // Bare, with the extra brace SmolLM2 wrote in seven of ten envelopes (issue 43).
    let call = format!("{}}}", envelope("read_file", json!({"path": "notes.txt"})));
    let script = Script::new()
        .rule(
            Rule::on_prompt(FOLLOW_UP, Reply::text("The notes say SMALL-NOTE-5."))
                .and_prompt("SMALL-NOTE-5"),
        )
        .rule(Rule::on_prompt(
            "E2E-COMPACT",
            Reply::text(format!("Reading it.\n{call}\n")),
        ));
    let Some(world) = World::new(&format!("e2e-compact-{agent}"), script) else {
        return;
    };
    std::fs::write(world.workspace().join("notes.txt"), "SMALL-NOTE-5\n").unwrap();
    let env = with_user_config(
        &world,
        &format!("[agents.small]\nprovider = \"{agent}\"\nprompt = \"compact\"\n"),
    );
    let run = world.codecrew_with(
        &env,
        &[
            "query",
            "--output",
            "json",
            "@small E2E-COMPACT what do the notes say?",
        ],
    );
    run.assert_code(0);
    let doc: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let r = result(&doc);
    assert_eq!(r["provider"], agent);
    assert_eq!(
        r["response"], "The notes say SMALL-NOTE-5.",
        "{agent}: {doc}"
    );
    assert_eq!(r["turns"], 2);
    let calls = r["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{agent}: {doc}");
    assert_eq!(calls[0]["name"], "codecrew:read_file");
    assert_eq!(calls[0]["status"], "ok");
    // What reached the model was the compact prompt: each tool on one line, no schema.
    let requests = world.server.model_requests();
    let prompt = requests
        .iter()
        .find(|r| {
            r.prompt
                .as_deref()
                .is_some_and(|p| p.contains("E2E-COMPACT"))
        })
        .unwrap()
        .read_by_the_model();
    assert!(
        prompt.contains("- codecrew:read_file: ") && prompt.contains("Input: path"),
        "{agent}: {prompt}"
    );
    assert!(!prompt.contains("Input schema"), "{agent}: {prompt}");
    assert!(!prompt.contains("### codecrew:"), "{agent}: {prompt}");
}
