//! What a CLI keeps in a folder it must be able to write that makes it run programs
//! later, held as it was while the CLI ran.
//!
//! Some CLIs keep what they must write (their sign-in, per-project state, databases)
//! beside what makes them run a program the next time they start: `~/.claude.json`
//! holds Claude's MCP servers beside its project history, and Codex opens its databases
//! next to its `config.toml`. Landlock grants whole trees, so the wall must let such a
//! CLI write the file or folder, and cannot keep a program running inside from adding a
//! server there. A [`Guard`] notes what is held when the command starts — some keys of
//! a JSON file, or a whole file or folder — and, when the command is dropped, puts back
//! whatever changed, saying on stderr what tried.
//!
//! What is put back is written by codecrew, outside any wall, so nothing a program
//! inside left there may lead it elsewhere: links are read as links, never followed; a
//! file goes back through a new file renamed over whatever stands at its place (a link
//! swapped in is replaced, not written through); a folder on the way that became a link
//! is removed and made again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Guarded, Hold};

/// The most a whole folder held may weigh; past it, it is not held (and the log says so).
const MAX_HELD_BYTES: u64 = 4 * 1024 * 1024;
/// The most files a whole folder held may have.
const MAX_HELD_FILES: usize = 2_000;

/// What is held of one path, as the command found it.
#[derive(Debug)]
pub struct Guard {
    /// The CLI that ran (`claude`), for the warning.
    cli: String,
    path: PathBuf,
    /// Names under a held folder that are not held.
    except: &'static [&'static str],
    before: Before,
}

#[derive(Debug)]
enum Before {
    /// Each concrete key (its path of object keys) and its value (none for a missing
    /// file); None when the file could not be read as JSON (then nothing is put back:
    /// there is nothing to compare).
    Keys(
        &'static [&'static [&'static str]],
        Option<Vec<(Vec<String>, Value)>>,
        /// The file as it was (none when missing), put back whole if a link or anything
        /// but a regular file stands at its place afterwards.
        Option<Vec<u8>>,
    ),
    /// The files beneath the path (the path itself for a file: the empty name), with
    /// their bytes, and the names left out; None when it was too large to hold.
    Whole(Option<Files>),
}

type Files = BTreeMap<PathBuf, Entry>;

/// One entry of a held path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    /// A link (never followed), with what it points at.
    Link(PathBuf),
}

impl Guard {
    /// Notes what `guarded` holds now, for the run of `cli` about to start.
    pub fn new(guarded: &Guarded, cli: &str) -> Self {
        let path = guarded.path.clone();
        let before = match guarded.hold {
            Hold::Keys(keys) => {
                let bytes = read_regular(&path);
                let held = match &bytes {
                    // A file made during the run gets no guarded key either.
                    Ok(None) => Some(Vec::new()),
                    Err(_) => None,
                    Ok(Some(bytes)) => serde_json::from_slice(bytes)
                        .ok()
                        .map(|json: Value| collect(&json, keys)),
                };
                Before::Keys(keys, held, bytes.ok().flatten())
            }
            Hold::Whole => Before::Whole(files(&path, &[])),
            Hold::WholeBut(except) => Before::Whole(files(&path, except)),
        };
        if matches!(before, Before::Whole(None)) {
            tracing::debug!(path = %path.display(), "too large to hold for the run");
        }
        let except = match guarded.hold {
            Hold::WholeBut(except) => except,
            Hold::Keys(_) | Hold::Whole => &[],
        };
        Guard {
            cli: cli.to_owned(),
            path,
            except,
            before,
        }
    }

