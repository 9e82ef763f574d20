//! What runs without asking runs in the read-only sandbox: the safe list, the config's
//! allow rules, and every command `run_command` runs in `query`. These tests bypass the
//! analysis on purpose (an allow rule for a script that tries everything) and show that
//! the kernel still holds: nothing read outside the workspace nor of its sensitive files,
//! nothing written, no network. Each has a control that the same command does what it tries once the user
//! approves it.

use tempfile::TempDir;

use super::*;
use codecrew_policy::sandbox::{Support, support};

/// Whether the kernel can hold the read-only sandbox; tests that need it skip (and say so)
/// where it cannot.
fn sandboxed() -> bool {
    let full = support() == Support::Full;
    if !full {
        eprintln!("skipped: this kernel's Landlock cannot hold the read-only sandbox");
    }
    full
}

/// A script in the workspace that tries every way out, and a user config whose allow
/// rule lets it run without asking: the analysis sees only `./probe.sh`.
struct Probe {
    ws: Ws,
    config: PathBuf,
    /// A directory outside the workspace and outside /tmp.
    elsewhere: TempDir,
    listener: std::net::TcpListener,
    /// UDP, which Landlock does not restrict: the system-call filter refuses sockets.
    datagrams: std::net::UdpSocket,
}

impl Probe {
    fn new() -> Self {
        let ws = Ws::new();
        let elsewhere = TempDir::new_in("/var/tmp").unwrap();
        let outside = elsewhere.path().canonicalize().unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let datagrams = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        datagrams.set_nonblocking(true).unwrap();
        let udp = datagrams.local_addr().unwrap().port();
        ws.write(
            "probe.sh",
            &format!(
                "#!/bin/bash\n\
                 echo \"workspace: $(cat src/main.rs)\"\n\
                 cat {secret} ; cat {other} ; cat .env\n\
                 ls {outside}\n\
                 echo written > inside.txt\n\
                 echo written > {outside}/written.txt\n\
                 echo written > /tmp/codecrew-probe-$$\n\
                 echo hi > /dev/tcp/127.0.0.1/{port}\n\
                 echo hi > /dev/udp/127.0.0.1/{udp}\n\
                 exit 0\n",
                secret = outside.join("secret.txt").display(),
                other = ws.outside.join("secret.txt").display(),
                outside = outside.display(),
            ),
        );
        let script = ws.root.join("probe.sh");
        let mut permissions = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&script, permissions).unwrap();
        let config = ws.outside.join("user.toml");
        std::fs::write(
            &config,
            "[permissions]\nallow = [\"run_command(./probe.sh)\"]\nallow_network = true\n",
        )
        .unwrap();
        Probe {
            ws,
            config,
            elsewhere,
            listener,
            datagrams,
        }
    }

    fn run(&self, mode: &str, yes: bool, config: bool) -> Value {
        let input = json!({"command": "./probe.sh"}).to_string();
        let args = tools_call_args("run_command", &input, mode, yes);
        let mut command = self.ws.command(&args);
        if config {
            command.env("CODECREW_CONFIG", &self.config);
        } else {
            let empty = self.ws.outside.join("empty.toml");
            std::fs::write(&empty, "").unwrap();
            command.env("CODECREW_CONFIG", empty);
        }
        tool_result(&command.output().unwrap())
    }

    fn outside(&self) -> PathBuf {
        self.elsewhere.path().canonicalize().unwrap()
    }
}

#[test]
fn an_allowed_command_cannot_read_write_or_connect_outside_even_past_the_analysis() {
    if !sandboxed() {
        return;
    }
    let probe = Probe::new();
    for mode in ["execute", "query"] {
        let result = probe.run(mode, false, true);
        ok(&result);
        let output = &result["output"];
        assert_eq!(output["sandbox"], "read-only", "{mode}: {result:#}");
        // It ran, and read the workspace.
        assert!(
            output["stdout"]
                .as_str()
                .unwrap()
                .contains("workspace: fn main() {}"),
            "{mode}: {result:#}"
        );
        assert!(!result.to_string().contains(SECRET), "{mode}: {result:#}");
        assert!(!probe.ws.exists("inside.txt"), "{mode}: {result:#}");
        assert!(!probe.outside().join("written.txt").exists());
        assert!(
            probe.listener.accept().is_err(),
            "{mode}: a connection got out"
        );
        let mut buffer = [0u8; 16];
        assert!(
            probe.datagrams.recv(&mut buffer).is_err(),
            "{mode}: a datagram got out"
        );
        // What was refused is told to the model.
        let refused = output["sandbox_refused"].to_string();
        assert!(refused.contains("secret.txt"), "{mode}: {result:#}");
        assert!(refused.contains("inside.txt"), "{mode}: {result:#}");
        // The workspace's own secrets are out of the sandbox's reach too.
        assert!(refused.contains(".env"), "{mode}: {result:#}");
        assert!(output["sandbox_note"].is_string());
    }
}

