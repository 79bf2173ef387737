//! LSP base-protocol framing: `Content-Length` headers, then exactly that many bytes of JSON.
//!
//! Contract:
//! 1. [`encode`] writes one frame; [`FrameReader::next`] reads one body, `None` at a clean end of
//!    stream (end of input between frames).
//! 2. Header names are case-insensitive, `Content-Type` and unknown headers are ignored, and
//!    lines may end in `\r\n` or `\n`. A missing or unreadable `Content-Length`, a header block
//!    or body larger than the limits, or a stream that ends inside a frame is a
//!    [`FrameError`]: after one, the stream cannot be trusted to be in step, so the caller treats
//!    the server as broken rather than guessing where the next frame starts.
//! 3. Memory is bounded by the limits: a body's length must be within [`MAX_BODY`], and its
//!    buffer grows as its bytes arrive (from at most [`BODY_CHUNK`]), so a header alone never
//!    costs the length it claims.

use std::fmt;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The largest body accepted: far beyond any answer Lean gives (a whole Mathlib file's
/// diagnostics are a few MiB), small enough that a corrupted length cannot exhaust memory.
pub const MAX_BODY: usize = 256 * 1024 * 1024;
/// The most a body's buffer holds before its bytes arrive.
const BODY_CHUNK: usize = 64 * 1024;
/// The largest header line accepted.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// The most header lines in one frame.
const MAX_HEADERS: usize = 32;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The bytes are not a frame.
    Malformed(String),
    /// Reading failed.
    Io(std::io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Malformed(why) => write!(f, "an unreadable LSP frame: {why}"),
            FrameError::Io(e) => write!(f, "reading from the server failed: {e}"),
        }
    }
}

/// One frame: the header and the body.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(body);
    frame
}

/// Reads frames from a buffered byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    line: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> FrameReader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            line: Vec::new(),
        }
    }

    /// The next frame's body; `None` at end of stream between frames.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        let mut length = None;
        let mut headers = 0;
        loop {
            self.line.clear();
            let read = (&mut self.inner)
                .take(MAX_HEADER_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .await
                .map_err(FrameError::Io)?;
            if read == 0 {
                return if headers == 0 {
                    Ok(None)
                } else {
                    Err(FrameError::Malformed(
                        "the stream ended inside a header".into(),
                    ))
                };
            }
            if self.line.last() != Some(&b'\n') {
                return Err(FrameError::Malformed(if read > MAX_HEADER_LINE {
                    format!("a header line longer than {MAX_HEADER_LINE} bytes")
                } else {
                    "the stream ended inside a header".into()
                }));
            }
            let text = String::from_utf8_lossy(&self.line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if headers == 0 {
                    continue; // stray blank line between frames
                }
                break;
            }
            headers += 1;
            if headers > MAX_HEADERS {
                return Err(FrameError::Malformed("too many header lines".into()));
            }
            let Some((name, value)) = text.split_once(':') else {
                return Err(FrameError::Malformed(format!("not a header: {text:?}")));
            };
            if name.trim().eq_ignore_ascii_case("content-length") {
                let value = value.trim();
                length = Some(value.parse::<usize>().map_err(|_| {
                    FrameError::Malformed(format!("Content-Length is not a number: {value:?}"))
                })?);
            }
        }
        let length = length.ok_or_else(|| FrameError::Malformed("no Content-Length".into()))?;
        if length > MAX_BODY {
            return Err(FrameError::Malformed(format!(
                "a body of {length} bytes (at most {MAX_BODY} are accepted)"
            )));
        }
        // The body grows as it arrives: a header alone never costs its claimed length.
        let mut body = Vec::with_capacity(length.min(BODY_CHUNK));
        (&mut self.inner)
            .take(length as u64)
            .read_to_end(&mut body)
            .await
            .map_err(FrameError::Io)?;
        if body.len() < length {
            return Err(FrameError::Malformed(
                "the stream ended inside a body".into(),
            ));
        }
        Ok(Some(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8]) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = FrameReader::new(input);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Ok(Some(body)) => out.push(Ok(body)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[tokio::test]
    async fn reads_frames_back_to_back_in_any_header_style() {
        let mut input = encode(b"{\"a\":1}");
        input.extend_from_slice(
            b"content-length: 2\nContent-Type: application/vscode-jsonrpc\n\n{}",
        );
        assert_eq!(
            frames(&input).await,
            [Ok(b"{\"a\":1}".to_vec()), Ok(b"{}".to_vec())]
        );
    }

    #[tokio::test]
    async fn garbage_is_an_error_not_a_guess() {
        for (input, why) in [
            (&b"Content-Length: x\r\n\r\n"[..], "not a number"),
            (b"Hello\r\n\r\n", "not a header"),
            (b"Content-Type: a\r\n\r\n", "no Content-Length"),
            (b"Content-Length: 10\r\n\r\n{}", "inside a body"),
            (b"Content-Length: 268435456\r\n\r\n{}", "inside a body"),
            (b"Content-Length: 999999999999\r\n\r\n", "at most"),
        ] {
            let got = frames(input).await;
            let last = got.last().expect("an outcome");
            assert!(
                matches!(last, Err(e) if e.contains(why)),
                "{input:?}: {got:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_body_larger_than_its_first_buffer_is_read_whole() {
        let body: Vec<u8> = (0..3 * BODY_CHUNK + 17)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let input = encode(&body);
        // Seven bytes per read, so the body arrives in many pieces.
        let mut reader = FrameReader::new(tokio::io::BufReader::with_capacity(7, &input[..]));
        assert_eq!(reader.next().await.unwrap(), Some(body));
        assert!(reader.next().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn end_of_stream_between_frames_is_clean() {
        assert_eq!(frames(b"").await, []);
        assert_eq!(frames(&encode(b"1")).await, [Ok(b"1".to_vec())]);
    }
}
