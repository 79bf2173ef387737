//! Line framing: bytes in, bounded decoded lines out, whoever does the reading.
//!
//! Contract: [`LineFramer`] is the one implementation of the framing rules; [`LineReader`] (a
//! blocking [`Read`]) and the runtime's pipe reader only move bytes into it. It yields one
//! decoded message per `\n`-terminated line, and the final unterminated line at end of input.
//! A trailing `\r` is dropped, then the length is checked, then whitespace-only lines are
//! skipped (length first: a line discarded in pieces cannot be seen to be blank). A line longer
//! than the limit is never held whole: its bytes are discarded as they arrive and it is reported
//! once as [`Inbound::Oversized`]; the next line is read normally. What is delivered does not
//! depend on how the input is split into reads. A tap, when given, sees each line delivered or
//! discarded (see `tap`).

use std::io::{self, Read};

use super::TapHandle;
use crate::mcp::jsonrpc::{self, DecodeError, Incoming};

/// The most bytes asked for by one read.
pub(super) const READ_CHUNK: usize = 64 * 1024;

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

/// What a [`LineFramer`] has next.
#[derive(Debug)]
pub enum Framed {
    /// A line, decoded or reported oversized, and how many bytes of input it held (what it
    /// counts against the inbound queue; an oversized line held none).
    Inbound(Inbound, usize),
    /// Nothing until more bytes arrive: fill [`LineFramer::spare`], then
    /// [`LineFramer::commit`] (or [`LineFramer::mark_eof`] when the input has ended).
    NeedInput,
    /// End of input, and everything before it delivered.
    End,
}

/// The framing state machine: a buffer of received bytes and where its lines begin and end.
#[derive(Debug)]
pub struct LineFramer {
    /// `buf[start..end]` is received and not yet delivered; `buf[end..]` is room to read into.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..scanned]` holds no `\n`.
    scanned: usize,
    end: usize,
    limit: usize,
    /// The line being received is overlong; its bytes are dropped until its `\n`.
    discarding: bool,
    eof: bool,
    tap: TapHandle,
}

impl LineFramer {
    /// A framer that refuses lines longer than `limit` bytes (terminator excluded).
    pub fn new(limit: usize) -> Self {
        LineFramer {
            buf: Vec::new(),
            start: 0,
            scanned: 0,
            end: 0,
            limit,
            discarding: false,
            eof: false,
            tap: None,
        }
    }

    /// The same framer, with `tap` shown every line it delivers or discards.
    pub fn tapped(mut self, tap: TapHandle) -> Self {
        self.tap = tap;
        self
    }

    /// The report of a discarded line, shown to the tap.
    fn oversized(&self) -> Inbound {
        if let Some(tap) = &self.tap {
            tap.discarded(self.limit);
        }
        Inbound::Oversized { limit: self.limit }
    }

