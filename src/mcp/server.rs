//! Serving: wiring a host, a transport and the coordinator together, and ending within a deadline.
//!
//! Contract:
//! 1. The server runs until end of input, a closed output, or the first stop request (a
//!    termination signal); each closes admission the same orderly way (see `coordinator`). Then
//!    the host's [`ToolHost::shutdown`] runs and the writer drains what is queued.
//! 2. All of that (ending running calls included) must finish within
//!    [`ServerOptions::shutdown_timeout`] of the moment admission closed. At the deadline, what
//!    could not be written is dropped, [`ToolHost::kill`] ends what the host owns, and serving
//!    returns [`Exit::DeadlineExceeded`]. A stop request once shutdown has begun (a second
//!    signal, or a first one after end of input) ends it at once the same way
//!    ([`Exit::Stopped`]).
//! 3. Nothing is unbounded: inbound and outbound queues, running calls and waiting calls all
//!    have limits (see `transport::queue` and `coordinator`).

use std::io::{Read, Stdin, Stdout, Write};
use std::pin::pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use tokio::sync::{mpsc, oneshot};

use super::catalog::{Catalog, CatalogError, ToolHost};
use super::coordinator::{Coordinator, Endings};
use super::protocol::ServerIdentity;
use super::session::Session;
use super::status::DEFAULT_HEARTBEAT;
use super::transport::{self, QueueLimits, Stop, TapHandle};

/// The default cap on one input line: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The default delay before the `beam.status` liveness notice.
pub const DEFAULT_STATUS_DELAY: Duration = Duration::from_secs(2);
/// The default number of tool calls that run at once.
pub const DEFAULT_MAX_RUNNING_CALLS: usize = 32;
/// The default number of admitted calls that wait for their turn before input stops being read.
pub const DEFAULT_MAX_WAITING_CALLS: usize = 1024;
/// The default bytes (of the lines they came from) that waiting calls may hold.
pub const DEFAULT_MAX_WAITING_BYTES: usize = 64 * 1024 * 1024;
/// The default time from the start of shutdown to a forced exit.
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// The default time a cancelled call's host future keeps running to clean up.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(1);
/// Messages read ahead of the coordinator: at most this many, and at most this many bytes of the
/// lines they came from (one larger line still fits an empty queue).
pub const INBOUND_LIMITS: QueueLimits = QueueLimits {
    items: 256,
    bytes: 8 * 1024 * 1024,
};
/// Output queued for a client that is slow to read; past it the server stops reading input.
pub const OUTBOUND_LIMITS: QueueLimits = QueueLimits {
    items: 16 * 1024,
    bytes: 4 * 1024 * 1024,
};

/// How a server is set up.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Who the server says it is.
    pub identity: ServerIdentity,
    /// The longest input line accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long a call runs before its liveness notice.
    pub status_delay: Duration,
    /// How long a call with a progress token goes without progress before a heartbeat.
    pub heartbeat: Duration,
    /// How many tool calls run at once; later ones wait their turn in order.
    pub max_running_calls: usize,
    /// How many admitted calls may wait for their turn before input stops being read.
    pub max_waiting_calls: usize,
    /// How many bytes (of the lines they came from) waiting calls may hold.
    pub max_waiting_bytes: usize,
    /// How long shutdown may take from the moment admission closes.
    pub shutdown_timeout: Duration,
    /// How long a cancelled call's host future keeps being polled so it can clean up.
    pub cancel_grace: Duration,
    /// Who sees every line read and written (a traffic trace), if anyone.
    pub tap: TapHandle,
}

impl ServerOptions {
    /// The defaults, for a server that calls itself `identity`.
    pub fn new(identity: ServerIdentity) -> Self {
        ServerOptions {
            identity,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            status_delay: DEFAULT_STATUS_DELAY,
            heartbeat: DEFAULT_HEARTBEAT,
            max_running_calls: DEFAULT_MAX_RUNNING_CALLS,
            max_waiting_calls: DEFAULT_MAX_WAITING_CALLS,
            max_waiting_bytes: DEFAULT_MAX_WAITING_BYTES,
            shutdown_timeout: DEFAULT_SHUTDOWN_TIMEOUT,
            cancel_grace: DEFAULT_CANCEL_GRACE,
            tap: None,
        }
    }
}

/// How serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything was answered or cancelled, the host shut down and the output drained.
    Completed,
    /// The shutdown deadline passed: unwritten output was dropped and the host killed.
    DeadlineExceeded,
    /// A stop request arrived during shutdown: the host was killed at once.
    Stopped(Stop),
    /// The server failed internally (a bug): what could be was shut down, and it exits non-zero.
    Failed,
}

impl Exit {
    /// The process exit status this ending maps to: 0, 3, 4, or 128 + the signal number.
    pub fn code(self) -> u8 {
        match self {
            Exit::Completed => 0,
            Exit::DeadlineExceeded => 3,
            Exit::Failed => 4,
            Exit::Stopped(stop) => 128 + stop.signal_number(),
        }
    }
}

