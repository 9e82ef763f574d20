use super::*;
use pretty_assertions::assert_eq;

#[test]
fn inline_json_compact_and_a_file_give_the_same_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.json"), "name, risk int").unwrap();
    let compact = AnswerSchema::from_argument("name, risk int", false, dir.path()).unwrap();
    let file = AnswerSchema::from_argument("@s.json", false, dir.path()).unwrap();
    let inline =
        AnswerSchema::from_argument(&compact.json().to_string(), false, dir.path()).unwrap();
    assert_eq!(compact.json(), file.json());
    assert_eq!(compact.json(), inline.json());
    assert_eq!(compact.hash(), inline.hash());
    assert_eq!(compact.hash().len(), 16);
}

#[test]
fn multi_wraps_the_schema_in_items_as_llm_does() {
    let dir = tempfile::tempdir().unwrap();
    let schema = AnswerSchema::from_argument("name", true, dir.path()).unwrap();
    assert_eq!(
        schema.json(),
        &json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            }}},
            "required": ["items"],
        })
    );
    assert!(
        schema
            .check(&json!({"items": [{"name": "a"}, {"name": "b"}]}))
            .is_ok()
    );
    assert!(schema.check(&json!([{"name": "a"}])).is_err());
}

#[test]
fn a_schema_that_is_not_json_schema_is_refused_saying_where() {
    let dir = tempfile::tempdir().unwrap();
    let error = AnswerSchema::from_argument(
        r#"{"type": "object", "properties": {"risk": {"type": "integr"}}}"#,
        false,
        dir.path(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("/properties/risk/type"), "{error}");
    let broken = AnswerSchema::from_argument("{\"type\": ", false, dir.path())
        .unwrap_err()
        .to_string();
    assert!(broken.contains("not JSON"), "{broken}");
    let missing = AnswerSchema::from_argument("@nowhere.json", false, dir.path())
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nowhere.json"), "{missing}");
    assert!(AnswerSchema::new(json!(true)).is_err());
}

#[test]
fn an_answer_that_fits_gives_its_document() {
    let dir = tempfile::tempdir().unwrap();
    let schema = AnswerSchema::from_argument("file, risk int", false, dir.path()).unwrap();
    let answer = "Done.\n```json\n{\"file\": \"src/a.rs\", \"risk\": 4}\n```";
    assert_eq!(
        schema.check_answer(answer),
        Ok(json!({"file": "src/a.rs", "risk": 4}))
    );
}

#[test]
fn an_answer_that_does_not_fit_says_each_place_it_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let schema = AnswerSchema::from_argument("file, risk int", false, dir.path()).unwrap();
    let mismatch = schema.check_answer("{\"risk\": \"high\"}").unwrap_err();
    assert_eq!(mismatch.errors.len(), 2, "{mismatch}");
    assert!(
        mismatch
            .errors
            .iter()
            .any(|e| e.starts_with("at /risk:") && e.contains("integer")),
        "{mismatch}"
    );
    assert!(
        mismatch
            .errors
            .iter()
            .any(|e| e.starts_with("at the document:") && e.contains("file")),
        "{mismatch}"
    );
}

#[test]
fn an_error_about_a_huge_value_is_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let schema = AnswerSchema::from_argument("risk int", false, dir.path()).unwrap();
    let huge = json!({"risk": "x".repeat(100_000)});
    let mismatch = schema.check(&huge).unwrap_err();
    assert!(
        mismatch.errors[0].chars().count() < 400,
        "{}",
        mismatch.errors[0].len()
    );
}
