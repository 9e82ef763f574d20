//! Process hygiene and the sandbox: the scrubbed environment, secrets in memory, process groups, output caps, Landlock.

use super::*;

#[test]
fn the_environment_is_scrubbed() {
    let ws = Ws::new();
    let (result, stdout) = ws.call_in("execute", true, "run_command", json!({"command": "env"}));
    ok(&result);
    assert!(!stdout.contains(SECRET), "a secret leaked: {stdout}");
    let printed = result["output"]["stdout"].as_str().unwrap();
    assert!(printed.contains("PATH="), "{printed}");
    for name in ["FAKE_API_KEY", "GITHUB_TOKEN", "MY_SECRET", "SSH_AUTH_SOCK"] {
        assert!(!printed.contains(&format!("{name}=")), "{name} leaked");
    }
    for command in [
        "echo $FAKE_API_KEY$GITHUB_TOKEN$MY_SECRET",
        "printenv",
        "cat /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/$PPID/environ",
    ] {
        let (result, stdout) = ws.call_in(
            "execute",
            true,
            "run_command",
            json!({ "command": command }),
        );
        assert!(!stdout.contains(SECRET), "{command:?} leaked: {result:#}");
    }
}

/// A command the user approved can run an interpreter or loop over every process, so
/// codecrew's own `/proc/<pid>/environ` must not hold the values of its secrets.
#[test]
fn codecrews_own_environment_shows_no_secret_values() {
    let ws = Ws::new();
    let marker = marker("environ");
    let sweep = format!(
        "# {marker}\nfor f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\" 2>/dev/null; done"
    );
    let (result, stdout) = ws.call_in("execute", true, "run_command", json!({"command": sweep}));
    ok(&result);
    assert!(!stdout.contains(SECRET), "a secret leaked: {stdout}");
    // The loop did read codecrew's environment: the names are there, the values are not.
    let printed = result["output"]["stdout"].as_str().unwrap();
    assert!(printed.contains("FAKE_API_KEY="), "{printed}");
    if which("python3") {
        let script = "import os; print(open('/proc/%d/environ' % os.getppid()).read())";
        let (result, stdout) = ws.call_in(
            "execute",
            true,
            "run_command",
            json!({ "command": format!("python3 -c \"{script}\"") }),
        );
        ok(&result);
        assert!(!stdout.contains(SECRET), "a secret leaked: {stdout}");
    }
}

