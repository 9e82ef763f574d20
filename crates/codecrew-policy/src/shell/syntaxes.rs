//! How each program of the safe list reads its options, and which of its options run a
//! program, write, read names from a file or follow links. Checked against the programs
//! themselves (GNU coreutils 9.1, grep 3.8, diffutils 3.8, findutils 4.9, file 5.44, jq
//! 1.6, xxd, util-linux, binutils 2.40, git 2.47; ripgrep 14 and tree 2.1 from their
//! sources); SECURITY.md has the table.

use super::options::{Effect, Syntax};

use Effect::{Assigns, FollowsLinks, ReadsNames, Runs, Writes};

/// GNU `getopt_long` with nothing dangerous: abbreviations, bundles, attached values.
const fn gnu(short_values: &'static str) -> Syntax<'static> {
    Syntax {
        short_values,
        ..Syntax::PLAIN
    }
}

/// The programs of the safe list other than git, with their option syntax. A program
/// missing here is not on the safe list.
pub(super) fn syntax(program: &str) -> Option<Syntax<'static>> {
    Some(match program {
        "pwd" | "true" | "false" | "echo" | "test" | "[" | "cd" | "sleep" | "whoami" | "id"
        | "uname" | "rev" | "tr" | "comm" | "realpath" | "readlink" | "dirname" | "which"
        | "cat" => gnu(""),
        "md5sum" | "sha1sum" | "sha256sum" | "sha512sum" => Syntax {
            short: &[('c', ReadsNames)],
            long: &[("check", ReadsNames)],
            ..gnu("")
        },
        "b2sum" | "cksum" => Syntax {
            short: &[('c', ReadsNames)],
            long: &[("check", ReadsNames)],
            ..gnu("al")
        },
        "printf" => Syntax {
            short: &[('v', Assigns)],
            ..gnu("v")
        },
        "wait" => Syntax {
            short: &[('p', Assigns)],
            ..gnu("p")
        },
        "ls" => Syntax {
            short: &[('L', FollowsLinks)],
            long: &[("dereference", FollowsLinks)],
            ..gnu("ITw")
        },
        "wc" => Syntax {
            long: &[("files0-from", ReadsNames)],
            ..gnu("")
        },
        "du" => Syntax {
            short: &[('L', FollowsLinks)],
            long: &[("dereference", FollowsLinks), ("files0-from", ReadsNames)],
            ..gnu("dtBX")
        },
        "grep" | "egrep" | "fgrep" => Syntax {
            short: &[('R', FollowsLinks)],
            long: &[("dereference-recursive", FollowsLinks)],
            ..gnu("efmABCdDX")
        },
        "diff" => gnu("xXSFILCUWD"),
        "sort" => Syntax {
            short: &[('o', Writes), ('T', Writes)],
            long: &[
                ("output", Writes),
                ("temporary-directory", Writes),
                ("compress-program", Runs),
                ("files0-from", ReadsNames),
            ],
            ..gnu("kotSTy")
        },
        "file" => Syntax {
            short: &[('C', Writes), ('z', Runs), ('Z', Runs), ('f', ReadsNames)],
            long: &[
                ("compile", Writes),
                ("uncompress", Runs),
                ("uncompress-noreport", Runs),
                ("files-from", ReadsNames),
            ],
            ..gnu("emfFP")
        },
        "date" => Syntax {
            short: &[('s', Writes)],
            long: &[("set", Writes)],
            ..gnu("dfrsI")
        },
        "head" => gnu("cn"),
        "tail" => gnu("cns"),
        "tac" => gnu("s"),
        "nl" => gnu("bdfhilnsvw"),
        "cut" => gnu("bcdf"),
        "fold" => gnu("w"),
        "paste" => gnu("d"),
        "fmt" => gnu("gpw"),
        "expand" | "unexpand" => gnu("t"),
        "seq" => gnu("fs"),
        "basename" => gnu("s"),
        "cmp" => gnu("in"),
        "od" => gnu("tjANSw"),
        "stat" => gnu("c"),
        "df" => gnu("txBF"),
        "column" => gnu("cilnoprsEHNORTW"),
        "hexdump" => gnu("efnsL"),
        "strings" => gnu("enstTU"),
        "uniq" => gnu("fsw"),
        "hostname" => gnu("F"),
        // xxd compares two letters of one-dash words and takes values as the next word.
        "xxd" => Syntax {
            abbreviations: false,
            ..gnu("")
        },
        // jq 1.6: exact long options, `-L` the only value.
        "jq" => Syntax {
            abbreviations: false,
            ..gnu("L")
        },
        // tree: its value letters take the next word, so a bundle is all flags; exact
        // long options.
        "tree" => Syntax {
            short: &[('o', Writes), ('R', Writes), ('l', FollowsLinks)],
            abbreviations: false,
            ..gnu("")
        },
        // ripgrep: exact long options; values attached or the next word.
        "rg" => Syntax {
            short: &[('z', Runs), ('L', FollowsLinks)],
            long: &[
                ("pre", Runs),
                ("search-zip", Runs),
                ("hostname-bin", Runs),
                ("follow", FollowsLinks),
            ],
            abbreviations: false,
            ..gnu("ABCEMTdefgjmrt")
        },
        // find: one-dash predicates, exact; `-L` before the paths.
        "find" => Syntax {
            short: &[('L', FollowsLinks)],
            long: &[
                ("exec", Runs),
                ("execdir", Runs),
                ("ok", Runs),
                ("okdir", Runs),
                ("delete", Writes),
                ("fprint", Writes),
                ("fprint0", Writes),
                ("fprintf", Writes),
                ("fls", Writes),
                ("files0-from", ReadsNames),
                ("follow", FollowsLinks),
            ],
            abbreviations: false,
            single_dash_long: true,
            short_values: "",
        },
        _ => return None,
    })
}

