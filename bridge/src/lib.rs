//! A test-only Streamable HTTP bridge in front of the `lean-beam-mcp` stdio server. Never the
//! product's deployment: it exists so that suites which only speak HTTP (the official MCP
//! conformance suites) can drive the real binary.
//!
//! Contract:
//! 1. [`Bridge::start`] binds `127.0.0.1` (an ephemeral port unless one is given), spawns the
//!    server command with piped stdin/stdout (stderr inherited) and serves one endpoint, `/mcp`;
//!    every other path is 404.
//! 2. A POST is checked in this order, and the first failing rule answers: Host/Origin must name
//!    the bridge's own loopback authority (403); Content-Type `application/json` (415); Accept
//!    lists `application/json` and `text/event-stream` (406); the body parses (400 -32700); it is
//!    one request or notification object, not a batch (400 -32600); then the era's header rules
//!    ([`Mode`]). GET, DELETE and other methods are 405. No session ids are minted, and an
//!    `Mcp-Session-Id` a client sends anyway is ignored.
//! 3. Requests are forwarded concurrently. Each gets a bridge-owned JSON-RPC id (and, when it
//!    has one, a bridge-owned progress token), so clients may reuse ids freely; answers and
//!    notifications are mapped back to the client's own values, JSON type included.
//!    `notifications/cancelled` is mapped to the bridge id when exactly one in-flight request
//!    carries the cancelled id, and that request is then answered at once with no JSON-RPC
//!    response (204, or its stream closes); otherwise it is dropped (ambiguous or void).
//! 4. A request whose `_meta` carries a `progressToken` or a per-request log level may be
//!    answered as an SSE stream: if a notification for it arrives before its response, the
//!    response becomes `text/event-stream` (`event: message` frames, the response last, then the
//!    stream closes); if the response comes first it is plain JSON, so error statuses hold.
//!    Progress is matched by token; the `beam.status` notice by its `data.requestId`; any other
//!    log goes to the only in-flight request if there is exactly one, and is dropped otherwise.
//! 5. Server errors map to HTTP statuses in the modern era (-32601 → 404, -32603 → 500, other
//!    errors → 400); in the legacy era every answer is 200. Notifications are 202 with no body.
//! 6. When the server exits or closes its output, every waiting request and every later one is
//!    answered 500 -32603. [`BridgeHandle::shutdown`] stops listening, closes the server's stdin
//!    and waits for it (killing it after a grace period); dropping the handle kills it.

mod child;
pub mod cli;
mod envelope;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod headers;
mod origin;
mod reply;
mod routing;
mod service;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// The protocol era the bridge validates for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// MCP 2025-11-25: `MCP-Protocol-Version`, when sent, must be `2025-11-25`; every answer is
    /// HTTP 200.
    Legacy,
    /// MCP 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` are required on
    /// requests and must agree with the body; errors carry HTTP statuses.
    Modern,
}

/// How to start a bridge.
#[derive(Debug)]
pub struct BridgeConfig {
    /// Which era's rules apply.
    pub mode: Mode,
    /// The port to bind on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// The stdio server to spawn (its stdin and stdout are replaced by pipes).
    pub server: Command,
    /// The largest request body accepted (413 beyond it).
    pub max_body_bytes: usize,
    /// How long [`BridgeHandle::shutdown`] waits for the server after closing its stdin.
    pub shutdown_grace: Duration,
}

impl BridgeConfig {
    /// A bridge in `mode` on an ephemeral port in front of `server`.
    pub fn new(mode: Mode, server: Command) -> Self {
        BridgeConfig {
            mode,
            port: 0,
            server,
            max_body_bytes: 16 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Starts bridges.
#[derive(Debug)]
pub struct Bridge;

impl Bridge {
    /// Binds, spawns the server and starts serving. Must run inside a Tokio runtime.
    pub async fn start(config: BridgeConfig) -> std::io::Result<BridgeHandle> {
        let listener =
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, config.port)))
                .await?;
        let port = listener.local_addr()?.port();
        let (outbound, outbound_rx) = tokio::sync::mpsc::unbounded_channel();
        let routing = Arc::new(routing::Routing::new(outbound));
        let in_flight = routing.in_flight();
        let child = child::spawn(config.server, routing.clone(), outbound_rx)?;
        let app = service::router(service::Shared {
            mode: config.mode,
            port,
            max_body_bytes: config.max_body_bytes,
            routing,
        });
        let (stop_http, stop_rx) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stop_rx.await;
                })
                .await;
            if let Err(e) = served {
                tracing::error!("the HTTP server failed: {e}");
            }
        });
        let url = format!("http://127.0.0.1:{port}/mcp");
        tracing::info!(%url, mode = ?config.mode, "bridge listening");
        Ok(BridgeHandle {
            url,
            port,
            pid: child.pid,
            exit: child.exit,
            in_flight,
            close_stdin: Some(child.close_stdin),
            kill: Some(child.kill),
            stop_http: Some(stop_http),
            server: Some(server),
            shutdown_grace: config.shutdown_grace,
        })
    }
}

/// A running bridge. Dropping it stops serving and kills the server.
#[derive(Debug)]
pub struct BridgeHandle {
    url: String,
    port: u16,
    pid: Option<u32>,
    exit: watch::Receiver<Option<Option<ExitStatus>>>,
    in_flight: watch::Receiver<usize>,
    close_stdin: Option<oneshot::Sender<()>>,
    kill: Option<oneshot::Sender<()>>,
    stop_http: Option<oneshot::Sender<()>>,
    server: Option<JoinHandle<()>>,
    shutdown_grace: Duration,
}

impl BridgeHandle {
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server process id.
    pub fn server_pid(&self) -> Option<u32> {
        self.pid
    }

    /// How many forwarded requests are waiting for the server's answer.
    pub fn in_flight(&self) -> usize {
        *self.in_flight.borrow()
    }

    /// Completes once exactly `n` forwarded requests are waiting for the server's answer (for
    /// tests that must know a request has reached the server before acting).
    pub async fn wait_for_in_flight(&self, n: usize) {
        let mut in_flight = self.in_flight.clone();
        let _ = in_flight.wait_for(|count| *count == n).await;
    }

    /// Completes once the server has exited and every waiting request has been failed; yields
    /// its exit status (`None` if it could not be read).
    pub async fn server_exited(&self) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(status) => status.flatten(),
            Err(_) => None,
        }
    }

    /// Stops listening, closes the server's stdin and waits for it to exit (killing it after the
    /// grace period); returns its exit status.
    pub async fn shutdown(mut self) -> Option<ExitStatus> {
        if let Some(stop) = self.stop_http.take() {
            let _ = stop.send(());
        }
        if let Some(close) = self.close_stdin.take() {
            let _ = close.send(());
        }
        let status = match tokio::time::timeout(self.shutdown_grace, self.server_exited()).await {
            Ok(status) => status,
            Err(_) => {
                tracing::warn!(
                    "the server did not exit within {:?} of end of input: killing it",
                    self.shutdown_grace
                );
                if let Some(kill) = self.kill.take() {
                    let _ = kill.send(());
                }
                self.server_exited().await
            }
        };
        if let Some(mut server) = self.server.take()
            && tokio::time::timeout(self.shutdown_grace, &mut server)
                .await
                .is_err()
        {
            tracing::warn!("HTTP connections still open after shutdown: dropping them");
            server.abort();
        }
        status
    }
}

impl Drop for BridgeHandle {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.abort();
        }
        // Dropping the kill sender makes the supervisor kill the server.
        self.kill.take();
    }
}
