//! Ctrl-C stops every agent, and nothing is left running.

use super::*;

/// Processes whose working directory is `dir`: the CLIs a test started there.
pub(super) fn processes_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir))
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// `codecrew <args>` started in the test's world, its output piped.
pub(super) fn spawn(world: &World, args: &[&str]) -> std::process::Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
    world.env.apply(&mut command);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C to `child`: it exits 130 and leaves nothing running in `workspace`.
pub(super) fn interrupt_exits_130_leaving_nothing(child: std::process::Child, workspace: &Path) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted"));
    assert_eq!(
        processes_in(workspace),
        Vec::<String>::new(),
        "a CLI outlived codecrew"
    );
}

#[test]
fn an_interrupt_stops_every_agent_and_exits_130() {
    let script = Script::new().rule(Rule::on_prompt("E2E-INT", Reply::hang()));
    let Some(world) = World::new("e2e-interrupt", script) else {
        return;
    };
    let workspace = world.workspace().canonicalize().unwrap();
    let child = spawn(&world, &["query", "@claude @codex E2E-INT"]);
    // Wait until both CLIs have asked the model (they are running, and hanging).
    let asked = world
        .server
        .wait_for_model_requests(2, Duration::from_secs(60));
    assert!(asked.len() >= 2, "the CLIs never called the model");
    assert!(
        !processes_in(&workspace).is_empty(),
        "the CLIs run in the workspace"
    );
    interrupt_exits_130_leaving_nothing(child, &workspace);
}