/// The control: approved by the user (`--yes`, no allow rule), the same script writes in
/// the workspace and reads outside, as approved commands in execute may.
#[test]
fn the_same_command_approved_by_the_user_runs_in_the_modes_sandbox() {
    if !sandboxed() {
        return;
    }
    let probe = Probe::new();
    let result = probe.run("execute", true, false);
    ok(&result);
    assert!(result["output"].get("sandbox").is_none(), "{result:#}");
    assert!(probe.ws.exists("inside.txt"), "{result:#}");
    assert!(result.to_string().contains(SECRET), "{result:#}");
    // Writes outside the workspace stay refused.
    assert!(!probe.outside().join("written.txt").exists());
}

#[test]
fn safe_commands_run_read_only_and_still_work_on_the_workspace() {
    if !sandboxed() {
        return;
    }
    let ws = Ws::new();
    crate::support::git::repository_with(&ws.root, &["src"]);
    ws.write("src/main.rs", "fn main() { changed() }\n");
    let index = std::fs::metadata(ws.root.join(".git/index"))
        .unwrap()
        .modified()
        .unwrap();
    for mode in ["execute", "query"] {
        let (result, _) = ws.call_in(
            mode,
            false,
            "run_command",
            json!({"command": "git status --short && git log -p -1 | head -3 && git diff --stat && wc -l src/main.rs && ls src | sort"}),
        );
        ok(&result);
        let output = &result["output"];
        assert_eq!(output["exit_code"], 0, "{mode}: {result:#}");
        assert_eq!(output["sandbox"], "read-only");
        let stdout = output["stdout"].as_str().unwrap();
        assert!(stdout.contains(" M src/main.rs"), "{mode}: {stdout}");
        assert!(stdout.contains("commit "), "{mode}: {stdout}");
        assert!(stdout.contains("1 file changed"), "{mode}: {stdout}");
        assert!(
            output.get("sandbox_refused").is_none(),
            "{mode}: {result:#}"
        );
    }
    // `git status` did not need to write the index (optional locks are off).
    let after = std::fs::metadata(ws.root.join(".git/index"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(index, after);
}

#[test]
fn query_runs_reading_commands_and_refuses_the_rest() {
    if !sandboxed() {
        return;
    }
    let ws = Ws::new();
    let query = |command: &str| {
        ws.call_in("query", false, "run_command", json!({ "command": command }))
            .0
    };
    let result = query("cat src/main.rs");
    ok(&result);
    assert_eq!(result["output"]["stdout"], "fn main() {}\n");
    for command in [
        "touch new.txt",
        "echo x > new.txt",
        "cat .env",
        &format!("cat {}", ws.outside.join("secret.txt").display()),
        "rm -f src/main.rs",
    ] {
        denied(&query(command));
    }
    // `--yes` does not make query write.
    let (result, _) = ws.call_in(
        "query",
        true,
        "run_command",
        json!({"command": "touch new.txt"}),
    );
    denied(&result);
    assert!(!ws.exists("new.txt"));
    assert!(ws.exists("src/main.rs"));
}

#[test]
fn without_the_sandbox_the_safe_list_asks() {
    let ws = Ws::new();
    let input = json!({"command": "ls"}).to_string();
    let output = ws
        .command(&tools_call_args("run_command", &input, "execute", false))
        .env("CODECREW_SANDBOX", "off")
        .output()
        .unwrap();
    let result = tool_result(&output);
    denied(&result);
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only OS sandbox"),
        "{result:#}"
    );
    // Approved, it runs (unconfined: the user turned the sandbox off).
    let output = ws
        .command(&tools_call_args("run_command", &input, "execute", true))
        .env("CODECREW_SANDBOX", "off")
        .output()
        .unwrap();
    ok(&tool_result(&output));
}
