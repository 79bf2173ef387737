//! The blocking drivers: a [`LineReader`] and the single writer, each on a thread of its own.
//!
//! Contract: for any [`Read`]/[`Write`] pair (in-memory streams, a terminal, a regular file, or
//! stdio where the runtime cannot drive it). The reader delivers into the bounded inbound queue,
//! waiting for room before it reads on, until end of input or until the receiver is dropped; the
//! writer follows the module's writing rules
//! (batching, flushing when the queue runs dry, one closed-output report) until every line
//! sender is dropped. Blocking calls on threads of their own never hold up the runtime.

use std::io::{self, BufWriter, Read, Write};
use std::thread;

use tokio::runtime::Handle;

use super::framing::LineReader;
use super::{InboundSender, OutboundReceiver, OutputState, TapHandle, WRITE_BUFFER, write_batch};

/// Runs a [`LineReader`] on its own thread, delivering into `inbound` until end of input or
/// until the receiver is dropped. The queue closing is the end-of-input signal.
///
/// Must be called inside a Tokio runtime: the thread waits for room in the queue through it.
pub fn spawn_reader<R: Read + Send + 'static>(
    input: R,
    limit: usize,
    tap: TapHandle,
    inbound: InboundSender,
) -> io::Result<thread::JoinHandle<()>> {
    let runtime = Handle::current();
    thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let mut reader = LineReader::new(input, limit).tapped(tap);
            loop {
                // Room first, then the next line: a full queue leaves the input unread.
                let gone = runtime.block_on(async {
                    tokio::select! {
                        () = inbound.ready() => false,
                        () = inbound.closed() => true,
                    }
                });
                if gone {
                    return;
                }
                let Some((item, bytes)) = reader.next_sized() else {
                    return;
                };
                if !inbound.push(item, bytes) {
                    return;
                }
            }
        })
}

/// Runs the single writer on its own thread until every line sender is dropped.
///
/// Lines are written in queue order and flushed whenever the queue runs dry (or every
/// `MAX_BATCH` lines under sustained load). The first write failure calls `on_closed`;
/// later lines are discarded so that senders never block on a dead pipe.
pub fn spawn_writer<W: Write + Send + 'static>(
    output: W,
    mut lines: OutboundReceiver,
    tap: TapHandle,
    on_closed: impl FnOnce() + Send + 'static,
) -> io::Result<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let mut out = BufWriter::with_capacity(WRITE_BUFFER, output);
            let mut state = OutputState::new(on_closed);
            while let Some(first) = lines.blocking_recv() {
                for line in write_batch(first, &mut lines, &tap) {
                    if state.is_open() {
                        state.check(out.write_all(&line));
                    }
                }
                if state.is_open() {
                    state.check(out.flush());
                }
            }
        })
}
