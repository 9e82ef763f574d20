//! What the tests of `codecrew mcp` (stdio and HTTP) do with rmcp's client.

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use serde_json::Value;

/// Calls `tool` with `input` (a JSON object); the protocol's error as text.
pub async fn try_call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    input: Value,
) -> Result<CallToolResult, String> {
    let Value::Object(arguments) = input else {
        panic!("the input must be an object")
    };
    let arguments: JsonObject = arguments;
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .map_err(|error| error.to_string())
}

/// All the text content of a result, joined.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .filter_map(|block| block["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}
