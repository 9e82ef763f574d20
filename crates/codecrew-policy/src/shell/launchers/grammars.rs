//! Each wrapper's options, as its own getopt call declares them (the option string
//! without its leading `+`, and the long options).

use super::super::getopt::{Arity, Grammar};

use Arity::{None as Flag, Optional, Required};

pub(super) const NOTHING: Grammar = Grammar {
    short: "",
    long: &[("help", Flag), ("version", Flag)],
};

pub(super) const SUDO: Grammar = Grammar {
    short: "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
    long: &[
        ("askpass", Flag),
        ("auth-type", Required),
        ("background", Flag),
        ("bell", Flag),
        ("close-from", Required),
        ("login-class", Required),
        ("chdir", Required),
        ("preserve-env", Optional),
        ("edit", Flag),
        ("group", Required),
        ("set-home", Flag),
        ("help", Flag),
        ("host", Required),
        ("login", Flag),
        ("remove-timestamp", Flag),
        ("reset-timestamp", Flag),
        ("list", Flag),
        ("non-interactive", Flag),
        ("preserve-groups", Flag),
        ("prompt", Required),
        ("chroot", Required),
        ("role", Required),
        ("stdin", Flag),
        ("shell", Flag),
        ("type", Required),
        ("command-timeout", Required),
        ("other-user", Required),
        ("user", Required),
        ("version", Flag),
        ("validate", Flag),
    ],
};

pub(super) const DOAS: Grammar = Grammar {
    short: "a:C:Lnsu:",
    long: &[],
};

