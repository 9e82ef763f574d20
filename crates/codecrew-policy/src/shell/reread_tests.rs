//! The deny list read to its depth: every place bash runs a command from (issue 39).

use proptest::prelude::*;

use super::tests::{DENY_LISTED, Form, Ws, nested, not_denied_in_any, verdict};

/// Each spelling, the deny-listed command its deny message names, and where it says the
/// command hid.
const HIDDEN: &[(&str, &str, &str)] = &[
    // The testers' findings.
    (
        r#": ${x:=$(rm -rf "$PWD")}"#,
        r#"`rm -rf` on "$PWD""#,
        "in a parameter expansion",
    ),
    (
        r#"echo "${x:-$(rm -rf ./*)}""#,
        "`rm -rf` on ./*",
        "in a parameter expansion",
    ),
    (
        r#"a[$(rm -rf "$PWD")]=1"#,
        "`rm -rf`",
        "in an array subscript",
    ),
    (
        r#"bash -c ': ${x:=$(rm -rf "$PWD")}'"#,
        "`rm -rf`",
        "in the script `bash` runs",
    ),
    (
        "echo ${x/$(rm -rf ./*)/}",
        "`rm -rf` on ./*",
        "in a parameter expansion",
    ),
    (
        ": ${x:=$(mkfs.ext4 /dev/sda)}",
        "`mkfs.ext4`",
        "in a parameter expansion",
    ),
    // Every operator of `${…}`.
    (
        "echo ${x:?$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x:+$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x-$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x=$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x?$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x+$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x#$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x##$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x%$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x%%`rm -rf /`}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x//a/$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x/#$(rm -rf /)/y}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x/%$(rm -rf /)/y}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x^$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x^^$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x,$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x,,$(rm -rf /)}",
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x:$(rm -rf /):1}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x:0:$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${!x:-$(rm -rf /)}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${a[$(rm -rf /)]@Q}",
        "`rm -rf` on /",
        "in an array subscript",
    ),
    (
        r#"echo "${x:-'$(rm -rf /)'}""#,
        "`rm -rf` on /",
        "in quoted text bash expands",
    ),
    (
        "echo ${x:-`rm -rf /`}",
        "`rm -rf` on /",
        "in a parameter expansion",
    ),
    (
        "echo ${x:-${y:-$(rm -rf /)}}",
        "`rm -rf` on /",
        "in a parameter expansion, in a parameter expansion",
    ),
    // Subscripts, as words and as text.
    (
        "declare a[$(rm -rf /)]=1",
        "`rm -rf` on /",
        "in an array subscript",
    ),
    (
        "local a[$(rm -rf /)]=1",
        "`rm -rf` on /",
        "in an array subscript",
    ),
    (
        "declare -a 'a[$(rm -rf /)]=1'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "typeset 'a[$(rm -rf /)]'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "readonly 'a[$(rm -rf /)]=1'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "export 'a[$(rm -rf /)]=1'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "unset 'a[$(rm -rf /)]'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "printf -v 'a[$(rm -rf /)]' %s x",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "read -a 'a[$(rm -rf /)]' <<< x",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    ("[[ -v a[$(rm -rf /)] ]]", "`rm -rf` on /", "in a test"),
    (
        "[[ -v 'a[$(rm -rf /)]' ]]",
        "`rm -rf` on /",
        "in a test operand bash evaluates",
    ),
    (
        "[[ 'a[$(rm -rf /)]' -eq 1 ]]",
        "`rm -rf` on /",
        "in a test operand bash evaluates",
    ),
    (
        "test -v 'a[$(rm -rf /)]'",
        "`rm -rf` on /",
        "in an array subscript given as text",
    ),
    (
        "(( a[$(rm -rf /)] ))",
        "`rm -rf` on /",
        "in an arithmetic command",
    ),
    (
        "(( 'a[$(rm -rf /)]' ))",
        "`rm -rf` on /",
        "in quoted text bash expands",
    ),
    (
        "echo $(( a[$(rm -rf /)] ))",
        "`rm -rf` on /",
        "in an arithmetic expansion",
    ),
    (
        "let 'a[$(rm -rf /)]=1'",
        "`rm -rf` on /",
        "in a `let` expression",
    ),
    (
        "x='a[$(rm -rf /)]'; echo $((x))",
        "`rm -rf` on /",
        "in the value of x",
    ),
    (
        "x='a[$(rm -rf /)]'; echo ${!x}",
        "`rm -rf` on /",
        "in the value of x",
    ),
    // Scripts held as text.
    (
        "eval ': ${x:=$(mkfs.ext4 /dev/sda)}'",
        "`mkfs.ext4`",
        "in the script `eval` runs",
    ),
    ("trap 'rm -rf /' EXIT", "`rm -rf` on /", "in a trap handler"),
    (
        "trap -- ': ${x#$(rm -rf ~)}' INT",
        "`rm -rf` on ~",
        "in a trap handler",
    ),
    (
        r#"trap "rm -rf $dir" EXIT"#,
        "`rm`",
        "in a trap handler, which is only known at run time",
    ),
    (
        "builtin trap 'rm -rf /' EXIT",
        "`rm -rf` on /",
        "in a trap handler",
    ),
    (
        "PROMPT_COMMAND='rm -rf /'",
        "`rm -rf` on /",
        "in the value of PROMPT_COMMAND",
    ),
    (
        "export PROMPT_COMMAND='rm -rf /'",
        "`rm -rf` on /",
        "in the value of PROMPT_COMMAND",
    ),
    (
        "declare -x 'PROMPT_COMMAND=rm -rf /'",
        "`rm -rf` on /",
        "in the value of PROMPT_COMMAND",
    ),
    (
        "env PROMPT_COMMAND='rm -rf /' bash -i",
        "`rm -rf` on /",
        "in the value of PROMPT_COMMAND",
    ),
    (
        "PS0='$(rm -rf /)' bash -i",
        "`rm -rf` on /",
        "in the value of PS0",
    ),
    (
        "PS1='`rm -rf /`' bash -i",
        "`rm -rf` on /",
        "in the value of PS1",
    ),
    (
        "PS4='$(rm -rf /)' bash -xc ls",
        "`rm -rf` on /",
        "in the value of PS4",
    ),
    (
        "export BASH_ENV='$(rm -rf /)'",
        "`rm -rf` on /",
        "in the value of BASH_ENV",
    ),
    (
        "ENV='$(mkfs /dev/sda)' sh -i",
        "`mkfs`",
        "in the value of ENV",
    ),
    (
        "GIT_SSH_COMMAND='rm -rf ~' git fetch",
        "`rm -rf` on ~",
        "in the value of GIT_SSH_COMMAND",
    ),
    (
        "env 'BASH_FUNC_f%%=() { rm -rf /; }' bash -c f",
        "`rm -rf` on /",
        "in an exported function",
    ),
    // Substitutions in every other place.
    (
        "echo `rm -rf /`",
        "`rm -rf` on /",
        "in a command substitution",
    ),
    ("echo $(< $(rm -rf /))", "`rm -rf` on /", "in a redirection"),
    (
        "echo x > \"${f:-$(rm -rf /)}\"",
        "`rm -rf` on /",
        "in a redirection",
    ),
    (
        "cat <<< \"${x:=$(rm -rf /)}\"",
        "`rm -rf` on /",
        "in a here-string",
    ),
    (
        "cat <<EOF\n${x:=$(rm -rf /)}\nEOF",
        "`rm -rf` on /",
        "in a here-document",
    ),
    (
        "cat <(: ${x:=$(rm -rf /)})",
        "`rm -rf` on /",
        "in a process substitution",
    ),
    (
        "f() { : ${x:=$(rm -rf /)}; }",
        "`rm -rf` on /",
        "in the body of a function",
    ),
    (
        "for i in ${x:-$(rm -rf /)}; do :; done",
        "`rm -rf` on /",
        "in a loop",
    ),
    (
        "select i in $(rm -rf /); do :; done",
        "`rm -rf` on /",
        "in a loop",
    ),
    (
        "case ${x:-$(rm -rf /)} in *) ;; esac",
        "`rm -rf` on /",
        "in a `case` statement",
    ),
    (
        "case x in $(rm -rf /)) ;; esac",
        "`rm -rf` on /",
        "in a `case` statement",
    ),
    (
        "[[ $x == ${y/$(rm -rf /)/} ]]",
        "`rm -rf` on /",
        "in a test",
    ),
    (
        "[[ $x =~ ${y:-$(rm -rf /)} ]]",
        "`rm -rf` on /",
        "in a test",
    ),
    ("coproc rm -rf /", "`rm -rf` on /", ""),
    ("coproc w { rm -rf /; }", "`rm -rf` on /", ""),
    // Shells reading their script from their input.
    (
        "bash <<'EOF'\nrm -rf /\nEOF",
        "`rm -rf` on /",
        "in the script a shell reads from its input",
    ),
    (
        "bash <<< 'rm -rf /'",
        "`rm -rf` on /",
        "in the script a shell reads from its input",
    ),
    (
        "echo 'rm -rf /' | bash",
        "`rm -rf` on /",
        "in the script piped into a shell",
    ),
    (
        "source <(echo 'rm -rf /')",
        "`rm`",
        "in the script file a shell reads",
    ),
    // Found by the property tests below: assignments after a wrapper, a pattern the
    // grammar cuts at a `)` or cannot parse, quotes the grammar reads where bash does not.
    (
        "coproc PROMPT_COMMAND='rm -rf /'",
        "`rm -rf` on /",
        "in the value of PROMPT_COMMAND",
    ),
    ("sudo FOO=1 rm -rf /", "`rm -rf` on /", ""),
    (
        r#"echo ${x#$(case ${x:-$(r"m" -rf $'/')} in *) ;; esac)}"#,
        "`rm -rf` on /",
        "in the pattern of the expansion",
    ),
    (
        "echo ${x^$(case ${x:-$(cat /proc/self/environ)} in *) ;; esac)}",
        "/proc/self/environ",
        "in a part that does not parse",
    ),
    (
        r#"echo "${x:-'$('rm' -rf '/')'}""#,
        "`rm -rf` on /",
        "in quoted text bash expands",
    ),
    // Nested: a wrapper's script holding an expansion holding a script.
    (
        "sudo bash -c ': ${x:=$(rm -rf /)}'",
        "`rm -rf` on /",
        "in the script `bash` runs",
    ),
    (
        "find . -exec sh -c ': ${x#$(rm -rf /)}' \\;",
        "`rm -rf` on /",
        "in the script `sh` runs",
    ),
    // Bash takes a backtick body's quoting backslashes away before it reads it: `\\rm`
    // there runs `rm`, and an escaped backtick nests a substitution.
    (
        r"echo `\\rm -rf /`",
        "`rm -rf` on /",
        "in a command substitution",
    ),
    (
        r"echo `echo \`rm -rf /\``",
        "`rm -rf` on /",
        "in a command substitution, in a command substitution",
    ),
    // The same inside double quotes, in an assignment and in a here-document: bash
    // reads each body the same way (checked with harmless commands in bash 5).
    (
        r#"echo "`\\rm -rf /`""#,
        "`rm -rf` on /",
        "in a command substitution",
    ),
    (
        r#"echo "`echo \"\$(rm -rf /)\"`""#,
        "`rm -rf` on /",
        "in a command substitution",
    ),
    (
        r"x=`echo \`\\rm -rf /\``",
        "`rm -rf` on /",
        "in a command substitution",
    ),
    (
        "cat <<EOF\n`rm -rf /`\nEOF",
        "`rm -rf` on /",
        "in a command substitution, in a here-document",
    ),
    (
        "cat <<-EOF\n\tx `echo y; rm -rf /` z\n\tEOF",
        "`rm -rf` on /",
        "in a here-document",
    ),
    (
        "cat <<EOF\n`\\\\rm -rf /`\nEOF",
        "`rm -rf` on /",
        "in a command substitution",
    ),
    (
        r#"bash -c "eval ': \${x:=\$(rm -rf /)}'""#,
        "`rm -rf` on /",
        "in a parameter expansion, in the script `eval` runs, in the script `bash` runs",
    ),
];

