//! Wire text: the handshake of each revision, pre-serialized tool-call templates, and the
//! cheap check of each answer.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use crate::config::{Check, PAYLOAD, Revision};

/// The client the load generator says it is.
const CLIENT_NAME: &str = "lean-beam-bench";

/// The `_meta` every modern request carries.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": Revision::Modern.as_str(),
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") },
    })
}

/// A request line (newline included) with params as given, plus `_meta` in the modern revision.
pub fn request_line(revision: Revision, id: u64, method: &str, params: Value) -> Vec<u8> {
    let mut params = params;
    if revision == Revision::Modern {
        params["_meta"] = modern_meta();
    }
    let mut line = serde_json::to_vec(
        &json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
    )
    .expect("JSON values serialize");
    line.push(b'\n');
    line
}

/// The first request of a connection: `initialize` (legacy) or `server/discover` (modern).
pub fn opening(revision: Revision, id: u64) -> Vec<u8> {
    match revision {
        Revision::Legacy => request_line(
            revision,
            id,
            "initialize",
            json!({
                "protocolVersion": Revision::Legacy.as_str(),
                "capabilities": {},
                "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") },
            }),
        ),
        Revision::Modern => request_line(revision, id, "server/discover", json!({})),
    }
}

/// What must follow the opening's answer before other requests (legacy: `initialized`).
pub fn after_opening(revision: Revision) -> Option<Vec<u8>> {
    (revision == Revision::Legacy)
        .then(|| b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_vec())
}

/// Checks the opening's answer says the revision was accepted.
pub fn check_opening(revision: Revision, result: &Value) -> Result<(), String> {
    match revision {
        Revision::Legacy => match result.get("protocolVersion").and_then(Value::as_str) {
            Some(v) if v == Revision::Legacy.as_str() => Ok(()),
            other => Err(format!(
                "initialize answered protocolVersion {other:?}, not {}",
                Revision::Legacy.as_str()
            )),
        },
        Revision::Modern => {
            let supported = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|v| v == Revision::Modern.as_str()));
            if supported {
                Ok(())
            } else {
                Err(format!(
                    "server/discover does not list {}: {}",
                    Revision::Modern.as_str(),
                    crate::short(&result.to_string())
                ))
            }
        }
    }
}

/// The payload of one call.
#[derive(Debug, Clone)]
pub enum Payload {
    /// `echo-<id>`: unique per request, so an answer to the wrong request is caught.
    Tagged,
    /// The same large text for every request.
    Fixed(std::sync::Arc<Vec<u8>>),
}

impl Payload {
    /// A fixed ASCII payload of exactly `len` bytes (no character JSON would escape).
    pub fn fixed(len: usize) -> Payload {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let bytes = (0..len).map(|i| ALPHABET[i % ALPHABET.len()]).collect();
        Payload::Fixed(std::sync::Arc::new(bytes))
    }

    fn write(&self, out: &mut impl Write, id: u64) -> io::Result<()> {
        match self {
            Payload::Tagged => write!(out, "echo-{id}"),
            Payload::Fixed(bytes) => out.write_all(bytes),
        }
    }

    /// Whether `text` is this request's payload.
    pub fn matches(&self, text: &str, id: u64) -> bool {
        match self {
            Payload::Tagged => {
                text.strip_prefix("echo-")
                    .and_then(|n| n.parse::<u64>().ok())
                    == Some(id)
            }
            Payload::Fixed(bytes) => text.as_bytes() == bytes.as_slice(),
        }
    }
}

enum Piece {
    Literal(Vec<u8>),
    Id,
    Payload,
}

/// A `tools/call` line with holes for the id and the payload, serialized once (one line per
/// variant of the arguments; request `id` uses variant `id % variants`).
pub struct CallTemplate {
    variants: Vec<Vec<Piece>>,
    /// How answers are checked.
    pub check: Check,
    /// What fills the payload holes.
    pub payload: Payload,
    /// With [`Check::Success`]: bytes every answer line must contain.
    pub contains: Option<Vec<u8>>,
}

impl CallTemplate {
    /// The template for `tool(arguments)` in `revision`; strings equal to `$PAYLOAD` are holes.
    #[cfg(test)]
    pub fn new(
        revision: Revision,
        tool: &str,
        arguments: &Value,
        check: Check,
        payload: Payload,
    ) -> CallTemplate {
        Self::rotating(
            revision,
            tool,
            std::slice::from_ref(arguments),
            check,
            payload,
        )
    }

    /// The template whose request `id` calls `tool(variants[id % variants.len()])`.
    pub fn rotating(
        revision: Revision,
        tool: &str,
        variants: &[Value],
        check: Check,
        payload: Payload,
    ) -> CallTemplate {
        assert!(!variants.is_empty(), "a template needs arguments");
        CallTemplate {
            variants: variants
                .iter()
                .map(|arguments| Self::pieces(revision, tool, arguments))
                .collect(),
            check,
            payload,
            contains: None,
        }
    }

