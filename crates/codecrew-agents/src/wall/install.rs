//! Where a CLI is installed, as the system will run it: the folders its wall must let it
//! read and execute.
//!
//! A CLI found on PATH is rarely the program that runs. It may be a link into a package
//! folder (npm, Bun, Homebrew, Claude's native installer), a script whose `#!` line
//! names an interpreter found on PATH in turn (`node`, a virtualenv's `python`, whose
//! standard library lies with its base Python), or a version manager's shim that runs
//! the manager, which picks an installation of its own at run time (asdf, mise, Volta,
//! pyenv). This module follows links to their real paths, `#!` interpreters (through
//! `env`) to theirs, a virtualenv to its base Python (`pyvenv.cfg`), and recognises the
//! folders of the common version managers and package managers, granting those folders
//! whole (read only), never the home directory.
//!
//! A path merely written in a script is granted only when it lies in such a folder: a
//! script on PATH that names `~/.ssh` gets nothing for it.

use std::path::{Path, PathBuf};

use codecrew_policy::sandbox;

/// How many interpreters deep a chain of scripts is followed (`claude` -> `node` shim ->
/// the manager's own script).
const MAX_DEPTH: usize = 4;

/// How many installed versions of one tool a manager's folder is looked through for.
const MAX_VERSIONS: usize = 32;

/// How much of a script is read for its `#!` line and the paths it names.
const SCRIPT_HEAD: usize = 4096;

/// What the wall grants a CLI's installation.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Installation {
    /// Folders read and executed whole.
    pub dirs: Vec<PathBuf>,
    /// Single files read (a version manager's choice of versions: `~/.tool-versions`).
    pub files: Vec<PathBuf>,
}

/// The executable `name` names: a path as it is, a bare name looked up on `PATH`, as a
/// shell would.
pub fn find_program(name: &str) -> Option<PathBuf> {
    which::which(name).ok()
}

/// The version or package manager folder `path` lies in, if any (to be named whole in
/// `cli_read` when the wall refused it).
pub fn manager_folder(path: &Path) -> Option<PathBuf> {
    let home = super::home();
    Manager::all(home.as_deref())
        .into_iter()
        .flat_map(|manager| manager.dirs)
        .find(|dir| path.starts_with(dir))
}

/// The installation of `program` (as found on PATH), and of the programs of the same
/// name further on PATH, which a wrapper in front of the CLI (a logging script) goes on
/// to run.
pub fn installation(program: &Path) -> Installation {
    let home = super::home();
    let managers = Manager::all(home.as_deref());
    let mut found = Installation::default();
    let mut programs = vec![program.to_path_buf()];
    if let Some(name) = program.file_name()
        && let Ok(more) = which::which_all(name)
    {
        // The program itself is usually the first found: followed once.
        programs.extend(more.filter(|found| found != program));
    }
    for program in programs {
        follow(&program, home.as_deref(), &managers, &mut found, 0);
    }
    for list in [&mut found.dirs, &mut found.files] {
        list.sort();
        list.dedup();
    }
    found
}

/// Adds what running `program` reads: its own folder, the manager folders it lies in
/// or names, and its interpreter's, recursively.
fn follow(
    program: &Path,
    home: Option<&Path>,
    managers: &[Manager],
    found: &mut Installation,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let real = program
        .canonicalize()
        .unwrap_or_else(|_| program.to_path_buf());
    // The shim's own place (`~/.asdf/shims/claude`) and where it leads (mise's shims are
    // links to the `mise` program).
    let name = program
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    for path in [program, real.as_path()] {
        for manager in managers.iter().filter(|manager| manager.holds(path)) {
            manager.grant(found);
            // What the shim will run: each version the manager installed of it.
            for installed in name.iter().flat_map(|name| manager.installed(name)) {
                if installed != program && installed != real {
                    follow(&installed, home, managers, found, depth + 1);
                }
            }
        }
    }
    found.dirs.push(sandbox::install_root(&real, home));
    if let Some(base) = virtualenv_base(&real) {
        follow(&base, home, managers, found, depth + 1);
    }
    let Some(head) = script_head(&real) else {
        return;
    };
    for path in absolute_paths(&head) {
        for manager in managers.iter().filter(|manager| manager.holds(&path)) {
            manager.grant(found);
        }
    }
    if let Some(interpreter) = interpreter(&head) {
        follow(&interpreter, home, managers, found, depth + 1);
    }
}

/// The first bytes of `path` when it is a script (`#!`).
fn script_head(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = vec![0u8; SCRIPT_HEAD];
    let read = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    head.truncate(read);
    if !head.starts_with(b"#!") {
        return None;
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The interpreter a script's `#!` line names (through `env`, looked up on PATH).
fn interpreter(head: &str) -> Option<PathBuf> {
    let line = head.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if Path::new(first)
        .file_name()
        .is_some_and(|name| name == "env")
    {
        let name = words.find(|word| !word.starts_with('-'))?;
        find_program(name)
    } else {
        Some(PathBuf::from(first))
    }
}

/// The absolute paths a script names (quoted or not), for the manager folders among them.
fn absolute_paths(text: &str) -> Vec<PathBuf> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ':' | ';' | '`'))
        .filter(|word| word.starts_with('/') && word.len() > 1)
        .map(PathBuf::from)
        .collect()
}