#[test]
fn the_deny_list_is_read_wherever_bash_runs_a_command() {
    let ws = Ws::new();
    assert!(HIDDEN.len() >= 40);
    for (command, names, place) in HIDDEN {
        let analysis = ws.analyse(command);
        assert!(
            analysis
                .deny
                .iter()
                .any(|why| why.contains(names) && why.contains(place)),
            "{command:?} should be denied naming {names} {place}: {analysis:#?}"
        );
    }
}

/// The same forms, harmless: not denied (most still ask).
#[test]
fn harmless_uses_of_the_same_places_are_not_denied() {
    let ws = Ws::new();
    for command in [
        r#"echo "${HOME:-/tmp}""#,
        // A quoted marker: the body is data, never expanded.
        "cat <<'EOF'\n`rm -rf /`\nEOF",
        "cat <<\"EOF\"\n$(rm -rf /)\nEOF",
        "cat <<EOF\n`date`\nEOF",
        r#"ls "${dir:-.}""#,
        "git log --format=%H",
        ": ${x:=$(date)}",
        r#"echo "${x:-$(git rev-parse HEAD)}""#,
        "a[$(echo 1)]=1",
        "echo ${x/$(echo a)/b}",
        "echo ${x#$(pwd)}",
        "echo ${x%%`date`}",
        "echo ${x^^} ${x,,} ${x:1:2} ${!x} ${x@Q} ${#x}",
        "echo ${x:$(echo 1):1}",
        r#"echo "${x:-'$(date)'}""#,
        "unset 'a[$(echo 1)]' 'a[1]' x",
        "declare -a arr; local 'a[1]=2'",
        "[[ -v a[1] ]]",
        "[[ $x == $(date) ]]",
        "[[ $n -eq 1 ]]",
        "case x in $(echo x)) ;; esac",
        "export PROMPT_COMMAND='history -a'",
        r"export PS1='\u@\h \w\$ '",
        "PS4='+ ${BASH_SOURCE}:${LINENO} ' bash -xc ls",
        r#"trap 'rm -f "$tmp"' EXIT"#,
        "trap - EXIT; trap -l",
        "let 'x=1+2' x++",
        "(( x = 1 + 2 ))",
        "echo $(( a[1] + 2 ))",
        "bash -c 'echo ${x:-$(date)}'",
        "eval 'echo ${x:-$(date)}'",
        "x='$(date)'; echo $((x))",
        "printf -v out %s x",
        "read -r line < src/main.rs",
        "read -p 'continue [y/n]? ' ans",
        "mapfile -t lines < src/main.rs",
        "echo 'rm -rf /'",
        "grep -F 'rm -rf /' src/main.rs",
        "echo '${x:=$(rm -rf /)}'",
        "cat <<'EOF'\n$(rm -rf /)\nEOF",
        "bash <<'EOF'\nrm -f tmp\nEOF",
        "bash <<< 'echo hi'",
        "echo ls | bash",
        "source <(kubectl completion bash)",
        "EDITOR=vim git commit",
        "GIT_PAGER=cat git log",
        "coproc cat",
        "env 'BASH_FUNC_f%%=() { echo hi; }' bash -c f",
    ] {
        let analysis = ws.analyse(command);
        assert!(
            analysis.deny.is_empty(),
            "{command:?} is not denied: {analysis:#?}"
        );
    }
    // The safe list still runs without asking.
    for command in ["git log --format=%H", "ls src", "cat src/main.rs | wc -l"] {
        assert_eq!(verdict(&ws.analyse(command)), "safe", "{command:?}");
    }
}

