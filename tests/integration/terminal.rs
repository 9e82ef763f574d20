//! What a person at a terminal gets: the manual page, colour that follows `--color`,
//! `NO_COLOR` and `CLICOLOR_FORCE`, and logs that stay on stderr.

use crate::support::World;
use std::io::Write;
use std::process::{Output, Stdio};

/// Environment variables a test sets.
type Env<'a> = &'a [(&'a str, &'a str)];

/// Runs codecrew in `world` with piped streams (never a terminal) and only the given
/// colour variables set.
fn codecrew(world: &World, args: &[&str], env: Env, stdin: &[u8]) -> Output {
    let mut command = world.command(args);
    command.env_remove("NO_COLOR").stdin(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn has_escapes(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

/// A model's output with one call in it: `intercept --dry-run` prints the text and a
/// styled call notice.
const ONE_CALL: &[u8] = b"Let me read it.\n```json\n\
    {\"type\":\"tool_use\",\"name\":\"codecrew:read_file\",\"input\":{\"path\":\"README.md\"}}\n\
    ```\n";

#[test]
fn the_man_page_is_roff_and_documents_every_command() {
    let world = World::new();
    let output = codecrew(&world, &["man"], &[], b"");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let page = text(&output.stdout);
    let header = page.lines().find(|line| line.starts_with(".TH "));
    assert!(
        header.is_some_and(|line| line.starts_with(".TH codecrew 1 ")),
        "{header:?}"
    );
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH COMMANDS"] {
        assert!(page.contains(section), "no {section}");
    }
    let mut commands = codecrew::cli::command_names();
    commands.extend(["tools list", "tools show", "tools call", "agents list"].map(String::from));
    assert!(commands.iter().any(|name| name == "man"));
    for command in commands.iter().filter(|name| *name != "help") {
        assert!(
            page.contains(&format!(".SS \"codecrew {command}\"")),
            "the page lacks {command}"
        );
    }
    assert!(page.contains("\\-\\-color"), "flags are documented");
    assert!(!has_escapes(&output.stdout));
}

#[test]
fn man_dir_writes_one_page_per_command() {
    let world = World::new();
    let pages = world.workspace().join("man1");
    let output = codecrew(&world, &["man", "--dir", pages.to_str().unwrap()], &[], b"");
    assert!(output.status.success(), "{}", text(&output.stderr));
    for (file, title) in [
        ("codecrew.1", ".TH codecrew 1 "),
        ("codecrew-query.1", ".TH codecrew-query 1 "),
        ("codecrew-tools-list.1", ".TH codecrew-tools-list 1 "),
    ] {
        let path = pages.join(file);
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains(title), "{file}: {page}");
        assert!(text(&output.stdout).contains(path.to_str().unwrap()));
    }
}

#[test]
fn color_always_styles_the_text_output_even_into_a_pipe() {
    let world = World::new();
    let args = ["intercept", "--dry-run", "--color", "always"];
    for env in [&[][..], &[("NO_COLOR", "1")]] {
        let output = codecrew(&world, &args, env, ONE_CALL);
        assert!(output.status.success());
        let out = text(&output.stdout);
        assert!(
            out.contains("\x1b[2m[codecrew] call codecrew:read_file"),
            "{env:?}: {out:?}"
        );
        // The model's own text is never styled.
        assert!(out.starts_with("Let me read it.\n"), "{out:?}");
    }
}

#[test]
fn no_color_never_and_pipes_get_plain_text() {
    let world = World::new();
    let cases: [(&[&str], Env); 4] = [
        (&["--color", "never"], &[]),
        (&["--color", "never"], &[("CLICOLOR_FORCE", "1")]),
        (&["--color", "auto"], &[("NO_COLOR", "1")]),
        // Auto into a pipe.
        (&[], &[]),
    ];
    for (flags, env) in cases {
        let mut args = vec!["intercept", "--dry-run"];
        args.extend(flags);
        let output = codecrew(&world, &args, env, ONE_CALL);
        assert!(output.status.success());
        assert_eq!(
            text(&output.stdout),
            "Let me read it.\n[codecrew] call codecrew:read_file {\"path\":\"README.md\"}\n",
            "{flags:?} {env:?}"
        );
    }
}

#[test]
fn clicolor_force_styles_a_pipe_in_auto_mode() {
    let world = World::new();
    let output = codecrew(&world, &["tools", "list"], &[("CLICOLOR_FORCE", "1")], b"");
    assert!(has_escapes(&output.stdout), "{}", text(&output.stdout));
}

#[test]
fn json_output_is_never_styled() {
    let world = World::new();
    let args = [
        "intercept",
        "--dry-run",
        "--output",
        "json",
        "--color",
        "always",
    ];
    let output = codecrew(&world, &args, &[], ONE_CALL);
    assert!(output.status.success());
    assert!(!has_escapes(&output.stdout), "{}", text(&output.stdout));
    let tools = ["tools", "list", "--output", "json", "--color", "always"];
    let output = codecrew(&world, &tools, &[], b"");
    assert!(!has_escapes(&output.stdout), "{}", text(&output.stdout));
}

#[test]
fn clap_help_and_errors_follow_the_color_flag() {
    let world = World::new();
    let help = |flag: &str| codecrew(&world, &["--color", flag, "--help"], &[], b"");
    assert!(has_escapes(&help("always").stdout));
    assert!(!has_escapes(&help("never").stdout));
    let error = codecrew(&world, &["--color=always", "nonsense"], &[], b"");
    assert_eq!(error.status.code(), Some(2));
    assert!(has_escapes(&error.stderr), "{}", text(&error.stderr));
    let error = codecrew(&world, &["nonsense"], &[], b"");
    assert!(!has_escapes(&error.stderr), "{}", text(&error.stderr));
}

#[test]
fn logs_go_to_stderr_only() {
    let world = World::new();
    let quiet = codecrew(&world, &["tools", "list"], &[], b"");
    assert!(quiet.status.success());
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    let runs = [
        codecrew(&world, &["-vv", "tools", "list"], &[], b""),
        codecrew(&world, &["tools", "list"], &[("RUST_LOG", "trace")], b""),
    ];
    for loud in runs {
        assert!(loud.status.success());
        assert_eq!(text(&loud.stdout), text(&quiet.stdout));
        assert!(
            text(&loud.stderr).contains("DEBUG"),
            "{}",
            text(&loud.stderr)
        );
        // Not a terminal: the logs are plain too.
        assert!(!has_escapes(&loud.stderr));
    }
    // A tool call logs as it runs; stdout is still exactly one JSON result.
    let call = ["-vv", "tools", "call", "list_directory", "--input", "{}"];
    let output = codecrew(&world, &call, &[], b"");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "ok");
    assert!(!output.stderr.is_empty());
}

#[test]
fn chat_without_a_terminal_says_to_use_query() {
    let world = World::new();
    let output = codecrew(&world, &["chat"], &[], b"@claude hello\n");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let said = text(&output.stderr);
    assert!(said.contains("needs a terminal"), "{said}");
    assert!(said.contains("codecrew query"), "{said}");
}
