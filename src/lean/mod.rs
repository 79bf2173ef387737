//! The Lean host: the tools lean-beam-mcp offers, behind the [`ToolHost`] seam of the MCP core,
//! driving the user's own Lean through stock `lake serve` (no plugin).
//!
//! One runtime per workspace root (`registry`, `runtime`): a `lake serve` child in its own
//! process group (`process`), an LSP client over it (`lsp`), and the mirror of the documents it
//! was given (`documents`, `diagnostics`). Tools (`tools`) resolve their workspace, file,
//! version and position (`call`), ask Lean, and report progress while they wait (`progress`).
//! A save checkpoints a module through Lake (`checkpoint`): one-shot `lake` commands
//! (`lake_run`), Lake's own account of where modules live (`lake_layout`), its build output
//! (`lake_output`) and the artifacts it keeps (`artifacts`). Speculative runs happen in hidden
//! twin documents (`twins`, `probe`), ask Lean whether a position is in a proof once per
//! version (`modes`), and continue from signed handles (`handles`). Failures are
//! `error`'s codes; `stats` counts everything. One lexer (`syntax`) reads Lean text for all of
//! them: `sorry`s and holes, command starts, tactic boundaries, a text's first tactic (which the
//! self-check uses, so it is re-exported here). What a dead server leaves behind is ended by
//! `orphans`. Feedback reports (`feedback`) read what the host holds and never start Lean. With
//! tracing on (`HostOptions::trace`), each runtime writes its LSP traffic and Lean's stderr to a
//! trace stream of its own.

mod error;
mod feedback;
mod lake;
mod options;
mod progress;
// Crate-visible so that the `fuzzing` feature can re-export the LSP frame reader and client.
pub(crate) mod server;
mod session;
mod speculation;
mod state;
mod stats;
mod syntax;
mod text;
pub mod tools;
mod workspace;

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::mcp::{CallContext, ServerIdentity, ToolHost, ToolResult, ToolSpec};

pub use options::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_LEAN_TIMEOUT, DEFAULT_MAX_DOCUMENTS, DEFAULT_MAX_TWINS,
    DEFAULT_MAX_WORKSPACES, HostOptions,
};
pub use server::orphans::adopt_orphans;
use state::HostState;
pub use syntax::first_tactic;
pub use text::Position;
pub use workspace::root::PROJECT_MARKERS;

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
#[derive(Debug, Clone)]
pub struct LeanHost {
    state: Arc<HostState>,
}

impl LeanHost {
    /// A host with no Lean runtime started; inside a Tokio runtime it also shuts down the
    /// runtimes that sit unused for the idle timeout.
    pub fn new(options: HostOptions) -> Self {
        let idle = options.idle_timeout;
        let state = Arc::new(HostState::new(options));
        if let (Some(idle), Ok(tokio)) = (idle, tokio::runtime::Handle::try_current()) {
            tokio.spawn(shut_down_idle(Arc::downgrade(&state), idle));
        }
        LeanHost { state }
    }
}

/// Looks for idle runtimes a few times per idle timeout, for as long as the host lives.
async fn shut_down_idle(state: std::sync::Weak<HostState>, idle: std::time::Duration) {
    let tick = (idle / 4).clamp(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_secs(60),
    );
    loop {
        tokio::time::sleep(tick).await;
        let Some(state) = state.upgrade() else {
            return;
        };
        state.registry.shut_down_idle(idle);
    }
}

impl ToolHost for LeanHost {
    fn tools(&self) -> Vec<ToolSpec> {
        tools::catalog()
    }

    fn admitted(&self, tool: &str, arguments: &Value, ctx: &CallContext) {
        if tools::is_quiet(tool) {
            return;
        }
        if tool == tools::feedback::NAME {
            tools::feedback::admitted(arguments, ctx);
            return;
        }
        if tool == tools::admin::DROP
            && let Ok(root) = workspace::root::WorkspaceRoot::for_eviction(
                arguments.get("workspace").unwrap_or(&Value::Null),
            )
        {
            // Before the fence waits for the calls before it: none of them may wait for a Lean
            // that this drop will end anyway.
            self.state.registry.drop_requested(&root);
        }
        let path = arguments.get("path").and_then(Value::as_str);
        if let Some(path) = path {
            ctx.set_status("running", Some(path));
        }
        ctx.progress(match (tool, path) {
            (tools::admin::DROP, _) => "lean_drop_workspace: preparing workspace eviction".into(),
            (_, Some(path)) => format!("{tool} on {path}: preparing the Lean workspace"),
            (_, None) => format!("{tool}: preparing the Lean workspace"),
        });
    }

    async fn call(&self, tool: &str, arguments: Value, ctx: CallContext) -> ToolResult {
        tools::dispatch(&self.state, tool, arguments, &ctx)
            .await
            .map_err(Into::into)
    }

    async fn shutdown(&self, deadline: Instant) {
        let _ = tokio::time::timeout_at(deadline.into(), self.state.registry.shutdown_all()).await;
        self.state.registry.kill_all();
    }

    fn kill(&self) {
        self.state.registry.kill_all();
    }
}