/// `text` in single quotes, as bash reads it back.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Every place bash runs a command from, each wrapping a command `c`.
fn forms() -> Vec<Form> {
    vec![
        (":-", |c| format!("echo ${{x:-$({c})}}")),
        (":=", |c| format!(": ${{x:=$({c})}}")),
        (":?", |c| format!("echo ${{x:?$({c})}}")),
        (":+", |c| format!("echo ${{x:+$({c})}}")),
        ("-", |c| format!("echo ${{x-$({c})}}")),
        ("=", |c| format!("echo ${{x=$({c})}}")),
        ("?", |c| format!("echo ${{x?$({c})}}")),
        ("+", |c| format!("echo ${{x+$({c})}}")),
        ("#", |c| format!("echo ${{x#$({c})}}")),
        ("##", |c| format!("echo ${{x##$({c})}}")),
        ("%", |c| format!("echo ${{x%$({c})}}")),
        ("%%", |c| format!("echo ${{x%%$({c})}}")),
        ("/", |c| format!("echo ${{x/$({c})/y}}")),
        ("//", |c| format!("echo ${{x//y/$({c})}}")),
        ("/#", |c| format!("echo ${{x/#$({c})}}")),
        ("/%", |c| format!("echo ${{x/%$({c})/y}}")),
        ("^", |c| format!("echo ${{x^$({c})}}")),
        ("^^", |c| format!("echo ${{x^^$({c})}}")),
        (",", |c| format!("echo ${{x,$({c})}}")),
        (",,", |c| format!("echo ${{x,,$({c})}}")),
        ("@Q", |c| format!("echo ${{a[$({c})]@Q}}")),
        ("offset", |c| format!("echo ${{x:$({c}):1}}")),
        ("length", |c| format!("echo ${{x:0:$({c})}}")),
        ("indirect", |c| format!("echo ${{!x:-$({c})}}")),
        ("quoted", |c| format!("echo \"${{x:-$({c})}}\"")),
        ("single quotes in quotes", |c| {
            format!("echo \"${{x:-'$({c})'}}\"")
        }),
        ("subscript", |c| format!("a[$({c})]=1")),
        ("declare", |c| format!("declare a[$({c})]=1")),
        ("local", |c| format!("local a[$({c})]=1")),
        ("unset", |c| {
            format!("unset {}", quoted(&format!("a[$({c})]")))
        }),
        ("printf -v", |c| {
            format!("printf -v {} %s x", quoted(&format!("a[$({c})]")))
        }),
        ("read -a", |c| {
            format!("read -a {}", quoted(&format!("a[$({c})]")))
        }),
        ("[[ -v ]]", |c| format!("[[ -v a[$({c})] ]]")),
        ("(( ))", |c| format!("(( a[$({c})] ))")),
        ("$(( ))", |c| format!("echo $(( a[$({c})] ))")),
        ("let", |c| {
            format!("let {}", quoted(&format!("a[$({c})]=1")))
        }),
        ("bash -c", |c| {
            format!("bash -c {}", quoted(&format!(": ${{x:=$({c})}}")))
        }),
        ("eval", |c| format!("eval {}", quoted(c))),
        ("trap", |c| format!("trap {} EXIT", quoted(c))),
        ("PROMPT_COMMAND", |c| {
            format!("PROMPT_COMMAND={}", quoted(c))
        }),
        ("export PS4", |c| {
            format!("export PS4={}", quoted(&format!("$({c})")))
        }),
        // Within backticks bash reads `\\` and `` \` `` as quoted: a command holding
        // backticks nests only so escaped (unescaped, `echo `echo `x``` runs no `x`).
        ("backticks", |c| {
            format!("echo `{}`", c.replace('\\', "\\\\").replace('`', "\\`"))
        }),
        ("process substitution", |c| format!("cat <({c})")),
        ("here-string", |c| format!("cat <<< \"${{x:=$({c})}}\"")),
        ("redirection", |c| format!("echo > \"${{f:-$({c})}}\"")),
        ("function", |c| format!("f() {{ : ${{x:=$({c})}}; }}")),
        ("for", |c| format!("for i in ${{x:-$({c})}}; do :; done")),
        ("case", |c| format!("case ${{x:-$({c})}} in *) ;; esac")),
        ("nested twice", |c| format!("echo ${{x:-${{y:-$({c})}}}}")),
        ("coproc", |c| format!("coproc {c}")),
    ]
}

/// Every deny-listed spelling, in every place bash runs a command from, is denied.
#[test]
fn every_deny_listed_command_is_denied_in_every_place() {
    let missed = not_denied_in_any(&forms());
    assert!(missed.is_empty(), "not denied:\n{}", missed.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any deny-listed spelling, wrapped in up to three places at once (a trap handler
    /// holding `bash -c` holding a subscript …), is still denied.
    #[test]
    fn deny_listed_commands_stay_denied_however_deep(
        command in 0..DENY_LISTED.len(),
        nesting in prop::collection::vec(0..forms().len(), 1..=3),
    ) {
        let (line, names) = nested(command, &forms(), &nesting);
        let analysis = Ws::new().analyse(&line);
        prop_assert!(!analysis.deny.is_empty(), "{names:?}: {line:?} {analysis:#?}");
    }
}
