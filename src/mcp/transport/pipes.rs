//! Stdio on the runtime: stdin and stdout as non-blocking pipes or Unix sockets, no threads.
//!
//! Contract: an MCP client starts us with pipes (or, from Node, Unix socket pairs) on stdin and
//! stdout. Each such end is duplicated, registered with the runtime's I/O driver and served by a
//! task: the reader feeds a [`LineFramer`] exactly as the blocking [`super::LineReader`] does,
//! and the writer follows the module's writing rules with asynchronous writes, so it never
//! blocks a worker (a client that stops reading parks the writer task, not the runtime). Each
//! task ends by putting its descriptor back in blocking mode. Anything else (a terminal, a
//! regular file, `/dev/null`, an end shared with stderr) is left to a thread.
//!
//! This saves the two cross-thread wake-ups per call of the threaded transport (stdin thread to
//! runtime, runtime to stdout thread): a line read, answered and written is one worker's work.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;
use tokio::task::JoinHandle;

use super::framing::{Framed, LineFramer};
use super::{
    InboundSender, OutboundReceiver, OutputState, TapHandle, Transport, WRITE_BUFFER, Writer,
    threads, write_batch,
};

/// See [`super::spawn_stdio`].
pub(super) fn spawn_stdio(
    limit: usize,
    tap: TapHandle,
    inbound: InboundSender,
    lines: OutboundReceiver,
    on_closed: impl FnOnce() + Send + 'static,
) -> io::Result<Transport> {
    let reader = match open(io::stdin().as_fd(), pipe::Receiver::from_file)? {
        Some(End::Pipe(input)) => Some(spawn_reader(input, limit, tap.clone(), inbound)),
        Some(End::Socket(input)) => Some(spawn_reader(input, limit, tap.clone(), inbound)),
        None => {
            threads::spawn_reader(io::stdin(), limit, tap.clone(), inbound)?;
            None
        }
    };
    let writer = match open(io::stdout().as_fd(), pipe::Sender::from_file)? {
        Some(End::Pipe(output)) => Writer::Task(spawn_writer(output, lines, tap, on_closed)),
        Some(End::Socket(output)) => Writer::Task(spawn_writer(output, lines, tap, on_closed)),
        None => Writer::Thread(threads::spawn_writer(io::stdout(), lines, tap, on_closed)?),
    };
    Ok(Transport { writer, reader })
}

/// A standard stream the runtime can drive.
enum End<P> {
    Pipe(P),
    Socket(UnixStream),
}

/// A non-blocking duplicate of `fd` registered with the runtime, when it is a pipe or a Unix
/// socket that stderr does not share; `None` leaves it to a thread. `pipe` makes the pipe end of
/// the right direction (it refuses one opened the wrong way, before changing anything).
fn open<P>(
    fd: BorrowedFd<'_>,
    pipe: impl FnOnce(File) -> io::Result<P>,
) -> io::Result<Option<End<P>>> {
    let Some(file) = fd.try_clone_to_owned().ok().map(File::from) else {
        return Ok(None);
    };
    let Ok(meta) = file.metadata() else {
        return Ok(None);
    };
    let stderr = io::stderr().as_fd().try_clone_to_owned().map(File::from);
    if let Ok(Ok(stderr)) = stderr.map(|f| f.metadata())
        && (stderr.dev(), stderr.ino()) == (meta.dev(), meta.ino())
    {
        return Ok(None);
    }
    if meta.file_type().is_fifo() {
        return match pipe(file) {
            Ok(end) => Ok(Some(End::Pipe(end))),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(None),
            Err(e) => Err(e),
        };
    }
    if meta.file_type().is_socket() {
        let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        if socket.local_addr().is_err() {
            return Ok(None); // not a Unix socket
        }
        socket.set_nonblocking(true)?;
        return Ok(Some(End::Socket(UnixStream::from_std(socket)?)));
    }
    Ok(None)
}

/// An end on the runtime that can be put back in blocking mode.
trait Blocking {
    fn into_blocking(self) -> io::Result<()>;
}

impl Blocking for pipe::Receiver {
    fn into_blocking(self) -> io::Result<()> {
        self.into_blocking_fd().map(drop)
    }
}

impl Blocking for pipe::Sender {
    fn into_blocking(self) -> io::Result<()> {
        self.into_blocking_fd().map(drop)
    }
}

impl Blocking for UnixStream {
    fn into_blocking(self) -> io::Result<()> {
        self.into_std()?.set_nonblocking(false)
    }
}

fn restore(end: impl Blocking) {
    if let Err(e) = end.into_blocking() {
        tracing::debug!(error = %e, "could not put a stdio descriptor back in blocking mode");
    }
}

fn spawn_reader<R>(
    mut input: R,
    limit: usize,
    tap: TapHandle,
    inbound: InboundSender,
) -> JoinHandle<()>
where
    R: AsyncRead + Blocking + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        read_lines(&mut input, LineFramer::new(limit).tapped(tap), &inbound).await;
        drop(inbound);
        restore(input);
    })
}

fn spawn_writer<W>(
    output: W,
    lines: OutboundReceiver,
    tap: TapHandle,
    on_closed: impl FnOnce() + Send + 'static,
) -> JoinHandle<()>
where
    W: AsyncWrite + Blocking + Unpin + Send + 'static,
{
    tokio::spawn(async move { restore(write_lines(output, lines, tap, on_closed).await) })
}

/// Delivers `input`'s lines, framed by `framer`, into `inbound` until end of input (a read
/// error counts as the end) or until the receiver is dropped; reads nothing more while the queue
/// is full.
async fn read_lines<R: AsyncRead + Unpin>(
    input: &mut R,
    mut framer: LineFramer,
    inbound: &InboundSender,
) {
    loop {
        match framer.next_frame() {
            Framed::Inbound(item, bytes) => {
                tokio::select! {
                    biased;
                    () = inbound.closed() => return,
                    () = inbound.ready() => {}
                }
                if !inbound.push(item, bytes) {
                    return;
                }
            }
            Framed::End => return,
            Framed::NeedInput => {
                let read = tokio::select! {
                    biased;
                    read = input.read(framer.spare()) => read,
                    () = inbound.closed() => return,
                };
                match read {
                    Ok(0) => framer.mark_eof(),
                    Ok(n) => framer.commit(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "reading the input failed; treating it as end of input");
                        framer.mark_eof();
                    }
                }
            }
        }
    }
}

/// The single writer, as a task: until every line sender is dropped; returns the output.
async fn write_lines<W: AsyncWrite + Unpin>(
    output: W,
    mut lines: OutboundReceiver,
    tap: TapHandle,
    on_closed: impl FnOnce(),
) -> W {
    let mut out = BufWriter::with_capacity(WRITE_BUFFER, output);
    let mut state = OutputState::new(on_closed);
    while let Some(first) = lines.recv().await {
        for line in write_batch(first, &mut lines, &tap) {
            if state.is_open() {
                state.check(out.write_all(&line).await);
            }
        }
        if state.is_open() {
            state.check(out.flush().await);
        }
    }
    out.into_inner()
}

#[cfg(test)]
#[path = "pipes_tests.rs"]
mod tests;
