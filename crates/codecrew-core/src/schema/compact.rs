//! llm's compact form of a schema: `name, risk int, why: a sentence` -> the JSON Schema of
//! one object. Fields are separated by commas, or by newlines when there are any (so a
//! description may hold a comma); each is a name, an optional type (`str` `int` `float`
//! `bool`, `str` when none is given) and an optional description after `:`. Every field
//! is required, as llm makes them.

use serde_json::{Map, Value, json};

use super::SchemaError;

/// The JSON Schema the compact form `text` means.
pub fn parse(text: &str) -> Result<Value, SchemaError> {
    let separator = if text.contains('\n') { '\n' } else { ',' };
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in text.split(separator).map(str::trim) {
        if field.is_empty() {
            continue;
        }
        let (head, description) = match field.split_once(':') {
            Some((head, description)) => (head, Some(description.trim())),
            None => (field, None),
        };
        let mut words = head.split_whitespace();
        let Some(name) = words.next() else {
            return Err(compact_error(field, "a field needs a name before its ':'"));
        };
        let kind = match words.next() {
            None | Some("str") => "string",
            Some("int") => "integer",
            Some("float") => "number",
            Some("bool") => "boolean",
            Some(other) => {
                return Err(compact_error(
                    field,
                    &format!("`{other}` is no type: write str, int, float or bool"),
                ));
            }
        };
        if let Some(extra) = words.next() {
            return Err(compact_error(
                field,
                &format!("`{extra}` follows the type: a field is `name [type][: description]`"),
            ));
        }
        if properties.contains_key(name) {
            return Err(compact_error(field, &format!("`{name}` is named twice")));
        }
        let mut property = json!({ "type": kind });
        if let Some(description) = description.filter(|d| !d.is_empty()) {
            property["description"] = Value::from(description);
        }
        properties.insert(name.to_owned(), property);
        required.push(Value::from(name));
    }
    if properties.is_empty() {
        return Err(SchemaError::Invalid {
            at: String::new(),
            reason: "the schema names no field; write e.g. 'name, risk int'".to_owned(),
        });
    }
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
    }))
}

fn compact_error(field: &str, reason: &str) -> SchemaError {
    SchemaError::Invalid {
        at: format!("field '{field}'"),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_types_and_descriptions_make_one_object() {
        let schema = parse("name, risk int, why: a sentence").unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "risk": {"type": "integer"},
                    "why": {"type": "string", "description": "a sentence"},
                },
                "required": ["name", "risk", "why"],
            })
        );
    }

    #[test]
    fn every_type_has_its_json_name() {
        let schema = parse("a str, b int, c float, d bool").unwrap();
        let kinds: Vec<&str> = ["a", "b", "c", "d"]
            .iter()
            .map(|name| schema["properties"][name]["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["string", "integer", "number", "boolean"]);
    }

    #[test]
    fn newlines_separate_fields_so_a_description_may_hold_a_comma() {
        let schema = parse("file: the path, relative\nrisk int: 1 to 5\n").unwrap();
        assert_eq!(
            schema["properties"]["file"]["description"],
            "the path, relative"
        );
        assert_eq!(schema["properties"]["risk"]["type"], "integer");
        assert_eq!(schema["required"], json!(["file", "risk"]));
    }

    #[test]
    fn a_type_that_is_none_is_refused_with_the_field() {
        let error = parse("name, risk integer").unwrap_err().to_string();
        assert!(error.contains("risk integer"), "{error}");
        assert!(error.contains("str, int, float or bool"), "{error}");
    }

    #[test]
    fn a_word_after_the_type_a_name_twice_or_no_field_is_refused() {
        assert!(parse("risk int high").is_err());
        assert!(parse("name, name").is_err());
        assert!(parse(" , ").is_err());
        assert!(parse(": a sentence").is_err());
    }
}