/// The Python a virtualenv's `python` was made from (`home` in `pyvenv.cfg` beside its
/// `bin`), whose standard library the venv reads.
fn virtualenv_base(program: &Path) -> Option<PathBuf> {
    let prefix = program.parent()?.parent()?;
    let config = std::fs::read_to_string(prefix.join("pyvenv.cfg")).ok()?;
    let home = config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    ["python3", "python"]
        .iter()
        .map(|name| home.join(name))
        .find(|python| python.exists())
}

/// How much of a `.pth` or `direct_url.json` file is read.
const SMALL_FILE: u64 = 64 * 1024;

/// A folder an installation loads code from that lies outside its own folders, so the
/// wall does not grant it: never granted on its own (a project's `.venv` could name any
/// folder), only named when the wall refused the CLI, for the user to grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceOutside {
    pub folder: PathBuf,
    /// What it is, for the user: "the source of llm-probe, installed with `pip install
    /// -e`", or the `.pth` file that names it.
    pub what: String,
}

/// The folders outside `program`'s installation that it loads code from: the sources of
/// a virtualenv's editable installs (`pip install -e`: the `file://` URL of PEP 610's
/// `direct_url.json`), and the folders its `.pth` files add to the path.
pub fn sources_outside(program: &Path) -> Vec<SourceOutside> {
    let installed = installation(program).dirs;
    let mut found: Vec<SourceOutside> = Vec::new();
    for dir in &installed {
        for site in site_packages(dir) {
            for source in editable_sources(&site) {
                let inside = installed.iter().any(|dir| source.folder.starts_with(dir));
                if !inside && !found.iter().any(|known| known.folder == source.folder) {
                    found.push(source);
                }
            }
        }
    }
    found
}

/// A Python prefix's `lib/python*/site-packages` folders.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python"))
        .map(|entry| entry.path().join("site-packages"))
        .filter(|site| site.is_dir())
        .collect();
    found.sort();
    found
}

/// The editable sources and `.pth` folders of one site-packages folder.
fn editable_sources(site: &Path) -> Vec<SourceOutside> {
    let Ok(entries) = std::fs::read_dir(site) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        if let Some(package) = name.strip_suffix(".dist-info") {
            let package = package
                .split('-')
                .next()
                .unwrap_or(package)
                .replace('_', "-");
            let Some(text) = read_small(&site.join(&name).join("direct_url.json")) else {
                continue;
            };
            if let Some(folder) = editable_folder(&text) {
                found.push(SourceOutside {
                    folder,
                    what: format!("the source of {package}, installed with `pip install -e`"),
                });
            }
        } else if name.ends_with(".pth") {
            let Some(text) = read_small(&site.join(&name)) else {
                continue;
            };
            // A line that is an absolute folder is added to the path; `import` lines run
            // code (setuptools' editable finders, found through direct_url.json instead).
            for line in text.lines().map(str::trim) {
                let folder = Path::new(line);
                if line.starts_with('/') && folder.is_dir() {
                    found.push(SourceOutside {
                        folder: folder.to_path_buf(),
                        what: format!("a folder {name} puts on Python's path"),
                    });
                }
            }
        }
    }
    found
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(SMALL_FILE)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The folder of an editable install's `direct_url.json` (PEP 610): `dir_info.editable`
/// and a `file://` URL, its percent-escapes decoded.
fn editable_folder(direct_url: &str) -> Option<PathBuf> {
    let value: serde_json::Value = serde_json::from_str(direct_url).ok()?;
    if value.pointer("/dir_info/editable") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let path = value.get("url")?.as_str()?.strip_prefix("file://")?;
    let decoded = percent_decoded(path)?;
    decoded.starts_with('/').then(|| PathBuf::from(decoded))
}

/// `%2F`-style escapes decoded; None when they do not make UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// A version or package manager's folders: a program in one of them runs what the
/// manager chose, from anywhere in them.
#[derive(Debug)]
struct Manager {
    /// Folders granted whole (the manager's own, its installs, its shims).
    dirs: Vec<PathBuf>,
    /// Its settings of which version runs (read when present).
    files: Vec<PathBuf>,
    /// Where, beneath its first folder, it keeps each installed version of a program
    /// (`*` any one name, `{name}` the program's): each is followed like the program
    /// itself, since an installed version may be a link to elsewhere.
    installs: &'static [&'static str],
}

