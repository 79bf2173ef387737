//! How the Lean host is set up: which `lake` it runs, how long it waits for Lean, what it passes
//! to the server. Read from the command line (and environment) by `main.rs`.

use std::path::PathBuf;
use std::time::Duration;

/// The default bound on any single wait for Lean (a request, a barrier, the handshake): generous,
/// since a first open may build dependencies; every such wait is also cancellable.
pub const DEFAULT_LEAN_TIMEOUT: Duration = Duration::from_secs(30 * 60);
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
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            lake: PathBuf::from("lake"),
            lean_timeout: DEFAULT_LEAN_TIMEOUT,
            serve_args: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}
