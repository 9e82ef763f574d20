//! Strict JSON: `serde_json` values, but duplicate keys and deep nesting are errors.
//!
//! `serde_json` silently keeps the last of two equal keys. For a tool call that is a
//! hazard: `{"path": "notes.txt", "path": "/etc/passwd"}` reads as one thing to a human
//! reviewer and as another to the executor. So envelopes are parsed with this instead.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// How deep an envelope may nest, counting the envelope itself as level 1.
pub const MAX_DEPTH: usize = 64;

const DUPLICATE: &str = "duplicate key";
const TOO_DEEP: &str = "nested deeper than";

/// Why a text is not strict JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum StrictError {
    /// The same key twice in one object.
    DuplicateKey(String),
    /// Nesting beyond [`MAX_DEPTH`].
    TooDeep(String),
    /// Not JSON at all, or truncated.
    Syntax(String),
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrictError::DuplicateKey(m) | StrictError::TooDeep(m) | StrictError::Syntax(m) => {
                f.write_str(m)
            }
        }
    }
}

/// Parses one or more whitespace-separated JSON values.
pub fn parse_values(text: &str) -> Result<Vec<Value>, StrictError> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<StrictValue>() {
        values.push(value.map_err(classify)?.0);
    }
    if values.is_empty() {
        return Err(StrictError::Syntax("no JSON value".to_owned()));
    }
    Ok(values)
}

/// Parses exactly one JSON value.
pub fn parse_value(text: &str) -> Result<Value, StrictError> {
    let mut values = parse_values(text)?;
    if values.len() == 1 {
        Ok(values.remove(0))
    } else {
        Err(StrictError::Syntax(format!(
            "expected one JSON value, found {}",
            values.len()
        )))
    }
}

fn classify(error: serde_json::Error) -> StrictError {
    let message = error.to_string();
    if message.starts_with(DUPLICATE) {
        StrictError::DuplicateKey(message)
    } else if message.starts_with(TOO_DEEP) {
        StrictError::TooDeep(message)
    } else {
        StrictError::Syntax(message)
    }
}

struct StrictValue(Value);

impl<'de> de::Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Level(1).deserialize(deserializer).map(StrictValue)
    }
}

/// Deserializes a value at a given nesting level.
#[derive(Clone, Copy)]
struct Level(usize);

impl<'de> DeserializeSeed<'de> for Level {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Level {
    fn enter<E: de::Error>(self) -> Result<Level, E> {
        if self.0 > MAX_DEPTH {
            Err(E::custom(format_args!("{TOO_DEEP} {MAX_DEPTH} levels")))
        } else {
            Ok(Level(self.0 + 1))
        }
    }
}

impl<'de> Visitor<'de> for Level {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("{DUPLICATE} {key:?}")));
            }
            let value = map.next_value_seed(inner)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_several_values() {
        assert_eq!(
            parse_values("{\"a\":1}\n [2] "),
            Ok(vec![json!({"a": 1}), json!([2])])
        );
    }

    #[test]
    fn duplicate_keys_are_errors_at_any_depth() {
        assert!(matches!(
            parse_value(r#"{"a":1,"a":2}"#),
            Err(StrictError::DuplicateKey(m)) if m.contains("\"a\"")
        ));
        assert!(matches!(
            parse_value(r#"{"x":{"p":1,"p":1}}"#),
            Err(StrictError::DuplicateKey(_))
        ));
    }

    #[test]
    fn depth_is_limited() {
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse_value(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(matches!(parse_value(&deep), Err(StrictError::TooDeep(_))));
        // Far beyond serde_json's own recursion limit: still our error, no stack overflow.
        let deeper = "[".repeat(100_000);
        assert!(parse_value(&deeper).is_err());
    }

    #[test]
    fn syntax_errors() {
        assert!(matches!(
            parse_value("{\"a\":"),
            Err(StrictError::Syntax(_))
        ));
        assert!(matches!(parse_value(""), Err(StrictError::Syntax(_))));
        assert!(matches!(parse_value("1 2"), Err(StrictError::Syntax(_))));
    }
}
