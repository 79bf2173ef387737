//! How the Lean host is set up: which `lake` it runs, how long it waits for Lean, what it passes
//! to the server, and how much of Lean it keeps alive (a Mathlib worker is GBs: every bound is
//! a flag). Read from the command line (and environment) by `main.rs`.

use std::path::PathBuf;
use std::time::Duration;

use crate::trace::TraceDir;

/// The default bound on any single wait for Lean (a request, a barrier, the handshake): generous,
/// since a first open may build dependencies; every such wait is also cancellable.
pub const DEFAULT_LEAN_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How many twin documents (each a Lean worker) a workspace keeps open for speculative runs.
pub const DEFAULT_MAX_TWINS: usize = 2;
/// How many workspaces keep a Lean server running at once.
pub const DEFAULT_MAX_WORKSPACES: usize = 4;
/// How many documents (each a Lean worker) a workspace keeps open, twins aside.
pub const DEFAULT_MAX_DOCUMENTS: usize = 16;
/// How long a workspace's Lean server may sit unused before it is shut down.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// How long a fatal report from Lean waits for what explains it (a header error published just
/// after it) before the document's worker is taken for crashed and revived.
pub const DEFAULT_CRASH_GRACE: Duration = Duration::from_millis(500);
/// How long a Lean server gets to shut down politely before its process group is killed.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// The Lean host's settings.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The `lake` executable: a path, or a name looked up on PATH.
    pub lake: PathBuf,
    /// The bound on any single wait for Lean (a checkpoint's `lake build` included).
    pub lean_timeout: Duration,
    /// Arguments passed to the server after `lake serve --`.
    pub serve_args: Vec<String>,
    /// How long `shutdown`/`exit` may take before the process group is killed.
    pub shutdown_grace: Duration,
    /// The bound on open twin documents per workspace.
    pub max_twins: usize,
    /// The bound on running Lean servers.
    pub max_workspaces: usize,
    /// The bound on open documents per workspace (twins aside).
    pub max_documents: usize,
    /// How long a fatal report waits for its explanation before the worker counts as crashed.
    pub crash_grace: Duration,
    /// How long an unused Lean server is kept (`None`: for ever).
    pub idle_timeout: Option<Duration>,
    /// Where each Lean server's LSP traffic is traced, if anywhere.
    pub trace: Option<TraceDir>,
    /// The tools served, by name (`None`: every tool).
    pub tools: Option<Vec<String>>,
    /// The default of `diagnostics_in_result` (the seed's: false).
    pub diagnostics_in_result: bool,
    /// The default of `diagnostic_scope`: `errors` (the seed's) or `all`.
    pub diagnostic_scope: &'static str,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            lake: PathBuf::from("lake"),
            lean_timeout: DEFAULT_LEAN_TIMEOUT,
            serve_args: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_twins: DEFAULT_MAX_TWINS,
            max_workspaces: DEFAULT_MAX_WORKSPACES,
            max_documents: DEFAULT_MAX_DOCUMENTS,
            crash_grace: DEFAULT_CRASH_GRACE,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            trace: None,
            tools: None,
            diagnostics_in_result: false,
            diagnostic_scope: "errors",
        }
    }
}
