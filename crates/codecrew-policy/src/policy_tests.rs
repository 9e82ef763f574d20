use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;
use crate::PermissionsConfig;
use crate::{Mode, ToolContext};

struct Ws {
    _dir: TempDir,
    ctx: ToolContext,
}

impl Ws {
    fn new(mode: Mode) -> Self {
        let dir = TempDir::new().unwrap();
        let root: PathBuf = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/lib.rs"), "").unwrap();
        fs::write(root.join(".env"), "K=1").unwrap();
        Ws {
            _dir: dir,
            ctx: ToolContext::new(root, mode),
        }
    }
}

fn config(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionsConfig {
    let owned = |rules: &[&str]| rules.iter().map(|rule| (*rule).to_owned()).collect();
    PermissionsConfig {
        allow: owned(allow),
        ask: owned(ask),
        deny: owned(deny),
        ..PermissionsConfig::default()
    }
}

fn kind(decision: &Decision) -> &'static str {
    match decision {
        Decision::Allow(_) => "allow",
        Decision::Ask(_) => "ask",
        Decision::Deny(_) => "deny",
    }
}

fn readonly(tool: &str) -> bool {
    matches!(
        tool,
        "read_file" | "grep" | "glob" | "list_directory" | "help"
    )
}

#[track_caller]
fn check(policy: &Policy, ws: &Ws, tool: &str, input: Value, wanted: &str) -> Decision {
    let decision = policy.decide(tool, readonly(tool), &input, &ws.ctx);
    assert_eq!(kind(&decision), wanted, "{tool} {input}: {decision:?}");
    decision
}

#[test]
fn defaults_in_execute_mode() {
    let ws = Ws::new(Mode::Execute);
    let policy = Policy::default();
    check(
        &policy,
        &ws,
        "read_file",
        json!({"path": "src/lib.rs"}),
        "allow",
    );
    check(
        &policy,
        &ws,
        "write_file",
        json!({"path": "src/new.rs"}),
        "allow",
    );
    check(&policy, &ws, "read_file", json!({"path": ".env"}), "ask");
    check(&policy, &ws, "read_file", json!({"path": ".ENV"}), "ask");
    check(
        &policy,
        &ws,
        "grep",
        json!({"pattern": "K", "path": ".env"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "write_file",
        json!({"path": ".git/hooks/pre-commit"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "write_file",
        json!({"path": "CODECREW.toml"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "edit_file",
        json!({"path": ".github/workflows/ci.yml"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "write_file",
        json!({"path": "src/../.bashrc"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "git diff"}),
        "allow",
    );
    let ask = check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "cargo test --all"}),
        "ask",
    );
    let Decision::Ask(reason) = ask else {
        unreachable!()
    };
    assert_eq!(reason.hint.as_deref(), Some("run_command(cargo test *)"));
    let deny = check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "rm -rf /"}),
        "deny",
    );
    let Decision::Deny(reason) = deny else {
        unreachable!()
    };
    assert!(reason.hint.unwrap().contains("deny list"));
    // Denied only for its double quotes: the hint says how to write it.
    let deny = check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "tmp=$(mktemp); trap \"rm -f $tmp\" EXIT"}),
        "deny",
    );
    let Decision::Deny(reason) = deny else {
        unreachable!()
    };
    let hint = reason.hint.unwrap();
    assert!(
        hint.contains("deny list") && hint.contains("single quotes ('rm -f $tmp')"),
        "{hint}"
    );
    check(&policy, &ws, "help", json!({}), "allow");
    check(&policy, &ws, "some_external_tool", json!({}), "ask");
}