impl Manager {
    /// The managers as this user has them laid out (their variables, else their
    /// defaults); a folder that is or holds the home directory is never one.
    fn all(home: Option<&Path>) -> Vec<Manager> {
        let var = super::custom_dir;
        let in_home = |relative: &str| home.map(|home| home.join(relative));
        let data = var("XDG_DATA_HOME").or_else(|| in_home(".local/share"));
        let config = var("XDG_CONFIG_HOME").or_else(|| in_home(".config"));
        let data_dir = |name: &str| data.as_ref().map(|dir| dir.join(name));
        let config_dir = |name: &str| config.as_ref().map(|dir| dir.join(name));
        let managers = [
            // asdf: its shims run `asdf exec`, which reads the version files.
            Manager {
                dirs: present([
                    var("ASDF_DATA_DIR").or_else(|| in_home(".asdf")),
                    var("ASDF_DIR"),
                ]),
                files: present([
                    var("ASDF_CONFIG_FILE").or_else(|| in_home(".asdfrc")),
                    in_home(".tool-versions"),
                ]),
                installs: &["installs/*/*/bin/{name}"],
            },
            // mise: its shims are links to the `mise` program.
            Manager {
                dirs: present([
                    var("MISE_DATA_DIR").or_else(|| data_dir("mise")),
                    var("MISE_CONFIG_DIR").or_else(|| config_dir("mise")),
                ]),
                files: present([in_home(".tool-versions")]),
                installs: &["installs/*/*/bin/{name}"],
            },
            // Volta: its shims are copies of `volta-shim`, which runs `tools/image/...`.
            Manager {
                dirs: present([var("VOLTA_HOME").or_else(|| in_home(".volta"))]),
                files: Vec::new(),
                installs: &[
                    "tools/image/packages/{name}/bin/{name}",
                    "tools/image/node/*/bin/{name}",
                ],
            },
            // pyenv: its shims run `pyenv exec`.
            Manager {
                dirs: present([var("PYENV_ROOT").or_else(|| in_home(".pyenv"))]),
                files: present([in_home(".python-version")]),
                installs: &["versions/*/bin/{name}"],
            },
            Manager {
                dirs: present([var("NVM_DIR").or_else(|| in_home(".nvm"))]),
                files: Vec::new(),
                installs: &["versions/node/*/bin/{name}"],
            },
            Manager {
                dirs: present([var("FNM_DIR").or_else(|| data_dir("fnm"))]),
                files: Vec::new(),
                installs: &["node-versions/*/installation/bin/{name}"],
            },
            // pnpm's global bin holds scripts that run its store's packages.
            Manager {
                dirs: present([var("PNPM_HOME").or_else(|| data_dir("pnpm"))]),
                files: Vec::new(),
                installs: &[],
            },
            Manager {
                dirs: present([var("BUN_INSTALL").or_else(|| in_home(".bun"))]),
                files: Vec::new(),
                installs: &[],
            },
            // Homebrew on Linux: its programs link against its own libraries.
            Manager {
                dirs: present([
                    var("HOMEBREW_PREFIX"),
                    Some(PathBuf::from("/home/linuxbrew/.linuxbrew")),
                    in_home(".linuxbrew"),
                ]),
                files: Vec::new(),
                installs: &[],
            },
            // uv's tools and the Pythons it installs; pipx's venvs.
            Manager {
                dirs: present([
                    var("UV_TOOL_DIR"),
                    var("UV_PYTHON_INSTALL_DIR"),
                    data_dir("uv"),
                ]),
                files: Vec::new(),
                installs: &[],
            },
            Manager {
                dirs: present([var("PIPX_HOME"), data_dir("pipx"), in_home(".local/pipx")]),
                files: Vec::new(),
                installs: &[],
            },
        ];
        let too_wide =
            |dir: &Path| dir == Path::new("/") || home.is_some_and(|home| home.starts_with(dir));
        managers
            .into_iter()
            .map(|mut manager| {
                manager.dirs.retain(|dir| !too_wide(dir));
                manager
            })
            .filter(|manager| !manager.dirs.is_empty())
            .collect()
    }

    /// Whether `path` lies in one of the manager's folders.
    fn holds(&self, path: &Path) -> bool {
        self.dirs.iter().any(|dir| path.starts_with(dir))
    }

    fn grant(&self, found: &mut Installation) {
        found
            .dirs
            .extend(self.dirs.iter().filter(|dir| dir.exists()).cloned());
        found
            .files
            .extend(self.files.iter().filter(|file| file.is_file()).cloned());
    }

    /// Each installed version of the program `name` the manager keeps.
    fn installed(&self, name: &str) -> Vec<PathBuf> {
        let Some(root) = self.dirs.first() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for pattern in self.installs {
            let mut level = vec![root.clone()];
            for part in pattern.split('/') {
                let part = part.replace("{name}", name);
                level = level
                    .into_iter()
                    .flat_map(|dir| match part.as_str() {
                        "*" => std::fs::read_dir(&dir)
                            .map(|entries| {
                                entries
                                    .flatten()
                                    .map(|entry| entry.path())
                                    .take(MAX_VERSIONS)
                                    .collect()
                            })
                            .unwrap_or_default(),
                        name => vec![dir.join(name)],
                    })
                    .filter(|path| path.exists())
                    .collect();
            }
            found.extend(level);
        }
        found
    }
}

/// The paths of `candidates` that are known (a variable set, a home directory).
fn present<const N: usize>(candidates: [Option<PathBuf>; N]) -> Vec<PathBuf> {
    candidates.into_iter().flatten().collect()
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
