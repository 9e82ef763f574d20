//! Resolving the paths a tool call names, confined to the workspace root.