    fn pieces(revision: Revision, tool: &str, arguments: &Value) -> Vec<Piece> {
        const ID_HOLE: &str = "\u{1}id\u{1}";
        let mut params = json!({ "name": tool, "arguments": arguments });
        if revision == Revision::Modern {
            params["_meta"] = modern_meta();
        }
        let text = serde_json::to_string(
            &json!({ "jsonrpc": "2.0", "id": ID_HOLE, "method": "tools/call", "params": params }),
        )
        .expect("JSON values serialize");
        let id_hole = serde_json::to_string(ID_HOLE).expect("string");
        let payload_hole = serde_json::to_string(PAYLOAD).expect("string");
        let mut pieces = Vec::new();
        for (i, part) in text.split(&id_hole).enumerate() {
            if i > 0 {
                pieces.push(Piece::Id);
            }
            for (j, part) in part.split(&payload_hole).enumerate() {
                if j > 0 {
                    pieces.push(Piece::Literal(b"\"".to_vec()));
                    pieces.push(Piece::Payload);
                    pieces.push(Piece::Literal(b"\"".to_vec()));
                }
                pieces.push(Piece::Literal(part.as_bytes().to_vec()));
            }
        }
        pieces.push(Piece::Literal(b"\n".to_vec()));
        // Merge neighbouring literals so each request is a handful of copies.
        let mut merged: Vec<Piece> = Vec::new();
        for piece in pieces {
            match (merged.last_mut(), piece) {
                (Some(Piece::Literal(a)), Piece::Literal(b)) => a.extend_from_slice(&b),
                (_, piece) => merged.push(piece),
            }
        }
        merged
    }

    /// The same template, requiring `text` in every answer line (for [`Check::Success`]).
    pub fn containing(mut self, text: Option<&str>) -> CallTemplate {
        self.contains = text.map(|t| t.as_bytes().to_vec());
        self
    }

    /// Writes request `id`.
    pub fn write(&self, out: &mut impl Write, id: u64) -> io::Result<()> {
        let variant = &self.variants[(id % self.variants.len() as u64) as usize];
        for piece in variant {
            match piece {
                Piece::Literal(bytes) => out.write_all(bytes)?,
                Piece::Id => write!(out, "{id}")?,
                Piece::Payload => self.payload.write(out, id)?,
            }
        }
        Ok(())
    }
}

