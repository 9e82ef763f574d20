//! The keys of a held JSON file: found by pattern, set and removed.

use std::path::Path;

use serde_json::{Map, Value};

use super::files::{put_file, read_regular};

pub fn read(file: &Path) -> Option<Value> {
    let bytes = read_regular(file).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// `json` written over `file`, as [`put_file`] writes: beside it, then renamed over
/// whatever stands there.
pub fn write(file: &Path, json: &Value) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(json)?;
    put_file(file, Path::new(""), &bytes)
}

/// Every concrete key the patterns name that the document has, with its value.
pub fn collect(json: &Value, patterns: &[Vec<String>]) -> Vec<(Vec<String>, Value)> {
    let mut found = Vec::new();
    for pattern in patterns {
        walk(json, pattern, &mut Vec::new(), &mut found);
    }
    found
}

fn walk(
    value: &Value,
    pattern: &[String],
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
    let keys: Vec<&String> = if first == "*" {
        object.keys().collect()
    } else {
        object.keys().filter(|key| *key == first).collect()
    };
    for key in keys {
        path.push(key.clone());
        walk(&object[key], rest, path, found);
        path.pop();
    }
}

pub fn set(json: &mut Value, path: &[String], value: Value) {
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

pub fn remove(json: &mut Value, path: &[String]) {
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
