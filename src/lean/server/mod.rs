//! One `lake serve` and the LSP client over it: started, asked, retired and ended. Nothing here
//! knows about documents; `session` decides what Lean is told about them.
//!
//! Contract:
//! 1. [`LeanServer::start`] spawns `lake serve` in the root (`process`: its own process group,
//!    a bounded stderr tail) and completes the strict handshake (`initialize`, then
//!    `initialized`; Lean's `register_lean_watcher` is answered by the client) within the Lean
//!    timeout, unless `abort` fires first (a drop of the workspace). A failure is `runtimeSetup`
//!    with `data.reason` (`lakeNotFound`, `lakeNotExecutable`, `spawnFailed`, `handshakeExited`,
//!    `handshakeRefused`, `handshakeTimeout` or `workspaceDropped`) and, once Lean ran, its
//!    stderr tail; it leaves no process behind. The `initialize` result's capabilities are kept
//!    for the server's life (`capabilities`).
//! 2. [`LeanServer::request`] waits for Lean within the Lean timeout and is cancellable:
//!    dropping it (a cancelled call) sends `$/cancelRequest`. A request this Lean's capabilities
//!    do not offer is not sent: `invalidParams` (`leanLacksFeature`, [`LeanServer::require`]).
//!    Lean's errors keep their meaning (`HostError::from_lean`); a connection that closes is
//!    `serverExited`; each carries Lean's stderr tail. The process group is killed as soon as
//!    the connection closes, for whatever reason.
//! 3. [`LeanServer::retire`] gives the server an end that is not a failure of Lean's (the
//!    workspace's Lake configuration changed): requests in flight, and any sent later, fail with
//!    that error instead of `serverExited`.
//! 4. [`LeanServer::shutdown`] asks Lean to shut down and exit within the grace, then kills the
//!    process group; [`LeanServer::kill`] kills it at once. Nothing of a server outlives it.

pub mod capabilities;
pub mod lsp;
pub mod orphans;
pub mod process;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use crate::lean::error::HostError;
use crate::lean::options::HostOptions;
use crate::lean::text::file_uri;
use crate::trace::Stream;
use capabilities::Capabilities;
use lsp::{Inbox, LspClient, LspError};
use process::{GroupKiller, LeanProcess, StderrTail};

/// How long an error report waits for a dead server's last stderr lines.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// A running `lake serve`.
#[derive(Debug)]
pub struct LeanServer {
    root: PathBuf,
    lake: PathBuf,
    timeout: Duration,
    grace: Duration,
    client: LspClient,
    process: LeanProcess,
    tail: Arc<StderrTail>,
    retired: OnceLock<HostError>,
    capabilities: Capabilities,
}

impl LeanServer {
    /// Starts `lake serve` in `root` and completes the handshake (see the contract); Lean's
    /// notifications go to `inbox`. `on_spawn` gets the process group's killer as soon as the
    /// process exists, so a host that must kill everything can reach a server still in its
    /// handshake.
    pub async fn start(
        root: &Path,
        options: &HostOptions,
        trace: Option<Stream>,
        inbox: Arc<dyn Inbox>,
        on_spawn: impl FnOnce(GroupKiller),
        abort: &CancellationToken,
    ) -> Result<LeanServer, HostError> {
        if abort.is_cancelled() {
            return Err(dropped(root));
        }
        let (process, stdin, stdout) =
            LeanProcess::spawn(&options.lake, root, &options.serve_args, trace.clone())
                .map_err(|e| HostError::runtime_setup(e.reason, e.message, Vec::new()))?;
        on_spawn(process.killer());
        let client = LspClient::start(BufReader::new(stdout), stdin, inbox, trace);
        // A stream that breaks while `lake serve` runs (a frame out of step, a length beyond any
        // message) leaves a server nobody can talk to: it is ended at once, not at the next call.
        let closed = client.closed();
        let killer = process.killer();
        tokio::spawn(async move {
            closed.await;
            killer.kill();
        });
        let mut server = LeanServer {
            tail: process.stderr_tail(),
            process,
            root: root.to_path_buf(),
            lake: options.lake.clone(),
            timeout: options.lean_timeout,
            grace: options.shutdown_grace,
            client,
            retired: OnceLock::new(),
            capabilities: Capabilities::default(),
        };
        // Nothing may precede initialize's answer, a cancellation neither: a start abandoned
        // (a drop, the timeout) kills the server instead.
        let handshake = async {
            let pending = server
                .client
                .request("initialize", server.initialize_params());
            pending.await.uncancellable().await
        };
        let outcome = tokio::select! {
            biased;
            () = abort.cancelled() => {
                server.kill();
                server.wait_exit().await;
                return Err(dropped(root));
            }
            outcome = tokio::time::timeout(server.timeout, handshake) => outcome,
        };
        let failure = match outcome {
            Ok(Ok(result)) => {
                server.capabilities = Capabilities::from_initialize(&result);
                None
            }
            Ok(Err(LspError::Closed(reason))) => Some((
                "handshakeExited",
                format!(
                    "`{} serve` ended before completing the LSP handshake ({reason})",
                    server.lake.display()
                ),
            )),
            Ok(Err(LspError::Response { code, message, .. })) => Some((
                "handshakeRefused",
                format!("Lean refused initialize with {code}: {message}"),
            )),
            Err(_) => Some((
                "handshakeTimeout",
                format!("Lean did not answer initialize within {:?}", server.timeout),
            )),
        };
        if let Some((reason, failure)) = failure {
            server.kill();
            server.wait_exit().await;
            // A drop that stopped the start may have killed it first: the drop is the reason.
            if abort.is_cancelled() {
                return Err(dropped(root));
            }
            let tail = server.tail.final_lines(STDERR_DRAIN).await;
            return Err(HostError::runtime_setup(
                reason,
                format!(
                    "could not start Lean for {}: {failure}. Check that `lake serve` works in that \
                     directory (its last stderr lines are in data.stderrTail)",
                    root.display()
                ),
                tail,
            ));
        }
        // A drop that came as the handshake finished still ends this start.
        if abort.is_cancelled() {
            server.kill();
            server.wait_exit().await;
            return Err(dropped(root));
        }
        server.client.notify_control("initialized", json!({}));
        Ok(server)
    }