/// What one line from the server is.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A correct answer to request `id`.
    Answer(u64),
    /// A message that is not a response (a notification or a server request): skipped.
    Other,
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default, borrow)]
    result: Option<EchoResult<'a>>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct EchoResult<'a> {
    #[serde(default, borrow, rename = "structuredContent")]
    structured: Option<Structured<'a>>,
    #[serde(default, borrow)]
    content: Option<Vec<Content<'a>>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Structured<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, rename = "type")]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct AnyReply {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    result: Option<AnyResult>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct AnyResult {
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

fn reply_id(id: Option<Value>, line: &[u8]) -> Result<u64, String> {
    id.as_ref().and_then(Value::as_u64).ok_or_else(|| {
        format!(
            "a response without a numeric id: {}",
            crate::short_bytes(line)
        )
    })
}

impl CallTemplate {
    /// Checks one line from the server against what request `id` (read from the line) asked.
    pub fn check_line(&self, line: &[u8]) -> Result<Line, String> {
        match self.check {
            Check::Echo => {
                let reply: Reply = serde_json::from_slice(line)
                    .map_err(|e| format!("{e} in {}", crate::short_bytes(line)))?;
                if reply.method.is_some() {
                    return Ok(Line::Other);
                }
                let id = reply_id(reply.id, line)?;
                if let Some(error) = reply.error {
                    return Err(format!(
                        "request {id} answered an error: {}",
                        crate::short(&error.to_string())
                    ));
                }
                let result = reply
                    .result
                    .ok_or_else(|| format!("request {id}: neither result nor error"))?;
                if result.is_error == Some(true) {
                    return Err(format!(
                        "request {id}: isError is true: {}",
                        crate::short_bytes(line)
                    ));
                }
                let structured = result
                    .structured
                    .and_then(|s| s.text)
                    .ok_or_else(|| format!("request {id}: no structuredContent.text"))?;
                if !self.payload.matches(&structured, id) {
                    return Err(format!(
                        "request {id}: structuredContent.text is {}",
                        crate::short(&structured)
                    ));
                }
                let text = match result.content.as_deref() {
                    Some(
                        [
                            Content {
                                kind,
                                text: Some(text),
                            },
                        ],
                    ) if kind == "text" => text,
                    _ => return Err(format!("request {id}: content is not one text block")),
                };
                if !self.text_matches(text, id) {
                    return Err(format!(
                        "request {id}: text content is {}",
                        crate::short(text)
                    ));
                }
                Ok(Line::Answer(id))
            }
            Check::Success => {
                let reply: AnyReply = serde_json::from_slice(line)
                    .map_err(|e| format!("{e} in {}", crate::short_bytes(line)))?;
                if reply.method.is_some() {
                    return Ok(Line::Other);
                }
                let id = reply_id(reply.id, line)?;
                if let Some(error) = reply.error {
                    return Err(format!(
                        "request {id} answered an error: {}",
                        crate::short(&error.to_string())
                    ));
                }
                match reply.result {
                    Some(AnyResult {
                        is_error: Some(true),
                    }) => Err(format!(
                        "request {id}: isError is true: {}",
                        crate::short_bytes(line)
                    )),
                    Some(_) => match &self.contains {
                        Some(needle) if !line.windows(needle.len()).any(|w| w == needle) => {
                            Err(format!(
                                "request {id}: the answer does not contain {}: {}",
                                String::from_utf8_lossy(needle),
                                crate::short_bytes(line)
                            ))
                        }
                        _ => Ok(Line::Answer(id)),
                    },
                    None => Err(format!("request {id}: neither result nor error")),
                }
            }
        }
    }

    /// The text block is the payload itself, or the JSON of `{"text": payload}` (any spacing).
    fn text_matches(&self, text: &str, id: u64) -> bool {
        if let Some(inner) = text
            .strip_prefix("{\"text\":\"")
            .and_then(|t| t.strip_suffix("\"}"))
            && self.payload.matches(inner, id)
        {
            return true;
        }
        if self.payload.matches(text, id) {
            return true;
        }
        #[derive(Deserialize)]
        struct Echo<'a> {
            #[serde(borrow)]
            text: Cow<'a, str>,
        }
        serde_json::from_str::<Echo>(text).is_ok_and(|echo| self.payload.matches(&echo.text, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: &CallTemplate, id: u64) -> String {
        let mut out = Vec::new();
        t.write(&mut out, id).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn templates_fill_id_and_payload_and_stay_valid_json() {
        let t = CallTemplate::new(
            Revision::Modern,
            "echo",
            &json!({"text": PAYLOAD}),
            Check::Echo,
            Payload::Tagged,
        );
        let text = line(&t, 42);
        assert!(text.ends_with('\n'));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["id"], 42);
        assert_eq!(v["params"]["arguments"]["text"], "echo-42");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let legacy = CallTemplate::new(
            Revision::Legacy,
            "echo",
            &json!({"text": PAYLOAD}),
            Check::Echo,
            Payload::fixed(10),
        );
        let v: Value = serde_json::from_str(&line(&legacy, 7)).unwrap();
        assert!(v["params"].get("_meta").is_none());
        assert_eq!(v["params"]["arguments"]["text"], "abcdefghij");
    }

    #[test]
    fn a_rotating_template_spreads_requests_over_its_variants() {
        let variants = [json!({"path": "A.lean"}), json!({"path": "B.lean"})];
        let t = CallTemplate::rotating(
            Revision::Legacy,
            "lean_hover",
            &variants,
            Check::Success,
            Payload::Tagged,
        );
        let path = |id| {
            let v: Value = serde_json::from_str(&line(&t, id)).unwrap();
            v["params"]["arguments"]["path"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            [path(0), path(1), path(2), path(7)],
            ["A.lean", "B.lean", "A.lean", "B.lean"]
        );
    }

    #[test]
    fn answers_are_checked_for_id_and_text() {
        let t = CallTemplate::new(
            Revision::Legacy,
            "echo",
            &json!({"text": PAYLOAD}),
            Check::Echo,
            Payload::Tagged,
        );
        let good = br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"text\":\"echo-5\"}"}],"structuredContent":{"text":"echo-5"}}}"#;
        assert_eq!(t.check_line(good), Ok(Line::Answer(5)));
        let spaced = br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\n  \"text\": \"echo-5\"\n}"}],"structuredContent":{"text":"echo-5"}}}"#;
        assert_eq!(t.check_line(spaced), Ok(Line::Answer(5)));
        let swapped = br#"{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"echo-5"}],"structuredContent":{"text":"echo-5"}}}"#;
        assert!(t.check_line(swapped).is_err());
        let wrong_text = br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"echo-6"}],"structuredContent":{"text":"echo-5"}}}"#;
        assert!(t.check_line(wrong_text).is_err());
        let error = br#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"x"}}"#;
        assert!(t.check_line(error).is_err());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(t.check_line(note), Ok(Line::Other));
    }

    #[test]
    fn success_answers_may_have_to_contain_a_text() {
        let t = CallTemplate::new(
            Revision::Legacy,
            "lean_hover",
            &json!({"line": 1}),
            Check::Success,
            Payload::Tagged,
        )
        .containing(Some("Fixture.add"));
        let good = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Fixture.add (a b : Nat)"}]}}"#;
        assert_eq!(t.check_line(good), Ok(Line::Answer(3)));
        let null_hover =
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"null"}]}}"#;
        assert!(t.check_line(null_hover).is_err());
        let failed = br#"{"jsonrpc":"2.0","id":3,"result":{"isError":true,"content":[{"type":"text","text":"Fixture.add"}]}}"#;
        assert!(t.check_line(failed).is_err());
    }
}
