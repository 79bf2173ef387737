//! Newline-delimited JSON-RPC over a byte stream: one bounded reader, one serialized writer.
//!
//! Contract:
//! 1. [`LineReader`] yields one decoded message per line. A trailing `\r` is dropped and
//!    whitespace-only lines are skipped. A line longer than the limit is never held whole: its
//!    bytes are discarded as they arrive and it is reported once as [`Inbound::Oversized`]; the
//!    next line is read normally.
//! 2. [`spawn_writer`] is the only code that writes the output stream: lines go out in the order
//!    they were queued, flushed whenever the queue runs dry. A write failure (the client closed
//!    our stdout) is reported once; later lines are discarded, so no sender ever blocks.
//!
//! Both ends are plain threads on blocking I/O: stdin and stdout are pipes, and a dedicated
//! thread with a 64 KiB buffer beats a runtime hop per read or write.

use std::io::{self, BufWriter, Read, Write};
use std::thread;

use tokio::sync::mpsc::{Sender, UnboundedReceiver};

use crate::mcp::jsonrpc::{self, DecodeError, Incoming};

const READ_CHUNK: usize = 64 * 1024;
const WRITE_BUFFER: usize = 64 * 1024;
/// Lines written between two flushes at most, so output keeps moving under sustained load.
const MAX_BATCH: usize = 1024;

/// What the reader delivers.
#[derive(Debug)]
pub enum Inbound {
    /// One line, decoded (or the reason it could not be).
    Message(Result<Incoming, DecodeError>),
    /// A line longer than the limit was discarded.
    Oversized {
        /// The limit it exceeded, in bytes.
        limit: usize,
    },
}

/// Splits a byte stream into bounded lines and decodes each.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    scanned: usize,
    limit: usize,
    discarding: bool,
    eof: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader that refuses lines longer than `limit` bytes (terminator excluded).
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(READ_CHUNK.min(limit.saturating_add(1))),
            start: 0,
            scanned: 0,
            limit,
            discarding: false,
            eof: false,
        }
    }

    /// The next message, or `None` at end of input (a read error counts as the end).
    pub fn next_inbound(&mut self) -> Option<Inbound> {
        loop {
            if let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + offset;
                let line_start = self.start;
                self.start = end + 1;
                self.scanned = self.start;
                if std::mem::take(&mut self.discarding) {
                    return Some(Inbound::Oversized { limit: self.limit });
                }
                if let Some(inbound) = self.line(line_start, end) {
                    return Some(inbound);
                }
                continue;
            }
            self.scanned = self.buf.len();
            // One byte of slack for a `\r` that `line` strips before it applies the limit.
            if self.discarding || self.buf.len() - self.start > self.limit.saturating_add(1) {
                // Drop what we hold of the overlong line; keep discarding to its end.
                self.discarding = true;
                self.buf.clear();
                self.start = 0;
                self.scanned = 0;
            }
            if self.eof {
                let (start, end) = (self.start, self.buf.len());
                self.start = end;
                if std::mem::take(&mut self.discarding) {
                    return Some(Inbound::Oversized { limit: self.limit });
                }
                return if start < end {
                    self.line(start, end)
                } else {
                    None
                };
            }
            self.fill();
        }
    }

    fn line(&self, start: usize, end: usize) -> Option<Inbound> {
        let mut line = &self.buf[start..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        // Length first: the streaming path cannot see whether an overlong line is blank either.
        if line.len() > self.limit {
            return Some(Inbound::Oversized { limit: self.limit });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(Inbound::Message(jsonrpc::decode(line)))
    }

    fn fill(&mut self) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.scanned = 0;
            self.start = 0;
        } else if self.start > READ_CHUNK {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + READ_CHUNK, 0);
        let read = loop {
            match self.inner.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the input failed; treating it as end of input");
                    break 0;
                }
            }
        };
        self.buf.truncate(len + read);
        if read == 0 {
            self.eof = true;
        }
    }
}