pub(super) const ENV: Grammar = Grammar {
    short: "C:iS:u:v0",
    long: &[
        ("chdir", Required),
        ("ignore-environment", Flag),
        ("null", Flag),
        ("split-string", Required),
        ("unset", Required),
        ("debug", Flag),
        ("block-signal", Optional),
        ("default-signal", Optional),
        ("ignore-signal", Optional),
        ("list-signal-handling", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const SETSID: Grammar = Grammar {
    short: "Vhcfw",
    long: &[
        ("ctty", Flag),
        ("fork", Flag),
        ("wait", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const TIME: Grammar = Grammar {
    short: "af:o:pqvV",
    long: &[
        ("append", Flag),
        ("format", Required),
        ("output", Required),
        ("portability", Flag),
        ("quiet", Flag),
        ("verbose", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const STDBUF: Grammar = Grammar {
    short: "i:o:e:",
    long: &[
        ("input", Required),
        ("output", Required),
        ("error", Required),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const TRACE: Grammar = Grammar {
    short: "a:AbcCdDe:E:fFhiI:kL:n:o:O:p:P:qrs:S:tTu:U:vVwx:X:yYzZ",
    long: &[
        ("output", Required),
        ("attach", Required),
        ("trace", Required),
        ("follow-forks", Flag),
        ("summary-only", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const UNBUFFER: Grammar = Grammar {
    short: "p",
    long: &[],
};

pub(super) const PROXYCHAINS: Grammar = Grammar {
    short: "qf:",
    long: &[],
};

pub(super) const FAKEROOT: Grammar = Grammar {
    short: "l:s:i:b:huv",
    long: &[
        ("lib", Required),
        ("faked", Required),
        ("unknown-is-real", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const UNSHARE: Grammar = Grammar {
    short: "fhVmuinpCTUrR:w:S:G:c",
    long: &[
        ("mount", Optional),
        ("uts", Optional),
        ("ipc", Optional),
        ("net", Optional),
        ("pid", Optional),
        ("user", Optional),
        ("cgroup", Optional),
        ("time", Optional),
        ("fork", Flag),
        ("kill-child", Optional),
        ("mount-proc", Optional),
        ("mount-binfmt", Optional),
        ("map-user", Required),
        ("map-group", Required),
        ("map-root-user", Flag),
        ("map-current-user", Flag),
        ("map-auto", Flag),
        ("map-users", Required),
        ("map-groups", Required),
        ("propagation", Required),
        ("setgroups", Required),
        ("keep-caps", Flag),
        ("setuid", Required),
        ("setgid", Required),
        ("root", Required),
        ("wd", Required),
        ("monotonic", Required),
        ("boottime", Required),
        ("load-interp", Required),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const NSENTER: Grammar = Grammar {
    short: "ahVt:m::u::i::n::p::C::U::T::S:G:r::w::W:FcZe",
    long: &[
        ("all", Flag),
        ("target", Required),
        ("mount", Optional),
        ("uts", Optional),
        ("ipc", Optional),
        ("net", Optional),
        ("pid", Optional),
        ("cgroup", Optional),
        ("user", Optional),
        ("time", Optional),
        ("setuid", Required),
        ("setgid", Required),
        ("preserve-credentials", Flag),
        ("root", Optional),
        ("wd", Optional),
        ("wdns", Required),
        ("env", Flag),
        ("no-fork", Flag),
        ("join-cgroup", Flag),
        ("follow-context", Flag),
        ("user-parent", Flag),
        ("keep-caps", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const IONICE: Grammar = Grammar {
    short: "c:n:p:P:u:tVh",
    long: &[
        ("class", Required),
        ("classdata", Required),
        ("pid", Required),
        ("pgid", Required),
        ("ignore", Flag),
        ("uid", Required),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const NICE: Grammar = Grammar {
    short: "n:",
    long: &[("adjustment", Required), ("help", Flag), ("version", Flag)],
};

pub(super) const TIMEOUT: Grammar = Grammar {
    short: "k:s:v",
    long: &[
        ("kill-after", Required),
        ("signal", Required),
        ("preserve-status", Flag),
        ("foreground", Flag),
        ("verbose", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const CHRT: Grammar = Grammar {
    short: "abdD:fiphmoP:T:rRvV",
    long: &[
        ("all-tasks", Flag),
        ("batch", Flag),
        ("deadline", Flag),
        ("fifo", Flag),
        ("idle", Flag),
        ("pid", Flag),
        ("help", Flag),
        ("max", Flag),
        ("other", Flag),
        ("rr", Flag),
        ("reset-on-fork", Flag),
        ("sched-runtime", Required),
        ("sched-period", Required),
        ("sched-deadline", Required),
        ("verbose", Flag),
        ("version", Flag),
    ],
};

pub(super) const TASKSET: Grammar = Grammar {
    short: "apchV",
    long: &[
        ("all-tasks", Flag),
        ("pid", Flag),
        ("cpu-list", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const FLOCK: Grammar = Grammar {
    short: "sexnoFuw:E:hV",
    long: &[
        ("shared", Flag),
        ("exclusive", Flag),
        ("unlock", Flag),
        ("nonblock", Flag),
        ("nb", Flag),
        ("timeout", Required),
        ("wait", Required),
        ("conflict-exit-code", Required),
        ("close", Flag),
        ("no-fork", Flag),
        ("verbose", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const CHROOT: Grammar = Grammar {
    short: "",
    long: &[
        ("groups", Required),
        ("userspec", Required),
        ("skip-chdir", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const SETPRIV: Grammar = Grammar {
    short: "dhV",
    long: &[
        ("dump", Flag),
        ("nnp", Flag),
        ("no-new-privs", Flag),
        ("ambient-caps", Required),
        ("inh-caps", Required),
        ("bounding-set", Required),
        ("ruid", Required),
        ("euid", Required),
        ("rgid", Required),
        ("egid", Required),
        ("reuid", Required),
        ("regid", Required),
        ("clear-groups", Flag),
        ("keep-groups", Flag),
        ("init-groups", Flag),
        ("groups", Required),
        ("securebits", Required),
        ("pdeathsig", Required),
        ("selinux-label", Required),
        ("apparmor-profile", Required),
        ("landlock-access", Required),
        ("landlock-rule", Required),
        ("reset-env", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const PRLIMIT: Grammar = Grammar {
    short: "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:hV",
    long: &[
        ("core", Optional),
        ("data", Optional),
        ("nice", Optional),
        ("fsize", Optional),
        ("sigpending", Optional),
        ("memlock", Optional),
        ("rss", Optional),
        ("nofile", Optional),
        ("msgqueue", Optional),
        ("rtprio", Optional),
        ("stack", Optional),
        ("cpu", Optional),
        ("nproc", Optional),
        ("as", Optional),
        ("locks", Optional),
        ("rttime", Optional),
        ("pid", Required),
        ("output", Required),
        ("noheadings", Flag),
        ("raw", Flag),
        ("verbose", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const WATCH: Grammar = Grammar {
    short: "bcCd::eghn:pq:rtvwx",
    long: &[
        ("beep", Flag),
        ("color", Flag),
        ("no-color", Flag),
        ("differences", Optional),
        ("errexit", Flag),
        ("chgexit", Flag),
        ("equexit", Required),
        ("interval", Required),
        ("precise", Flag),
        ("no-rerun", Flag),
        ("no-title", Flag),
        ("no-wrap", Flag),
        ("no-linewrap", Flag),
        ("exec", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const SCRIPT: Grammar = Grammar {
    short: "B:I:O:T:ac:eE:fm:o:qt::Vh",
    long: &[
        ("log-in", Required),
        ("log-out", Required),
        ("log-io", Required),
        ("log-timing", Required),
        ("timing", Optional),
        ("logging-format", Required),
        ("append", Flag),
        ("command", Required),
        ("return", Flag),
        ("echo", Required),
        ("flush", Flag),
        ("force", Flag),
        ("output-limit", Required),
        ("quiet", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};

pub(super) const SSH: Grammar = Grammar {
    short: "46AaCfGgKkMNnqsTtVvXxYyB:b:c:D:E:e:F:I:i:J:L:l:m:O:o:P:p:Q:R:S:W:w:",
    long: &[],
};

pub(super) const COMMAND: Grammar = Grammar {
    short: "pvV",
    long: &[],
};

pub(super) const EXEC: Grammar = Grammar {
    short: "cla:",
    long: &[],
};

pub(super) const XARGS: Grammar = Grammar {
    short: "0a:d:E:e::i::I:l::L:n:oprP:s:tx",
    long: &[
        ("null", Flag),
        ("arg-file", Required),
        ("delimiter", Required),
        ("eof", Optional),
        ("replace", Optional),
        ("max-lines", Required),
        ("max-args", Required),
        ("open-tty", Flag),
        ("interactive", Flag),
        ("no-run-if-empty", Flag),
        ("max-procs", Required),
        ("process-slot-var", Required),
        ("max-chars", Required),
        ("show-limits", Flag),
        ("verbose", Flag),
        ("exit", Flag),
        ("help", Flag),
        ("version", Flag),
    ],
};
