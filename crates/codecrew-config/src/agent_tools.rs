//! The names of the two tools through which agents consult each other (`codecrew_core::crew`
//! serves them; the session, the config check and the MCP server name them). Here, in
//! the lowest layer that names them, since an agent's `tools` list in a config file may.

/// The tool that asks another agent a question (read-only tools).
pub const QUERY_AGENT: &str = "query_agent";
/// The tool that has another agent do a task (all tools, under the policy).
pub const EXECUTE_AGENT: &str = "execute_agent";
