//! The deny list read to its depth, through the whole loop: a model under `execute
//! --yes` that sends the command substitutions bash runs from inside parameter
//! expansions, subscripts, arithmetic, traps and nested shells leaves the workspace as
//! it was, and is told of each call that it was denied and where the command hid.

use super::*;

/// Every spelling targets the workspace itself, so that an analysis that let one through
/// would show it here (and its sandbox keeps the rest of the machine out of reach).
const SPELLINGS: &[&str] = &[
    r#": ${x:=$(rm -rf "$PWD")}"#,
    r#"echo "${x:-$(rm -rf ./*)}""#,
    r#"a[$(rm -rf "$PWD")]=1"#,
    r#"bash -c ': ${x:=$(rm -rf "$PWD")}'"#,
    r#"echo ${x/$(rm -rf ./*)/}"#,
    r#": ${x:=$(mkfs.ext4 disk.img)}"#,
    r#"echo ${x#$(rm -rf ./*)}"#,
    r#"echo "${x%%$(rm -rf "$PWD")}""#,
    r#"echo ${x^^$(rm -rf .)}"#,
    r#"echo ${x:?$(rm -rf ./*)}"#,
    r#"echo ${x:+$(rm -rf ./*)}"#,
    r#"(( $(rm -rf ./*) ))"#,
    r#"echo $(( a[$(rm -rf ./*)] ))"#,
    r#"[[ -v a[$(rm -rf ./*)] ]]"#,
    r#"declare "b[$(rm -rf ./*)]=1""#,
    r#"export y="${z:-$(rm -rf ./*)}""#,
    r#"printf -v "a[$(rm -rf ./*)]" x"#,
    r#"trap 'rm -rf "$PWD"' EXIT"#,
    r#"PROMPT_COMMAND='rm -rf ./*' bash -i"#,
    r#"eval ': ${x:=$(rm -rf ./*)}'"#,
    r#"for f in ${x:-$(rm -rf ./*)}; do :; done"#,
    r#"case ${x:-$(rm -rf ./*)} in *) ;; esac"#,
    r#"cat <<< "${x:-$(rm -rf ./*)}""#,
    r#"sh -c "bash -c ': \${x:=\$(rm -rf ./*)}'""#,
    // Bash takes a backtick body's quoting backslashes away before it reads it, and
    // runs backtick substitutions in a here-document's body.
    r"echo `\\rm -rf ./*`",
    r"echo `echo \`rm -rf ./*\``",
    "cat <<EOF\n`rm -rf ./*`\nEOF",
];

/// Calls in one message (codecrew runs at most 16 of one message).
const PER_MESSAGE: usize = 12;

/// The model: its first answers make the calls of `SPELLINGS`, `PER_MESSAGE` a turn, then
/// it says it is done.
fn model() -> AgentScript {
    SPELLINGS
        .chunks(PER_MESSAGE)
        .fold(AgentScript::new(), |script, spellings| {
            let calls: String = spellings
                .iter()
                .map(|command| {
                    let call = json!({
                        "type": "tool_use",
                        "name": "codecrew:run_command",
                        "input": {"command": command},
                    });
                    format!("```json\n{call}\n```\n")
                })
                .collect();
            script.turn(Turn::always(Answer::text(calls)).times(1))
        })
        .otherwise(Answer::text("DONE\n"))
}

/// The workspace's files and their contents, to compare before and after.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn execute_yes_runs_no_deny_listed_command_however_it_is_hidden() {
    let ws = Ws::of(World::outside_tmp().agent("model", model()));
    ws.write("disk.img", "not a file system\n");
    let before = snapshot(&ws.root);

    let output = ws
        .command(&[
            "--yes",
            "execute",
            "--output",
            "json",
            "@model clean up the workspace",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(snapshot(&ws.root), before, "the workspace changed");

    // The model was told, call by call, that each was denied and where the command hid.
    let prompts = ws.world.prompts("model");
    let turns = SPELLINGS.len().div_ceil(PER_MESSAGE);
    assert_eq!(prompts.len(), turns + 1, "{prompts:?}");
    // A command agent cannot resume: its last prompt holds every turn's results, once.
    let results = &prompts[turns];
    let lines: Vec<Value> = results
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|value| value.get("status").is_some())
        .collect();
    assert_eq!(lines.len(), SPELLINGS.len(), "{results}");
    for (command, result) in SPELLINGS.iter().zip(&lines) {
        assert_eq!(result["status"], "denied", "{command}: {result}");
        let said = result.to_string();
        assert!(said.contains("deny list"), "{command}: {said}");
        assert!(said.contains("found in"), "{command}: {said}");
    }
}