/// The agent CLIs still receive the keys codecrew hid from `/proc`.
#[test]
fn agent_clis_still_get_the_secrets() {
    let ws = Ws::new();
    let config = ws.root.join("user.toml");
    std::fs::write(
        &config,
        r#"
[agents.printer]
provider = "command"
command = { argv = ["sh", "-c", "cat >/dev/null; printf 'key=%s' \"$FAKE_API_KEY\""] }
"#,
    )
    .unwrap();
    let output = ws
        .command(&["query", "@printer show the key"])
        .env("CODECREW_CONFIG", &config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("key={SECRET}")),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

pub(super) fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[test]
fn a_timeout_kills_the_whole_group() {
    let ws = Ws::new();
    let marker = marker("timeout");
    let result = ws.call_yes(
        "run_command",
        json!({"command": format!("sleep 300 & sleep 301; : {marker}"), "timeout_ms": 500}),
    );
    assert_eq!(result["error"]["code"], "E_TIMEOUT", "{result:#}");
    no_process_left(&marker);
}

#[test]
fn no_orphans_after_codecrew_exits() {
    let ws = Ws::new();
    let first = marker("bg");
    let result = ws.run_yes(&format!("(sleep 300; : {first}) > /dev/null 2>&1 &"));
    ok(&result);
    no_process_left(&first);
    // Leaving the process group (and the session) does not escape either.
    let second = marker("setsid");
    let result = ws.run_yes(&format!(
        "setsid bash -c 'sleep 300; : {second}' > /dev/null 2>&1 < /dev/null &"
    ));
    ok(&result);
    no_process_left(&second);
    let third = marker("nohup");
    let result = ws.run_yes(&format!(
        "nohup bash -c 'sleep 300; : {third}' > /dev/null 2>&1 &"
    ));
    ok(&result);
    no_process_left(&third);
}

#[test]
fn ctrl_c_kills_running_commands() {
    let ws = Ws::new();
    let marker = marker("sigint");
    let input = json!({"command": format!("sleep 300; : {marker}")}).to_string();
    let mut child = ws
        .command(&[
            "tools",
            "call",
            "run_command",
            "--input",
            &input,
            "--mode",
            "execute",
            "--yes",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while processes_with(&marker).is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !processes_with(&marker).is_empty(),
        "the command never started"
    );
    let _ = Command::new("kill")
        .arg("-INT")
        .arg(child.id().to_string())
        .status();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    no_process_left(&marker);
}

#[test]
fn output_is_capped() {
    let ws = Ws::new();
    let result = ws.run_yes("head -c 3000000 /dev/zero | tr '\\0' a");
    ok(&result);
    assert_eq!(result["output"]["truncated"], true);
    assert!(result["output"]["stdout"].as_str().unwrap().len() <= 1024 * 1024);
}

#[test]
fn the_sandbox_confines_writes_and_the_network() {
    use codecrew_policy::sandbox::{Support, support};
    let ws = Ws::new();
    if support() == Support::Unsupported {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    // The sandbox lets commands write in /tmp; when the checkout itself lives there, the
    // place to try must be elsewhere.
    let elsewhere = if ws.outside.starts_with("/tmp") {
        Some(tempfile::TempDir::new_in("/var/tmp").unwrap())
    } else {
        None
    };
    let outside = elsewhere
        .as_ref()
        .map_or(ws.outside.clone(), |dir| dir.path().canonicalize().unwrap());
    let target = outside.join("written.txt");
    let result = ws.run_yes(&format!("echo pwned > {}", target.display()));
    ok(&result);
    assert!(!target.exists(), "the sandbox let a write out: {result:#}");
    let result = ws.run_yes(&format!("touch {}", outside.join("touched").display()));
    ok(&result);
    assert!(!outside.join("touched").exists());
    // A hard link into the workspace from outside is refused by the kernel.
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    let result = ws.run_yes(&format!(
        "ln {} stolen.txt",
        outside.join("secret.txt").display()
    ));
    ok(&result);
    assert!(!ws.exists("stolen.txt"), "{result:#}");
    // Inside the workspace and in /tmp it may write.
    ok(&ws.run_yes("echo fine > inside.txt"));
    assert!(ws.exists("inside.txt"));
    if support() == Support::Full {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let result = ws.run_yes(&format!("echo hi > /dev/tcp/127.0.0.1/{port}"));
        ok(&result);
        assert_ne!(result["output"]["exit_code"], 0, "{result:#}");
        assert!(
            listener.accept().is_err(),
            "the sandbox let a connection out"
        );
    }
}

/// The user allows the network; a project (even an untrusted one) may turn it off again,
/// and what the config reports is what the sandbox enforces.
#[test]
fn a_project_can_turn_the_network_off() {
    use codecrew_policy::sandbox::{Support, support};
    if support() != Support::Full {
        return;
    }
    let ws = Ws::new();
    let user = ws.outside.join("user.toml");
    std::fs::write(&user, "[permissions]\nallow_network = true\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = json!({ "command": format!("echo hi > /dev/tcp/127.0.0.1/{port}") });
    let run = || {
        let input = connect.to_string();
        let output = ws
            .command(&[
                "tools",
                "call",
                "run_command",
                "--input",
                &input,
                "--mode",
                "execute",
                "--yes",
            ])
            .env("CODECREW_CONFIG", &user)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let allowed = run();
    ok(&allowed);
    assert_eq!(
        allowed["output"]["exit_code"], 0,
        "the user allows it: {allowed:#}"
    );
    listener.accept().unwrap();

    ws.write("codecrew.toml", "[permissions]\nallow_network = false\n");
    listener.set_nonblocking(true).unwrap();
    let refused = run();
    ok(&refused);
    assert_ne!(refused["output"]["exit_code"], 0, "{refused:#}");
    assert!(
        listener.accept().is_err(),
        "the project's `false` was ignored"
    );
}
