//! The shell analysis attacked: segments, substitutions, wrappers, redirections, quoting, the deny list.

use super::*;

#[test]
fn safe_commands_run_without_asking() {
    let ws = Ws::new();
    for command in [
        "ls -la",
        "pwd",
        "cat src/main.rs",
        "cat src/main.rs | wc -l",
        "ls src && echo done",
        "grep -rn main src",
        "echo hi 2>&1 > /dev/null",
    ] {
        ok(&ws.run(command));
    }
}

#[test]
fn compound_commands_are_checked_segment_by_segment() {
    let ws = Ws::new();
    for command in [
        "ls && touch pwned",
        "ls; touch pwned",
        "ls || touch pwned",
        "ls | touch pwned",
        "ls & touch pwned",
        "(touch pwned)",
        "{ touch pwned; }",
        "ls\ntouch pwned",
        "! touch pwned",
        "ls && cat src/main.rs | sort | touch pwned",
    ] {
        denied(&ws.run(command));
        assert!(!ws.exists("pwned"), "{command:?} ran");
    }
}

#[test]
fn substitutions_fail_closed() {
    let ws = Ws::new();
    for command in [
        "echo $(touch pwned)",
        "echo `touch pwned`",
        "cat <(touch pwned)",
        "echo hi > >(touch pwned)",
        "echo \"$(touch pwned)\"",
        "cat <<EOF\n$(touch pwned)\nEOF",
        "ls $(echo src)",
        "echo $((1 + $(touch pwned)))",
        "x=$(touch pwned)",
    ] {
        denied(&ws.run(command));
        assert!(!ws.exists("pwned"), "{command:?} ran");
    }
}

#[test]
fn wrappers_fail_closed() {
    let ws = Ws::new();
    ws.write("list.txt", "pwned\n");
    for command in [
        "eval touch pwned",
        "eval 'touch pwned'",
        "bash -c 'touch pwned'",
        "sh -c 'touch pwned'",
        "bash -lc 'touch pwned'",
        "/bin/bash -c 'touch pwned'",
        "xargs touch < list.txt",
        "cat list.txt | xargs touch",
        "find . -name list.txt -exec touch pwned \\;",
        "find . -execdir touch pwned \\;",
        "env touch pwned",
        "env -i touch pwned",
        "env FOO=1 touch pwned",
        "nohup touch pwned",
        "timeout 5 touch pwned",
        "command touch pwned",
        "exec touch pwned",
        "nice touch pwned",
        "LD_PRELOAD=/tmp/evil.so ls",
        "PATH=.:$PATH ls",
        "BASH_ENV=list.txt ls",
        "python3 -c 'open(\"pwned\",\"w\")'",
        "echo 'touch pwned' | bash",
        "git -c core.pager='touch pwned' log",
        "source list.txt",
    ] {
        denied(&ws.run(command));
        assert!(!ws.exists("pwned"), "{command:?} ran");
    }
}