    /// The next line, or what the framer needs before it can have one.
    pub fn next_frame(&mut self) -> Framed {
        loop {
            if let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let newline = self.scanned + offset;
                let line_start = self.start;
                self.start = newline + 1;
                self.scanned = self.start;
                if std::mem::take(&mut self.discarding) {
                    return Framed::Inbound(self.oversized(), 0);
                }
                match self.line(line_start, newline) {
                    Some(inbound) => return Framed::Inbound(inbound, newline - line_start),
                    None => continue,
                }
            }
            self.scanned = self.end;
            // One byte of slack for a `\r` that `line` strips before it applies the limit.
            if self.discarding || self.end - self.start > self.limit.saturating_add(1) {
                // Drop what we hold of the overlong line; keep discarding to its end.
                self.discarding = true;
                (self.start, self.scanned, self.end) = (0, 0, 0);
            }
            if !self.eof {
                return Framed::NeedInput;
            }
            let (start, end) = (self.start, self.end);
            self.start = end;
            if std::mem::take(&mut self.discarding) {
                return Framed::Inbound(self.oversized(), 0);
            }
            return match (start < end).then(|| self.line(start, end)).flatten() {
                Some(inbound) => Framed::Inbound(inbound, end - start),
                None => Framed::End,
            };
        }
    }

    /// Room for the next read: up to 64 KiB, to be followed by [`Self::commit`]
    /// of how many were filled. Calling it again before committing gives the same room.
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start == self.end {
            (self.start, self.scanned, self.end) = (0, 0, 0);
        } else if self.start > 0 {
            // Only the unfinished line moves, and each byte at most once: it stays at the front
            // until the line is complete.
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start;
            self.end -= self.start;
            self.start = 0;
        }
        let want = self.end + READ_CHUNK;
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        &mut self.buf[self.end..want]
    }

    /// Takes the first `n` bytes of the last [`Self::spare`] as received.
    pub fn commit(&mut self, n: usize) {
        assert!(
            n <= READ_CHUNK && self.end + n <= self.buf.len(),
            "commit beyond spare"
        );
        self.end += n;
    }

    /// Marks the end of input: what remains is delivered, then [`Framed::End`].
    pub fn mark_eof(&mut self) {
        self.eof = true;
    }

    fn line(&self, start: usize, end: usize) -> Option<Inbound> {
        let mut line = &self.buf[start..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        // Length first: the streaming path cannot see whether an overlong line is blank either.
        if line.len() > self.limit {
            return Some(self.oversized());
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if let Some(tap) = &self.tap {
            tap.inbound(line);
        }
        Some(Inbound::Message(jsonrpc::decode(line)))
    }
}

/// A [`LineFramer`] fed by a blocking [`Read`].
pub struct LineReader<R> {
    inner: R,
    framer: LineFramer,
}

impl<R: Read> LineReader<R> {
    /// A reader that refuses lines longer than `limit` bytes (terminator excluded).
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader {
            inner,
            framer: LineFramer::new(limit),
        }
    }

    /// The same reader, with `tap` shown every line it delivers or discards.
    pub fn tapped(mut self, tap: TapHandle) -> Self {
        self.framer = self.framer.tapped(tap);
        self
    }

    /// The next message, or `None` at end of input (a read error counts as the end).
    pub fn next_inbound(&mut self) -> Option<Inbound> {
        self.next_sized().map(|(inbound, _)| inbound)
    }

    /// As [`Self::next_inbound`], with the number of input bytes the line held.
    pub fn next_sized(&mut self) -> Option<(Inbound, usize)> {
        loop {
            match self.framer.next_frame() {
                Framed::Inbound(inbound, bytes) => return Some((inbound, bytes)),
                Framed::End => return None,
                Framed::NeedInput => self.fill(),
            }
        }
    }

    fn fill(&mut self) {
        loop {
            match self.inner.read(self.framer.spare()) {
                Ok(0) => return self.framer.mark_eof(),
                Ok(n) => return self.framer.commit(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "reading the input failed; treating it as end of input");
                    return self.framer.mark_eof();
                }
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
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

    /// A comparable summary of one delivered item.
    pub(in crate::mcp::transport) fn describe(item: Inbound) -> String {
        match item {
            Inbound::Message(Ok(Incoming::Request(r))) => format!("req {} {}", r.id, r.method),
            Inbound::Message(Ok(Incoming::Notification(n))) => format!("note {}", n.method),
            Inbound::Message(Err(DecodeError::Parse(_))) => "parse".into(),
            Inbound::Message(Err(DecodeError::Envelope { .. })) => "envelope".into(),
            Inbound::Message(Err(DecodeError::Params { .. })) => "params".into(),
            Inbound::Oversized { limit } => format!("oversized {limit}"),
        }
    }

    fn collect(input: &[u8], limit: usize, piece: usize) -> Vec<String> {
        let mut reader = LineReader::new(Trickle(input, piece), limit);
        std::iter::from_fn(|| reader.next_inbound())
            .map(describe)
            .collect()
    }

    /// A tap that writes down what it is shown.
    #[derive(Debug, Default)]
    struct Recorder(std::sync::Mutex<Vec<String>>);

    impl crate::mcp::transport::Tap for Recorder {
        fn inbound(&self, line: &[u8]) {
            let line = String::from_utf8_lossy(line);
            self.0.lock().unwrap().push(format!("in {line}"));
        }
        fn discarded(&self, limit: usize) {
            self.0.lock().unwrap().push(format!("discarded {limit}"));
        }
        fn outbound(&self, line: &[u8]) {
            let line = String::from_utf8_lossy(line);
            self.0.lock().unwrap().push(format!("out {line}"));
        }
    }

    #[test]
    fn a_tap_sees_each_line_raw_in_order_and_each_discarded_one() {
        let long = "x".repeat(100);
        let input = format!("not json\r\n\n  \n{long}\n{{\"jsonrpc\":\"2.0\",\"method\":\"n\"}}");
        for piece in [1, 5, 4096] {
            let tap = std::sync::Arc::new(Recorder::default());
            let mut reader =
                LineReader::new(Trickle(input.as_bytes(), piece), 64).tapped(Some(tap.clone()));
            let delivered: Vec<String> = std::iter::from_fn(|| reader.next_inbound())
                .map(describe)
                .collect();
            assert_eq!(delivered, ["parse", "oversized 64", "note n"]);
            assert_eq!(
                *tap.0.lock().unwrap(),
                [
                    "in not json",
                    "discarded 64",
                    r#"in {"jsonrpc":"2.0","method":"n"}"#
                ],
                "piece {piece}"
            );
        }
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

    #[test]
    fn the_buffer_holds_one_unfinished_line_and_one_read() {
        // Many short lines across many reads: the unfinished tail moves to the front instead of
        // the buffer growing.
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n";
        let input: Vec<u8> = line
            .iter()
            .copied()
            .cycle()
            .take(line.len() * 10_000)
            .collect();
        let mut reader = LineReader::new(Trickle(&input, 1000), 1 << 20);
        let mut count = 0;
        while reader.next_inbound().is_some() {
            count += 1;
        }
        assert_eq!(count, 10_000);
        assert!(reader.framer.buf.len() <= READ_CHUNK + line.len());
    }
}
