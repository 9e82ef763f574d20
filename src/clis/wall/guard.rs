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
    ),
    /// The files beneath the path (the path itself for a file: the empty name), with
    /// their bytes, and the names left out; None when it was too large to hold.
    Whole(Option<Files>),
}

type Files = BTreeMap<PathBuf, Vec<u8>>;

impl Guard {
    /// Notes what `guarded` holds now, for the run of `cli` about to start.
    pub fn new(guarded: &Guarded, cli: &str) -> Self {
        let path = guarded.path.clone();
        let before = match guarded.hold {
            Hold::Keys(keys) => Before::Keys(
                keys,
                match std::fs::read(&path) {
                    // A file made during the run gets no guarded key either.
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
                    Err(_) => None,
                    Ok(bytes) => serde_json::from_slice(&bytes)
                        .ok()
                        .map(|json: Value| collect(&json, keys)),
                },
            ),
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
            Before::Keys(keys, Some(before)) => self.restore_keys(keys, before),
            Before::Whole(Some(before)) => self.restore_files(before),
            Before::Keys(_, None) | Before::Whole(None) => Vec::new(),
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
        for (name, bytes) in &after {
            if before.get(name) != Some(bytes) {
                let file = self.file(name);
                let put_back = match before.get(name) {
                    Some(bytes) => std::fs::write(&file, bytes),
                    None => std::fs::remove_file(&file),
                };
                if let Err(error) = put_back {
                    tracing::warn!(file = %file.display(), %error, "could not put the file back");
                }
                changed.push(file.display().to_string());
            }
        }
        for (name, bytes) in before {
            if !after.contains_key(name) {
                let file = self.file(name);
                let put_back = file
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&file, bytes));
                if let Err(error) = put_back {
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
    if !meta.is_dir() {
        found.insert(PathBuf::new(), std::fs::read(path).ok()?);
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
            if kind.is_dir() {
                pending.push(name);
            } else if kind.is_file() {
                total += entry.metadata().ok()?.len();
                if total > MAX_HELD_BYTES || found.len() >= MAX_HELD_FILES {
                    return None;
                }
                found.insert(name.clone(), std::fs::read(path.join(&name)).ok()?);
            }
        }
    }
    Some(found)
}

fn read(file: &Path) -> Option<Value> {
    let bytes = std::fs::read(file).ok()?;
    serde_json::from_slice(&bytes).ok()
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
