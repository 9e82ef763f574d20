//! The deny list past `cd`, aliases, callbacks and the programs that hand a string to a
//! shell (issue 48): every spelling the testers emptied a workspace with, and more of
//! their kinds, each denied with a message that names what was found, and each passing
//! when made harmless.

use proptest::prelude::*;

use super::tests::{DENY_LISTED, Form, Ws, nested, not_denied_in_any, verdict};

/// `{ws}` in a spelling is the workspace's folder name, as seen from its parent.
fn spelled(ws: &Ws, command: &str) -> String {
    let name = ws
        .root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    command.replace("{ws}", &name)
}

/// Each spelling, what its deny message names, and the same line made harmless.
const SPELLINGS: &[(&str, &str, &str)] = &[
    // The testers' findings: the workspace named from its parent after a `cd`.
    (
        "cd .. && rm -rf {ws}",
        "`rm -rf` on {ws}",
        "cd .. && ls {ws}",
    ),
    (
        "pushd .. && rm -rf {ws}",
        "`rm -rf` on {ws}",
        "pushd .. && ls {ws}",
    ),
    (
        "(cd .. && rm -rf {ws}/*)",
        "`rm -rf` on {ws}/*",
        "(cd .. && ls {ws}/*)",
    ),
    // An alias defined in the command.
    (
        "shopt -s expand_aliases; alias tidy='rm -rf \"$PWD\"'; tidy",
        "the alias `tidy`",
        "shopt -s expand_aliases; alias tidy='ls \"$PWD\"'; tidy",
    ),
    (
        "shopt -s expand_aliases\nalias tidy='rm -rf \"$PWD\"'\ntidy",
        "the alias `tidy`",
        "shopt -s expand_aliases\nalias tidy='ls -la'\ntidy",
    ),
    // Every way a shell gets its script.
    (
        "bash -o errexit -c 'rm -rf \"$PWD\"'",
        "the script `bash` runs",
        "bash -o errexit -c 'ls \"$PWD\"'",
    ),
    (
        "bash -O extglob -c 'rm -rf \"$PWD\"'",
        "the script `bash` runs",
        "bash -O extglob -c 'ls'",
    ),
    (
        "bash -c -- 'rm -rf \"$PWD\"'",
        "the script `bash` runs",
        "bash -c -- 'ls'",
    ),
    (
        "bash -s ci <<'EOF'\nrm -rf \"$PWD\"\nEOF",
        "the script a shell reads from its input",
        "bash -s ci <<'EOF'\nls\nEOF",
    ),
    (
        "bash /dev/stdin <<EOF\nrm -rf \"$PWD\"\nEOF",
        "the script a shell reads from its input",
        "bash /dev/stdin <<EOF\nls\nEOF",
    ),
    (
        ". /dev/stdin <<EOF\nrm -rf \"$PWD\"\nEOF",
        "the script a shell reads from its input",
        ". /dev/stdin <<EOF\nls\nEOF",
    ),
    (
        "printf 'rm -rf \"$PWD\"' | bash -s x",
        "the script piped into a shell",
        "printf 'ls' | bash -s x",
    ),
    // Wrappers' options as the wrappers read them.
    (
        "flock .lock -c 'rm -rf \"$PWD\"'",
        "the script `flock` runs",
        "flock .lock -c 'ls'",
    ),
    (
        "flock -w 5 LOCK sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "flock -w 5 LOCK sh -c 'ls'",
    ),
    (
        "echo . | xargs -i sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "echo . | xargs -i sh -c 'ls'",
    ),
    (
        "echo . | xargs -l sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "echo . | xargs -l sh -c 'ls'",
    ),
    (
        "echo . | xargs -e sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "echo . | xargs -e sh -c 'ls'",
    ),
    (
        "echo . | xargs --max-chars 100 sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "echo . | xargs --max-chars 100 sh -c 'ls'",
    ),
    // Git aliases are commands.
    (
        "git -c alias.x='!rm -rf \"$PWD\"' x",
        "a git configuration value",
        "git -c alias.x='!ls' x",
    ),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf \"$PWD\"' git x",
        "a git configuration value",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!ls' git x",
    ),
    (
        "ionice --class 3 sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "ionice --class 3 sh -c 'ls'",
    ),
    (
        "stdbuf --output L sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "stdbuf --output L sh -c 'ls'",
    ),
    (
        "unshare -S 0 sh -c 'rm -rf \"$PWD\"'",
        "the script `sh` runs",
        "unshare -S 0 sh -c 'ls'",
    ),
    (
        "timeout 3 watch -n 1 'rm -rf \"$PWD\"'",
        "the script `watch` runs",
        "timeout 3 watch -n 1 'ls'",
    ),
    // Inline code handed to an interpreter.
    (
        "perl -e 'system(\"rm -rf .\")'",
        "the inline code `perl` runs names `rm`",
        "perl -e 'print 1'",
    ),
    (
        "python3 -c 'import os; os.system(\"rm -rf .\")'",
        "the inline code `python3` runs names `rm`",
        "python3 -c 'print(1)'",
    ),
    (
        "awk 'BEGIN{system(\"rm -rf .\")}'",
        "the inline awk program `awk` runs names `rm`",
        "awk '{print $1}' src/main.rs",
    ),
    (
        "sed 'e rm -rf .' src/main.rs",
        "the inline sed script `sed` runs names `rm`",
        "sed 's/main/start/' src/main.rs",
    ),
    // Of the same kinds, our own: directories.
    (
        "cd ..; rm -r -f ./{ws}",
        "`rm -r -f` on ./{ws}",
        "cd ..; ls ./{ws}",
    ),
    (
        "cd .. && find {ws} -delete",
        "`find -delete`",
        "cd .. && find {ws} -name x",
    ),
    (
        "cd .. && chmod -R 000 {ws}",
        "`chmod -R` on {ws}",
        "cd .. && ls -R {ws}",
    ),
    (
        "cd .. && mv {ws} /tmp/gone",
        "`mv ` on {ws}",
        "cd .. && ls {ws}",
    ),
    (
        "bash -c 'cd .. && rm -rf {ws}'",
        "`rm -rf` on {ws}",
        "bash -c 'cd .. && ls {ws}'",
    ),
    (
        "env -C .. rm -rf {ws}",
        "`rm -rf` on {ws}",
        "env -C .. ls {ws}",
    ),
    (
        "env --chdir=.. rm -rf {ws}",
        "`rm -rf` on {ws}",
        "env --chdir=.. ls {ws}",
    ),
    (
        "cd \"$OLDPWD\" && rm -rf build",
        "change of directory codecrew cannot follow",
        "cd \"$OLDPWD\" && ls build",
    ),
    ("cd - && rm -rf build", "cannot follow", "cd - && ls build"),
    (
        "pushd /tmp; popd; rm -rf build",
        "cannot follow",
        "pushd /tmp; popd; ls build",
    ),
    (
        "CDPATH=.. cd {ws} && rm -rf src",
        "cannot follow",
        "CDPATH=.. cd {ws} && ls src",
    ),
    (
        "shopt -s cdable_vars; d=..; cd d && rm -rf {ws}",
        "cannot follow",
        "shopt -s cdable_vars; d=..; cd d && ls {ws}",
    ),
    (
        "eval 'cd ..'; rm -rf {ws}",
        "`rm -rf` on {ws}",
        "eval 'cd ..'; ls {ws}",
    ),
    (
        "su - root -c 'rm -rf build'",
        "cannot follow",
        "su - root -c 'ls build'",
    ),
    (
        "git -c alias.c='!rm -rf build' c",
        "cannot follow",
        "git -c alias.c='!ls build' c",
    ),
    // Aliases and hashed names.
    (
        "alias x='rm -rf'; x \"$PWD\"",
        "the alias `x`",
        "alias x='ls -l'; x \"$PWD\"",
    ),
    (
        "alias x='rm -rf '; x .",
        "the alias `x`",
        "alias x='ls '; x .",
    ),
    (
        "BASH_ALIASES[x]='rm -rf .'; x",
        "the alias `x`",
        "BASH_ALIASES[x]='ls .'; x",
    ),
    (
        "hash -p /bin/rm x; x -rf .",
        "the alias `x`",
        "hash -p /bin/ls x; x -la .",
    ),
    (
        "BASH_CMDS[x]=/bin/rm; x -rf .",
        "the alias `x`",
        "BASH_CMDS[x]=/bin/ls; x -la .",
    ),
    // Callbacks and hooks.
    (
        "complete -C 'rm -rf .' x",
        "a completion command",
        "complete -C 'ls' x",
    ),
    (
        "compgen -C 'rm -rf .' x",
        "a completion command",
        "compgen -W 'a b' x",
    ),
    (
        "bind -x '\"\\C-t\": rm -rf .'",
        "a key binding's command",
        "bind -x '\"\\C-t\": ls'",
    ),
    (
        "mapfile -C 'rm -rf . #' -c 1 < src/main.rs",
        "a `mapfile` callback",
        "mapfile -C 'echo' -c 1 < src/main.rs",
    ),
    (
        "set -o history; history -s 'rm -rf .'; fc -s",
        "a history line",
        "set -o history; history -s 'ls'; fc -l",
    ),
    ("trap 'rm -rf .' DEBUG", "a trap handler", "trap 'ls' DEBUG"),
    (
        "PROMPT_COMMAND='rm -rf .' bash -i",
        "PROMPT_COMMAND",
        "PROMPT_COMMAND='ls' bash -i",
    ),
    // More ways a shell gets its script.
    (
        "bash /dev/fd/3 3<<EOF\nrm -rf .\nEOF",
        "from its input",
        "bash /dev/fd/3 3<<EOF\nls\nEOF",
    ),
    (
        "source /dev/stdin <<< 'rm -rf .'",
        "from its input",
        "source /dev/stdin <<< 'ls'",
    ),
    (
        "bash /dev/fd/0 <<< 'rm -rf .'",
        "from its input",
        "bash /dev/fd/0 <<< 'ls'",
    ),
    (
        "echo 'rm -rf .' | source /dev/stdin",
        "piped into a shell",
        "echo 'ls' | source /dev/stdin",
    ),
    (
        "bash -xec 'rm -rf .'",
        "the script `bash` runs",
        "bash -xec 'ls'",
    ),
    (
        "bash --norc --noprofile -c 'rm -rf .'",
        "the script `bash` runs",
        "bash --norc -c 'ls'",
    ),
    (
        "bash --rcfile /dev/null -c 'rm -rf .'",
        "the script `bash` runs",
        "bash --rcfile /dev/null -c 'ls'",
    ),
    (
        "sh +o posix -c 'rm -rf .'",
        "the script `sh` runs",
        "sh +o posix -c 'ls'",
    ),
    (
        "zsh --no-rcs -c 'rm -rf .'",
        "the script `zsh` runs",
        "zsh --no-rcs -c 'ls'",
    ),
    (
        "fish -c 'rm -rf .'",
        "the script `fish` runs",
        "fish -c 'ls'",
    ),
    (
        "tcsh -fc 'rm -rf .'",
        "the script `tcsh` runs",
        "tcsh -fc 'ls'",
    ),
    (
        "su root -c 'rm -rf .'",
        "the script `su` runs",
        "su root -c 'ls'",
    ),
    (
        "su -c 'rm -rf .' root",
        "the script `su` runs",
        "su -c 'ls' root",
    ),
    (
        "runuser -u nobody -- rm -rf .",
        "`rm -rf` on .",
        "runuser -u nobody -- ls .",
    ),
    (
        "sg users 'rm -rf .'",
        "the script `sg` runs",
        "sg users 'ls'",
    ),
    (
        "sg users -c 'rm -rf .'",
        "the script `sg` runs",
        "sg users -c 'ls'",
    ),
    (
        "script -qc 'rm -rf .' /dev/null",
        "the script `script` runs",
        "script -qc 'ls' /dev/null",
    ),
    // More wrappers, as they read their options.
    (
        "flock -x .lock rm -rf .",
        "`rm -rf` on .",
        "flock -x .lock ls .",
    ),
    (
        "flock --timeout=5 .lock --command 'rm -rf .'",
        "the script `flock` runs",
        "flock --timeout=5 .lock --command 'ls'",
    ),
    (
        "setpriv --reuid=0 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "setpriv --reuid=0 sh -c 'ls'",
    ),
    (
        "chroot --userspec=root / sh -c 'rm -rf .'",
        "the script `sh` runs",
        "chroot --userspec=root / sh -c 'ls'",
    ),
    (
        "nice -5 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "nice -5 sh -c 'ls'",
    ),
    ("nice -n 5 rm -rf .", "`rm -rf` on .", "nice -n 5 ls ."),
    (
        "chrt -f 1 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "chrt -f 1 sh -c 'ls'",
    ),
    (
        "taskset -c 0 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "taskset -c 0 sh -c 'ls'",
    ),
    (
        "timeout -s KILL 5 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "timeout -s KILL 5 sh -c 'ls'",
    ),
    (
        "timeout --preserve-status 5 rm -rf .",
        "`rm -rf` on .",
        "timeout --preserve-status 5 ls .",
    ),
    (
        "stdbuf -oL sh -c 'rm -rf .'",
        "the script `sh` runs",
        "stdbuf -oL sh -c 'ls'",
    ),
    (
        "unshare -rm sh -c 'rm -rf .'",
        "the script `sh` runs",
        "unshare -rm sh -c 'ls'",
    ),
    (
        "unshare --user --map-root-user rm -rf .",
        "`rm -rf` on .",
        "unshare --user --map-root-user ls .",
    ),
    ("ionice -c3 rm -rf .", "`rm -rf` on .", "ionice -c3 ls ."),
    (
        "nsenter -t 1 -m sh -c 'rm -rf /'",
        "the script `sh` runs",
        "nsenter -t 1 -m sh -c 'ls'",
    ),
    (
        "setsid -f sh -c 'rm -rf .'",
        "the script `sh` runs",
        "setsid -f sh -c 'ls'",
    ),
    ("watch -x rm -rf .", "`rm -rf` on .", "watch -x ls ."),
    (
        "watch -n1 rm -rf .",
        "the script `watch` runs",
        "watch -n1 ls .",
    ),
    (
        "env -S 'rm -rf .'",
        "the script `env` runs",
        "env -S 'ls .'",
    ),
    (
        "env -i PATH=/bin sh -c 'rm -rf .'",
        "the script `sh` runs",
        "env -i PATH=/bin sh -c 'ls'",
    ),
    (
        "echo . | xargs -0 -P2 -I{} sh -c 'rm -rf {}'",
        "a script only known at run time",
        "echo . | xargs -0 -P2 -I{} sh -c 'ls \"$1\"' _ {}",
    ),
    (
        "echo x | xargs -a list -d , rm -rf",
        "`rm -rf`",
        "echo x | xargs -a list -d , ls",
    ),
    (
        "find . -name x -exec ls {} \\; -exec rm -rf {} \\;",
        "`rm -rf` on .",
        "find . -name x -exec ls {} \\; -exec cat {} \\;",
    ),
    (
        "ssh -o ProxyCommand='rm -rf .' host",
        "the script `ssh` runs",
        "ssh -o ProxyCommand='nc %h %p' host",
    ),
    (
        "ssh host 'rm -rf /'",
        "the script `ssh` runs",
        "ssh host 'ls /'",
    ),
    (
        "busybox sh -c 'rm -rf .'",
        "the script `sh` runs",
        "busybox sh -c 'ls'",
    ),
    (
        "prlimit --nofile=64 sh -c 'rm -rf .'",
        "the script `sh` runs",
        "prlimit --nofile=64 sh -c 'ls'",
    ),
    // Found on a second look.
    (
        "builtin cd .. && rm -rf {ws}",
        "`rm -rf` on {ws}",
        "builtin cd .. && ls {ws}",
    ),
    (
        "command cd ..; rm -rf {ws}",
        "`rm -rf` on {ws}",
        "command cd ..; ls {ws}",
    ),
    (
        "source <(echo cd ..); rm -rf {ws}",
        "cannot follow",
        "source <(echo cd ..); ls {ws}",
    ),
    (
        "cd .. && rm -rf {ws}*",
        "is on the deny list",
        "cd .. && ls {ws}*",
    ),
    ("rm -rf ../.tmp*", "is on the deny list", "ls ../.tmp*"),
    (
        "alias x='rm ' y='-rf .'; x y",
        "the alias `x`",
        "alias x='ls ' y='-la .'; x y",
    ),
    (
        "git config alias.x '!rm -rf .' && git x",
        "a git configuration value",
        "git config alias.x '!ls' && git x",
    ),
    (
        "exec 3<<<'rm -rf .'; bash /dev/fd/3",
        "named in the script a shell reads from its input",
        "exec 3<src/main.rs; bash /dev/fd/3",
    ),
    (
        "cat clean.sh | bash",
        "`rm -rf` on {ws}",
        "cat src/main.rs | wc -l",
    ),
    ("bash < clean.sh", "`rm -rf` on {ws}", "wc -l < src/main.rs"),
    // A program codecrew does not know, behind a wrapper.
    (
        "timeout 5 mytool rm -rf /",
        "the arguments of `mytool`",
        "timeout 5 mytool ls /",
    ),
    (
        "sudo -h evil sh -c 'rm -rf .'",
        "found in the script `sh` runs",
        "sudo -h evil sh -c 'ls'",
    ),
    // Options a wrapper does not have fail closed.
    (
        "timeout --frobnicate 5 rm -rf .",
        "which codecrew does not know",
        "timeout --frobnicate 5 ls .",
    ),
    (
        "nice --bogus sh -c 'ls'",
        "which codecrew does not know",
        "nice --bogus ls",
    ),
    // Programs codecrew does not know, handed a command.
    (
        "cargo run -- rm -rf /",
        "the arguments of `cargo`",
        "cargo run -- ls /",
    ),
    (
        "tmux new-session -d 'rm -rf .'",
        "the arguments of `tmux`",
        "tmux new-session -d 'ls'",
    ),
    (
        "nix-shell --run 'cd .. && rm -rf {ws}'",
        "the arguments of `nix-shell`",
        "nix-shell --run 'ls'",
    ),
    (
        "cpulimit -l 50 -- sh -c 'rm -rf .'",
        "the arguments of `cpulimit`",
        "cpulimit -l 50 -- sh -c 'ls'",
    ),
    // More inline code.
    (
        "perl -ne 'system \"rm -rf .\"' src/main.rs",
        "names `rm`",
        "perl -ne 'print' src/main.rs",
    ),
    (
        "perl -e 'system @ARGV' rm -rf .",
        "names `rm`",
        "perl -e 'print @ARGV' a b",
    ),
    (
        "python3 -Ic 'import os; os.system(\"rm -rf .\")'",
        "names `rm`",
        "python3 -Ic 'print(2)'",
    ),
    (
        "ruby -e 'system(\"rm -rf .\")'",
        "names `rm`",
        "ruby -e 'puts 1'",
    ),
    (
        "node -e 'require(\"child_process\").execSync(\"rm -rf .\")'",
        "names `rm`",
        "node -e 'console.log(1)'",
    ),
    (
        "php -r 'system(\"rm -rf .\");'",
        "names `rm`",
        "php -r 'echo 1;'",
    ),
    (
        "awk 'BEGIN{\"rm -rf .\" | getline}'",
        "names `rm`",
        "awk 'BEGIN{print 1}'",
    ),
    (
        "sed 's/.*/rm -rf ./e' src/main.rs",
        "names `rm`",
        "sed --sandbox 's/.*/x/' src/main.rs",
    ),
    (
        "vim -c '!rm -rf .' -c q",
        "names `rm`",
        "vim -c 'set nu' src/main.rs",
    ),
    (
        "python3 - <<'EOF'\nimport os\nos.system('rm -rf .')\nEOF",
        "names `rm`",
        "python3 - <<'EOF'\nprint(1)\nEOF",
    ),
    (
        "echo 'system(\"rm -rf .\")' | perl",
        "names `rm`",
        "echo 'print 1' | perl",
    ),
];