#[test]
fn redirections_to_files_fail_closed() {
    let ws = Ws::new();
    for command in [
        "echo x > out.txt",
        "echo x >> src/main.rs",
        "ls &> out.txt",
        "ls 2> out.txt",
        "ls >| out.txt",
        "ls > \"$OUT\"",
    ] {
        denied(&ws.run(command));
    }
    assert!(!ws.exists("out.txt"));
    assert_eq!(
        std::fs::read_to_string(ws.root.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[test]
fn quoting_tricks_do_not_hide_anything() {
    let ws = Ws::new();
    for command in [
        "'t'ouch pwned",
        "\\touch pwned",
        "t\"\"ouch pwned",
        "$'\\x74ouch' pwned",
        "l\\s; touch pwned",
        "ls \\\n; touch pwned",
        "ls # comment\ntouch pwned",
        "echo \"; touch pwned\" ; touch pwned",
        "echo '$(id)' && touch pwned",
    ] {
        denied(&ws.run(command));
        assert!(!ws.exists("pwned"), "{command:?} ran");
    }
    // Quotes that only look dangerous are read as bash reads them.
    ok(&ws.run("echo '$(touch pwned)' \"\\$(touch pwned)\""));
    assert!(!ws.exists("pwned"));
}

#[test]
fn the_deny_list_holds_with_yes() {
    let ws = Ws::new();
    for command in [
        "rm -rf /",
        "rm -rf /*",
        "rm -fr / --no-preserve-root",
        "rm -r -f /",
        "rm -Rf //",
        "rm -rf /.",
        "rm -rf -- /",
        "\\rm -rf /",
        "'rm' -rf '/'",
        "/bin/rm -rf /",
        "$'\\x72m' -rf /",
        "rm -rf ~",
        "rm -rf $HOME",
        "rm -rf .",
        "rm -rf *",
        "X=/; rm -rf $X",
        "rm -rf {/,x}",
        "sudo rm -rf /",
        "env rm -rf /",
        "nohup rm -rf / &",
        "bash -c 'rm -rf /'",
        "sh -c \"bash -c 'rm -rf ~'\"",
        "eval 'rm -rf /'",
        "echo / | xargs rm -rf",
        "find / -delete",
        "find / -exec rm -rf {} +",
        "ls && rm -rf /",
        "mkfs.ext4 /dev/sda1",
        "mkfs -t ext4 /dev/sda",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "cat /dev/zero > /dev/sda",
        ":(){ :|:& };:",
        "bomb() { bomb | bomb & }; bomb",
        "bash -c ':(){ :|:& };:'",
        "chmod -R 777 /",
        "chmod -R 000 ~",
        "chown -R nobody:nogroup /",
        "kill -9 -1",
        "shutdown -h now",
        "cat /proc/self/environ",
        "cat /proc/$PPID/environ",
        "$CMD -rf /",
    ] {
        denied_by_the_deny_list(&ws, command);
    }
    assert!(ws.exists("src/main.rs"));
}

/// `command` run with `--yes` is refused by the built-in deny list.
#[track_caller]
fn denied_by_the_deny_list(ws: &Ws, command: &str) {
    let result = ws.run_yes(command);
    denied(&result);
    assert!(
        result["error"]["suggestion"]
            .as_str()
            .unwrap()
            .contains("deny list"),
        "{command:?}: {result:#}"
    );
}

/// Issue 48's spellings, each of which emptied a workspace under `--yes`: denied, and
/// the workspace is still there. The same forms made harmless run.
#[test]
fn the_deny_list_follows_the_shell_with_yes() {
    let ws = Ws::new();
    let name = ws.root.file_name().unwrap().to_string_lossy().into_owned();
    for command in [
        format!("cd .. && rm -rf {name}"),
        format!("pushd .. && rm -rf {name}"),
        format!("(cd .. && rm -rf {name}/*)"),
        "shopt -s expand_aliases\nalias tidy='rm -rf \"$PWD\"'\ntidy".to_owned(),
        "bash -o errexit -c 'rm -rf \"$PWD\"'".to_owned(),
        "bash -O extglob -c 'rm -rf \"$PWD\"'".to_owned(),
        "bash -c -- 'rm -rf \"$PWD\"'".to_owned(),
        "bash -s ci <<'EOF'\nrm -rf \"$PWD\"\nEOF".to_owned(),
        "bash /dev/stdin <<EOF\nrm -rf \"$PWD\"\nEOF".to_owned(),
        ". /dev/stdin <<EOF\nrm -rf \"$PWD\"\nEOF".to_owned(),
        "printf 'rm -rf \"$PWD\"' | bash -s x".to_owned(),
        "flock .lock -c 'rm -rf \"$PWD\"'".to_owned(),
        "flock -w 5 LOCK sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "echo . | xargs -i sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "echo . | xargs --max-chars 100 sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "git -c alias.x='!rm -rf \"$PWD\"' x".to_owned(),
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf \"$PWD\"' git x"
            .to_owned(),
        "ionice --class 3 sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "stdbuf --output L sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "unshare -S 0 sh -c 'rm -rf \"$PWD\"'".to_owned(),
        "timeout 3 watch -n 1 'rm -rf \"$PWD\"'".to_owned(),
        "perl -e 'system(\"rm -rf .\")'".to_owned(),
        "python3 -c 'import os; os.system(\"rm -rf .\")'".to_owned(),
        "awk 'BEGIN{system(\"rm -rf .\")}'".to_owned(),
        "sed 'e rm -rf .' src/main.rs".to_owned(),
    ] {
        denied_by_the_deny_list(&ws, &command);
        assert!(
            ws.exists("src/main.rs"),
            "{command:?} emptied the workspace"
        );
    }
    for (command, made) in [
        ("flock .lock -c 'touch made-1'", "made-1"),
        ("echo . | xargs -i sh -c 'touch made-2'", "made-2"),
        ("bash -o errexit -c 'touch made-3'", "made-3"),
        ("bash -s ci <<'EOF'\ntouch made-4\nEOF", "made-4"),
        ("stdbuf --output L sh -c 'touch made-5'", "made-5"),
    ] {
        ok(&ws.run_yes(command));
        assert!(ws.exists(made), "{command:?} did not run");
    }
}

#[test]
fn unknown_commands_ask_and_name_the_rule_or_flag() {
    let ws = Ws::new();
    let result = ws.run("touch made.txt");
    denied(&result);
    let suggestion = result["error"]["suggestion"].as_str().unwrap();
    assert!(suggestion.contains("--yes"), "{suggestion}");
    assert!(suggestion.contains("run_command(touch *)"), "{suggestion}");
    assert!(!ws.exists("made.txt"));
    ok(&ws.run_yes("touch made.txt"));
    assert!(ws.exists("made.txt"));
    // Query mode runs only what runs without asking, `--yes` or not.
    let (result, _) = ws.call_in(
        "query",
        true,
        "run_command",
        json!({"command": "touch other.txt"}),
    );
    denied(&result);
    assert!(!ws.exists("other.txt"));
}
