//! `beam_version`: the running server's identity, for bug reports and refresh checks.
//!
//! Process-wide: it takes no workspace, never starts a Lean runtime, and is quiet (no progress,
//! no liveness notice). `mcp_protocol` is the server's preferred revision, not per-request state.

use serde_json::{Value, json};

use crate::mcp::{Execution, MODERN_REVISION, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool name.
pub const NAME: &str = "beam_version";

/// The server's implementation name.
pub const SERVER_NAME: &str = "lean-beam-mcp";

/// The server's version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The catalog entry.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description:
            "Return the running Lean Beam MCP server identity for bug reports and refresh checks."
                .into(),
        input_schema: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": false
        }),
        annotations: ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        },
        execution: Execution::Concurrent,
        status: StatusNotice::Quiet,
    }
}

/// The identity, as structured content.
pub fn identity(runtime_active: bool) -> Value {
    let mut identity = json!({
        "name": SERVER_NAME,
        "version": SERVER_VERSION,
        "mcp_protocol": MODERN_REVISION,
        "runtime_active": runtime_active,
        "build": {
            "target": env!("LEAN_BEAM_MCP_TARGET"),
            "profile": env!("LEAN_BEAM_MCP_PROFILE"),
            "rustc": option_env!("LEAN_BEAM_MCP_RUSTC"),
        },
    });
    if let Ok(binary) = std::env::current_exe() {
        identity["server_binary"] = json!(binary.display().to_string());
    }
    if let Some(commit) = option_env!("LEAN_BEAM_MCP_SOURCE_COMMIT") {
        identity["source_commit"] = json!(commit);
        identity["source_dirty"] = json!(option_env!("LEAN_BEAM_MCP_SOURCE_DIRTY") == Some("true"));
    }
    identity
}
