//! The strict form of a schema, as Codex's `--output-schema` (OpenAI's strict structured
//! outputs) accepts it: every object closed (`additionalProperties: false`) with every
//! key required, a key that was optional made nullable instead. Where no such form says
//! the same (an object open to keys it does not name), the reason; and the way back: an
//! answer's `null`s at keys the rewrite made nullable removed, so that the original
//! schema judges it.

use serde_json::{Map, Value, json};

/// The strict form of `schema`, or why it has none (with where, as a JSON pointer).
pub fn rewrite(schema: &Value) -> Result<Value, String> {
    if !is_object_schema(schema) {
        return Err(
            "the schema's root is not an object (`\"type\": \"object\"` with \
                    properties): Codex's strict mode answers with an object only"
                .to_owned(),
        );
    }
    let mut strict = schema.clone();
    close(&mut strict, "")?;
    Ok(strict)
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        || schema.get("properties").is_some()
}

/// Closes every object schema in `schema` (at `at`), in place.
fn close(schema: &mut Value, at: &str) -> Result<(), String> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    if is_object_schema(&Value::Object(map.clone())) {
        close_object(map, at)?;
    }
    for keyword in ["items", "not", "additionalItems"] {
        if let Some(inner) = map.get_mut(keyword) {
            close(inner, &format!("{at}/{keyword}"))?;
        }
    }
    for keyword in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = map.get_mut(keyword) {
            for (index, inner) in list.iter_mut().enumerate() {
                close(inner, &format!("{at}/{keyword}/{index}"))?;
            }
        }
    }
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(keyword) {
            for (name, inner) in defs.iter_mut() {
                close(inner, &format!("{at}/{keyword}/{name}"))?;
            }
        }
    }
    Ok(())
}

fn close_object(map: &mut Map<String, Value>, at: &str) -> Result<(), String> {
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err(format!(
                "at {}: additionalProperties lets the object hold keys it does not name, \
                 which Codex's strict mode cannot say; name every key instead",
                pointer(at)
            ));
        }
    }
    if map.contains_key("patternProperties") {
        return Err(format!(
            "at {}: patternProperties has no strict form for Codex; name every key instead",
            pointer(at)
        ));
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut all = Vec::new();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            close(property, &format!("{at}/properties/{name}"))?;
            if !required.contains(name) {
                nullable(property);
            }
            all.push(Value::from(name.as_str()));
        }
    } else {
        return Err(format!(
            "at {}: an object without properties may hold any key, which Codex's strict \
             mode cannot say; name its keys under properties",
            pointer(at)
        ));
    }
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    map.insert("required".to_owned(), Value::Array(all));
    Ok(())
}

/// `property` also allowing `null` (how strict mode says a key may be left out).
fn nullable(property: &mut Value) {
    match property.get_mut("type") {
        Some(Value::String(kind)) if kind != "null" => {
            let kind = kind.clone();
            property["type"] = json!([kind, "null"]);
        }
        Some(Value::Array(kinds)) => {
            if !kinds.iter().any(|k| k == "null") {
                kinds.push(Value::from("null"));
            }
        }
        Some(_) => return,
        None => {
            let inner = property.take();
            *property = json!({"anyOf": [inner, {"type": "null"}]});
            return;
        }
    }
    if let Some(Value::Array(values)) = property.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

/// `answer` with the `null`s removed at the keys `original` leaves optional (those the
/// strict form made nullable), at every depth the rewrite reached.
pub fn without_added_nulls(original: &Value, answer: &mut Value) {
    match answer {
        Value::Object(fields) => {
            let required: Vec<&str> = original
                .get("required")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = original.get("properties").and_then(Value::as_object);
            fields.retain(|name, value| !value.is_null() || required.contains(&name.as_str()));
            if let Some(properties) = properties {
                for (name, value) in fields.iter_mut() {
                    if let Some(inner) = properties.get(name) {
                        without_added_nulls(inner, value);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(inner) = original.get("items") {
                for item in items {
                    without_added_nulls(inner, item);
                }
            }
        }
        _ => {}
    }
}

fn pointer(at: &str) -> &str {
    if at.is_empty() { "the root" } else { at }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_key_is_required_and_the_optional_ones_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "file": {"type": "string"},
                "risk": {"type": "integer", "enum": [1, 2, 3]},
                "why": {"$ref": "#/$defs/why"},
                "tags": {"type": "array", "items": {
                    "type": "object", "properties": {"name": {"type": "string"}}
                }},
            },
            "required": ["file"],
            "$defs": {"why": {"type": "string"}},
        });
        let mut strict = rewrite(&schema).unwrap();
        // The keys' order is the map's (sorted, or as written where serde_json keeps it).
        if let Some(Value::Array(names)) = strict.get_mut("required") {
            names.sort_by_key(|name| name.as_str().map(str::to_owned));
        }
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "risk": {"type": ["integer", "null"], "enum": [1, 2, 3, null]},
                    "why": {"anyOf": [{"$ref": "#/$defs/why"}, {"type": "null"}]},
                    "tags": {"type": ["array", "null"], "items": {
                        "type": "object",
                        "properties": {"name": {"type": ["string", "null"]}},
                        "additionalProperties": false,
                        "required": ["name"],
                    }},
                },
                "required": ["file", "risk", "tags", "why"],
                "additionalProperties": false,
                "$defs": {"why": {"type": "string"}},
            })
        );
    }

    #[test]
    fn an_open_object_has_no_strict_form_and_says_where() {
        let open = json!({"type": "object", "properties": {
            "meta": {"type": "object", "additionalProperties": {"type": "string"},
                     "properties": {}}
        }});
        let error = rewrite(&open).unwrap_err();
        assert!(error.contains("/properties/meta"), "{error}");
        assert!(error.contains("additionalProperties"), "{error}");
        let free = json!({"type": "object", "properties": {"any": {"type": "object"}}});
        assert!(rewrite(&free).unwrap_err().contains("/properties/any"));
        assert!(
            rewrite(&json!({"type": "string"}))
                .unwrap_err()
                .contains("root")
        );
    }

    #[test]
    fn the_nulls_the_rewrite_allowed_are_removed_before_the_check() {
        let original = json!({
            "type": "object",
            "properties": {
                "file": {"type": ["string", "null"]},
                "why": {"type": "string"},
                "items": {"type": "array", "items": {
                    "type": "object", "properties": {"note": {"type": "string"}}
                }},
            },
            "required": ["file"],
        });
        let mut answer = json!({
            "file": null, "why": null, "items": [{"note": null}, {"note": "x"}]
        });
        without_added_nulls(&original, &mut answer);
        assert_eq!(answer, json!({"file": null, "items": [{}, {"note": "x"}]}));
    }
}
