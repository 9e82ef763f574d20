//! The agent CLI's own process, as codecrew starts it (without `fork`: the child makes its
//! walls itself before it executes the CLI), attacked from inside: a CLI a hostile
//! checkout talked into trying, in both modes, to reach codecrew or the user's terminal,
//! to keep a privilege, to use a descriptor of codecrew's, or to write where its wall says
//! it may not. It reports what it could do as its answer.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::World;
use crate::support::binary::text;

/// A `claude` that tries each door and answers with what it found, one word each.
const PROBING_CLAUDE: &str = r#"#!/bin/sh
read -r _
facts=
add() { facts="$facts $1"; }
me=$$
# A session of its own: it leads it, and has no controlling terminal to read keys from.
[ "$(cut -d' ' -f6 /proc/$me/stat)" = "$me" ] && add session-leader
if (exec 3</dev/tty) 2>/dev/null; then add tty-opened; else add no-tty; fi
# No new privileges, and no CAP_SYS_PTRACE even as root.
grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/$me/status && add no-new-privs
bounding=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$me/status)
if [ $(( (0x$bounding >> 19) & 1 )) = 0 ]; then add no-ptrace-capability; else add ptrace-capability; fi
# codecrew itself: its environment and its memory.
parent=$(cut -d' ' -f4 /proc/$me/stat)
# (Its variables' names may be read there; never a secret's value: codecrew hides them.)
[ -n "$SECRET_VALUE" ] || add no-secret-value-given
if [ -n "$SECRET_VALUE" ] && tr '\0' '\n' < /proc/$parent/environ 2>/dev/null | grep -q "$SECRET_VALUE"; then add read-a-secret-in-codecrews-environ; fi
if head -c 1 /proc/$parent/mem >/dev/null 2>&1; then add read-codecrews-memory; else add codecrews-memory-refused; fi
[ -n "$CODECREW_MCP_TOKEN" ] && add saw-the-mcp-token
# A descriptor codecrew's caller left open (a file outside the workspace, on 7): the
# wall judges paths as they are opened, so one already open would go around it.
if (echo leaked >&7) 2>/dev/null; then add wrote-through-an-inherited-descriptor; fi
# Every descriptor it holds but its three streams and the script the shell reads, listed
# by a child in a subshell (the shell itself would hold the listing's own descriptors).
(ls -l /proc/$me/fd) > "$TMPDIR/fds"
for held in $(sed -n 's/.* \([0-9][0-9]*\) -> \(.*\)/\1:\2/p' "$TMPDIR/fds"); do
  case $held in 0:*|1:*|2:*|*:"$0") ;; *) add "descriptor-$held" ;; esac
done
# Writes: outside the workspace never; inside only in execute.
if echo x > "$OUTSIDE" 2>/dev/null; then add wrote-outside; else add outside-refused; fi
if echo x > "$PWD/probe-inside" 2>/dev/null; then add wrote-inside; else add inside-refused; fi
printf '{"type":"assistant","message":{"content":[{"type":"text","text":"FACTS%s"}]},"session_id":"p"}\n' "$facts"
printf '{"type":"result","subtype":"success","is_error":false,"result":"FACTS%s","session_id":"p"}\n' "$facts"
cat > /dev/null
"#;

/// What the probing CLI found in `mode`, word by word, codecrew started with `leaked`
/// open for appending on descriptor 7 (not close-on-exec), as a caller may leave one.
fn facts(world: &World, mode: &str, leaked: &Path) -> Vec<String> {
    let codecrew = world.command(&[mode, "--raw", "@claude:haiku probe"]);
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", "exec 7>>\"$LEAKED\" && exec \"$0\" \"$@\""])
        .arg(codecrew.get_program())
        .args(codecrew.get_args())
        .env_clear()
        .env("LEAKED", leaked)
        .stdin(Stdio::null());
    for (name, value) in codecrew.get_envs() {
        if let Some(value) = value {
            command.env(name, value);
        }
    }
    if let Some(dir) = codecrew.get_current_dir() {
        command.current_dir(dir);
    }
    let output = command.output().unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("FACTS"))
        .unwrap_or_else(|| panic!("no facts: {stdout}\n{}", text(&output.stderr)));
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn the_cli_process_holds_its_walls_in_either_mode() {
    use codecrew_policy::sandbox::{Support, support};
    if support() != Support::Full {
        eprintln!("skipped: this kernel has no full Landlock");
        return;
    }
    let world = World::with_claude(PROBING_CLAUDE);
    let outside = world.path("outside.txt");
    // A key codecrew holds for the CLIs (which get it in their own environment), and the
    // value the probe looks for in codecrew's.
    let secret = "sk-ant-cli-process-probe-0123456789";
    let world = world
        .env("OUTSIDE", &outside)
        .env("ANTHROPIC_API_KEY", secret)
        .env("SECRET_VALUE", &secret[7..])
        .env(
            codecrew_config::MCP_TOKEN_ENV,
            "ccmcp_token_the_cli_must_not_see",
        );
    let leaked = world.path("leaked.txt");
    for (mode, inside) in [("query", "inside-refused"), ("execute", "wrote-inside")] {
        let found = facts(&world, mode, &leaked);
        // Dropping a capability from the bounding set takes CAP_SETPCAP: as root it is
        // gone; another user never had it to use (and no new privileges to gain it).
        let ptrace = if nix::unistd::geteuid().is_root() {
            "no-ptrace-capability"
        } else {
            "ptrace-capability"
        };
        let expected = [
            "session-leader",
            "no-tty",
            "no-new-privs",
            ptrace,
            "codecrews-memory-refused",
            "outside-refused",
            inside,
        ];
        assert_eq!(found, expected, "{mode}");
        assert!(!outside.exists(), "{mode}");
        assert!(
            !leaked.exists() || std::fs::read_to_string(&leaked).unwrap().is_empty(),
            "{mode}"
        );
    }
}
