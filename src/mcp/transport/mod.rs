//! Transports: how JSON-RPC lines reach the coordinator and leave it, and how a stdio server is
//! told to stop. Only stdio is shipped.
//!
//! Contract:
//! 1. Reading: [`LineFramer`] frames every input, whatever drives it (see `framing`). Decoded
//!    lines go into the inbound [`queue`], bounded by items and by the bytes of the lines they
//!    came from; the reader waits for room before each line, so when the coordinator stops
//!    taking messages, stdin stops being read and the client's writes block (backpressure). The
//!    queue closing is the end-of-input signal, and a dropped receiver stops the reader.
//! 2. Writing: one writer per server is the only code that writes the output. Lines go out in
//!    the order they were queued, in batches of at most `MAX_BATCH` (1024), flushed whenever the
//!    queue runs dry. The outbound queue is bounded too (see `queue`): the coordinator reads no
//!    new message while it is full. The first write failure (the client closed our stdout) is
//!    reported once; later lines are discarded, so a dead output never holds anything up.
//! 3. Driving: [`spawn_streams`] runs any [`Read`]/[`Write`] pair on two threads. [`spawn_stdio`]
//!    drives stdin and stdout on the runtime, without threads, when each is a pipe or a Unix
//!    socket (the normal case under an MCP client, on Unix), and on a thread otherwise.
//! 4. Watching: a [`Tap`], when given, sees every line read and written (see `tap`).

mod framing;
mod logging;
#[cfg(unix)]
mod pipes;
mod queue;
mod signal;
mod tap;
mod threads;

use std::io::{self, Read, Write};

pub use framing::{Framed, Inbound, LineFramer, LineReader};
pub use logging::log_to_stderr;
pub use queue::{QueueLimits, QueueReceiver, QueueSender, bounded};
pub use signal::{Stop, termination_signals};
pub use tap::{Tap, TapHandle};
pub use threads::{spawn_reader, spawn_writer};

/// What the reader feeds the coordinator.
pub type InboundSender = QueueSender<Inbound>;
/// What the coordinator reads messages from.
pub type InboundReceiver = QueueReceiver<Inbound>;
/// What the server queues output lines on.
pub type OutboundSender = QueueSender<Vec<u8>>;
/// What the writer takes output lines from.
pub type OutboundReceiver = QueueReceiver<Vec<u8>>;

/// The writer's buffer.
const WRITE_BUFFER: usize = 64 * 1024;
/// Lines written between two flushes at most, so output keeps moving under sustained load.
const MAX_BATCH: usize = 1024;

/// A started transport: what a server waits for once its coordinator is done.
#[must_use = "a transport's writer should be waited for"]
pub struct Transport {
    writer: Writer,
    /// A reader on the runtime; a reader thread is never waited for (on a closed output it may
    /// still be blocked on input that never ends, and it owns nothing that needs an orderly end).
    reader: Option<tokio::task::JoinHandle<()>>,
}

enum Writer {
    Thread(std::thread::JoinHandle<()>),
    Task(tokio::task::JoinHandle<()>),
}

impl Transport {
    /// Waits until the writer has written (or discarded) every line, which it does once every
    /// line sender is dropped, and until a reader on the runtime has given its descriptor back
    /// in blocking mode, which it does once the inbound receiver is dropped.
    pub async fn finished(self) {
        if let Some(reader) = self.reader {
            let _ = reader.await;
        }
        match self.writer {
            Writer::Thread(writer) => {
                let _ = tokio::task::spawn_blocking(move || writer.join()).await;
            }
            Writer::Task(writer) => {
                let _ = writer.await;
            }
        }
    }
}

/// Starts a reader and the writer for `input` and `output` on two threads of their own (see
/// [`spawn_reader`] and [`spawn_writer`]).
pub fn spawn_streams<R, W>(
    input: R,
    output: W,
    limit: usize,
    tap: TapHandle,
    inbound: InboundSender,
    lines: OutboundReceiver,
    on_closed: impl FnOnce() + Send + 'static,
) -> io::Result<Transport>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    spawn_reader(input, limit, tap.clone(), inbound)?;
    let writer = spawn_writer(output, lines, tap, on_closed)?;
    Ok(Transport {
        writer: Writer::Thread(writer),
        reader: None,
    })
}

/// Starts a reader on this process's stdin and the writer on its stdout: each on the runtime
/// when it is a pipe or a Unix socket (Unix only), else on a thread as [`spawn_streams`] does.
///
/// Must be called inside a Tokio runtime with I/O enabled. Stdin and stdout are duplicated, not
/// taken; a duplicate on the runtime is non-blocking while the transport runs (which the open
/// file description shares with fds 0 and 1) and is put back in blocking mode when it ends. An
/// end that shares its file with stderr stays on a thread, so that logging never meets a
/// non-blocking descriptor.
pub fn spawn_stdio(
    limit: usize,
    tap: TapHandle,
    inbound: InboundSender,
    lines: OutboundReceiver,
    on_closed: impl FnOnce() + Send + 'static,
) -> io::Result<Transport> {
    #[cfg(unix)]
    {
        pipes::spawn_stdio(limit, tap, inbound, lines, on_closed)
    }
    #[cfg(not(unix))]
    {
        spawn_streams(
            io::stdin(),
            io::stdout(),
            limit,
            tap,
            inbound,
            lines,
            on_closed,
        )
    }
}

/// One batch of queued lines: `first`, then those already queued, at most [`MAX_BATCH`] in all,
/// each shown to the tap as it is taken.
fn write_batch<'a>(
    first: Vec<u8>,
    lines: &'a mut OutboundReceiver,
    tap: &'a TapHandle,
) -> impl Iterator<Item = Vec<u8>> + 'a {
    std::iter::once(first)
        .chain(std::iter::from_fn(|| lines.try_recv()))
        .take(MAX_BATCH)
        .inspect(move |line| {
            if let Some(tap) = tap {
                tap.outbound(line);
            }
        })
}

/// The writer's view of its output: open until the first failure, which is reported once.
struct OutputState<F> {
    on_closed: Option<F>,
}

impl<F: FnOnce()> OutputState<F> {
    fn new(on_closed: F) -> Self {
        OutputState {
            on_closed: Some(on_closed),
        }
    }

    fn is_open(&self) -> bool {
        self.on_closed.is_some()
    }

    fn check(&mut self, result: io::Result<()>) {
        if let Err(e) = result
            && let Some(notify) = self.on_closed.take()
        {
            tracing::debug!(error = %e, "output closed");
            notify();
        }
    }
}
