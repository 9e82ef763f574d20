//! The wall starts a CLI however it was installed: each common way of installing one
//! (npm's global prefix in the home directory, nvm, fnm, Volta, asdf, mise, pnpm, Bun,
//! Homebrew on Linux, Claude's native installer, opencode's installer) laid out in a
//! scratch home as that installer lays it out, with a small real program as the CLI.
//! codecrew runs it inside its wall in both modes and `codecrew doctor` checks it there;
//! a layout the wall does not know fails with the `cli_read` line that fixes it, and an
//! llm plugin installed with `pip install -e` with the line that names its source.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::World;
use serde_json::Value;

/// The CLI: a `claude` that answers once its first line of input is in, in Claude's
/// stream-json, and prints a version.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "9.9.9 (fake Claude Code)"; exit 0; fi
read -r _
printf '%s\n' '{"type":"system","subtype":"init","session_id":"shape","model":"fake"}'
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"Answered through the install."}]},"session_id":"shape"}'
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Answered through the install.","session_id":"shape"}'
cat > /dev/null
"#;

/// A world with nothing of the caller's environment (its home, its workspace), and what
/// a shape adds to it: the PATH entries and the variables its installer sets.
struct Machine {
    world: World,
    path: Vec<PathBuf>,
    env: Vec<(&'static str, PathBuf)>,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            world: World::new().alone().env("NO_COLOR", "1"),
            path: Vec::new(),
            env: Vec::new(),
        }
    }

    fn home(&self) -> PathBuf {
        self.world.home_dir()
    }

    /// An executable file at `relative` (in the home) holding `text`.
    fn script(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.home().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A link at `relative` (in the home) to `target`.
    fn link(&self, relative: &str, target: &Path) -> PathBuf {
        let path = self.home().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        symlink(target, &path).unwrap();
        path
    }

    fn on_path(&mut self, relative: &str) {
        self.path.push(self.home().join(relative));
    }

    fn codecrew(&self, config: Option<&Path>, args: &[&str]) -> Output {
        let mut path = self.path.clone();
        path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        let workspace = self.world.workspace();
        let mut all = vec!["--workdir", workspace.to_str().unwrap()];
        all.extend(args);
        let mut command = self.world.command(&all);
        command
            .env("PATH", std::env::join_paths(path).unwrap())
            .env(
                "CODECREW_CONFIG",
                config.map(Path::to_path_buf).unwrap_or_default(),
            );
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    /// `codecrew doctor`'s check of the `claude` CLI.
    fn doctor_claude(&self, config: Option<&Path>) -> Value {
        let output = self.codecrew(config, &["doctor", "--output", "json"]);
        let checks: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
            panic!("{}", String::from_utf8_lossy(&output.stderr));
        });
        checks
            .into_iter()
            .find(|check| {
                check["area"] == "cli" && check["detail"].as_str().unwrap_or("").contains("claude")
            })
            .unwrap()
    }
}

/// `home/<relative>` as a string for a script.
fn at(machine: &Machine, relative: &str) -> String {
    machine.home().join(relative).display().to_string()
}

/// How one installer lays a CLI out in a machine's home.
type LayOut = fn(&mut Machine);

