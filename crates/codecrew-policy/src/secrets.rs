//! Which environment variables are secrets, the scrubbed environment of the programs tools
//! start, and keeping codecrew's own copy of the secrets out
//! of `/proc/<codecrew>/environ`.
//!
//! Commands get an environment without secrets (see `run_command`), but the kernel keeps
//! the environment codecrew was started with in its memory, and
//! `/proc/<codecrew>/environ` shows it. Making codecrew non-dumpable is not enough: on
//! current kernels a process of the same user reads that file without CAP_SYS_PTRACE,
//! and Landlock does not stop it either. An approved `python3 -c "…getppid()…"` or a
//! glob loop over `/proc/[0-9]*/environ` would print the user's API keys.
//!
//! So at start-up codecrew moves every secret to the heap (`setenv` makes a copy, which
//! the agent CLIs still inherit) and zeroes the value in the initial block, the memory
//! that file reads. The names stay visible; the values do not.

use std::ffi::{CStr, OsStr, OsString, c_char};
use std::os::unix::ffi::OsStrExt;

/// Names that carry credentials by convention. Matched without regard to case, since
/// `github_token` is as secret as `GITHUB_TOKEN`.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    name.ends_with("_API_KEY")
        || name.ends_with("_KEY")
        || name.contains("ACCESS_KEY")
        || name.contains("PRIVATE_KEY")
        || name.contains("TOKEN")
        || name.contains("SECRET")
        || name.contains("PASSWORD")
        || name.contains("PASSWD")
        || name.contains("CREDENTIAL")
        || name.contains("COOKIE")
        || name.contains("_AUTH")
        || name.contains("PASSPHRASE")
        || name.contains("JWT")
        || name.contains("DSN")
        || name.contains("WEBHOOK")
        || name.ends_with("_PAT")
        || name.ends_with("_PWD")
        || name.ends_with("_PASS")
        || (name.ends_with("_URL")
            && [
                "DATABASE", "DB_", "REDIS", "MONGO", "POSTGRES", "MYSQL", "AMQP", "BROKER",
            ]
            .iter()
            .any(|kind| name.contains(kind)))
        || name == "SSH_AUTH_SOCK"
        || name == "GPG_AGENT_INFO"
}

/// The environment for a command: the given variables minus the secrets.
pub fn scrub_env<I, K, V>(vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    scrub_env_with(vars, &[])
}

/// The environment for a command: the given variables minus the secrets and the
/// variables that change how shells and programs start, except those named in `pass`
/// (the config's `pass_env`, exact names).
pub fn scrub_env_with<I, K, V>(vars: I, pass: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    vars.into_iter()
        .map(|(key, value)| (key.into(), value.into()))
        .filter(|(key, _)| {
            let name = key.to_string_lossy();
            !(is_secret(&name) || is_start_up_hook(&name)) || pass.iter().any(|kept| *kept == name)
        })
        .collect()
}

/// Variables that make bash or the loader run code before the command does.
pub(crate) fn is_start_up_hook(name: &str) -> bool {
    name.starts_with("BASH_FUNC_")
        || matches!(
            name,
            "BASH_ENV"
                | "ENV"
                | "LD_PRELOAD"
                | "LD_AUDIT"
                | "PROMPT_COMMAND"
                | "SHELLOPTS"
                | "BASHOPTS"
        )
}

#[allow(unsafe_code)]
unsafe extern "C" {
    /// The C library's environment, a null-terminated array of `NAME=value` strings.
    static environ: *const *mut c_char;
}

/// One secret as it sits in the initial environment block.
struct InitialEntry {
    /// The `NAME=value` string the kernel put on the stack at exec.
    entry: *mut c_char,
    name: OsString,
    value: OsString,
}

/// Moves the values of secret variables out of the initial environment block, so that
/// `/proc/<codecrew>/environ` shows `NAME=` followed by zero bytes. Returns how many
/// values it hid.
///
/// Call it first thing in `main`, before any thread starts: it changes the environment.
#[allow(unsafe_code)]
pub fn hide_initial_secrets() -> usize {
    let secrets = initial_secrets();
    for secret in &secrets {
        // SAFETY: `main` calls this before it starts the runtime or any other thread, so
        // nothing reads the environment concurrently.
        unsafe { std::env::set_var(&secret.name, &secret.value) };
    }
    let still_used = entries();
    let mut hidden = 0;
    for secret in secrets {
        if still_used.contains(&secret.entry) {
            // The C library kept the original string (it should not): leave it alone.
            continue;
        }
        // SAFETY: `entry` points to a NUL-terminated `NAME=value` string that the kernel
        // placed in this process's writable stack at exec. `setenv` replaced it with a
        // heap copy, and `environ` no longer points to it (checked above), so nothing
        // else reads it; overwriting the value bytes in place, short of the terminating
        // NUL, keeps it a valid C string.
        unsafe {
            let length = CStr::from_ptr(secret.entry).to_bytes().len();
            let value_start = secret.name.len() + 1;
            if length > value_start {
                std::ptr::write_bytes(secret.entry.add(value_start), 0, length - value_start);
            }
        }
        hidden += 1;
    }
    hidden
}

/// The secret variables of the environment and the strings that hold them.
#[allow(unsafe_code)]
fn initial_secrets() -> Vec<InitialEntry> {
    entries()
        .into_iter()
        .filter_map(|entry| {
            // SAFETY: every entry of `environ` is a NUL-terminated string.
            let bytes = unsafe { CStr::from_ptr(entry) }.to_bytes();
            let split = bytes.iter().position(|&byte| byte == b'=')?;
            let (name, value) = (&bytes[..split], &bytes[split + 1..]);
            let name = OsStr::from_bytes(name);
            (!name.is_empty() && is_secret(&name.to_string_lossy())).then(|| InitialEntry {
                entry,
                name: name.to_owned(),
                value: OsStr::from_bytes(value).to_owned(),
            })
        })
        .collect()
}

/// The pointers in `environ`, in order.
#[allow(unsafe_code)]
fn entries() -> Vec<*mut c_char> {
    let mut found = Vec::new();
    // SAFETY: `environ` is null or a null-terminated array of pointers, and no other
    // thread changes it while this runs (see `hide_initial_secrets`).
    unsafe {
        let mut cursor = environ;
        if cursor.is_null() {
            return found;
        }
        while !(*cursor).is_null() {
            found.push(*cursor);
            cursor = cursor.add(1);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::is_secret;

    #[test]
    fn secret_names() {
        for name in [
            "OPENAI_API_KEY",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "SSH_AUTH_SOCK",
            "NPM_AUTH",
            "DB_PASSWORD",
            "DATABASE_URL",
            "REDIS_URL",
            "GH_PAT",
            "MYSQL_PWD",
            "SENTRY_DSN",
            "SLACK_WEBHOOK",
            "CI_JOB_JWT",
            "SSH_PASSPHRASE",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "API_KEY_HINT",
            "TERM",
            "LANG",
            "PWD",
            "OLDPWD",
            "DOCS_URL",
        ] {
            assert!(!is_secret(name), "{name}");
        }
    }
}