/// Runs a [`LineReader`] on its own thread, delivering into `inbound` until end of input or
/// until the receiver is dropped. The channel closing is the end-of-input signal.
pub fn spawn_reader<R: Read + Send + 'static>(
    input: R,
    limit: usize,
    inbound: Sender<Inbound>,
) -> io::Result<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let mut reader = LineReader::new(input, limit);
            while let Some(item) = reader.next_inbound() {
                if inbound.blocking_send(item).is_err() {
                    return;
                }
            }
        })
}

/// Runs the single writer on its own thread until every line sender is dropped.
///
/// Lines are written in queue order and flushed whenever the queue runs dry (or every
/// [`MAX_BATCH`] lines under sustained load). The first write failure calls `on_closed`; later
/// lines are discarded so that senders never block on a dead pipe.
pub fn spawn_writer<W: Write + Send + 'static>(
    output: W,
    mut lines: UnboundedReceiver<Vec<u8>>,
    on_closed: impl FnOnce() + Send + 'static,
) -> io::Result<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let mut out = BufWriter::with_capacity(WRITE_BUFFER, output);
            let mut on_closed = Some(on_closed);
            let mut closed = |reason: io::Error| {
                if let Some(notify) = on_closed.take() {
                    tracing::debug!(error = %reason, "output closed");
                    notify();
                }
            };
            let mut open = true;
            while let Some(first) = lines.blocking_recv() {
                let mut next = Some(first);
                let mut batch = 0;
                while let Some(line) = next {
                    if open && let Err(e) = out.write_all(&line) {
                        open = false;
                        closed(e);
                    }
                    batch += 1;
                    next = if batch < MAX_BATCH {
                        lines.try_recv().ok()
                    } else {
                        None
                    };
                }
                if open && let Err(e) = out.flush() {
                    open = false;
                    closed(e);
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes in fixed small pieces, like a slow pipe.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn collect(input: &[u8], limit: usize, piece: usize) -> Vec<String> {
        let mut reader = LineReader::new(Trickle(input, piece), limit);
        let mut out = Vec::new();
        while let Some(item) = reader.next_inbound() {
            out.push(match item {
                Inbound::Message(Ok(Incoming::Request(r))) => format!("req {} {}", r.id, r.method),
                Inbound::Message(Ok(Incoming::Notification(n))) => format!("note {}", n.method),
                Inbound::Message(Err(DecodeError::Parse(_))) => "parse".into(),
                Inbound::Message(Err(DecodeError::Envelope { .. })) => "envelope".into(),
                Inbound::Oversized { limit } => format!("oversized {limit}"),
            });
        }
        out
    }

    #[test]
    fn splits_skips_blank_lines_and_strips_cr() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n  \n\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}";
        for piece in [1, 3, 1000] {
            assert_eq!(collect(input, 1 << 20, piece), ["req 1 a", "note b"]);
        }
    }

    #[test]
    fn an_oversized_line_is_reported_once_and_reading_continues() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{}\"}}\n",
            "x".repeat(200)
        );
        let input = format!("{long}{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ok\"}}\n{long}");
        for piece in [1, 7, 64, 100_000] {
            assert_eq!(
                collect(input.as_bytes(), 64, piece),
                ["oversized 64", "req 2 ok", "oversized 64"],
                "piece {piece}"
            );
        }
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#;
        assert_eq!(
            collect(format!("{line}\n").as_bytes(), line.len(), 5),
            ["req 1 m"]
        );
        assert_eq!(
            collect(format!("{line}\r\n").as_bytes(), line.len(), 1),
            ["req 1 m"]
        );
        let limit = line.len() - 1;
        assert_eq!(
            collect(format!("{line}\n").as_bytes(), limit, 5),
            [format!("oversized {limit}")]
        );
    }

    #[test]
    fn garbage_is_a_parse_error_and_does_not_stop_the_reader() {
        assert_eq!(
            collect(
                b"not json\n\xff\xfe\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n",
                1024,
                4
            ),
            ["parse", "parse", "note n"]
        );
    }
}