/// Each shape: its name and how it lays itself out.
fn shapes() -> Vec<(&'static str, LayOut)> {
    vec![
        ("npm global prefix in the home", |m| {
            let cli = m.script(
                ".npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.sh",
                FAKE_CLAUDE,
            );
            m.link(".npm-global/bin/claude", &cli);
            m.on_path(".npm-global/bin");
        }),
        ("nvm", |m| {
            let cli = m.script(
                ".nvm/versions/node/v20.0.0/lib/node_modules/@anthropic-ai/claude-code/cli.sh",
                FAKE_CLAUDE,
            );
            m.link(".nvm/versions/node/v20.0.0/bin/claude", &cli);
            m.on_path(".nvm/versions/node/v20.0.0/bin");
        }),
        ("fnm", |m| {
            let cli = m.script(
                ".local/share/fnm/node-versions/v20.0.0/installation/lib/node_modules/claude/cli.sh",
                FAKE_CLAUDE,
            );
            m.link(
                ".local/share/fnm/node-versions/v20.0.0/installation/bin/claude",
                &cli,
            );
            let installation = m
                .home()
                .join(".local/share/fnm/node-versions/v20.0.0/installation");
            m.link(".local/state/fnm_multishells/1_2", &installation);
            m.on_path(".local/state/fnm_multishells/1_2/bin");
        }),
        ("Volta", |m| {
            m.script(".volta/tools/image/packages/claude/bin/claude", FAKE_CLAUDE);
            let shim = format!(
                "#!/bin/sh\nexec \"{}\" \"$@\"\n",
                at(m, ".volta/tools/image/packages/claude/bin/claude")
            );
            m.script(".volta/bin/claude", &shim);
            m.on_path(".volta/bin");
        }),
        ("asdf", |m| {
            m.script(".asdf/installs/nodejs/20.0.0/bin/claude", FAKE_CLAUDE);
            let asdf = format!(
                "#!/bin/sh\n[ \"$1\" = exec ] && shift\nname=\"$1\"; shift\nexec \"{}/$name\" \"$@\"\n",
                at(m, ".asdf/installs/nodejs/20.0.0/bin")
            );
            m.script(".asdf/bin/asdf", &asdf);
            let shim = format!(
                "#!/usr/bin/env bash\n# asdf-plugin: nodejs 20.0.0\nexec {} exec \"claude\" \"$@\" # asdf_allow: ' asdf '\n",
                at(m, ".asdf/bin/asdf")
            );
            m.script(".asdf/shims/claude", &shim);
            std::fs::write(m.home().join(".tool-versions"), "nodejs 20.0.0\n").unwrap();
            m.on_path(".asdf/shims");
        }),
        ("mise", |m| {
            m.script(
                ".local/share/mise/installs/node/20.0.0/bin/claude",
                FAKE_CLAUDE,
            );
            let mise = format!(
                "#!/bin/sh\nexec \"{}/$(basename \"$0\")\" \"$@\"\n",
                at(m, ".local/share/mise/installs/node/20.0.0/bin")
            );
            let mise = m.script(".local/bin/mise", &mise);
            m.link(".local/share/mise/shims/claude", &mise);
            m.on_path(".local/share/mise/shims");
        }),
        ("pnpm global bin", |m| {
            m.script(
                ".local/share/pnpm/global/5/node_modules/claude/cli.sh",
                FAKE_CLAUDE,
            );
            let shim = format!(
                "#!/bin/sh\nexec \"{}\" \"$@\"\n",
                at(m, ".local/share/pnpm/global/5/node_modules/claude/cli.sh")
            );
            m.script(".local/share/pnpm/claude", &shim);
            m.on_path(".local/share/pnpm");
        }),
        ("Bun global bin", |m| {
            let cli = m.script(
                ".bun/install/global/node_modules/claude/cli.sh",
                FAKE_CLAUDE,
            );
            m.link(".bun/bin/claude", &cli);
            m.on_path(".bun/bin");
        }),
        ("Homebrew on Linux", |m| {
            let cli = m.script("linuxbrew/Cellar/claude/9.9.9/bin/claude", FAKE_CLAUDE);
            m.link("linuxbrew/bin/claude", &cli);
            m.on_path("linuxbrew/bin");
            m.env.push(("HOMEBREW_PREFIX", m.home().join("linuxbrew")));
        }),
        ("Claude's native installer", |m| {
            let cli = m.script(".local/share/claude/versions/9.9.9", FAKE_CLAUDE);
            m.link(".local/bin/claude", &cli);
            m.on_path(".local/bin");
        }),
        ("opencode's installer layout", |m| {
            m.script(".opencode/bin/claude", FAKE_CLAUDE);
            m.on_path(".opencode/bin");
        }),
    ]
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_common_install_starts_inside_the_wall_and_doctor_checks_it_there() {
    if codecrew_policy::sandbox::support() == codecrew_policy::sandbox::Support::Unsupported {
        return; // no wall on this kernel
    }
    for (shape, lay_out) in shapes() {
        let mut machine = Machine::new();
        lay_out(&mut machine);
        for mode in ["query", "execute"] {
            let output = machine.codecrew(None, &[mode, "@claude hello"]);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{shape} ({mode}): {}",
                stderr(&output)
            );
            assert!(
                stdout(&output).contains("Answered through the install."),
                "{shape} ({mode}): {}",
                stderr(&output)
            );
        }
        let check = machine.doctor_claude(None);
        assert_eq!(check["status"], "ok", "{shape}: {check}");
        assert!(
            check["detail"].as_str().unwrap().contains("9.9.9"),
            "{shape}: {check}"
        );
    }
}

