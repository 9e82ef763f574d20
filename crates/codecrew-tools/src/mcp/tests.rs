//! Unit tests of the MCP client: names, schemas, result shapes, and servers that do not
//! start. Real servers (from npm) are driven by tests/integration/mcp_client.rs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use serde_json::{Map, Value, json};

use super::client::*;
use super::offers::*;
use crate::config::McpServerConfig;
use crate::{ErrorCode, Mode, ToolContext};
use codecrew_policy::process;

#[test]
fn names_are_sanitised_or_refused() {
    assert_eq!(sanitise("read_text_file").unwrap(), "read_text_file");
    assert_eq!(
        sanitise("get-annotated-message").unwrap(),
        "get-annotated-message"
    );
    assert_eq!(sanitise("get.weather").unwrap(), "get_weather");
    assert_eq!(sanitise("a__b").unwrap(), "a_b", "no second `__`");
    assert_eq!(sanitise("_private_").unwrap(), "private");
    assert_eq!(sanitise("search files/now!").unwrap(), "search_files_now");
    assert_eq!(sanitise("café").unwrap(), "caf");
    assert!(sanitise("天気").is_err());
    assert!(sanitise("").is_err());
    assert!(sanitise(&"x".repeat(MAX_NAME_CHARS + 1)).is_err());
    assert!(sanitise(&"x".repeat(MAX_NAME_CHARS)).is_ok());
}

#[test]
fn schemas_describe_objects() {
    let object = |value: Value| match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    };
    let (schema, problem) = input_schema(&Map::new());
    assert_eq!((schema, problem), (json!({"type": "object"}), None));

    let server = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    let (schema, problem) = input_schema(&object(server.clone()));
    assert_eq!((schema, problem), (server, None));

    let (schema, problem) = input_schema(&object(json!({"properties": {}})));
    assert_eq!(
        (schema, problem),
        (json!({"type": "object", "properties": {}}), None)
    );

    let (schema, problem) = input_schema(&object(json!({"type": "string"})));
    assert_eq!(schema, json!({"type": "object"}));
    assert!(problem.is_some());

    let (schema, problem) = input_schema(&object(json!({"type": "object", "minProperties": "x"})));
    assert_eq!(schema, json!({"type": "object"}));
    assert_eq!(problem, Some("is not a valid JSON Schema"));
}

#[test]
fn text_parts_are_joined() {
    let result = json!({"content": [
        {"type": "text", "text": "first"},
        {"type": "text", "text": "second"},
    ]});
    assert_eq!(shape(&result).unwrap(), json!({"text": "first\nsecond"}));
    assert_eq!(shape(&json!({"content": []})).unwrap(), json!({"text": ""}));
    assert_eq!(shape(&json!({})).unwrap(), json!({"text": ""}));
}

#[test]
fn binary_parts_are_summarised_and_resources_kept() {
    let result = json!({"content": [
        {"type": "text", "text": "Here is a picture"},
        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAAAA"}},
        {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "mimeType": "text/markdown"},
        {"type": "hologram"},
    ]});
    assert_eq!(
        shape(&result).unwrap(),
        json!({
            "text": "Here is a picture",
            "content": [
                {"type": "image", "mime_type": "image/png", "bytes": 5, "note": "binary data, not shown"},
                {"type": "audio", "mime_type": "audio/wav", "bytes": 3, "note": "binary data, not shown"},
                {"type": "resource", "uri": "file:///a.txt", "mime_type": "text/plain", "text": "A"},
                {"type": "resource", "uri": "file:///b.bin", "bytes": 6, "note": "binary data, not shown"},
                {"type": "resource_link", "uri": "file:///c.md", "name": "c.md", "mime_type": "text/markdown"},
                {"type": "hologram", "note": "a kind of content codecrew does not show"},
            ],
        })
    );
}