    fn initialize_params(&self) -> Value {
        let uri = file_uri(&self.root);
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "lean-beam-mcp", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": name}],
            "capabilities": {
                "textDocument": {
                    "publishDiagnostics": {"relatedInformation": true},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "definition": {"linkSupport": true},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "completion": {"completionItem": {"insertReplaceSupport": true}}
                },
                "window": {"workDoneProgress": false},
                "workspace": {"applyEdit": false, "workspaceFolders": true},
                "lean": {"incrementalDiagnosticSupport": true}
            },
            "initializationOptions": {"hasWidgets": false}
        })
    }

    /// The client, for `session` (the only code that tells Lean about documents).
    pub fn client(&self) -> &LspClient {
        &self.client
    }

    /// The bound on any single wait for this Lean.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Messages sent to Lean so far.
    pub fn messages_sent(&self) -> u64 {
        self.client.messages_sent()
    }

    /// Whether the server is still there.
    pub fn is_alive(&self) -> bool {
        self.client.closed_reason().is_none()
    }

    /// The last lines the server wrote to stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    /// Gives the server the end every request gets from now on (see the contract).
    pub fn retire(&self, why: HostError) {
        let _ = self.retired.set(why);
    }

    /// The end the server was given, if any.
    pub fn retirement(&self) -> Option<&HostError> {
        self.retired.get()
    }

    /// Refuses `method` when this Lean's capabilities do not offer it (see the contract), so a
    /// tool can refuse before it opens a document for it.
    pub fn require(&self, method: &str) -> Result<(), HostError> {
        match self.capabilities.lacks(method) {
            None => Ok(()),
            Some(need) => Err(HostError::lean_lacks_feature(
                method,
                need.capability,
                self.capabilities.server_info(),
                need.instead,
            )),
        }
    }

    /// Sends a request and waits for its answer, within the Lean timeout, unless `cancel` fires
    /// first (then the request is cancelled on the server too).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, HostError> {
        if let Some(retired) = self.retired.get() {
            return Err(retired.clone());
        }
        self.require(method)?;
        let answer = async { self.client.request(method, params).await.await };
        let answer = tokio::select! {
            answer = answer => answer,
            () = cancel.cancelled() => return Err(HostError::cancelled(format!("{method} was cancelled"))),
            () = tokio::time::sleep(self.timeout) => return Err(HostError::lean_timeout(
                format!(
                    "Lean did not answer {method} within {:?}; the request was cancelled. Raise \
                     --lean-timeout-ms if this file needs longer",
                    self.timeout
                ),
                self.stderr_tail(),
            )),
        };
        match answer {
            Ok(result) => Ok(result),
            Err(LspError::Response {
                code,
                message,
                data,
            }) => Err(HostError::from_lean(
                method,
                code,
                &message,
                data,
                self.stderr_tail(),
            )),
            Err(LspError::Closed(reason)) => Err(match self.retired.get() {
                Some(retired) => retired.clone(),
                None => {
                    HostError::server_exited(&reason, self.tail.final_lines(STDERR_DRAIN).await)
                }
            }),
        }
    }

    /// Asks Lean to shut down and exit within the grace, then kills the process group.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let polite = async {
                let _ = self.client.request("shutdown", Value::Null).await.await;
                self.client.notify_control("exit", Value::Null);
                self.wait_exit().await;
            };
            let _ = tokio::time::timeout(self.grace, polite).await;
        }
        self.kill();
        self.client.close("the workspace was shut down");
    }

    async fn wait_exit(&self) {
        let status = self.process.wait().await;
        tracing::debug!(root = %self.root.display(), %status, "lake serve exited");
    }

    /// Kills the process group now.
    pub fn kill(&self) {
        self.process.kill();
    }
}

/// `runtimeSetup` (`workspaceDropped`): a drop of the workspace stopped or refused its start.
pub fn dropped(root: &Path) -> HostError {
    HostError::runtime_setup(
        "workspaceDropped",
        format!(
            "the Lean server for {} was not started, or was stopped while it started, because \
             lean_drop_workspace was called for the workspace; call again once it has answered",
            root.display()
        ),
        Vec::new(),
    )
}

/// The name every trace stream of `root`'s Lean servers starts with: `lsp-<directory
/// name>-<8 hex digits of the root's hash>-`, then the start's epoch.
pub fn trace_prefix(root: &Path) -> String {
    use sha2::Digest;
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = name.chars().take(40).collect();
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("lsp-{name}-{hash}-")
}
