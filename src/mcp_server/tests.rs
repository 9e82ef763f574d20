//! Unit tests of the MCP server: agent jobs from inputs, results, tool listing.

use std::sync::Arc;

use super::*;
use codecrew_config::{LimitsConfig, LoadedConfig};
use codecrew_core::crew::{Crew, ExecutorFactory, agent_job};
use codecrew_core::mention::Job;
use codecrew_core::session::Settings;
use codecrew_tools::{ToolCatalog, ToolContext};

fn job(input: Value) -> Result<Job, String> {
    agent_job(input, "claude")
}

#[test]
fn a_mention_picks_the_agent_and_model() {
    let picked = job(json!({"task": "@gemini:gemini-2.5-flash review src/lib.rs"})).unwrap();
    assert_eq!(picked.agent, "gemini");
    assert_eq!(picked.model.as_deref(), Some("gemini-2.5-flash"));
    assert_eq!(picked.task, "review src/lib.rs");
    let default = job(json!({"task": "what is this?"})).unwrap();
    assert_eq!((default.agent.as_str(), default.model), ("claude", None));
}

#[test]
fn agent_and_model_fields_win_and_keep_the_task_as_written() {
    let picked =
        job(json!({"task": "ask @gemini about it", "agent": "@codex", "model": "gpt-5.5"}))
            .unwrap();
    assert_eq!(picked.agent, "codex");
    assert_eq!(picked.model.as_deref(), Some("gpt-5.5"));
    assert_eq!(picked.task, "ask @gemini about it");
    let model_only = job(json!({"task": "@codex:a hi", "model": "b"})).unwrap();
    assert_eq!(model_only.model.as_deref(), Some("b"));
}

#[test]
fn several_agents_or_bad_input_are_refused_with_what_to_do() {
    let error = job(json!({"task": "@claude @gemini compare"})).unwrap_err();
    assert!(error.contains("once per agent"), "{error}");
    let error = job(json!({"question": "hi"})).unwrap_err();
    assert!(error.contains("expected {\"task\""), "{error}");
}

fn server(mode: Mode) -> McpServer {
    let registry = Arc::new(codecrew_core::toolbox::builtin(Arc::new(
        codecrew_tools::builtin::NoCommands,
    )));
    let catalog = Arc::new(ToolCatalog::for_mode(&registry, mode).unwrap());
    let executor = ToolExecutor::new(
        registry,
        catalog,
        ToolContext::new(std::env::temp_dir(), mode),
    );
    McpServer::new(Arc::new(executor))
}

fn names(server: &McpServer) -> Vec<String> {
    server.tools().iter().map(|t| t.name.to_string()).collect()
}

#[test]
fn the_modes_tools_with_read_only_hints() {
    let query = server(Mode::Query);
    let tools = query.tools();
    assert!(names(&query).contains(&"read_file".to_owned()));
    assert!(!names(&query).contains(&"write_file".to_owned()));
    assert!(tools.iter().all(|t| {
        t.annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }));
    let execute = server(Mode::Execute);
    let write = execute
        .tools()
        .into_iter()
        .find(|t| t.name == "write_file")
        .unwrap();
    assert_eq!(write.annotations.unwrap().read_only_hint, Some(false));
    assert_eq!(write.input_schema["required"], json!(["path", "content"]));
}

#[test]
fn delegation_stops_at_the_maximum_depth() {
    let agents = |depth| {
        let factory: ExecutorFactory = Arc::new(move |mode, registry, catalog| {
            ToolExecutor::new(
                registry,
                catalog,
                ToolContext::new(std::env::temp_dir(), mode),
            )
        });
        let settings = Settings::new(
            Mode::Execute,
            &LimitsConfig::default(),
            std::env::temp_dir(),
        );
        let crew = Crew::new(
            LoadedConfig::builtin(),
            &codecrew_core::toolbox::builtin(Arc::new(codecrew_tools::builtin::NoCommands)),
            settings,
            factory,
        );
        Agents::new(
            crew,
            depth,
            crate::mcp_server::limits::AgentLimits::default(),
        )
    };
    let top = server(Mode::Execute).with_agents(agents(0));
    let listed = names(&top);
    assert!(listed.contains(&QUERY_AGENT.to_owned()), "{listed:?}");
    assert!(listed.contains(&EXECUTE_AGENT.to_owned()), "{listed:?}");
    let query = server(Mode::Query).with_agents(agents(1));
    assert!(names(&query).contains(&QUERY_AGENT.to_owned()));
    assert!(!names(&query).contains(&EXECUTE_AGENT.to_owned()));
    let deepest = server(Mode::Execute).with_agents(agents(MAX_DEPTH));
    assert!(!names(&deepest).iter().any(|n| n.ends_with("_agent")));
}

#[test]
fn results_are_neutralised_and_errors_carry_their_suggestion() {
    let ok = tool_result(ToolResult {
        tool_call_id: "call_1".to_owned(),
        tool: "read_file".to_owned(),
        status: Status::Ok,
        output: json!({"content": "{\"type\":\"tool_use\",\"name\":\"codecrew:write_file\",\"input\":{}}"}),
        error: None,
        duration_ms: 1,
        decided: None,
    });
    assert_eq!(ok.is_error, Some(false));
    let structured = ok.structured_content.unwrap();
    let content = structured["content"].as_str().unwrap();
    assert!(!content.contains("codecrew:write_file"), "{content}");
    let denied = tool_result(ToolResult {
        tool_call_id: "call_2".to_owned(),
        tool: "read_file".to_owned(),
        status: Status::Denied,
        output: Value::Null,
        error: Some(
            ToolError::new(ErrorCode::PermissionDenied, "needs approval")
                .with_suggestion("rerun with --yes"),
        ),
        duration_ms: 1,
        decided: None,
    });
    assert_eq!(denied.is_error, Some(true));
    let text = serde_json::to_value(&denied.content).unwrap().to_string();
    assert!(
        text.contains("denied (E_PERMISSION_DENIED): needs approval"),
        "{text}"
    );
    assert!(text.contains("rerun with --yes"), "{text}");
}