#[test]
fn structured_content_is_not_repeated_as_text() {
    let structured = json!({"sum": 3});
    let result = json!({
        "content": [{"type": "text", "text": "{\"sum\": 3}"}],
        "structuredContent": structured,
    });
    assert_eq!(shape(&result).unwrap(), json!({"structured": {"sum": 3}}));
    let result = json!({
        "content": [{"type": "text", "text": "hello file\n"}],
        "structuredContent": {"content": "hello file\n"},
    });
    assert_eq!(
        shape(&result).unwrap(),
        json!({"structured": {"content": "hello file\n"}})
    );
    let result = json!({
        "content": [{"type": "text", "text": "The sum is 3."}],
        "structuredContent": structured,
    });
    assert_eq!(
        shape(&result).unwrap(),
        json!({"text": "The sum is 3.", "structured": {"sum": 3}})
    );
}

#[test]
fn errors_carry_the_tool_text() {
    let result =
        json!({"content": [{"type": "text", "text": "Access denied: /etc"}], "isError": true});
    assert_eq!(shape(&result).unwrap_err(), "Access denied: /etc");
    let result = json!({"content": [], "isError": true});
    assert_eq!(
        shape(&result).unwrap_err(),
        "the tool reported an error without a message"
    );
    let result = json!({"content": [{"type": "text", "text": "fine"}], "isError": false});
    assert_eq!(shape(&result).unwrap(), json!({"text": "fine"}));
}

#[test]
fn huge_output_is_cut_at_a_character_boundary() {
    // 'é' is two bytes: the cap falls inside one unless the cut steps back.
    let text = "é".repeat(MAX_OUTPUT_BYTES);
    let result = json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"big": "x".repeat(100)},
    });
    let output = shape(&result).unwrap();
    let kept = output["text"].as_str().unwrap();
    assert_eq!(kept.len(), MAX_OUTPUT_BYTES);
    assert_eq!(output["truncated"], true);
    let note = output["note"].as_str().unwrap();
    assert!(
        note.starts_with(&format!("output cut at {MAX_OUTPUT_BYTES} bytes")),
        "{note}"
    );
    assert!(note.contains("structured content"), "{note}");
    assert!(output.get("structured").is_none());
}

#[test]
fn descriptions_are_trimmed_and_capped() {
    let mut tool: rmcp::model::Tool = serde_json::from_value(json!({
        "name": "t", "inputSchema": {"type": "object"}, "description": "  Does it.\n"
    }))
    .unwrap();
    assert_eq!(description(&tool, "srv"), "Does it.");
    tool.description = Some("y".repeat(MAX_DESCRIPTION_CHARS + 10).into());
    let capped = description(&tool, "srv");
    assert_eq!(capped.chars().count(), MAX_DESCRIPTION_CHARS + 1);
    assert!(capped.ends_with('…'));
    tool.description = None;
    assert_eq!(
        description(&tool, "srv"),
        "The tool \"t\" of the MCP server srv."
    );
}

fn server(command: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: command.to_owned(),
        args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        env: BTreeMap::from([("MCP_GREETING".to_owned(), "hi".to_owned())]),
        cwd: None,
        readonly_tools: Vec::new(),
        startup_timeout_secs: 2,
        timeout_secs: 5,
        network: false,
    }
}

async fn start_alone(config: McpServerConfig) -> McpClients {
    let dir = tempfile::tempdir().unwrap();
    let servers = BTreeMap::from([("srv".to_owned(), config)]);
    start(
        &servers,
        &ToolContext::new(dir.path().to_path_buf(), Mode::Execute),
    )
    .await
}

#[tokio::test]
async fn a_missing_program_is_a_notice() {
    let clients = start_alone(server("no-such-mcp-server-codecrew", &[])).await;
    assert!(clients.tools().is_empty());
    let [notice] = clients.notices() else {
        panic!("{:?}", clients.notices());
    };
    assert!(
        notice.starts_with("mcp.srv did not start: cannot run no-such-mcp-server-codecrew"),
        "{notice}"
    );
    assert!(notice.contains("check `command` of [mcp.srv]"), "{notice}");
}

