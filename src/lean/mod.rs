//! The Lean host: the tools lean-beam-mcp offers, behind the [`ToolHost`] seam of the MCP core.
//!
//! Today it serves the process-wide tool `beam_version`; the Lean workspace runtime (`lake serve`
//! children, the document mirror, the Lean tools) plugs in here without the core changing.

pub mod tools;

use serde_json::Value;

use crate::mcp::{CallContext, ServerIdentity, ToolError, ToolHost, ToolResult, ToolSpec};

/// Instructions sent to clients in `initialize` and `server/discover`.
pub const INSTRUCTIONS: &str =
    "Use an explicit local workspace descriptor on every workspace-bound Beam tool call.";

/// The server identity the binary announces.
pub fn server_identity() -> ServerIdentity {
    ServerIdentity {
        name: tools::version::SERVER_NAME.into(),
        version: tools::version::SERVER_VERSION.into(),
        instructions: Some(INSTRUCTIONS.into()),
    }
}

/// The host the binary serves.
#[derive(Debug, Default)]
pub struct LeanHost {}

impl LeanHost {
    /// A host with no Lean runtime started.
    pub fn new() -> Self {
        LeanHost {}
    }
}

impl ToolHost for LeanHost {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![tools::version::spec()]
    }

    async fn call(&self, tool: &str, _arguments: Value, _ctx: CallContext) -> ToolResult {
        match tool {
            tools::version::NAME => Ok(tools::version::identity(false)),
            // The core only dispatches names from `tools()`; reaching this is a host bug.
            other => Err(ToolError::new(
                "internalError",
                format!("{other} is listed but not implemented"),
            )),
        }
    }
}
