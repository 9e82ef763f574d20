//! The library: the toolbox and the executor over the real servers.

use super::*;

#[tokio::test]
async fn both_servers_offer_their_tools() {
    let Some(servers) = Servers::require("both_servers_offer_their_tools") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([
        ("everything", servers.everything()),
        (
            "files",
            servers.files(&["read_text_file", "list_directory"]),
        ),
    ]));
    let toolbox = codecrew_core::toolbox::start(
        &config,
        &ws.root,
        Mode::Execute,
        std::sync::Arc::new(codecrew::cli::CliHelp),
    )
    .await;
    assert_eq!(toolbox.notices(), [] as [String; 0]);
    let registry = toolbox.registry();
    for name in [
        "read_file",
        "everything__echo",
        "everything__get-sum",
        "files__read_text_file",
        "files__list_directory",
        "files__write_file",
        "files__edit_file",
    ] {
        assert!(registry.contains(name), "{name} missing: {registry:?}");
    }
    let echo = registry.get("everything__echo").unwrap();
    assert_eq!(echo.description(), "Echoes back the input string");
    assert_eq!(echo.input_schema()["required"], json!(["message"]));
    assert!(echo.readonly(), "listed in readonly_tools");
    // The server's own readOnlyHint is not trusted: only readonly_tools count.
    assert!(!registry.get("everything__get-sum").unwrap().readonly());
    assert!(!registry.get("files__write_file").unwrap().readonly());
    assert!(
        !registry
            .get("files__list_directory_with_sizes")
            .unwrap()
            .readonly()
    );
    // Every schema the servers gave compiles.
    ToolCatalog::for_mode(registry, Mode::Execute)
        .unwrap()
        .check_schemas()
        .unwrap();
    toolbox.shutdown().await;
    ws.assert_no_server_left();
}

#[tokio::test]
async fn calls_reach_the_servers() {
    let Some(servers) = Servers::require("calls_reach_the_servers") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([
        ("everything", servers.everything()),
        ("files", servers.files(&["read_text_file"])),
    ]));
    let toolbox = codecrew_core::toolbox::start(
        &config,
        &ws.root,
        Mode::Execute,
        std::sync::Arc::new(codecrew::cli::CliHelp),
    )
    .await;
    let query = ws.executor(&toolbox, Mode::Query);

    let result = call(
        &query,
        "everything__echo",
        json!({"message": "hello, crew"}),
    )
    .await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert_eq!(result.output, json!({"text": "Echo: hello, crew"}));

    let result = call(
        &query,
        "files__read_text_file",
        json!({"path": "notes.txt"}),
    )
    .await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert_eq!(
        result.output,
        json!({"structured": {"content": "first line\nsecond line\n"}})
    );

    // The schema is checked before the server sees the call.
    let result = call(&query, "everything__echo", json!({"text": "no message"})).await;
    assert_eq!(result.error.unwrap().code, ErrorCode::InvalidInput);

    // The tool's own error (isError) is an error result with its text.
    let result = call(
        &query,
        "files__read_text_file",
        json!({"path": "/etc/hostname"}),
    )
    .await;
    assert_eq!(result.status, Status::Error);
    let error = result.error.unwrap();
    assert_eq!(error.code, ErrorCode::McpToolError);
    assert!(
        error.message.contains("outside allowed directories"),
        "{error}"
    );

    // Query mode offers only what readonly_tools names.
    let error = call(
        &query,
        "files__write_file",
        json!({"path": "x.txt", "content": "x"}),
    )
    .await
    .error
    .unwrap();
    assert_eq!(error.code, ErrorCode::ToolNotInCatalog);
    assert!(!ws.root.join("x.txt").exists());

    let execute = ws.executor(&toolbox, Mode::Execute);
    let result = call(&execute, "everything__get-sum", json!({"a": 2, "b": 40})).await;
    // Not read-only, and the executor has no asker: denied, never run.
    assert_eq!(result.status, Status::Denied, "{result:?}");
    let execute = execute.assume_yes(true);
    let result = call(&execute, "everything__get-sum", json!({"a": 2, "b": 40})).await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    assert!(
        result.output.to_string().contains("42"),
        "{}",
        result.output
    );
    let result = call(&execute, "everything__get-tiny-image", json!({})).await;
    assert_eq!(result.status, Status::Ok, "{result:?}");
    let image = &result.output["content"][0];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mime_type"], "image/png");
    assert!(image.get("data").is_none(), "binary data is never inlined");
    toolbox.shutdown().await;
    ws.assert_no_server_left();
}