    /// Puts back what changed since [`Guard::new`]; the names of what did (keys joined
    /// with dots, or files relative to the path).
    pub fn restore(&self) -> Vec<String> {
        match &self.before {
            Before::Keys(keys, Some(before), whole) => {
                // Something other than a regular file at its place: the file goes back
                // whole, over it.
                let irregular = std::fs::symlink_metadata(&self.path)
                    .is_ok_and(|meta| !meta.file_type().is_file());
                if irregular {
                    let put_back = match whole {
                        Some(bytes) => put_file(&self.path, Path::new(""), bytes),
                        None => remove_entry(&self.path),
                    };
                    if let Err(error) = put_back {
                        tracing::warn!(file = %self.path.display(), %error, "could not put the file back");
                    }
                    return vec![self.path.display().to_string()];
                }
                self.restore_keys(keys, before)
            }
            Before::Whole(Some(before)) => self.restore_files(before),
            Before::Keys(_, None, _) | Before::Whole(None) => Vec::new(),
        }
    }

    fn restore_keys(
        &self,
        keys: &'static [&'static [&'static str]],
        before: &[(Vec<String>, Value)],
    ) -> Vec<String> {
        let Some(mut json) = read(&self.path) else {
            return Vec::new();
        };
        let after = collect(&json, keys);
        let mut changed = Vec::new();
        for (path, value) in &after {
            let earlier = before.iter().find(|(key, _)| key == path);
            if earlier.map(|(_, value)| value) != Some(value) {
                match earlier {
                    Some((_, value)) => set(&mut json, path, value.clone()),
                    None => remove(&mut json, path),
                }
                changed.push(path.join("."));
            }
        }
        for (path, value) in before {
            if !after.iter().any(|(key, _)| key == path) {
                set(&mut json, path, value.clone());
                changed.push(path.join("."));
            }
        }
        if !changed.is_empty()
            && let Err(error) = write_json(&self.path, &json)
        {
            tracing::warn!(file = %self.path.display(), %error, "could not put the guarded keys back");
        }
        changed
    }

    fn restore_files(&self, before: &Files) -> Vec<String> {
        let Some(after) = files(&self.path, self.except) else {
            return vec![self.path.display().to_string()];
        };
        let mut changed = Vec::new();
        // What was added or changed first (a link in the place of the held folder goes
        // with it), then what is missing.
        for (name, entry) in &after {
            if before.get(name) != Some(entry) {
                let file = self.file(name);
                let put_back = match before.get(name) {
                    Some(entry) => put_entry(&self.path, name, entry),
                    None => remove_entry(&file),
                };
                if let Err(error) = put_back {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        for (name, entry) in before {
            if !after.contains_key(name) {
                let file = self.file(name);
                if let Err(error) = put_entry(&self.path, name, entry) {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        changed
    }
}

impl Guard {
    /// The file of a held folder, or the held file itself (the empty name).
    fn file(&self, name: &Path) -> PathBuf {
        if name.as_os_str().is_empty() {
            self.path.clone()
        } else {
            self.path.join(name)
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let changed = self.restore();
        if !changed.is_empty() {
            let mut named = changed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if changed.len() > 5 {
                named.push_str(&format!(" and {} more", changed.len() - 5));
            }
            eprintln!(
                "codecrew: warning: {named} changed while {} ran ({}), which can make it run \
                 programs later; put back as it was",
                self.cli,
                self.path.display()
            );
        }
    }
}

/// The regular files at or beneath `path` with their bytes (the empty name for a file)
/// but those under the top-level names `except`; none for a missing path; None when
/// there are more than the limits allow.
fn files(path: &Path, except: &[&str]) -> Option<Files> {
    let mut found = Files::new();
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Some(found);
    };
    if meta.file_type().is_symlink() {
        found.insert(PathBuf::new(), Entry::Link(std::fs::read_link(path).ok()?));
        return Some(found);
    }
    if !meta.is_dir() {
        found.insert(PathBuf::new(), Entry::File(read_regular(path).ok()??));
        return Some(found);
    }
    let mut total = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(path.join(&relative)).ok()?.flatten() {
            let name = relative.join(entry.file_name());
            if except.iter().any(|skip| name == Path::new(skip)) {
                continue;
            }
            let kind = entry.file_type().ok()?;
            if found.len() >= MAX_HELD_FILES {
                return None;
            }
            if kind.is_dir() {
                pending.push(name);
            } else if kind.is_symlink() {
                found.insert(
                    name.clone(),
                    Entry::Link(std::fs::read_link(path.join(&name)).ok()?),
                );
            } else if kind.is_file() {
                total += entry.metadata().ok()?.len();
                if total > MAX_HELD_BYTES {
                    return None;
                }
                found.insert(
                    name.clone(),
                    Entry::File(read_regular(&path.join(&name)).ok()??),
                );
            }
        }
    }
    Some(found)
}

fn read(file: &Path) -> Option<Value> {
    let bytes = read_regular(file).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// The bytes of the regular file at `path`, opened without following a link (none when
/// it is missing; an error for a link, a FIFO or anything else).
fn read_regular(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some(bytes))
}

/// Puts `entry` back at `name` beneath `root` (the root itself for the empty name).
fn put_entry(root: &Path, name: &Path, entry: &Entry) -> std::io::Result<()> {
    match entry {
        Entry::File(bytes) => put_file(root, name, bytes),
        Entry::Link(target) => {
            let place = if name.as_os_str().is_empty() {
                root.to_path_buf()
            } else {
                real_dirs(root, name)?;
                root.join(name)
            };
            remove_entry(&place)?;
            std::os::unix::fs::symlink(target, place)
        }
    }
}

/// Writes `bytes` as the file `name` beneath `root` (the root itself for the empty
/// name): every folder on the way made a real one, the file written beside its place
/// and renamed over whatever stands there.
fn put_file(root: &Path, name: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let place = if name.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        real_dirs(root, name)?;
        root.join(name)
    };
    let dir = place.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    // A folder standing where the file goes cannot be renamed over: it goes first.
    if std::fs::symlink_metadata(&place).is_ok_and(|meta| meta.is_dir()) {
        std::fs::remove_dir_all(&place)?;
    }
    temp.persist(&place).map_err(|error| error.error)?;
    Ok(())
}

/// Makes `root` and every folder between it and `name`'s place real folders: a link or
/// a file standing in the way is removed, a missing folder made.
fn real_dirs(root: &Path, name: &Path) -> std::io::Result<()> {
    let mut dir = root.to_path_buf();
    let parents = name.parent().map(Path::components).into_iter().flatten();
    for part in std::iter::once(None).chain(parents.map(Some)) {
        if let Some(part) = part {
            dir.push(part);
        }
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&dir)?;
                std::fs::create_dir(&dir)?;
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir)?;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Removes what stands at `path` without following it: a file or a link; a folder that
/// was not there before stays (it holds nothing held, or its files were listed apart).
fn remove_entry(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// Written whole beside the file, then renamed over it (its permissions kept).
fn write_json(file: &Path, json: &Value) -> std::io::Result<()> {
    use std::io::Write;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    if let Ok(meta) = std::fs::metadata(file) {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    serde_json::to_writer_pretty(&mut temp, json)?;
    temp.flush()?;
    temp.persist(file).map_err(|error| error.error)?;
    Ok(())
}

/// Every concrete key the patterns name that the document has, with its value.
fn collect(json: &Value, patterns: &[&[&str]]) -> Vec<(Vec<String>, Value)> {
    let mut found = Vec::new();
    for pattern in patterns {
        walk(json, pattern, &mut Vec::new(), &mut found);
    }
    found
}

fn walk(
    value: &Value,
    pattern: &[&str],
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, Value)>,
) {
    let Some((first, rest)) = pattern.split_first() else {
        found.push((path.clone(), value.clone()));
        return;
    };
    let Some(object) = value.as_object() else {
        return;
    };
    let keys: Vec<&String> = if *first == "*" {
        object.keys().collect()
    } else {
        object.keys().filter(|key| key == first).collect()
    };
    for key in keys {
        path.push(key.clone());
        walk(&object[key], rest, path, found);
        path.pop();
    }
}

fn set(json: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = json;
    for key in parents {
        let Some(object) = here.as_object_mut() else {
            return;
        };
        here = object
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if let Some(object) = here.as_object_mut() {
        object.insert(last.clone(), value);
    }
}

fn remove(json: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = json;
    for key in parents {
        let Some(next) = here.get_mut(key) else {
            return;
        };
        here = next;
    }
    if let Some(object) = here.as_object_mut() {
        object.remove(last);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const KEYS: &[&[&str]] = &[&["mcpServers"], &["projects", "*", "mcpServers"]];

    fn guard(file: &Path) -> Guard {
        Guard::new(
            &Guarded {
                path: file.to_path_buf(),
                hold: Hold::Keys(KEYS),
            },
            "claude",
        )
    }

    #[test]
    fn guarded_keys_changed_during_a_run_are_put_back_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".claude.json");
        let original = json!({
            "mcpServers": {"mine": {"command": "my-server"}},
            "projects": {"/w": {"history": [1]}},
            "numStartups": 1
        });
        std::fs::write(&file, original.to_string()).unwrap();
        let guard = guard(&file);
        // The CLI's own update, and a program inside its wall adding servers.
        let mut changed = original.clone();
        changed["numStartups"] = json!(2);
        changed["mcpServers"]["evil"] = json!({"command": "/tmp/x"});
        changed["projects"]["/w"]["mcpServers"] = json!({"evil": {"command": "/tmp/x"}});
        changed["projects"]["/w"]["history"] = json!([1, 2]);
        std::fs::write(&file, changed.to_string()).unwrap();

        let mut restored = guard.restore();
        restored.sort();
        assert_eq!(restored, ["mcpServers", "projects./w.mcpServers"]);
        let now: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(now["mcpServers"], original["mcpServers"]);
        assert!(now["projects"]["/w"].get("mcpServers").is_none());
        assert_eq!(now["projects"]["/w"]["history"], json!([1, 2]));
        assert_eq!(now["numStartups"], 2);
        // Nothing more to put back.
        assert!(guard.restore().is_empty());
    }

    #[test]
    fn a_guarded_key_removed_comes_back_and_an_unchanged_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, r#"{"mcpServers":{"mine":{}},"x":1}"#).unwrap();
        let guard = guard(&file);
        assert!(guard.restore().is_empty());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            r#"{"mcpServers":{"mine":{}},"x":1}"#,
            "not rewritten"
        );
        std::fs::write(&file, r#"{"x":2}"#).unwrap();
        assert_eq!(guard.restore(), ["mcpServers"]);
        let now: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(now, json!({"mcpServers": {"mine": {}}, "x": 2}));
    }

    #[test]
    fn a_whole_folder_held_loses_what_was_added_and_gets_back_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".codex");
        std::fs::create_dir_all(home.join("rules")).unwrap();
        std::fs::write(home.join("rules/default.rules"), "mine").unwrap();
        let held = |path: PathBuf| {
            Guard::new(
                &Guarded {
                    path,
                    hold: Hold::Whole,
                },
                "codex",
            )
        };
        let rules = held(home.join("rules"));
        let config = held(home.join("config.toml"));
        std::fs::write(home.join("rules/default.rules"), "theirs").unwrap();
        std::fs::write(home.join("rules/evil.rules"), "evil").unwrap();
        std::fs::write(home.join("config.toml"), "[mcp_servers.evil]").unwrap();
        assert_eq!(rules.restore().len(), 2);
        assert_eq!(
            std::fs::read_to_string(home.join("rules/default.rules")).unwrap(),
            "mine"
        );
        assert!(!home.join("rules/evil.rules").exists());
        assert_eq!(config.restore().len(), 1);
        assert!(
            !home.join("config.toml").exists(),
            "it was not there before"
        );
        assert!(rules.restore().is_empty() && config.restore().is_empty());
    }

    #[test]
    fn a_link_swapped_in_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join(".codex");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(home.join("rules")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(home.join("config.toml"), "mine").unwrap();
        std::fs::write(home.join("rules/default.rules"), "rules").unwrap();
        std::fs::write(outside.join("bashrc"), "the user's").unwrap();
        let held = |path: PathBuf| {
            Guard::new(
                &Guarded {
                    path,
                    hold: Hold::Whole,
                },
                "codex",
            )
        };
        let config = held(home.join("config.toml"));
        let rules = held(home.join("rules"));
        // The held file and the held folder, each swapped for a link out.
        std::fs::remove_file(home.join("config.toml")).unwrap();
        std::os::unix::fs::symlink(outside.join("bashrc"), home.join("config.toml")).unwrap();
        std::fs::rename(home.join("rules"), dir.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&outside, home.join("rules")).unwrap();
        assert_eq!(config.restore().len(), 1);
        assert_eq!(rules.restore().len(), 2);
        assert_eq!(
            std::fs::read_to_string(outside.join("bashrc")).unwrap(),
            "the user's",
            "nothing written through the link"
        );
        assert!(!outside.join("default.rules").exists());
        assert!(
            !std::fs::symlink_metadata(home.join("config.toml"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(home.join("config.toml")).unwrap(),
            "mine"
        );
        assert!(
            std::fs::symlink_metadata(home.join("rules"))
                .unwrap()
                .is_dir()
        );
        assert_eq!(
            std::fs::read_to_string(home.join("rules/default.rules")).unwrap(),
            "rules"
        );

        // A JSON file held by its keys, swapped for a link: put back whole.
        let settings = home.join("settings.json");
        std::fs::write(&settings, r#"{"mcpServers":{}}"#).unwrap();
        let keys = Guard::new(
            &Guarded {
                path: settings.clone(),
                hold: Hold::Keys(KEYS),
            },
            "gemini",
        );
        std::fs::remove_file(&settings).unwrap();
        std::os::unix::fs::symlink(outside.join("bashrc"), &settings).unwrap();
        assert_eq!(keys.restore().len(), 1);
        assert_eq!(
            std::fs::read_to_string(&settings).unwrap(),
            r#"{"mcpServers":{}}"#
        );
        assert_eq!(
            std::fs::read_to_string(outside.join("bashrc")).unwrap(),
            "the user's"
        );
    }

    #[test]
    fn what_the_cli_itself_rewrites_in_a_held_folder_is_left_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let skills = dir.path().join("skills");
        let guard = Guard::new(
            &Guarded {
                path: skills.clone(),
                hold: Hold::WholeBut(&[".system"]),
            },
            "codex",
        );
        std::fs::create_dir_all(skills.join(".system/imagegen")).unwrap();
        std::fs::write(skills.join(".system/imagegen/SKILL.md"), "bundled").unwrap();
        std::fs::create_dir_all(skills.join("evil")).unwrap();
        std::fs::write(skills.join("evil/SKILL.md"), "planted").unwrap();
        assert_eq!(guard.restore().len(), 1);
        assert!(skills.join(".system/imagegen/SKILL.md").exists());
        assert!(!skills.join("evil/SKILL.md").exists());
    }

    #[test]
    fn a_file_made_during_the_run_loses_its_guarded_keys_and_one_not_json_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("made.json");
        let guard = guard(&file);
        std::fs::write(&file, r#"{"mcpServers":{"new":{}},"x":1}"#).unwrap();
        assert_eq!(guard.restore(), ["mcpServers"]);
        let now: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(now, json!({"x": 1}));

        let garbled = dir.path().join("garbled.json");
        std::fs::write(&garbled, "{not json").unwrap();
        let guard = self::guard(&garbled);
        std::fs::write(&garbled, r#"{"mcpServers":{"new":{}}}"#).unwrap();
        assert!(guard.restore().is_empty());
    }
}
