//! `beam_stats` and `lean_drop_workspace`: looking at the cached runtimes and evicting one.
//!
//! Contract:
//! 1. `beam_stats` never starts a runtime: `{uptimeMs, workspaces}` (`uptimeMs` counts from the
//!    first runtime this process started, 0 before), each cached workspace with its runtime's
//!    state and its per-operation counts.
//! 2. `lean_drop_workspace` is a fence (earlier calls drain first, later ones wait) and cannot
//!    be cancelled: it removes the workspace's runtime, shuts it down and invalidates what it
//!    owned; `{dropped: true, invalidated_handles: true}`. Without a runtime it answers
//!    `{dropped: false, invalidated_handles: false, reason: "notFound"}` (so it is idempotent),
//!    and it accepts a root that no longer exists, as results echoed it.

use serde_json::{Value, json};

use super::schema::{LeanTool, read_only};
use crate::lean::error::HostError;
use crate::lean::state::HostState;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool names.
pub const STATS: &str = "beam_stats";
/// See [`STATS`].
pub const DROP: &str = "lean_drop_workspace";

/// `beam_stats`' catalog entry.
pub fn stats_spec() -> ToolSpec {
    ToolSpec {
        name: STATS.into(),
        description: "Per-workspace call statistics, for debugging.".into(),
        input_schema: json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": false
        }),
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::Quiet,
    }
}

/// `lean_drop_workspace`'s catalog entry.
pub fn drop_spec() -> ToolSpec {
    LeanTool {
        name: DROP,
        base: "Stop a workspace's Lean server, close its documents and void its handles; the \
               next call starts it again.",
        properties: &[],
        required: &[],
        annotations: ToolAnnotations {
            idempotent_hint: Some(true),
            ..ToolAnnotations::default()
        },
        execution: Execution::Fence,
        status: StatusNotice::WhenSlow,
    }
    .spec()
}

/// `lean_drop_workspace`.
pub async fn drop_workspace(state: &HostState, arguments: &Value) -> Result<Value, HostError> {
    let root = WorkspaceRoot::for_eviction(arguments.get("workspace").unwrap_or(&Value::Null))?;
    let dropped = state.registry.evict(&root).await;
    let mut result = json!({
        "workspace": root.descriptor(),
        "dropped": dropped,
        "invalidated_handles": dropped,
    });
    if !dropped {
        result["reason"] = json!("notFound");
    }
    Ok(result)
}
