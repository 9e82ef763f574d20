//! The shape a final answer must have (`--schema`): a JSON Schema given inline, from a
//! file (`@file`) or in llm's compact form (`name, risk int`), checked to be JSON Schema
//! before any CLI starts, and the check of an answer against it.
//!
//! ```text
//! "--schema 'name, risk int'" -> AnswerSchema (compact.rs, the JSON, its validator)
//! an agent's final answer     -> its JSON document (answer.rs: fenced or bare) -> fits, or
//!                                the checker's errors the re-ask carries
//! ```

use std::fmt;
use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod answer;
mod compact;

pub use answer::json_document;

/// How many times an answer that does not fit is asked again, by default
/// (`--schema-retries`).
pub const DEFAULT_RETRIES: u32 = 2;

/// At most this many of the checker's errors are reported (to the model and the user).
const MAX_ERRORS: usize = 10;

/// At most this many characters of one error (an error quotes the value it is about,
/// which may be a whole 1 MiB answer).
const MAX_ERROR_CHARS: usize = 300;

/// What a run's final answers must be: the schema, and how often an answer that does
/// not fit is asked again in the same session (`--schema-retries`).
#[derive(Debug, Clone)]
pub struct AnswerShape {
    pub schema: std::sync::Arc<AnswerSchema>,
    pub retries: u32,
}

/// Why a `--schema` is refused (a usage error: exit 2, before any CLI starts).
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("--schema: cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("--schema: {what} is not JSON: {source}")]
    NotJson {
        what: String,
        source: serde_json::Error,
    },
    #[error("--schema is not a valid JSON Schema{}: {reason}", at_clause(.at))]
    Invalid { at: String, reason: String },
}

fn at_clause(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!(" at {at}")
    }
}

/// A schema the final answers of a run must fit: the JSON Schema and its compiled
/// checker.
pub struct AnswerSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl fmt::Debug for AnswerSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnswerSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// An answer that does not fit: the checker's errors, each saying where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub errors: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.errors.join("; "))
    }
}

impl AnswerSchema {
    /// The schema a `--schema` argument means: `@file` read from `dir` (a relative path),
    /// a JSON object inline, else llm's compact form; with `multi` (`--schema-multi`),
    /// a list of such objects as `{"items": [...]}`.
    pub fn from_argument(argument: &str, multi: bool, dir: &Path) -> Result<Self, SchemaError> {
        let schema = match argument.strip_prefix('@') {
            Some(file) => {
                let path = dir.join(file);
                let text = fs_err_read(&path)?;
                parse_text(&text, &path.display().to_string())?
            }
            None => parse_text(argument, "the schema")?,
        };
        AnswerSchema::new(if multi { multi_of(schema) } else { schema })
    }

    /// `schema` checked to be JSON Schema (a JSON object the checker compiles).
    pub fn new(schema: Value) -> Result<Self, SchemaError> {
        if !schema.is_object() {
            return Err(SchemaError::Invalid {
                at: String::new(),
                reason: "a schema is a JSON object, e.g. {\"type\": \"object\", ...}".to_owned(),
            });
        }
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            let at = error.instance_path().as_str();
            SchemaError::Invalid {
                at: if at.is_empty() {
                    String::new()
                } else {
                    at.to_owned()
                },
                reason: shortened(&error.to_string()),
            }
        })?;
        Ok(AnswerSchema { schema, validator })
    }

    /// The JSON Schema itself.
    pub fn json(&self) -> &Value {
        &self.schema
    }

    /// The schema's identity in the run store: the first 16 hex digits of the SHA-256 of
    /// its JSON text.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.schema.to_string().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The JSON document of a final answer (fenced or bare, [`json_document`]) if it
    /// fits; else what is wrong.
    pub fn check_answer(&self, answer: &str) -> Result<Value, Mismatch> {
        let document = json_document(answer).map_err(|reason| Mismatch {
            errors: vec![reason],
        })?;
        self.check(&document)?;
        Ok(document)
    }

    /// Whether `document` fits; else the checker's errors, each with where it is.
    pub fn check(&self, document: &Value) -> Result<(), Mismatch> {
        let mut errors: Vec<String> = self
            .validator
            .iter_errors(document)
            .take(MAX_ERRORS + 1)
            .map(|error| {
                let at = error.instance_path().as_str();
                let at = if at.is_empty() { "the document" } else { at };
                format!("at {at}: {}", shortened(&error.to_string()))
            })
            .collect();
        if errors.is_empty() {
            return Ok(());
        }
        if errors.len() > MAX_ERRORS {
            errors.truncate(MAX_ERRORS);
            errors.push("(and more)".to_owned());
        }
        Err(Mismatch { errors })
    }
}

/// `--schema-multi`'s wrapping, as llm's: an object whose `items` is a list of `schema`.
fn multi_of(schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": schema}},
        "required": ["items"],
    })
}

/// A schema's text: JSON when it opens with `{`, else the compact form.
fn parse_text(text: &str, what: &str) -> Result<Value, SchemaError> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        serde_json::from_str(trimmed).map_err(|source| SchemaError::NotJson {
            what: what.to_owned(),
            source,
        })
    } else {
        compact::parse(trimmed)
    }
}

fn fs_err_read(path: &Path) -> Result<String, SchemaError> {
    std::fs::read_to_string(path).map_err(|source| SchemaError::Read {
        path: path.display().to_string(),
        source,
    })
}

fn shortened(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
