//! `beam_version`: the running server's identity, for bug reports and refresh checks.
//!
//! Process-wide: it takes no workspace, never starts a Lean runtime, and is quiet (no progress,
//! no liveness notice). `mcp_protocol` is the server's preferred revision, not per-request state.

use serde_json::json;

use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool name.
pub const NAME: &str = "beam_version";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME.into(),
        description: "This server's name, version and build.".into(),
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