#[test]
fn every_spelling_is_denied_naming_what_was_found() {
    let ws = Ws::new();
    std::fs::write(
        ws.root.join("clean.sh"),
        spelled(&ws, "cd ..\nrm -rf {ws}\n"),
    )
    .unwrap();
    assert!(SPELLINGS.len() >= 24 + 30, "{}", SPELLINGS.len());
    let mut missed = Vec::new();
    for (command, names, _) in SPELLINGS {
        let command = spelled(&ws, command);
        let names = spelled(&ws, names);
        let analysis = ws.analyse(&command);
        if !analysis.deny.iter().any(|why| why.contains(&names)) {
            missed.push(format!(
                "{command:?} (wanted {names:?}): {:?}",
                analysis.deny
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "not denied as wanted:\n{}",
        missed.join("\n")
    );
}

#[test]
fn every_spelling_made_harmless_is_not_denied() {
    let ws = Ws::new();
    let mut denied = Vec::new();
    for (_, _, harmless) in SPELLINGS {
        let command = spelled(&ws, harmless);
        let analysis = ws.analyse(&command);
        if !analysis.deny.is_empty() {
            denied.push(format!("{command:?}: {:?}", analysis.deny));
        }
    }
    assert!(denied.is_empty(), "denied:\n{}", denied.join("\n"));
}

/// Ordinary commands of the kinds above: not denied, and the safe ones still safe.
#[test]
fn ordinary_commands_are_not_denied() {
    let ws = Ws::new();
    for command in [
        "cd src && rm -rf target",
        "cd src; ls; cd ..; rm -rf build",
        "pushd src && ls && popd",
        "flock /tmp/x.lock cargo build",
        "timeout 60 cargo test",
        "nice -n 10 cargo build --release",
        "find . -name '*.o' | xargs rm -f",
        "xargs -n1 echo < src/main.rs",
        "watch -n 5 git status",
        "env RUST_LOG=debug cargo run",
        "git commit -m 'rm -rf / is on the deny list'",
        "git -c color.ui=always log",
        "python3 manage.py migrate",
        "python3 -c 'import sys; print(sys.version)'",
        "perl -pi -e 's/kill/stop/g' src/main.rs",
        "awk -F: '{print $1}' src/main.rs",
        "sed -n '1,5p' src/main.rs",
        "node --version",
        "python3 --version",
        "gh pr create --title 'Do not rm the sh scripts' --body 'kill it'",
        "cargo run -- --help",
        "make clean && make",
        "alias ll='ls -l'; ll",
        "trap 'rm -f \"$tmp\"' EXIT",
        "bash scripts/missing.sh",
        "docker run --rm img ls /",
        "mapfile -t lines < src/main.rs",
        "complete -F _git git",
    ] {
        let analysis = ws.analyse(command);
        assert!(
            analysis.deny.is_empty(),
            "{command:?} is not denied: {analysis:#?}"
        );
    }
    for command in [
        "ls src",
        "cat src/main.rs | wc -l",
        "git log --oneline -n 3",
    ] {
        assert_eq!(verdict(&ws.analyse(command)), "safe", "{command:?}");
    }
}

/// A script file a shell runs is read as its script.
#[test]
fn a_script_file_is_read_as_the_script() {
    let ws = Ws::new();
    std::fs::write(ws.root.join("clean.sh"), "cd ..\nrm -rf \"$OLDPWD\"\n").unwrap();
    std::fs::write(ws.root.join("build.sh"), "cargo build\n").unwrap();
    for command in [
        "bash clean.sh",
        "sh ./clean.sh",
        "source clean.sh",
        ". ./clean.sh",
    ] {
        let analysis = ws.analyse(command);
        assert!(
            analysis
                .deny
                .iter()
                .any(|why| why.contains("the script file")),
            "{command:?}: {analysis:#?}"
        );
    }
    for command in ["bash build.sh", "source build.sh"] {
        assert!(ws.analyse(command).deny.is_empty(), "{command:?}");
    }
    // A script the line itself writes cannot be read before it runs: the line is.
    let analysis = ws.analyse("printf 'rm -rf .' > new.sh && bash new.sh");
    assert!(!analysis.deny.is_empty(), "{analysis:#?}");
}

/// Wrappers and forms a deny-listed command can be handed to, each wrapping `c`.
fn wrappers() -> Vec<Form> {
    fn q(text: &str) -> String {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
    vec![
        ("flock -c", |c| format!("flock .lock -c {}", q(c))),
        ("flock -w", |c| format!("flock -w 5 LOCK sh -c {}", q(c))),
        ("xargs -i", |c| format!("echo | xargs -i sh -c {}", q(c))),
        ("xargs --max-chars", |c| {
            format!("echo | xargs --max-chars 9 sh -c {}", q(c))
        }),
        ("ionice", |c| format!("ionice --class 3 sh -c {}", q(c))),
        ("stdbuf", |c| format!("stdbuf --output L sh -c {}", q(c))),
        ("unshare", |c| format!("unshare -S 0 sh -c {}", q(c))),
        ("watch", |c| format!("watch -n 1 {}", q(c))),
        ("timeout watch", |c| {
            format!("timeout 3 watch -n 1 {}", q(c))
        }),
        ("setpriv", |c| format!("setpriv --reuid=0 sh -c {}", q(c))),
        ("chroot", |c| {
            format!("chroot --userspec=root / sh -c {}", q(c))
        }),
        ("nice", |c| format!("nice -5 sh -c {}", q(c))),
        ("env -S", |c| format!("env -S {}", q(c))),
        ("bash -o", |c| format!("bash -o errexit -c {}", q(c))),
        ("bash -O", |c| format!("bash -O extglob -c {}", q(c))),
        ("bash -c --", |c| format!("bash -c -- {}", q(c))),
        ("bash -s", |c| format!("bash -s ci <<'EOF'\n{c}\nEOF")),
        ("bash /dev/stdin", |c| {
            format!("bash /dev/stdin <<'EOF'\n{c}\nEOF")
        }),
        (". /dev/stdin", |c| {
            format!(". /dev/stdin <<'EOF'\n{c}\nEOF")
        }),
        ("printf | bash -s", |c| {
            format!("printf '%s' {} | bash -s x", q(c))
        }),
        ("su -c", |c| format!("su root -c {}", q(c))),
        ("sg", |c| format!("sg users {}", q(c))),
        ("script -c", |c| format!("script -qc {} /dev/null", q(c))),
        ("git alias", |c| {
            format!("git -c alias.x={} x", q(&format!("!{c}")))
        }),
        ("GIT_CONFIG_VALUE", |c| {
            format!(
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0={} git x",
                q(&format!("!{c}"))
            )
        }),
        ("alias", |c| format!("alias tidy={}\ntidy", q(c))),
        ("complete -C", |c| format!("compgen -C {} x", q(c))),
        ("mapfile -C", |c| {
            format!("mapfile -C {} -c 1 < src/main.rs", q(c))
        }),
        ("bind -x", |c| {
            format!("bind -x {}", q(&format!("\"\\C-t\": {c}")))
        }),
        ("history", |c| format!("history -s {}; fc -s", q(c))),
        ("unknown program", |c| {
            format!("tmux new-session -d {}", q(c))
        }),
    ]
}

/// Every deny-listed command through every wrapper and form above is denied.
#[test]
fn every_deny_listed_command_is_denied_through_every_wrapper() {
    let missed = not_denied_in_any(&wrappers());
    assert!(missed.is_empty(), "not denied:\n{}", missed.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any deny-listed command, through up to three wrappers at once, is still denied.
    #[test]
    fn deny_listed_commands_stay_denied_through_wrappers(
        command in 0..DENY_LISTED.len(),
        nesting in prop::collection::vec(0..wrappers().len(), 1..=3),
    ) {
        let (line, names) = nested(command, &wrappers(), &nesting);
        let analysis = Ws::new().analyse(&line);
        prop_assert!(!analysis.deny.is_empty(), "{names:?}: {line:?} {analysis:#?}");
    }
}

/// A trap handler denied only because it is in double quotes says that single quotes
/// would pass, and they do.
#[test]
fn a_double_quoted_handler_is_told_single_quotes_would_pass() {
    let ws = Ws::new();
    let analysis = ws.analyse(r#"tmp=$(mktemp); trap "rm -f $tmp" EXIT"#);
    assert!(!analysis.deny.is_empty(), "{analysis:#?}");
    assert!(
        analysis
            .hints
            .iter()
            .any(|hint| hint.contains("single quotes ('rm -f $tmp')")),
        "{analysis:#?}"
    );
    assert!(
        ws.analyse(r#"tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT"#)
            .deny
            .is_empty()
    );
    assert!(ws.analyse("trap 'rm -f $tmp' EXIT").deny.is_empty());
    // A handler that is dangerous in any quotes gets no such advice.
    let analysis = ws.analyse(r#"trap "rm -rf $HOME" EXIT"#);
    assert!(!analysis.deny.is_empty());
    assert!(analysis.hints.is_empty(), "{analysis:#?}");
}
