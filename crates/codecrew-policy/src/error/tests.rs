use std::collections::BTreeSet;
use std::path::Path;

use super::{ErrorCode, ToolError};

/// Every code and the string models, scripts and the docs know it by. A renamed string
/// breaks them all, so it has to be renamed here too, on purpose.
const WIRE: &[(ErrorCode, &str)] = &[
    (ErrorCode::InvalidInput, "E_INVALID_INPUT"),
    (ErrorCode::InvalidPath, "E_INVALID_PATH"),
    (ErrorCode::InvalidPattern, "E_INVALID_PATTERN"),
    (ErrorCode::UnknownTool, "E_UNKNOWN_TOOL"),
    (ErrorCode::ToolNotInCatalog, "E_TOOL_NOT_IN_CATALOG"),
    (ErrorCode::UnknownCommand, "E_UNKNOWN_COMMAND"),
    (ErrorCode::PathOutsideWorkspace, "E_PATH_OUTSIDE_WORKSPACE"),
    (ErrorCode::Symlink, "E_SYMLINK"),
    (ErrorCode::PathChanged, "E_PATH_CHANGED"),
    (ErrorCode::PermissionDenied, "E_PERMISSION_DENIED"),
    (ErrorCode::Sandbox, "E_SANDBOX"),
    (ErrorCode::NotFound, "E_NOT_FOUND"),
    (ErrorCode::NotAFile, "E_NOT_A_FILE"),
    (ErrorCode::NotADirectory, "E_NOT_A_DIRECTORY"),
    (ErrorCode::IsADirectory, "E_IS_A_DIRECTORY"),
    (ErrorCode::NotText, "E_NOT_TEXT"),
    (ErrorCode::FileTooLarge, "E_FILE_TOO_LARGE"),
    (ErrorCode::NoMatch, "E_NO_MATCH"),
    (ErrorCode::AmbiguousMatch, "E_AMBIGUOUS_MATCH"),
    (ErrorCode::NoChange, "E_NO_CHANGE"),
    (ErrorCode::Io, "E_IO"),
    (ErrorCode::Timeout, "E_TIMEOUT"),
    (ErrorCode::Spawn, "E_SPAWN"),
    (ErrorCode::ToolFailed, "E_TOOL_FAILED"),
    (ErrorCode::ToolConfig, "E_TOOL_CONFIG"),
    (ErrorCode::Internal, "E_INTERNAL"),
    (ErrorCode::McpUnavailable, "E_MCP_UNAVAILABLE"),
    (ErrorCode::McpToolError, "E_MCP_TOOL_ERROR"),
    (ErrorCode::McpUnsupported, "E_MCP_UNSUPPORTED"),
    (ErrorCode::McpProtocol, "E_MCP_PROTOCOL"),
    (ErrorCode::Agent, "E_AGENT"),
    (ErrorCode::Unavailable, "E_UNAVAILABLE"),
    (ErrorCode::DepthLimit, "E_DEPTH_LIMIT"),
    (ErrorCode::RejectedEnvelope, "E_REJECTED_ENVELOPE"),
    (ErrorCode::CliWallRefused, "E_CLI_WALL_REFUSED"),
    (ErrorCode::MaxTurns, "E_MAX_TURNS"),
    (ErrorCode::ContextExceeded, "E_CONTEXT_EXCEEDED"),
];

#[test]
fn every_code_is_serialised_displayed_and_read_as_its_e_string() {
    let pinned: Vec<ErrorCode> = WIRE.iter().map(|(code, _)| *code).collect();
    assert_eq!(pinned, ErrorCode::ALL, "WIRE must list every variant once");
    for (code, wire) in WIRE {
        assert_eq!(serde_json::to_string(code).unwrap(), format!("\"{wire}\""));
        // `json!` (the envelope rejection, the audit log) goes through `to_value`.
        assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(wire));
        assert_eq!(code.to_string(), *wire);
        assert_eq!(code.as_str(), *wire);
        assert_eq!(wire.parse::<ErrorCode>(), Ok(*code));
        let read: ErrorCode = serde_json::from_value(serde_json::json!(wire)).unwrap();
        assert_eq!(read, *code);
    }
    let distinct: BTreeSet<&str> = WIRE.iter().map(|(_, wire)| *wire).collect();
    assert_eq!(distinct.len(), WIRE.len(), "two variants share a string");
}

#[test]
fn a_string_that_is_no_code_is_refused_when_read() {
    assert!("E_NOPE".parse::<ErrorCode>().is_err());
    assert!("e_not_found".parse::<ErrorCode>().is_err());
    assert!("NotFound".parse::<ErrorCode>().is_err());
    let read = serde_json::from_value::<ToolError>(serde_json::json!({
        "code": "E_NOPE",
        "message": "m",
    }));
    assert!(read.unwrap_err().to_string().contains("\"E_NOPE\""));
}

#[test]
fn a_tool_error_reads_as_it_always_has() {
    let bare = ToolError::new(ErrorCode::NotFound, "\"a.txt\" does not exist");
    assert_eq!(
        serde_json::to_string(&bare).unwrap(),
        r#"{"code":"E_NOT_FOUND","message":"\"a.txt\" does not exist"}"#
    );
    assert_eq!(bare.to_string(), "E_NOT_FOUND: \"a.txt\" does not exist");

    let advised = bare.with_suggestion("list the directory");
    let json = serde_json::to_string(&advised).unwrap();
    assert_eq!(
        json,
        r#"{"code":"E_NOT_FOUND","message":"\"a.txt\" does not exist","suggestion":"list the directory"}"#
    );
    assert_eq!(
        advised.to_string(),
        "E_NOT_FOUND: \"a.txt\" does not exist (list the directory)"
    );
    assert_eq!(serde_json::from_str::<ToolError>(&json).unwrap(), advised);
}

/// The codes the user-facing docs and the model's prompts name: a word starting `E_` and
/// a name (not the tail of `CODECREW_HOME` or `BASE_URL`, nor "an `E_…` string").
fn codes_named_in(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices("E_")
        .filter(|(at, _)| *at == 0 || !word(bytes[at - 1]))
        .map(|(at, _)| {
            let rest = &text[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('_').to_owned()
        })
        .filter(|code| code.len() > "E_".len())
        .collect()
}

#[test]
fn every_code_the_docs_name_is_a_variant() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![
        root.join("README.md"),
        root.join("SECURITY.md"),
        root.join("ARCHITECTURE.md"),
    ];
    for folder in ["docs", "prompts"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    let mut named = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for code in codes_named_in(&text) {
            assert!(
                code.parse::<ErrorCode>().is_ok(),
                "{} names {code}, which is no ErrorCode",
                file.display()
            );
            named.insert(code);
        }
    }
    // The docs do name codes; a scan that found none would prove nothing.
    assert!(named.contains("E_PERMISSION_DENIED"), "{named:?}");
    assert!(named.contains("E_CLI_WALL_REFUSED"), "{named:?}");
}

#[test]
fn the_doc_scan_takes_whole_words_only() {
    assert_eq!(
        codes_named_in("`E_NOT_FOUND`, CODECREW_HOME, \"E_TIMEOUT\". E_X_, an E_ code, `E_…`"),
        ["E_NOT_FOUND", "E_TIMEOUT", "E_X"]
    );
}