#[test]
fn query_mode_never_asks() {
    let ws = Ws::new(Mode::Query);
    let policy = Policy::default();
    check(
        &policy,
        &ws,
        "read_file",
        json!({"path": "src/lib.rs"}),
        "allow",
    );
    check(&policy, &ws, "read_file", json!({"path": ".env"}), "deny");
    check(
        &policy,
        &ws,
        "write_file",
        json!({"path": "src/x.rs"}),
        "deny",
    );
    // Reading commands run in query, in the read-only sandbox; what would ask is denied.
    let ls = check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "ls"}),
        "allow",
    );
    assert_eq!(ls, Decision::Allow(Grant::Unattended));
    for command in ["touch x", "cat .env", "ls > out", "cat /etc/hostname"] {
        check(
            &policy,
            &ws,
            "run_command",
            json!({ "command": command }),
            "deny",
        );
    }
    // An approval of this run cannot widen query's sandbox.
    policy.allow_for_run("run_command(make *)").unwrap();
    let make = check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "make lint"}),
        "allow",
    );
    assert_eq!(make, Decision::Allow(Grant::Unattended));
}

#[test]
fn the_grant_says_who_let_a_call_through() {
    let ws = Ws::new(Mode::Execute);
    let user = config(&["run_command(cargo test *)"], &[], &[]);
    let policy = Policy::from_layers(&builtin_defaults(), Some(&user), None, false).unwrap();
    let grant = |command: &str| {
        policy.decide(
            "run_command",
            false,
            &json!({ "command": command }),
            &ws.ctx,
        )
    };
    // The safe list and the config's allow rules: nobody was asked.
    assert_eq!(grant("git status"), Decision::Allow(Grant::Unattended));
    assert_eq!(
        grant("cargo test --all"),
        Decision::Allow(Grant::Unattended)
    );
    // A rule approved "always" at a prompt: the user's yes, for this run.
    assert!(matches!(grant("make lint"), Decision::Ask(_)));
    policy.allow_for_run("run_command(make *)").unwrap();
    assert_eq!(grant("make lint"), Decision::Allow(Grant::Approved));
    assert_eq!(
        grant("make lint && git status"),
        Decision::Allow(Grant::Approved)
    );
}

#[test]
fn without_the_read_only_sandbox_nothing_runs_without_asking() {
    let mut ws = Ws::new(Mode::Execute);
    ws.ctx.exec.sandbox = false;
    let policy = Policy::default();
    let decision = check(&policy, &ws, "run_command", json!({"command": "ls"}), "ask");
    let Decision::Ask(reason) = decision else {
        unreachable!()
    };
    assert!(
        reason.message.contains("CODECREW_SANDBOX=off"),
        "{reason:?}"
    );
    // The file tools do not run commands: they are unaffected.
    check(
        &policy,
        &ws,
        "read_file",
        json!({"path": "src/lib.rs"}),
        "allow",
    );
    ws.ctx.mode = Mode::Query;
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "ls"}),
        "deny",
    );
}

#[test]
fn precedence_is_deny_ask_allow() {
    let ws = Ws::new(Mode::Execute);
    let user = config(
        &["run_command(git *)", "run_command(cargo *)"],
        &["run_command(git push *)"],
        &["run_command(cargo publish *)", "read_file(secrets/**)"],
    );
    let policy = Policy::from_layers(&builtin_defaults(), Some(&user), None, false).unwrap();
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "git push origin"}),
        "ask",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "git commit -m x"}),
        "allow",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "cargo publish --dry-run"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "ls && cargo publish"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "env cargo publish"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "bash -c 'cargo publish'"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "read_file",
        json!({"path": "secrets/key.txt"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "read_file",
        json!({"path": "SECRETS/key.txt"}),
        "deny",
    );
    check(
        &policy,
        &ws,
        "grep",
        json!({"pattern": "x", "path": "secrets"}),
        "deny",
    );
    // An allow rule never lifts a risk.
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "cargo test $(id)"}),
        "ask",
    );
}

