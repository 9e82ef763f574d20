//! The names that make a path sensitive (to read) or protected (to write): the tables
//! [`super::sensitive`], [`super::protected`] and their globs read.

/// Directories whose every file is sensitive, wherever they are.
pub(super) const SENSITIVE_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".gcloud",
    "gcloud",
    ".password-store",
    // Browser profiles (saved logins, cookies, their keys) and the mail client's.
    ".mozilla",
    ".thunderbird",
    // Copilot's sign-in (`apps.json`, `hosts.json`).
    "github-copilot",
    // codecrew's own threads and audit log: a thread quotes every file the model read,
    // the secrets the user approved included, which would otherwise come back later
    // without a question (and in `query`, where none is asked).
    ".codecrew",
];

/// Directory paths (a sequence of components, anywhere in a path) whose every file is
/// sensitive, where the last name alone would also take a project's own folder
/// (`chromium/` in a checkout of it).
pub(super) const SENSITIVE_DIR_PATHS: &[&[&str]] = &[
    &[".config", "google-chrome"],
    &[".config", "google-chrome-beta"],
    &[".config", "chromium"],
    &[".config", "BraveSoftware"],
    &[".config", "microsoft-edge"],
    &[".config", "vivaldi"],
    &[".config", "opera"],
    &["snap", "firefox"],
    &["snap", "chromium"],
    &[".pki", "nssdb"],
    &[".local", "share", "keyrings"],
    // The journal of what codecrew holds for the CLIs (`$XDG_STATE_HOME/codecrew/held`):
    // copies of what it holds, `~/.claude.json`'s MCP servers and their tokens among them.
    &["codecrew", "held"],
];

/// File paths (the last components of a path) that are sensitive where the file name
/// alone is an ordinary project file (`settings.xml`, `gradle.properties`).
pub(super) const SENSITIVE_FILE_PATHS: &[&[&str]] = &[
    &["gh", "hosts.yml"],
    &["glab-cli", "config.yml"],
    &[".config", "hub"],
    &[".m2", "settings.xml"],
    &[".gradle", "gradle.properties"],
    // The bearer token of `codecrew mcp --http` (`$XDG_STATE_HOME/codecrew/mcp-token`).
    &["codecrew", "mcp-token"],
    // The key that seals the user's threads (`$XDG_STATE_HOME/codecrew/thread-key`):
    // whoever reads it can make a thread pass for the user's.
    &["codecrew", "thread-key"],
    // The key that seals the journal's records (`$XDG_STATE_HOME/codecrew/journal-key`):
    // whoever reads it can make a record pass for one codecrew wrote.
    &["codecrew", "journal-key"],
    // The chat's history (`$XDG_STATE_HOME/codecrew/chat_history`): every line typed.
    &["codecrew", "chat_history"],
    // The run store (`$XDG_STATE_HOME/codecrew/runs.db`, with SQLite's journal files):
    // every task, answer and tool call of the user's runs, in every workspace.
    &["codecrew", "runs.db"],
    &["codecrew", "runs.db-wal"],
    &["codecrew", "runs.db-shm"],
    &["codecrew", "runs.db-journal"],
];

/// Whole file names that are sensitive.
pub(super) const SENSITIVE_NAMES: &[&str] = &[
    ".env",
    ".envrc",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".git-credentials",
    ".htpasswd",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    "credentials",
    "credentials.json",
    "credentials.db",
    "authorized_keys",
    "shadow",
    "gshadow",
    "master.key",
    "kubeconfig",
    ".vault-token",
    ".boto",
    ".s3cfg",
    ".terraformrc",
    ".dockercfg",
    ".authinfo",
    ".passwd-s3fs",
    ".mysql_history",
    ".sqlite_history",
    "token.json",
    "auth.json",
    // Package registries' tokens (cargo, yarn, Maven, Terraform) and cloud sync keys.
    "credentials.toml",
    ".yarnrc",
    ".yarnrc.yml",
    "settings-security.xml",
    "credentials.tfrc.json",
    "rclone.conf",
    // The agent CLIs' own sign-in (Gemini's and Qwen Code's; Claude's `.credentials.json`
    // and Codex's and opencode's `auth.json` are named above).
    "oauth_creds.json",
    // What shells and interpreters remember: typed commands, passwords among them.
    ".sh_history",
    ".history",
    ".histfile",
    "fish_history",
    ".node_repl_history",
    ".ts_node_repl_history",
    ".irb_history",
    ".pry_history",
    ".rediscli_history",
    ".dbshell",
    ".sqlplus_history",
    ".lesshst",
    ".viminfo",
    // Browsers' saved logins and cookies, and their keys, wherever the profile lies.
    "logins.json",
    "signons.sqlite",
    "key3.db",
    "key4.db",
    "cookies.sqlite",
    // Chrome's, spelt as Chrome spells them for the globs; matched in any case.
    "Login Data",
    "Login Data For Account",
];

/// Extensions of source code and documentation: `secrets.rs` or `service-account.md` is
/// code or prose about secrets, not a store of them (and the read-only sandbox would
/// otherwise hide it from `git status`).
pub(super) const SOURCE_OR_DOCS: &[&str] = &[
    "rs", "py", "go", "js", "mjs", "cjs", "ts", "jsx", "tsx", "java", "kt", "scala", "rb", "php",
    "c", "h", "cc", "cpp", "hpp", "cs", "swift", "ex", "exs", "erl", "hs", "ml", "md", "rst",
    "adoc", "html", "css",
];

/// Endings of backup copies, taken off before a name is matched.
pub(super) const BACKUP_SUFFIXES: &[&str] =
    &[".bak", ".old", ".orig", ".backup", ".save", ".swp", "~"];

/// File-name prefixes that are sensitive (`.env.local`, `id_rsa.pub`, `secrets.yaml`).
pub(super) const SENSITIVE_PREFIXES: &[&str] = &[
    ".env",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "secrets.",
    "secret.",
    "service-account",
    "kubeconfig",
    "client_secret",
    "sa-key",
];

/// File-name suffixes that are sensitive (`prod.env`, `server.pem`, `app.key`).
pub(super) const SENSITIVE_SUFFIXES: &[&str] = &[
    ".env",
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".keystore",
    ".jks",
    ".kdbx",
    ".ppk",
    ".asc",
    ".gpg",
    ".tfstate",
    ".tfvars",
    "credentials.json",
    "-key.json",
    "_key.json",
];

/// Directories whose every file is protected from writes.
pub(super) const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".codecrew",
    ".husky",
    ".vscode",
    ".idea",
    ".devcontainer",
    // The agent CLIs' own project configuration: hooks, MCP servers, plugins, settings.
    ".claude",
    ".gemini",
    ".qwen",
    ".codex",
    ".opencode",
];

/// Protected directory paths (a sequence of components).
pub(super) const PROTECTED_DIR_PATHS: &[&[&str]] = &[
    &[".github", "workflows"],
    &[".github", "actions"],
    &[".github", "copilot"],
    &[".github", "hooks"],
];

/// Whole file names protected from writes.
pub(super) const PROTECTED_NAMES: &[&str] = &[
    "codecrew.toml",
    ".codecrew.toml",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
    ".gitconfig",
    ".gitmodules",
    ".gitattributes",
    ".gitlab-ci.yml",
    ".pre-commit-config.yaml",
    ".mcp.json",
    "mcp.json",
    "opencode.json",
    "opencode.jsonc",
    ".clauderc",
    "claude.md",
    "agents.md",
    "gemini.md",
    "qwen.md",
];
