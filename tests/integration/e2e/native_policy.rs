//! Every CLI's OWN tools (Claude's Read/Write/Bash, Gemini's read_file, Codex's
//! exec_command, ...) answer to codecrew's policy, attacked as a model that read hostile
//! text would: the fake model scripts the native calls. llm has no tools of its own.

use std::path::PathBuf;

use super::*;

/// The CLIs with tools of their own.
const NATIVE: [&str; 6] = ["claude", "gemini", "codex", "copilot", "opencode", "qwen"];

/// The agent's own tool that reads `path`.
pub(super) fn native_read(agent: &str, path: &Path) -> Reply {
    match agent {
        "claude" => Reply::tool("Read", json!({"file_path": path})),
        "codex" => Reply::tool(
            "exec_command",
            json!({"cmd": format!("cat {}", path.display())}),
        ),
        "copilot" => Reply::tool("view", json!({"path": path})),
        "opencode" => Reply::tool("read", json!({"filePath": path})),
        _ => Reply::tool("read_file", json!({"file_path": path})),
    }
}

/// The tool results the model got last, for failure messages.
fn last_results(world: &World) -> Vec<String> {
    let requests = world.server.requests();
    requests
        .iter()
        .rev()
        .take(3)
        .filter_map(|request| request.tool_result.clone())
        .collect()
}

/// A file holding `secret`, created with its folders.
pub(super) fn plant(path: &Path, secret: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{secret}\n")).unwrap();
}

/// Whether a request the model got after the first `since` carries `text` (a tool
/// result that held it).
pub(super) fn model_saw(world: &World, since: usize, text: &str) -> bool {
    world.server.requests()[since..]
        .iter()
        .any(|request| request.body.to_string().contains(text))
}

