//! The stdio line decoder and the JSON-RPC envelope classifier.
//!
//! Input: one byte choosing the line limit, one choosing the read size, then the bytes a client
//! writes. Checked: (1) what the framer delivers is what a plain split on `\n` gives (trailing
//! `\r` dropped, length checked, blank lines skipped, each line decoded) whatever the read size;
//! (2) every decoded message re-encodes to a line that decodes to the same message; (3) every
//! decode error is answered with one line of JSON-RPC carrying the id it read.

#![no_main]

use std::io::Read;

use lean_beam_mcp::mcp::transport::{Inbound, LineReader};
use lean_beam_mcp::mcp::{DecodeError, Incoming, decode};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// Hands out its bytes `piece` at a time, like a pipe.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn describe(item: &Inbound) -> String {
    format!("{item:?}")
}

fn framed(input: &[u8], limit: usize, piece: usize) -> Vec<String> {
    let mut reader = LineReader::new(Trickle(input, piece), limit);
    std::iter::from_fn(|| reader.next_inbound())
        .map(|item| describe(&item))
        .collect()
}

/// The framing rules, written the obvious way.
fn model(input: &[u8], limit: usize) -> Vec<String> {
    let mut lines: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop(); // the input ended with a terminator (or was empty)
    }
    lines
        .into_iter()
        .filter_map(|mut line| {
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            if line.len() > limit {
                return Some(Inbound::Oversized { limit });
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                return None;
            }
            Some(Inbound::Message(decode(line)))
        })
        .map(|item| describe(&item))
        .collect()
}

fn encode(message: &Incoming) -> Vec<u8> {
    let (id, method, params) = match message {
        Incoming::Request(r) => (Some(r.id.to_value()), &r.method, &r.params),
        Incoming::Notification(n) => (None, &n.method, &n.params),
    };
    let mut object = Map::new();
    object.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id {
        object.insert("id".into(), id);
    }
    object.insert("method".into(), json!(method));
    if let Some(params) = params {
        object.insert("params".into(), params.clone());
    }
    serde_json::to_vec(&Value::Object(object)).unwrap()
}

fn check_line(line: &[u8]) {
    match decode(line) {
        Ok(message) => {
            let again = decode(&encode(&message));
            assert_eq!(
                again.as_ref(),
                Ok(&message),
                "re-encoding changed the message"
            );
        }
        Err(error) => {
            let id = error.id().map(|id| id.to_value()).unwrap_or(Value::Null);
            let is_parse = matches!(error, DecodeError::Parse(_));
            let answer = error.into_error_response().to_line();
            assert_eq!(answer.iter().filter(|b| **b == b'\n').count(), 1);
            let answer: Value = serde_json::from_slice(&answer).expect("the answer is JSON");
            assert_eq!(answer["jsonrpc"], "2.0");
            assert_eq!(answer["id"], id);
            let code = answer["error"]["code"].as_i64().unwrap();
            assert!([-32700, -32600, -32602].contains(&code), "{answer}");
            assert_eq!(is_parse, code == -32700);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [limit, piece, input @ ..] = data else {
        return;
    };
    let limit = [16, 64, 1024, 1 << 20][usize::from(*limit) % 4];
    let piece = 1 + usize::from(*piece) % 64;
    let expected = model(input, limit);
    assert_eq!(framed(input, limit, usize::MAX), expected, "one read");
    assert_eq!(
        framed(input, limit, piece),
        expected,
        "reads of {piece} bytes"
    );
    for line in input.split(|b| *b == b'\n') {
        check_line(line);
    }
});