#[test]
fn a_project_can_restrict_but_not_grant_unless_trusted() {
    let ws = Ws::new(Mode::Execute);
    let project = PermissionsConfig {
        allow: vec!["run_command(curl *)".to_owned()],
        deny: vec!["write_file(src/**)".to_owned()],
        pass_env: vec!["GITHUB_TOKEN".to_owned()],
        allow_network: true,
        cli_read: vec!["/opt/toolchain".to_owned(), "relative/dir".to_owned()],
        ..PermissionsConfig::default()
    };
    let untrusted = Policy::from_layers(&builtin_defaults(), None, Some(&project), false).unwrap();
    let ask = check(
        &untrusted,
        &ws,
        "run_command",
        json!({"command": "curl x"}),
        "ask",
    );
    let Decision::Ask(reason) = ask else {
        unreachable!()
    };
    assert!(reason.message.contains("not trusted"), "{}", reason.message);
    check(
        &untrusted,
        &ws,
        "write_file",
        json!({"path": "src/lib.rs"}),
        "deny",
    );
    assert!(untrusted.pass_env().is_empty());
    assert!(!untrusted.allow_network());
    assert!(
        untrusted.cli_read().is_empty(),
        "an untrusted project widens no wall"
    );

    let trusted = Policy::from_layers(&builtin_defaults(), None, Some(&project), true).unwrap();
    check(
        &trusted,
        &ws,
        "run_command",
        json!({"command": "curl x"}),
        "allow",
    );
    check(
        &trusted,
        &ws,
        "write_file",
        json!({"path": "src/lib.rs"}),
        "deny",
    );
    assert_eq!(trusted.pass_env(), ["GITHUB_TOKEN"]);
    // A relative folder is left out: it would depend on where codecrew runs.
    assert_eq!(trusted.cli_read(), [std::path::Path::new("/opt/toolchain")]);
    // The network is the config merge's call (config tests, and the security suite's
    // `a_project_can_turn_the_network_off`), never a layer's alone.
    assert!(!trusted.allow_network());
}

#[test]
fn bad_rules_stop_the_run() {
    let user = config(&["write_file("], &[], &[]);
    let error = Policy::from_layers(&builtin_defaults(), Some(&user), None, false).unwrap_err();
    assert!(error.to_string().contains("user config"), "{error}");
}

#[test]
fn session_rules_allow_for_the_rest_of_the_run() {
    let ws = Ws::new(Mode::Execute);
    let policy = Policy::default();
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "make all"}),
        "ask",
    );
    policy.allow_for_run("run_command(make *)").unwrap();
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "make all"}),
        "allow",
    );
    check(
        &policy,
        &ws,
        "run_command",
        json!({"command": "make $(id)"}),
        "ask",
    );
}

#[test]
fn links_to_sensitive_files_and_special_files() {
    let ws = Ws::new(Mode::Execute);
    let root = ws.ctx.workspace.clone();
    std::os::unix::fs::symlink(root.join(".env"), root.join("notes.txt")).unwrap();
    // A link to a sensitive file is refused: approval is asked by the file's own name.
    check(
        &Policy::default(),
        &ws,
        "read_file",
        json!({"path": "notes.txt"}),
        "deny",
    );
    check(
        &Policy::default(),
        &ws,
        "read_file",
        json!({"path": "../x"}),
        "deny",
    );
    fs::write(root.join("data"), "x").unwrap();
    fs::hard_link(root.join("data"), root.join("data2")).unwrap();
    check(
        &Policy::default(),
        &ws,
        "read_file",
        json!({"path": "data"}),
        "deny",
    );
    let status = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    check(
        &Policy::default(),
        &ws,
        "read_file",
        json!({"path": "pipe"}),
        "deny",
    );
}

#[test]
fn extension_tools_run_when_declared_read_only_and_ask_otherwise() {
    let policy = Policy::from_layers(
        &builtin_defaults(),
        Some(&config(&["jira__comment"], &[], &["files__write_file"])),
        None,
        false,
    )
    .unwrap();
    let decide = |mode, tool: &str, readonly| {
        let ws = Ws::new(mode);
        kind(&policy.decide(tool, readonly, &json!({}), &ws.ctx))
    };
    assert_eq!(decide(Mode::Query, "jira__search", true), "allow");
    assert_eq!(decide(Mode::Execute, "jira__search", true), "allow");
    assert_eq!(decide(Mode::Query, "jira__transition", false), "deny");
    assert_eq!(decide(Mode::Execute, "jira__transition", false), "ask");
    assert_eq!(decide(Mode::Execute, "jira__comment", false), "allow");
    // Deny rules hold whatever the tool says of itself.
    assert_eq!(decide(Mode::Execute, "files__write_file", true), "deny");
}
