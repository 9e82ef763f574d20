//! A final answer's JSON document: the answer itself when it is JSON, else the last
//! ```json (or bare ```) fence in it that holds JSON, else the span from its first `{` to
//! its last `}` when that is JSON (a model that forgot the fence).

use serde_json::Value;

/// The JSON document `answer` holds, or why none was found.
pub fn json_document(answer: &str) -> Result<Value, String> {
    let trimmed = answer.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Ok(value);
    }
    let fenced = fences(trimmed);
    let last_fence_error = match fenced
        .iter()
        .rev()
        .map(|body| serde_json::from_str(body))
        .find(Result::is_ok)
    {
        Some(Ok(value)) => return Ok(value),
        _ => fenced
            .last()
            .and_then(|body| serde_json::from_str::<Value>(body).err()),
    };
    if let (Some(open), Some(close)) = (trimmed.find('{'), trimmed.rfind('}'))
        && open < close
        && let Ok(value) = serde_json::from_str(&trimmed[open..=close])
    {
        return Ok(value);
    }
    Err(match last_fence_error {
        Some(error) => format!("the ```json fence of the answer is not JSON: {error}"),
        None if trimmed.is_empty() => "the answer is empty: no JSON document".to_owned(),
        None => "the answer holds no JSON document: give it alone in a ```json fence".to_owned(),
    })
}

/// The bodies of the answer's ```json and bare ``` fences, in order.
fn fences(text: &str) -> Vec<&str> {
    let mut bodies = Vec::new();
    let mut open: Option<usize> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let fence = line.trim();
        match open {
            None => {
                if let Some(language) = fence.strip_prefix("```")
                    && matches!(language.trim(), "" | "json" | "JSON" | "jsonc")
                {
                    open = Some(offset);
                }
            }
            Some(body) => {
                if fence == "```" {
                    bodies.push(&text[body..start]);
                    open = None;
                }
            }
        }
    }
    bodies
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bare_document_is_itself() {
        assert_eq!(json_document(" {\"a\": 1}\n"), Ok(json!({"a": 1})));
    }

    #[test]
    fn the_last_fence_that_holds_json_is_the_document() {
        let answer = "Here it is:\n```json\n{\"a\": 1}\n```\nor rather\n```\n{\"a\": 2}\n```\n";
        assert_eq!(json_document(answer), Ok(json!({"a": 2})));
    }

    #[test]
    fn a_fence_of_another_language_is_not_the_document() {
        let answer = "```python\nx = 1\n```\n";
        assert!(json_document(answer).is_err());
    }

    #[test]
    fn an_object_in_prose_without_a_fence_is_found() {
        let answer = "The result: {\"file\": \"a.rs\", \"risk\": 3} as asked.";
        assert_eq!(
            json_document(answer),
            Ok(json!({"file": "a.rs", "risk": 3}))
        );
    }

    #[test]
    fn a_broken_fence_says_where_it_is_broken() {
        let error = json_document("```json\n{\"a\": }\n```").unwrap_err();
        assert!(error.contains("not JSON"), "{error}");
        assert!(error.contains("line 1"), "{error}");
    }

    #[test]
    fn no_document_says_so() {
        assert!(
            json_document("I could not find it.")
                .unwrap_err()
                .contains("no JSON")
        );
        assert!(json_document("").unwrap_err().contains("empty"));
    }
}