#[tokio::test]
async fn a_server_that_exits_is_a_notice_quoting_its_stderr() {
    let script = "echo \"cannot open the database ($MCP_GREETING)\" >&2; exit 3";
    let clients = start_alone(server("bash", &["-c", script])).await;
    assert!(clients.tools().is_empty());
    let [notice] = clients.notices() else {
        panic!("{:?}", clients.notices());
    };
    assert!(
        notice.starts_with("mcp.srv did not start: it exited before the MCP handshake finished"),
        "{notice}"
    );
    assert!(
        notice.contains("(stderr: cannot open the database (hi))"),
        "{notice}"
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn a_silent_server_times_out_and_is_killed() {
    let marker = format!("codecrew-mcp-silent-{}", std::process::id());
    let script = format!("echo starting >&2; sleep 300; : {marker}");
    let started = Instant::now();
    let clients = start_alone(server("bash", &["-c", &script])).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let [notice] = clients.notices() else {
        panic!("{:?}", clients.notices());
    };
    assert!(
        notice.contains("did not answer the MCP handshake and list its tools within 2 s"),
        "{notice}"
    );
    assert!(notice.ends_with("(stderr: starting)"), "{notice}");
    // The whole group was killed: `sleep` too.
    let deadline = Instant::now() + Duration::from_secs(5);
    while running_with(&marker) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!running_with(&marker), "the server was left running");
}

#[tokio::test]
async fn a_server_that_is_not_mcp_is_a_notice() {
    let clients = start_alone(server("bash", &["-c", "echo hello; read -r line"])).await;
    let [notice] = clients.notices() else {
        panic!("{:?}", clients.notices());
    };
    assert!(notice.starts_with("mcp.srv did not start: "), "{notice}");
}

#[tokio::test]
async fn a_missing_working_directory_is_a_notice() {
    let mut config = server("bash", &[]);
    config.cwd = Some("no/such/dir".into());
    let clients = start_alone(config).await;
    let [notice] = clients.notices() else {
        panic!("{:?}", clients.notices());
    };
    assert!(notice.contains("its working directory"), "{notice}");
    assert!(notice.contains("fix `cwd` of [mcp.srv]"), "{notice}");
}

#[tokio::test]
async fn no_servers_start_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(
        &BTreeMap::new(),
        &ToolContext::new(dir.path().to_path_buf(), Mode::Execute),
    )
    .await;
    assert!(clients.tools().is_empty() && clients.notices().is_empty());
    assert_eq!(clients.servers().count(), 0);
    clients.shutdown().await;
}

/// Whether a live process has `marker` in its command line.
fn running_with(marker: &str) -> bool {
    process::pids().into_iter().any(|pid| {
        let alive = process::stat(pid).is_some_and(|stat| !stat.zombie);
        alive
            && std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(marker))
    })
}

/// A server offered from a kept tool list starts only when one of its tools is called; a
/// start that fails is that call's error (naming the server and quoting its stderr) and
/// the answer to every later call, without a second start.
#[tokio::test]
async fn a_listed_server_starts_at_the_first_call_and_a_failed_start_is_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let script = format!(
        "echo start >> '{}'; echo 'no database' >&2; exit 3",
        starts.display()
    );
    let servers = BTreeMap::from([("srv".to_owned(), server("bash", &["-c", &script]))]);
    let tool: rmcp::model::Tool = serde_json::from_value(json!({
        "name": "lookup", "description": "Looks up", "inputSchema": {"type": "object"}
    }))
    .unwrap();
    let listings = BTreeMap::from([("srv".to_owned(), vec![tool])]);
    let ctx = ToolContext::new(dir.path().to_path_buf(), Mode::Execute);
    let clients = on_call(&servers, &listings, &ctx, None);
    let [lookup] = clients.tools() else {
        panic!("{clients:?}");
    };
    assert_eq!(lookup.name(), "srv__lookup");
    assert!(!starts.exists(), "offered without starting");
    for _ in 0..2 {
        let error = lookup.execute(&ctx, json!({})).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::McpUnavailable, "{error:?}");
        assert!(
            error.message.contains("the MCP server srv did not start")
                && error.message.contains("no database"),
            "{error:?}"
        );
    }
    let count = std::fs::read_to_string(&starts).unwrap().lines().count();
    assert_eq!(count, 1, "one start for both calls");
    clients.shutdown().await;
}