/// In `query`, a CLI's own read of a sensitive workspace file, of a file outside the
/// workspace and of one in the home directory reaches the model with an error, never
/// the file: the CLI runs in its wall. An ordinary workspace file still reads (the
/// control that the native call ran and its result went back). Its own write and shell
/// change nothing, `--yes` or not.
#[test]
fn in_query_a_native_read_of_secrets_outside_or_home_never_reaches_the_model() {
    let Some(world) = World::new("e2e-native-reads", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    let targets = [
        ("PUBLIC", workspace.join("notes.txt")),
        ("ENV", workspace.join(".env")),
        ("OUTSIDE", world.home.root().join("outside/report.txt")),
        ("HOME", world.home.home().join(".ssh/id_rsa")),
    ];
    for (name, path) in &targets {
        plant(path, &format!("NATIVE-SECRET-{name}"));
    }
    for agent in NATIVE {
        let mut script = Script::new().rule(Rule::on_any_tool_result(Reply::text("Read done.")));
        for (name, path) in &targets {
            script = script.rule(Rule::on_prompt(
                format!("E2E-NATIVE-READ-{name}"),
                native_read(agent, path),
            ));
        }
        world.server.set_script(script);
        for (name, _) in &targets {
            let since = world.server.requests().len();
            let (run, doc) = world.json("query", &[&format!("@{agent} E2E-NATIVE-READ-{name}")]);
            run.assert_code(0);
            let secret = format!("NATIVE-SECRET-{name}");
            if *name == "PUBLIC" {
                assert!(
                    model_saw(&world, since, &secret),
                    "{agent}: the control read did not reach the model: {doc}"
                );
            } else {
                assert!(
                    !model_saw(&world, since, &secret),
                    "{agent}: its own read of {name} reached the model: {doc}"
                );
            }
        }
    }
    // Nor does a CLI's own write or shell change anything in query.
    for agent in NATIVE {
        let file = workspace.join(format!("query-{agent}.txt"));
        let marker = workspace.join(format!("query-shell-{agent}"));
        world.server.set_script(attack_script(
            agent,
            &[(file.clone(), "QUERY-WROTE")],
            &format!("touch {}", marker.display()),
        ));
        for prompt in ["E2E-NATIVE-WRITE-0", "E2E-NATIVE-SHELL"] {
            let (run, doc) = world.json("query", &["--yes", &format!("@{agent} {prompt}")]);
            run.assert_code(0);
            assert!(!file.exists(), "{agent}: its own write ran in query: {doc}");
            assert!(
                !marker.exists(),
                "{agent}: its own shell ran in query: {doc}"
            );
        }
    }
}

/// The agent's own tool that writes `content` to `path` (Codex's `apply_patch` is a
/// free-form tool: its input is the patch text).
fn native_write(agent: &str, path: &Path, content: &str) -> Reply {
    match agent {
        "claude" => Reply::tool("Write", json!({"file_path": path, "content": content})),
        "codex" => Reply::tool(
            "apply_patch",
            json!(format!(
                "*** Begin Patch\n*** Add File: {}\n+{content}\n*** End Patch\n",
                path.display()
            )),
        ),
        "copilot" => Reply::tool("create", json!({"path": path, "file_text": content})),
        "opencode" => Reply::tool("write", json!({"filePath": path, "content": content})),
        _ => Reply::tool("write_file", json!({"file_path": path, "content": content})),
    }
}

/// The agent's own shell running `command`.
fn native_shell(agent: &str, command: &str) -> Reply {
    match agent {
        "claude" => Reply::tool("Bash", json!({"command": command, "description": "run it"})),
        "codex" => Reply::tool("exec_command", json!({"cmd": command})),
        "copilot" => Reply::tool(
            "bash",
            json!({"command": command, "description": "run it", "mode": "sync", "initial_wait": 10}),
        ),
        "opencode" => Reply::tool("bash", json!({"command": command, "description": "run it"})),
        _ => Reply::tool(
            "run_shell_command",
            json!({"command": command, "description": "run it"}),
        ),
    }
}

/// The files of each protected class a hostile model would go for, workspace-relative.
const PROTECTED: [&str; 4] = [".env", "AGENTS.md", ".github/workflows/ci.yml", ".bashrc"];

/// A script answering `E2E-NATIVE-WRITE-<i>` with a native write of `targets[i]`,
/// `E2E-NATIVE-SHELL` with the native shell running `command`, and any tool result with
/// "Went on.".
fn attack_script(agent: &str, targets: &[(PathBuf, &str)], command: &str) -> Script {
    let mut script = Script::new()
        .rule(Rule::on_any_tool_result(Reply::text("Went on.")))
        .rule(Rule::on_prompt(
            "E2E-NATIVE-SHELL",
            native_shell(agent, command),
        ));
    for (i, (path, content)) in targets.iter().enumerate() {
        script = script.rule(Rule::on_prompt(
            format!("E2E-NATIVE-WRITE-{i}"),
            native_write(agent, path, content),
        ));
    }
    script
}

/// In `execute` without `--yes` (and no terminal to ask on), a CLI's own write of each
/// protected class and its own shell running a command codecrew would ask about change
/// nothing; an ordinary edit of its own works.
#[test]
fn in_execute_native_writes_of_protected_files_and_asked_about_commands_change_nothing() {
    let Some(world) = World::new("e2e-native-execute", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    std::fs::write(workspace.join("AGENTS.md"), "ORIGINAL\n").unwrap();
    for agent in NATIVE {
        let marker = workspace.join(format!("shell-ran-{agent}"));
        // Each protected class, the home directory's own rc file and a file outside the
        // workspace: none may change; then an ordinary edit, last.
        let mut targets: Vec<(PathBuf, &str)> = PROTECTED
            .iter()
            .map(|name| workspace.join(name))
            .chain([
                world.home.home().join(".bashrc"),
                world
                    .home
                    .root()
                    .join(format!("outside/planted-{agent}.txt")),
            ])
            .map(|path| (path, "NATIVE-PWNED"))
            .collect();
        let guarded = targets.len();
        targets.push((workspace.join(format!("notes-{agent}.txt")), "NATIVE-EDIT"));
        world.server.set_script(attack_script(
            agent,
            &targets,
            &format!("touch {}", marker.display()),
        ));
        let (run, doc) = world.json("execute", &[&format!("@{agent} E2E-NATIVE-SHELL")]);
        run.assert_code(0);
        assert!(!marker.exists(), "{agent}: its own shell ran: {doc}");
        for (i, (path, _)) in targets.iter().enumerate() {
            let (run, doc) = world.json("execute", &[&format!("@{agent} E2E-NATIVE-WRITE-{i}")]);
            run.assert_code(0);
            let now = std::fs::read_to_string(path).unwrap_or_default();
            if i < guarded {
                assert!(
                    !now.contains("NATIVE-PWNED"),
                    "{agent}: its own write changed {}: {doc}",
                    path.display()
                );
            } else {
                assert!(
                    now.contains("NATIVE-EDIT"),
                    "{agent}: an ordinary edit failed: {doc}"
                );
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(workspace.join("AGENTS.md")).unwrap(),
        "ORIGINAL\n"
    );
}

/// What the policy asks about runs with `--yes`, and an allow rule lifts the question
/// for a command without it, whichever tool the model picked.
#[test]
fn with_yes_or_an_allow_rule_native_writes_and_commands_run() {
    let Some(world) = World::new("e2e-native-approved", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    let config = world.home.root().join("allow-touch.toml");
    std::fs::write(
        &config,
        "[permissions]\nallow = [\"run_command(touch *)\"]\n",
    )
    .unwrap();
    let allowing = world.env.clone().with("CODECREW_CONFIG", &config);
    for agent in NATIVE {
        let env_file = workspace.join(format!("{agent}.env"));
        let marker = workspace.join(format!("approved-{agent}"));
        world.server.set_script(attack_script(
            agent,
            &[(env_file.clone(), "APPROVED")],
            &format!("touch {}", marker.display()),
        ));
        let (run, doc) = world.json(
            "execute",
            &["--yes", &format!("@{agent} E2E-NATIVE-WRITE-0")],
        );
        run.assert_code(0);
        assert!(
            std::fs::read_to_string(&env_file)
                .unwrap_or_default()
                .contains("APPROVED"),
            "{agent}: its own write of a protected file under --yes: {doc}"
        );
        let (run, doc) = world.json("execute", &["--yes", &format!("@{agent} E2E-NATIVE-SHELL")]);
        run.assert_code(0);
        assert!(
            marker.exists(),
            "{agent}: its own shell under --yes: {doc}\n{:?}",
            last_results(&world)
        );
        std::fs::remove_file(&marker).unwrap();
        let run = world.codecrew_with(
            &allowing,
            &[
                "execute",
                "--output",
                "json",
                &format!("@{agent} E2E-NATIVE-SHELL"),
            ],
        );
        run.assert_code(0);
        assert!(
            marker.exists(),
            "{agent}: its own shell under an allow rule: {}\n{:?}",
            run.stdout,
            last_results(&world)
        );
    }
}

/// The wall lets a CLI read its own installation, found from the program on PATH; one
/// reached through a shim that is not (a version manager's) can be named in
/// `permissions.cli_read`, and nothing else opens the wall.
#[test]
fn a_cli_behind_a_shim_runs_once_cli_read_names_its_installation() {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-SHIM",
        Reply::text("Through the shim."),
    ));
    let Some(world) = World::new("e2e-native-shim", script) else {
        return;
    };
    let clis = Clis::require("e2e::native_policy").unwrap();
    let real = clis.path(crate::support::clis::Cli::Claude);
    let shims = world.home.root().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let shim = shims.join("claude");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // PATH: the shim, then every folder that holds no claude of its own.
    let inherited = world
        .env
        .get("PATH")
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    let mut dirs = vec![shims.clone()];
    dirs.extend(std::env::split_paths(&inherited).filter(|dir| !dir.join("claude").exists()));
    let path = std::env::join_paths(dirs).unwrap();
    let env = world.env.clone().with("PATH", &path);

    let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
    env.apply(&mut command);
    command.args(["query", "--output", "json", "@claude E2E-SHIM"]);
    let walled = run(&mut command, TIMEOUT);
    assert!(
        !walled.stdout.contains("Through the shim."),
        "the wall let the shim run what it cannot know: {}",
        walled.stdout
    );

    let installation = clis.bin_dir().parent().unwrap().canonicalize().unwrap();
    let config = world.home.root().join("cli-read.toml");
    std::fs::write(
        &config,
        format!(
            "[permissions]\ncli_read = [{:?}]\n",
            installation.display().to_string()
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_codecrew"));
    env.clone()
        .with("CODECREW_CONFIG", &config)
        .apply(&mut command);
    command.args(["query", "--output", "json", "@claude E2E-SHIM"]);
    let named = run(&mut command, TIMEOUT);
    named.assert_code(0);
    assert!(
        named.stdout.contains("Through the shim."),
        "{}",
        named.stdout
    );
}

/// The real Claude, installed the way asdf and mise lay a tool out — a shim that runs
/// the manager, which runs the installed version — answers through codecrew inside its
/// wall with no `cli_read` at all.
#[test]
fn the_real_claude_behind_asdf_and_mise_shims_answers_without_cli_read() {
    let script = Script::new().rule(Rule::on_prompt(
        "E2E-MANAGED",
        Reply::text("Through the manager."),
    ));
    let Some(world) = World::new("e2e-native-managers", script) else {
        return;
    };
    let clis = Clis::require("e2e::native_policy").unwrap();
    let real = clis.path(crate::support::clis::Cli::Claude);
    let home = world.home.home();
    let executable = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    // asdf: ~/.asdf/shims/claude -> `asdf exec claude` -> installs/nodejs/<v>/bin/claude.
    let installed = home.join(".asdf/installs/nodejs/20.0.0/bin");
    std::fs::create_dir_all(&installed).unwrap();
    std::os::unix::fs::symlink(&real, installed.join("claude")).unwrap();
    let asdf = home.join(".asdf/bin/asdf");
    executable(
        &asdf,
        &format!(
            "#!/bin/sh\n[ \"$1\" = exec ] && shift\nname=\"$1\"; shift\nexec \"{}/$name\" \"$@\"\n",
            installed.display()
        ),
    );
    executable(
        &home.join(".asdf/shims/claude"),
        &format!(
            "#!/usr/bin/env bash\nexec {} exec \"claude\" \"$@\"\n",
            asdf.display()
        ),
    );
    // mise: ~/.local/share/mise/shims/claude is a link to the mise program.
    let mise_installed = home.join(".local/share/mise/installs/node/20.0.0/bin");
    std::fs::create_dir_all(&mise_installed).unwrap();
    std::os::unix::fs::symlink(&real, mise_installed.join("claude")).unwrap();
    let mise = home.join(".local/bin/mise");
    executable(
        &mise,
        &format!(
            "#!/bin/sh\nexec \"{}/$(basename \"$0\")\" \"$@\"\n",
            mise_installed.display()
        ),
    );
    std::fs::create_dir_all(home.join(".local/share/mise/shims")).unwrap();
    std::os::unix::fs::symlink(&mise, home.join(".local/share/mise/shims/claude")).unwrap();

    let inherited = world
        .env
        .get("PATH")
        .map(std::ffi::OsStr::to_os_string)
        .unwrap_or_default();
    for shims in [
        home.join(".asdf/shims"),
        home.join(".local/share/mise/shims"),
    ] {
        let mut dirs = vec![shims.clone()];
        dirs.extend(std::env::split_paths(&inherited).filter(|dir| !dir.join("claude").exists()));
        let env = world
            .env
            .clone()
            .with("PATH", std::env::join_paths(dirs).unwrap());
        for mode in ["query", "execute"] {
            let run = world.codecrew_with(&env, &[mode, "@claude E2E-MANAGED"]);
            run.assert_code(0);
            assert!(
                run.stdout.contains("Through the manager."),
                "{} ({mode}): {}",
                shims.display(),
                run.stderr
            );
        }
    }
}

/// In `execute` the wall lets a CLI read the whole workspace (for what the user
/// approves), so a CLI's own shell command that reads a secret must be asked about:
/// every CLI's `cat .env` (one its own classifier would call read-only) never reaches the
/// model without `--yes`.
#[test]
fn in_execute_a_native_shell_reading_a_secret_is_asked_about() {
    let Some(world) = World::new("e2e-native-cat", Script::new()) else {
        return;
    };
    let secret = world.workspace().join(".env");
    plant(&secret, "NATIVE-SECRET-CAT");
    for agent in NATIVE {
        world.server.set_script(attack_script(
            agent,
            &[],
            &format!("cat {}", secret.display()),
        ));
        let since = world.server.requests().len();
        let (run, doc) = world.json("execute", &[&format!("@{agent} E2E-NATIVE-SHELL")]);
        run.assert_code(0);
        assert!(
            !model_saw(&world, since, "NATIVE-SECRET-CAT"),
            "{agent}: its own shell read .env to the model: {doc}"
        );
    }
}

/// `agent`'s own read of the workspace's `notes.txt` (the control, which reaches the
/// model) and of its `.env` (which never does) in `mode`; the stderr of each run.
fn reads_env_only_not(world: &World, agent: &str, mode: &str) -> Vec<String> {
    let workspace = world.workspace();
    world.server.set_script(
        Script::new()
            .rule(Rule::on_any_tool_result(Reply::text("Read done.")))
            .rule(Rule::on_prompt(
                "E2E-READ-ENV",
                native_read(agent, &workspace.join(".env")),
            ))
            .rule(Rule::on_prompt(
                "E2E-READ-PUBLIC",
                native_read(agent, &workspace.join("notes.txt")),
            )),
    );
    let mut stderr = Vec::new();
    for (prompt, secret, reaches) in [
        ("E2E-READ-PUBLIC", "NATIVE-SECRET-PUBLIC", true),
        ("E2E-READ-ENV", "NATIVE-SECRET-ENV", false),
    ] {
        let since = world.server.requests().len();
        let (run, doc) = world.json(mode, &[&format!("@{agent} {prompt}")]);
        run.assert_code(0);
        assert_eq!(
            model_saw(world, since, secret),
            reaches,
            "{agent} {mode} {prompt}: {doc}\n{:?}",
            last_results(world)
        );
        stderr.push(run.stderr);
    }
    stderr
}

/// In `execute` without `--yes` (no terminal to ask on), a CLI's own read of `.env`
/// never reaches the model: a kept Claude's and Codex's reads ask codecrew and are
/// refused; the other CLIs' own reads do not ask, and their wall does not let them open
/// a sensitive file. An ordinary file still reads (the control). A checkout's
/// `keep_alive = false`, which would run Claude per turn with reads nobody judges, is
/// ignored (and said so).
#[test]
fn in_execute_a_native_read_of_a_secret_never_reaches_the_model_without_yes() {
    let Some(world) = World::new("e2e-native-execute-reads", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    plant(&workspace.join(".env"), "NATIVE-SECRET-ENV");
    plant(&workspace.join("notes.txt"), "NATIVE-SECRET-PUBLIC");
    std::fs::write(
        workspace.join("codecrew.toml"),
        "[agents.claude]\nprovider = \"claude\"\nkeep_alive = false\n",
    )
    .unwrap();
    for agent in NATIVE {
        for stderr in reads_env_only_not(&world, agent, "execute") {
            if agent == "claude" {
                assert!(stderr.contains("agents.claude.keep_alive"), "{stderr}");
            }
        }
    }
}

/// The wall holds at monorepo scale: in a checkout of 120,000 files, a CLI's own read
/// of `.env` in `query` still never reaches the model (past 100,000 entries an earlier
/// wall granted the whole workspace, and Copilot's `view` read the secret).
#[test]
fn in_a_checkout_of_120000_files_a_native_read_of_a_secret_in_query_never_reaches_the_model() {
    let Some(world) = World::new("e2e-native-monorepo", Script::new()) else {
        return;
    };
    let workspace = world.workspace();
    for outer in 0..100 {
        for inner in 0..100 {
            let dir = workspace.join(format!("pkg{outer}/mod{inner}"));
            std::fs::create_dir_all(&dir).unwrap();
            for file in 0..12 {
                std::fs::File::create(dir.join(format!("f{file}.rs"))).unwrap();
            }
        }
    }
    plant(&workspace.join(".env"), "NATIVE-SECRET-ENV");
    plant(&workspace.join("notes.txt"), "NATIVE-SECRET-PUBLIC");
    for agent in ["copilot", "claude", "gemini"] {
        reads_env_only_not(&world, agent, "query");
    }
}