#[test]
fn a_layout_the_wall_does_not_know_fails_with_the_cli_read_line_that_fixes_it() {
    if codecrew_policy::sandbox::support() == codecrew_policy::sandbox::Support::Unsupported {
        return;
    }
    let mut machine = Machine::new();
    // A tool manager of the user's own: its shim runs an installation elsewhere in ~.
    machine.script(".mytools/versions/1/claude", FAKE_CLAUDE);
    let shim = format!(
        "#!/bin/sh\nexec \"{}\" \"$@\"\n",
        at(&machine, ".mytools/versions/1/claude")
    );
    machine.script(".mytools/shims/claude", &shim);
    machine.on_path(".mytools/shims");
    let installation = machine.home().join(".mytools/versions/1");

    let output = machine.codecrew(None, &["query", "--output", "json", "@claude hello"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &document["results"][0];
    assert_eq!(result["error_code"], "E_CLI_WALL_REFUSED", "{result}");
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("cli_read"), "{error}");
    assert!(
        error.contains(&installation.display().to_string()),
        "names the folder to grant: {error}"
    );

    let check = machine.doctor_claude(None);
    assert_eq!(check["status"], "fail", "{check}");
    let hint = check["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!(
            "cli_read = [{:?}]",
            installation.display().to_string()
        )),
        "{hint}"
    );

    // The line doctor gives, in the user config: it starts.
    let config = machine.world.path("config.toml");
    std::fs::write(
        &config,
        format!(
            "[permissions]\ncli_read = [{:?}]\n",
            installation.display().to_string()
        ),
    )
    .unwrap();
    let output = machine.codecrew(Some(&config), &["query", "@claude hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("Answered through the install."));
    assert_eq!(machine.doctor_claude(Some(&config))["status"], "ok");
}

/// An `llm` in a virtualenv whose plugin was installed with `pip install -e` from a source
/// folder elsewhere in the home: it fails to start where it cannot read that folder, with
/// only Python's "No module named", as the real one does inside the wall.
const LLM_WITH_AN_EDITABLE_PLUGIN: &str = r#"#!/bin/sh
if ! cat "SOURCE/llm_probe/__init__.py" > /dev/null 2>&1; then
    echo "ModuleNotFoundError: No module named 'llm_probe'" >&2
    exit 1
fi
if [ "$1" = "--version" ]; then echo "llm, version 0.36"; exit 0; fi
exit 1
"#;

#[test]
fn an_editable_plugins_source_is_the_folder_doctor_names_not_the_venv() {
    if codecrew_policy::sandbox::support() == codecrew_policy::sandbox::Support::Unsupported {
        return;
    }
    let mut machine = Machine::new();
    let source = machine.home().join("src/llm-probe");
    std::fs::create_dir_all(source.join("llm_probe")).unwrap();
    std::fs::write(source.join("llm_probe/__init__.py"), "import llm\n").unwrap();
    machine.script(
        ".venvs/llm/bin/llm",
        &LLM_WITH_AN_EDITABLE_PLUGIN.replace("SOURCE", &source.display().to_string()),
    );
    machine.on_path(".venvs/llm/bin");
    // What pip records of an editable install (PEP 610).
    let dist = machine
        .home()
        .join(".venvs/llm/lib/python3.11/site-packages/llm_probe-0.1.dist-info");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("direct_url.json"),
        format!(
            r#"{{"dir_info": {{"editable": true}}, "url": "file://{}"}}"#,
            source.display()
        ),
    )
    .unwrap();
    let doctor_llm = |config: Option<&Path>| -> Value {
        let output = machine.codecrew(config, &["doctor", "--output", "json"]);
        let checks: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
        checks
            .into_iter()
            .find(|check| {
                check["area"] == "cli" && check["detail"].as_str().unwrap_or("").contains("llm")
            })
            .unwrap()
    };
    let check = doctor_llm(None);
    assert_eq!(check["status"], "fail", "{check}");
    let line = format!("cli_read = [{:?}]", source.display().to_string());
    let hint = check["hint"].as_str().unwrap();
    assert!(
        hint.contains(&line),
        "names the source, not the venv: {hint}"
    );
    assert!(hint.contains("pip install -e"), "{hint}");

    // A run says the same, with its code.
    let output = machine.codecrew(None, &["query", "--output", "json", "@llm hello"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let result = &document["results"][0];
    assert_eq!(result["error_code"], "E_CLI_WALL_REFUSED", "{result}");
    assert!(
        result["error"].as_str().unwrap().contains(&line),
        "{result}"
    );

    // The line given, in the user config: it starts inside the wall.
    let config = machine.world.path("config.toml");
    std::fs::write(&config, format!("[permissions]\n{line}\n")).unwrap();
    assert_eq!(doctor_llm(Some(&config))["status"], "ok");
}