/// Why a server could not start.
#[derive(Debug)]
pub enum ServeError {
    /// The host's catalog was refused.
    Catalog(CatalogError),
    /// A transport thread could not be started.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Catalog(e) => write!(f, "the tool catalog was refused: {e}"),
            ServeError::Io(e) => write!(f, "could not start the stdio transport: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves MCP over a byte stream pair until end of input (or until output closes).
///
/// Must run inside a multi-threaded Tokio runtime; `input` and `output` are driven by two
/// dedicated threads. For the process's own stdin and stdout, [`serve_stdio_until`] is faster.
pub async fn serve<H, R, W>(
    host: H,
    input: R,
    output: W,
    options: ServerOptions,
) -> Result<Exit, ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    serve_until(
        host,
        input,
        output,
        options,
        futures_util::stream::pending(),
    )
    .await
}

/// As [`serve`], but each item of `stops` is a stop request (a termination signal, say): the
/// first ends the server in the same orderly way as end of input, a second one at once.
pub async fn serve_until<H, R, W>(
    host: H,
    input: R,
    output: W,
    options: ServerOptions,
    stops: impl Stream<Item = Stop> + Send + Unpin + 'static,
) -> Result<Exit, ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    serve_on(host, Streams::Given(input, output), options, stops).await
}

/// As [`serve_until`] on this process's stdin and stdout, driven on the runtime without
/// threads where they are pipes or Unix sockets (as under an MCP client, on Unix), and by
/// threads otherwise (a terminal, a file). Needs a Tokio runtime with I/O enabled.
pub async fn serve_stdio_until<H: ToolHost>(
    host: H,
    options: ServerOptions,
    stops: impl Stream<Item = Stop> + Send + Unpin + 'static,
) -> Result<Exit, ServeError> {
    serve_on(host, Streams::<Stdin, Stdout>::Stdio, options, stops).await
}

enum Streams<R, W> {
    Given(R, W),
    Stdio,
}

async fn serve_on<H, R, W>(
    host: H,
    streams: Streams<R, W>,
    options: ServerOptions,
    mut stops: impl Stream<Item = Stop> + Send + Unpin + 'static,
) -> Result<Exit, ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let catalog = Catalog::new(host.tools()).map_err(ServeError::Catalog)?;
    let (inbound_tx, inbound) = transport::bounded(INBOUND_LIMITS);
    let (out, lines) = transport::bounded(OUTBOUND_LIMITS);
    let (terminals_tx, terminals) = mpsc::unbounded_channel();
    let (closed_tx, output_closed) = oneshot::channel();
    let on_closed = move || {
        let _ = closed_tx.send(());
    };
    let limit = options.max_message_bytes;
    let tap = options.tap.clone();
    let transport = match streams {
        Streams::Given(input, output) => {
            transport::spawn_streams(input, output, limit, tap, inbound_tx, lines, on_closed)
        }
        Streams::Stdio => transport::spawn_stdio(limit, tap, inbound_tx, lines, on_closed),
    }
    .map_err(ServeError::Io)?;
    let host = Arc::new(host);
    let shutdown_timeout = options.shutdown_timeout;
    let session = Session::new(options.identity.clone(), catalog);
    let coordinator = Coordinator::new(session, host.clone(), options, out, terminals_tx);
    let (stop_tx, stop) = oneshot::channel();
    let (admission_closed, began) = oneshot::channel::<Instant>();
    let endings = Endings {
        terminals,
        output_closed,
        stop,
        admission_closed,
    };
    // The coordinator runs as a task of its own, not on the caller's `block_on` thread, so the
    // calls it spawns start on the same worker without a cross-thread wake-up.
    let coordinator = tokio::spawn(coordinator.run(inbound, endings));
    let mut stop_tx = Some(stop_tx);
    let mut stops_open = true;
    let mut began = pin!(began);
    // Phase one: serving, until admission closes (the coordinator says when, at once).
    let began = loop {
        tokio::select! {
            began = &mut began => break began.unwrap_or_else(|_| Instant::now()),
            stop = stops.next(), if stops_open => match stop {
                Some(stop) => match stop_tx.take() {
                    Some(stop_tx) => {
                        tracing::debug!(?stop, "stopping");
                        let _ = stop_tx.send(());
                    }
                    None => {
                        host.kill();
                        return Ok(Exit::Stopped(stop));
                    }
                },
                None => stops_open = false,
            },
        }
    };
    // Phase two: the rest of shutdown (ending calls, the host, the output), within the deadline.
    // A termination signal now, whatever closed admission, ends the server at once.
    let deadline = began
        .checked_add(shutdown_timeout)
        .unwrap_or_else(|| began + Duration::from_secs(86_400 * 365));
    let rest = async {
        let coordinator_failed = coordinator.await.is_err();
        host.shutdown(deadline).await;
        transport.finished().await;
        coordinator_failed
    };
    let second_stop = async {
        if stops_open && let Some(stop) = stops.next().await {
            return stop;
        }
        std::future::pending().await
    };
    tokio::select! {
        failed = rest => if failed {
            tracing::error!("the coordinator failed; the server ends");
            Ok(Exit::Failed)
        } else {
            Ok(Exit::Completed)
        },
        () = tokio::time::sleep_until(deadline.into()) => {
            tracing::warn!("shutdown did not finish within {shutdown_timeout:?}: killing the host and dropping unwritten output");
            host.kill();
            Ok(Exit::DeadlineExceeded)
        }
        stop = second_stop => {
            host.kill();
            Ok(Exit::Stopped(stop))
        }
    }
}