/// git's revision and diff options (log, show, diff, whatchanged, reflog, rev-list,
/// shortlog): exact long options, short ones bundled.
pub(super) const GIT_REVISIONS: Syntax<'static> = Syntax {
    short: &[],
    long: &[
        ("output", Writes),
        ("ext-diff", Runs),
        ("show-signature", Runs),
    ],
    abbreviations: false,
    ..gnu("nOSGLlUMCBX")
};

/// The options of these that make git print file contents (or search them).
pub(super) const GIT_PATCH_SHORT: &str = "puSGLcU";
pub(super) const GIT_PATCH_LONG: &[&str] = &[
    "patch",
    "unified",
    "binary",
    "check",
    "patch-with-stat",
    "patch-with-raw",
    "word-diff",
    "word-diff-regex",
    "color-words",
    "cc",
    "dd",
    "pickaxe-regex",
    "pickaxe-all",
    "find-object",
    "diff-merges",
    "remerge-diff",
    "full-diff",
];

/// The syntax of a reading git subcommand's own options; None when the subcommand is
/// not on the safe list.
pub(super) fn git_syntax(subcommand: &str) -> Option<Syntax<'static>> {
    // git's parse-options: abbreviations and bundles.
    let parse_options = |short_values, short, long| Syntax {
        short_values,
        short,
        long,
        abbreviations: true,
        single_dash_long: false,
    };
    Some(match subcommand {
        "log" | "show" | "diff" | "whatchanged" | "reflog" | "rev-list" | "shortlog" => {
            GIT_REVISIONS
        }
        "grep" => parse_options("efmABC", &[('O', Runs)], &[("open-files-in-pager", Runs)]),
        "blame" => parse_options("LSCM", &[], &[("output", Writes)]),
        "ls-files" => parse_options("xX", &[], &[]),
        "describe" => parse_options("", &[], &[("dirty", Writes), ("broken", Runs)]),
        "branch" => parse_options(
            "ut",
            &[
                ('d', Writes),
                ('D', Writes),
                ('m', Writes),
                ('M', Writes),
                ('c', Writes),
                ('C', Writes),
                ('f', Writes),
                ('u', Writes),
                ('t', Writes),
            ],
            &[
                ("edit-description", Runs),
                ("unset-upstream", Writes),
                ("set-upstream-to", Writes),
                ("delete", Writes),
                ("move", Writes),
                ("copy", Writes),
                ("force", Writes),
                ("track", Writes),
                ("create-reflog", Writes),
            ],
        ),
        "tag" => parse_options(
            "mFun",
            &[
                ('d', Writes),
                ('a', Writes),
                ('s', Writes),
                ('m', Writes),
                ('F', Writes),
                ('e', Runs),
                ('u', Writes),
                ('f', Writes),
                ('v', Runs),
            ],
            &[
                ("delete", Writes),
                ("annotate", Writes),
                ("sign", Writes),
                ("message", Writes),
                ("file", Writes),
                ("edit", Runs),
                ("local-user", Writes),
                ("force", Writes),
                ("verify", Runs),
                ("create-reflog", Writes),
            ],
        ),
        "status" => parse_options("uM", &[], &[]),
        // Every object of the store, those no ref reaches included.
        "cat-file" => parse_options("", &[], &[("batch-all-objects", ReadsNames)]),
        "ls-tree" | "rev-parse" | "merge-base" | "show-ref" | "remote" => {
            parse_options("", &[], &[])
        }
        _ => return None,
    })
}
