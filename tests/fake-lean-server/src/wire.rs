//! LSP base-protocol framing over byte streams: `Content-Length: N\r\n\r\n` then N bytes of
//! UTF-8 JSON (reference §1.1). Other header fields are accepted and ignored.

use serde_json::Value;
use std::io::{self, BufRead, Write};

#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// The header block was not LSP framing.
    Header(String),
    /// The body was not JSON.
    Json(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Header(h) => write!(f, "invalid header: {h}"),
            ReadError::Json(e) => write!(f, "invalid JSON: {e}"),
        }
    }
}

/// Reads one message; `Ok(None)` at a clean end of input.
pub fn read_message(r: &mut impl BufRead) -> Result<Option<Value>, ReadError> {
    let mut length: Option<usize> = None;
    let mut seen_header = false;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).map_err(ReadError::Io)?;
        if n == 0 {
            return if seen_header {
                Err(ReadError::Header("end of input inside a header".into()))
            } else {
                Ok(None)
            };
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if seen_header {
                break;
            }
            continue;
        }
        seen_header = true;
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| ReadError::Header(line.to_owned()))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse()
                    .map_err(|_| ReadError::Header(line.to_owned()))?,
            );
        }
    }
    let length = length.ok_or_else(|| ReadError::Header("no Content-Length".into()))?;
    let mut body = vec![0; length];
    r.read_exact(&mut body).map_err(ReadError::Io)?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| ReadError::Json(e.to_string()))
}

/// Writes one framed message and flushes.
pub fn write_message(w: &mut impl Write, msg: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(msg).expect("a Value always serialises");
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = Vec::new();
        write_message(&mut buf, &serde_json::json!({"a": "é"})).unwrap();
        write_message(&mut buf, &serde_json::json!(1)).unwrap();
        let mut r = io::BufReader::new(&buf[..]);
        assert_eq!(read_message(&mut r).unwrap().unwrap()["a"], "é");
        assert_eq!(read_message(&mut r).unwrap().unwrap(), 1);
        assert!(read_message(&mut r).unwrap().is_none());
        let mut bad = io::BufReader::new(&b"Content-Length: 3\r\n\r\n{x}"[..]);
        assert!(matches!(read_message(&mut bad), Err(ReadError::Json(_))));
    }
}