#[tokio::test]
async fn a_failing_server_leaves_the_others_working() {
    let Some(servers) = Servers::require("a_failing_server_leaves_the_others_working") else {
        return;
    };
    let ws = Ws::new();
    let crashing = McpServerConfig {
        command: "bash".to_owned(),
        args: vec!["-c".to_owned(), "echo 'no database' >&2; exit 2".to_owned()],
        ..servers.everything()
    };
    let missing = McpServerConfig {
        command: "no-such-mcp-server".to_owned(),
        args: Vec::new(),
        ..servers.everything()
    };
    let mut files = servers.files(&["read_text_file", "no_such_tool"]);
    // The filesystem server refuses a directory that does not exist, and says why.
    files.args[1] = "no/such/dir".to_owned();
    let config = Ws::config(BTreeMap::from([
        ("crashing", crashing),
        ("everything", servers.everything()),
        ("files", files),
        ("missing", missing),
    ]));
    let toolbox = codecrew_core::toolbox::start(
        &config,
        &ws.root,
        Mode::Execute,
        std::sync::Arc::new(codecrew::cli::CliHelp),
    )
    .await;
    let notices = toolbox.notices();
    assert_eq!(notices.len(), 3, "{notices:#?}");
    assert_eq!(
        notices[0],
        "mcp.crashing did not start: it exited before the MCP handshake finished (stderr: no \
         database)"
    );
    assert!(
        notices[1].starts_with("mcp.files did not start: it exited before the MCP handshake"),
        "{}",
        notices[1]
    );
    assert!(notices[1].contains("no/such/dir"), "{}", notices[1]);
    assert!(
        notices[2].starts_with("mcp.missing did not start: cannot run no-such-mcp-server:"),
        "{}",
        notices[2]
    );
    assert!(!toolbox.registry().contains("files__read_text_file"));
    let query = ws.executor(&toolbox, Mode::Query);
    let result = call(&query, "everything__echo", json!({"message": "still here"})).await;
    assert_eq!(result.output, json!({"text": "Echo: still here"}));
    toolbox.shutdown().await;
}

#[tokio::test]
async fn a_server_that_is_gone_is_unavailable() {
    let Some(servers) = Servers::require("a_server_that_is_gone_is_unavailable") else {
        return;
    };
    let ws = Ws::new();
    let config = Ws::config(BTreeMap::from([(
        "files",
        servers.files(&["read_text_file", "nonexistent_tool"]),
    )]));
    let toolbox = codecrew_core::toolbox::start(
        &config,
        &ws.root,
        Mode::Execute,
        std::sync::Arc::new(codecrew::cli::CliHelp),
    )
    .await;
    assert_eq!(
        toolbox.notices(),
        ["mcp.files: readonly_tools names \"nonexistent_tool\", which the server does not offer"]
    );
    let executor = ws.executor(&toolbox, Mode::Query);
    // The tools outlive the servers (an executor may hold them): a call then fails cleanly.
    let registry = Arc::clone(toolbox.registry());
    toolbox.shutdown().await;
    ws.assert_no_server_left();
    let result = call(
        &executor,
        "files__read_text_file",
        json!({"path": "notes.txt"}),
    )
    .await;
    let error = result.error.unwrap();
    assert_eq!(error.code, ErrorCode::McpUnavailable, "{error}");
    assert!(
        error
            .message
            .contains("the MCP server files is not running any more"),
        "{error}"
    );
    drop(registry);
}
