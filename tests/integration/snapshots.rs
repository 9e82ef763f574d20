//! Snapshot tests of what a user reads: the help of every command, `tools list`, and the
//! usage errors a user meets. A change to any of these texts shows as a diff of the files in
//! `snapshots/`; review it with `cargo insta review` (or `INSTA_UPDATE=always`, then
//! `git diff`). Every snapshot is committed: in CI insta writes none and a new one fails.
//!
//! Each run is isolated: an empty workspace and a HOME in a temporary folder, no user config
//! (`CODECREW_CONFIG=""`), a 100-column terminal and no colors. What varies from run to run
//! (the temporary paths, the version, durations) is replaced before the comparison.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::Output;

use clap::CommandFactory;
use codecrew::cli::CommandLine;

use crate::support::World;
use crate::support::binary::text;

/// A world with nothing of the caller's but `PATH`, a 100-column terminal and no colors.
fn isolated() -> World {
    World::new()
        .alone()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
}

/// insta's settings for `world`: its paths, the version and durations filtered,
/// snapshot files named by the snapshot alone, `description` shown above each.
fn settings(world: &World, description: &str) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(description);
    for (path, name) in [
        (world.workspace(), "[WORKSPACE]"),
        (world.home_dir(), "[HOME]"),
        (world.home.root().to_path_buf(), "[TEMP]"),
    ] {
        for form in forms_of(&path) {
            settings.add_filter(&regex_escape(&form), name);
        }
    }
    settings.add_filter(
        &format!(r"\b{}\b", regex_escape(env!("CARGO_PKG_VERSION"))),
        "[VERSION]",
    );
    // Measured times ("0.25s", "12ms"); whole numbers in help texts ("90s") stay.
    settings.add_filter(r"\b\d+\.\d+ ?(ms|s)\b", "[DURATION]");
    settings
}

/// The path as given and as the kernel resolves it (a /tmp behind a symlink).
fn forms_of(path: &Path) -> Vec<String> {
    let mut forms = vec![path.display().to_string()];
    if let Ok(canonical) = path.canonicalize() {
        let canonical = canonical.display().to_string();
        if !forms.contains(&canonical) {
            // The longer first, so that one is not left half replaced by the other.
            forms.push(canonical);
            forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        }
    }
    forms
}

fn regex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// The text without the spaces clap leaves at the end of some lines: they mean nothing to a
/// reader, and an editor that strips them must not break a snapshot.
fn trimmed(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The exit code and both streams, as one text to compare.
fn transcript(output: &Output) -> String {
    trimmed(&format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        output
            .status
            .code()
            .map_or_else(|| "signal".to_owned(), |code| code.to_string()),
        text(&output.stdout),
        text(&output.stderr),
    ))
}

/// The checks of one test: each runs even when one before it failed (insta has then
/// written its `.snap.new` beside the snapshot), so that one run shows everything that
/// changed; `finish` fails naming each check that failed.
#[derive(Default)]
struct Checks {
    failed: Vec<String>,
}

impl Checks {
    fn run(&mut self, label: String, check: impl FnOnce()) {
        if catch_unwind(AssertUnwindSafe(check)).is_err() {
            self.failed.push(label);
        }
    }

    #[track_caller]
    fn finish(self) {
        assert!(
            self.failed.is_empty(),
            "checks that failed: {:#?}",
            self.failed
        );
    }
}

/// Every command path of the CLI, the root first: `[]`, `["query"]`, `["tools", "call"]`.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(command: &clap::Command, path: &[String], paths: &mut Vec<Vec<String>>) {
        paths.push(path.to_vec());
        for sub in command.get_subcommands() {
            let mut next = path.to_vec();
            next.push(sub.get_name().to_owned());
            walk(sub, &next, paths);
        }
    }
    let mut paths = Vec::new();
    walk(&CommandLine::command(), &[], &mut paths);
    paths
}

#[test]
fn help_of_every_command() {
    let world = isolated();
    let paths = command_paths();
    assert!(paths.len() > 10, "the walk found the commands: {paths:?}");
    let mut checks = Checks::default();
    for path in paths {
        let name = if path.is_empty() {
            "help__root".to_owned()
        } else {
            format!("help__{}", path.join("_"))
        };
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let command_line = format!("codecrew {}", args.join(" "));
        checks.run(command_line.clone(), || {
            let output = world.run(&args);
            crate::support::binary::assert_exit(&output, 0);
            assert_eq!(text(&output.stderr), "", "--help writes nothing on stderr");
            let stdout = trimmed(&text(&output.stdout));
            settings(&world, &command_line).bind(|| insta::assert_snapshot!(name.as_str(), stdout));
        });
    }
    checks.finish();
}

#[test]
fn tools_list_in_both_modes() {
    let world = isolated();
    let mut checks = Checks::default();
    for mode in ["query", "execute"] {
        for output in ["text", "json"] {
            let args = ["tools", "list", "--mode", mode, "--output", output];
            let command_line = format!("codecrew {}", args.join(" "));
            checks.run(command_line.clone(), || {
                let run = world.run(&args);
                crate::support::binary::assert_exit(&run, 0);
                if output == "json" {
                    let tools: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
                    assert!(tools.as_array().is_some_and(|tools| !tools.is_empty()));
                }
                settings(&world, &command_line).bind(|| {
                    insta::assert_snapshot!(
                        format!("tools_list__{mode}_{output}"),
                        transcript(&run)
                    );
                });
            });
        }
    }
    checks.finish();
}

/// The usage and config errors a user meets: exit 2, a message that says what is wrong.
#[test]
fn usage_errors() {
    let world = isolated();
    let broken =
        isolated().project_config("[agents.helper]\nprovider = \"claude\"\nmodel = = \"haiku\"\n");
    let cases: [(&str, &World, &[&str]); 6] = [
        ("error__unknown_agent", &world, &["query", "@nobody hi"]),
        (
            "error__invalid_thread_name",
            &world,
            &["query", "--thread", "../up", "@claude hi"],
        ),
        (
            "error__model_is_an_option",
            &world,
            &["query", "@claude:--foo hi"],
        ),
        (
            "error__intercept_from_unknown",
            &world,
            &["intercept", "--from", "nope"],
        ),
        ("error__unknown_command", &world, &["serve"]),
        ("error__broken_project_config", &broken, &["agents", "list"]),
    ];
    let mut checks = Checks::default();
    for (name, world, args) in cases {
        let command_line = format!("codecrew {}", args.join(" "));
        checks.run(format!("{name}: {command_line}"), || {
            let output = world.run(args);
            crate::support::binary::assert_exit(&output, 2);
            let stderr = text(&output.stderr);
            assert!(!stderr.contains("panicked"), "{stderr}");
            settings(world, &command_line)
                .bind(|| insta::assert_snapshot!(name, transcript(&output)));
        });
    }
    checks.finish();
}
