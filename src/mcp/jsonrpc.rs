//! JSON-RPC 2.0 envelopes as MCP uses them on stdio: one message per line, closed members.
//!
//! Contract:
//! 1. [`decode`] never panics, on any bytes.
//! 2. A request has exactly `jsonrpc`, `id`, `method` and optionally `params`; a notification has
//!    `jsonrpc`, `method` and optionally `params`. Anything else (an undeclared member, a client
//!    response, a batch, a null or fractional id) is a [`DecodeError::Envelope`] carrying -32600 and,
//!    where one could be read, the request id, so the answer can be correlated.
//! 3. Bytes that are not JSON are -32700 with `id: null`. JSON holding a number too large for a
//!    float (`1e400`) is JSON all the same: if that number is the id it is -32600 with `id:
//!    null` (not an id in range), and elsewhere it is [`DecodeError::Params`] (-32602) with the id.
//!    So is JSON holding a string escape that names no character (half of a UTF-16 surrogate
//!    pair, `"\ud800"`, which RFC 8259's grammar allows): -32602 naming the escape, with the id
//!    unless the id is that string.
//! 4. Ids follow `ids`: strings and integers are distinct, and an integer id is the integer its
//!    literal denotes (`1.0e1` is 10), decided on the literal's text, never on a rounded float. The
//!    same holds for the `requestId` a cancellation names in its params.
//!
//! `params` is kept as raw [`Value`]: which shapes a method accepts is the protocol layer's rule.

use serde::Serialize;
use serde_json::{Map, Value};

pub use super::ids::RequestId;
use super::ids::{IdLiteral, is_rounded};

/// JSON-RPC and MCP error codes this server emits.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid request object, or the request is not allowed now.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist in the protocol family the request belongs to.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method exists but its parameters are invalid.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed while producing an answer.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP 2026-07-28: the request names a protocol revision this server does not serve.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A decoded client message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request: it must receive exactly one terminal response unless cancelled.
    Request(Request),
    /// A notification: it never receives a response.
    Notification(Notification),
}

/// A JSON-RPC request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name, as sent.
    pub method: String,
    /// `params`, if present, in whatever JSON shape the client sent.
    pub params: Option<Value>,
}

/// A JSON-RPC notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, as sent.
    pub method: String,
    /// `params`, if present, in whatever JSON shape the client sent.
    pub params: Option<Value>,
}

/// Why a line could not be decoded into an [`Incoming`] message.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Not JSON at all (or not UTF-8): answered with -32700 and `id: null`.
    Parse(String),
    /// JSON, but not an acceptable request or notification: answered with -32600.
    Envelope {
        /// The id, when the message carried a readable one.
        id: Option<RequestId>,
        /// What was wrong, for the client.
        message: String,
    },
    /// A well-formed message whose params cannot be represented (a number out of range):
    /// answered with -32602.
    Params {
        /// The id, when the message carried a readable one.
        id: Option<RequestId>,
        /// What was wrong, for the client.
        message: String,
    },
}

impl DecodeError {
    /// The error response this decode failure is answered with.
    pub fn into_error_response(self) -> Response {
        match self {
            DecodeError::Parse(detail) => Response::error(
                None,
                ErrorObject::new(code::PARSE_ERROR, format!("Parse error: {detail}")),
            ),
            DecodeError::Envelope { id, message } => {
                Response::error(id, ErrorObject::new(code::INVALID_REQUEST, message))
            }
            DecodeError::Params { id, message } => {
                Response::error(id, ErrorObject::invalid_params(message))
            }
        }
    }

    /// The id the error answer correlates with, if any.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            DecodeError::Parse(_) => None,
            DecodeError::Envelope { id, .. } | DecodeError::Params { id, .. } => id.as_ref(),
        }
    }
}

/// Decodes one line (without its terminator) into a message.
pub fn decode(line: &[u8]) -> Result<Incoming, DecodeError> {
    // JSON text is UTF-8 (RFC 8259 §8.1); say so rather than what the parser trips over next.
    if let Err(e) = std::str::from_utf8(line) {
        return Err(DecodeError::Parse(format!(
            "the line is not valid UTF-8 (at byte {}); JSON-RPC messages are UTF-8 JSON text",
            e.valid_up_to()
        )));
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        // Nesting beyond the parser's limit is that, whatever the line's numbers look like.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return Err(DecodeError::Parse(format!(
                "arrays and objects may nest at most 127 deep ({e})"
            )));
        }
        Err(e) => return Err(undecodable(line, &e)),
    };
    let rounded = is_rounded(value.get("id"))
        || is_rounded(value.get("params").and_then(|p| p.get("requestId")));
    let literal = if rounded {
        IdLiteral::read(line)
    } else {
        IdLiteral::default()
    };
    classify(value, literal)
}

/// Why a line `serde_json` could not read as a [`Value`] (it said `e`) is refused.
fn undecodable(line: &[u8], e: &serde_json::Error) -> DecodeError {
    let parse = || DecodeError::Parse(e.to_string());
    let text = std::str::from_utf8(line).unwrap_or_default();
    if e.to_string().starts_with("number out of range") {
        let message = "a number in this message is beyond the range of a 64-bit float; send \
                       numbers between -1.7e308 and 1.7e308";
        return match readable_id(line) {
            Some(Ok(id)) => params(id, message),
            // The id is the number out of range (or otherwise not an id).
            Some(Err(())) => envelope(None, ID_RULE),
            None => parse(),
        };
    }
    if let Some((at, escape)) = lone_surrogate(text) {
        let message = format!(
            "a string in this message holds the escape {escape} (at byte {at}): half of a \
             UTF-16 surrogate pair without its other half, which names no character; escape a \
             character beyond U+FFFF as both halves (\\ud83d\\ude00), or send it as UTF-8"
        );
        return match readable_id(line) {
            Some(id) => params(id.unwrap_or(None), message),
            None => parse(),
        };
    }
    parse()
}

/// For JSON that `serde_json` cannot hold as a [`Value`]: its id, `Err` when it has one that
/// is no id; `None` when the line is not JSON at all.
fn readable_id(line: &[u8]) -> Option<Result<Option<RequestId>, ()>> {
    // Raw values are read without converting numbers or strings, so only real syntax errors
    // fail here.
    let members: std::collections::HashMap<String, &serde_json::value::RawValue> =
        serde_json::from_slice(line).ok()?;
    let Some(text) = members.get("id").map(|raw| raw.get()) else {
        return Some(Ok(None));
    };
    let id = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|value| RequestId::from_literal(&value, Some(text)));
    Some(id.map(Some).ok_or(()))
}

/// The first `\u` escape in a string of `text` that names no character: a UTF-16 surrogate
/// without its other half; its byte offset and its text.
fn lone_surrogate(text: &str) -> Option<(usize, &str)> {
    let bytes = text.as_bytes();
    let unit = |at: usize| {
        let digits = text.get(at + 2..at + 6)?;
        let escaped = bytes.get(at..at + 2) == Some(&b"\\u"[..]);
        let hex = digits.bytes().all(|b| b.is_ascii_hexdigit());
        (escaped && hex).then(|| u16::from_str_radix(digits, 16).ok())?
    };
    let (mut at, mut in_string) = (0, false);
    while at < bytes.len() {
        match bytes[at] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                let Some(first) = unit(at) else {
                    at += 2;
                    continue;
                };
                let paired = (0xD800..0xDC00).contains(&first)
                    && unit(at + 6).is_some_and(|second| (0xDC00..0xE000).contains(&second));
                if paired {
                    at += 12;
                    continue;
                }
                if (0xD800..0xE000).contains(&first) {
                    return Some((at, &text[at..at + 6]));
                }
                at += 6;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

fn params(id: Option<RequestId>, message: impl Into<String>) -> DecodeError {
    DecodeError::Params {
        id,
        message: message.into(),
    }
}

/// Decodes an already-parsed JSON value into a message. Numbers that were parsed as floats are
/// read through their shortest text, since the client's literal is gone.
pub fn decode_value(value: Value) -> Result<Incoming, DecodeError> {
    classify(value, IdLiteral::default())
}

fn classify(value: Value, literal: IdLiteral<'_>) -> Result<Incoming, DecodeError> {
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => return Err(envelope(None, "JSON-RPC batches are not supported")),
        _ => return Err(envelope(None, "a JSON-RPC message must be a JSON object")),
    };
    exact_request_id_param(&mut object, literal.params_request_id);
    let raw_id = object.get("id");
    let id = raw_id.and_then(|raw| RequestId::from_literal(raw, literal.id));
    if object.contains_key("result") || object.contains_key("error") {
        return Err(envelope(
            id,
            "client responses are not accepted: this server never sends requests",
        ));
    }
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err(envelope(
            id,
            "the jsonrpc member must be the string \"2.0\"",
        ));
    }
    if let Some(raw) = raw_id
        && id.is_none()
    {
        let message = match raw {
            Value::Number(_) => ID_RULE.to_owned(),
            other => format!(
                "a request id must be a string or an integer, not {}",
                kind_of(other)
            ),
        };
        return Err(envelope(None, message));
    }
    let allowed: &[&str] = if id.is_some() {
        &["jsonrpc", "id", "method", "params"]
    } else {
        &["jsonrpc", "method", "params"]
    };
    if let Some(extra) = undeclared(&object, allowed) {
        return Err(envelope(
            id,
            format!("undeclared JSON-RPC members: {extra}"),
        ));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        Some(other) => {
            return Err(envelope(
                id,
                format!("method must be a string, not {}", kind_of(&other)),
            ));
        }
        None => return Err(envelope(id, "a request or notification must have a method")),
    };
    let params = object.remove("params");
    Ok(match id {
        Some(id) => Incoming::Request(Request { id, method, params }),
        None => Incoming::Notification(Notification { method, params }),
    })
}

/// The one notification whose params name a request id (MCP's cancellation).
const CANCELLED: &str = "notifications/cancelled";

/// In a cancellation, replaces a rounded `params.requestId` with the integer its literal denotes,
/// or with `null` when it denotes none, so whoever reads it later sees the id the client meant
/// or no id at all. Other messages' params are left exactly as sent.
fn exact_request_id_param(object: &mut Map<String, Value>, literal: Option<&str>) {
    if object.contains_key("id") || object.get("method").and_then(Value::as_str) != Some(CANCELLED)
    {
        return;
    }
    let Some(Value::Object(params)) = object.get_mut("params") else {
        return;
    };
    if let Some(slot) = params.get_mut("requestId")
        && is_rounded(Some(slot))
    {
        *slot = RequestId::from_literal(slot, literal).map_or(Value::Null, |id| id.to_value());
    }
}

/// What a numeric id that is not one is told.
const ID_RULE: &str = "a request id must be a string or an integer from -9223372036854775808 \
                       to 18446744073709551615; this number is fractional or out of that range";

fn envelope(id: Option<RequestId>, message: impl Into<String>) -> DecodeError {
    DecodeError::Envelope {
        id,
        message: message.into(),
    }
}

/// The undeclared keys of `object`, sorted and comma-separated, if there are any.
pub fn undeclared(object: &Map<String, Value>, allowed: &[&str]) -> Option<String> {
    let mut extra: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect();
    if extra.is_empty() {
        return None;
    }
    extra.sort_unstable();
    Some(extra.join(", "))
}

/// A short English name for a JSON value's type, for error messages.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorObject {
    /// The error code (see [`code`]).
    pub code: i64,
    /// A sentence saying what was wrong and what to do.
    pub message: String,
    /// Structured detail, when the code defines some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with structured data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32602 with a message.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ErrorObject::new(code::INVALID_PARAMS, message)
    }

    /// -32600 with a message.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        ErrorObject::new(code::INVALID_REQUEST, message)
    }

    /// -32601 naming the method and the revision it was asked under.
    pub fn method_not_found(method: &str, revision: &str) -> Self {
        ErrorObject::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: this server does not serve {method} under MCP {revision}"),
        )
    }
}

/// A response: exactly one of `result` and `error`.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered; `None` only when it could not be read (`id: null`).
    pub id: Option<RequestId>,
    /// The outcome.
    pub outcome: Result<Value, ErrorObject>,
}

impl Response {
    /// A success response.
    pub fn ok(id: RequestId, result: Value) -> Self {
        Response {
            id: Some(id),
            outcome: Ok(result),
        }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }

    /// The response as one line of JSON, newline included.
    pub fn to_line(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Ok<'a> {
            jsonrpc: &'static str,
            id: &'a Option<RequestId>,
            result: &'a Value,
        }
        #[derive(Serialize)]
        struct Err<'a> {
            jsonrpc: &'static str,
            id: &'a Option<RequestId>,
            error: &'a ErrorObject,
        }
        let mut line = match &self.outcome {
            Result::Ok(result) => serde_json::to_vec(&Ok {
                jsonrpc: "2.0",
                id: &self.id,
                result,
            }),
            Result::Err(error) => serde_json::to_vec(&Err {
                jsonrpc: "2.0",
                id: &self.id,
                error,
            }),
        }
        .expect("serializing JSON values cannot fail");
        line.push(b'\n');
        line
    }
}

/// A server-to-client notification as one line of JSON, newline included.
pub fn notification_line(method: &str, params: &Value) -> Vec<u8> {
    #[derive(Serialize)]
    struct Note<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a Value,
    }
    let mut line = serde_json::to_vec(&Note {
        jsonrpc: "2.0",
        method,
        params,
    })
    .expect("serializing JSON values cannot fail");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode_str(s: &str) -> Result<Incoming, DecodeError> {
        decode(s.as_bytes())
    }

    #[test]
    fn a_line_that_is_not_utf8_says_so() {
        let Err(DecodeError::Parse(detail)) = decode(b"{\"a\":\"\xff\"}") else {
            panic!("not a parse error")
        };
        assert!(detail.contains("not valid UTF-8 (at byte 6)"), "{detail}");
    }

    #[test]
    fn string_and_integer_ids_are_distinct() {
        let a = RequestId::from_value(&json!(7)).unwrap();
        let b = RequestId::from_value(&json!("7")).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.to_string(), "7");
        assert_eq!(b.to_string(), "\"7\"");
    }

    #[test]
    fn integral_decimals_are_canonical_integers() {
        let decimal = decode_str(r#"{"jsonrpc":"2.0","id":1.0e1,"method":"ping"}"#).unwrap();
        let Incoming::Request(request) = decimal else {
            panic!("not a request")
        };
        assert_eq!(request.id, RequestId::from_value(&json!(10)).unwrap());
        assert_eq!(request.id.to_value(), json!(10));
    }

    #[test]
    fn fractional_null_and_structured_ids_are_rejected_without_an_id() {
        for id in ["1.5", "null", "true", "[1]", "{}"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match decode_str(&line) {
                Err(DecodeError::Envelope { id: None, .. }) => {}
                other => panic!("id {id}: {other:?}"),
            }
        }
    }

    #[test]
    fn undeclared_members_and_responses_keep_the_id() {
        let extra = decode_str(r#"{"jsonrpc":"2.0","id":"a","method":"ping","x":1}"#);
        assert!(matches!(
            extra,
            Err(DecodeError::Envelope { id: Some(_), .. })
        ));
        let response = decode_str(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        assert!(matches!(
            response,
            Err(DecodeError::Envelope { id: Some(_), .. })
        ));
    }

    #[test]
    fn notifications_may_not_carry_an_id_member_of_null() {
        let err = decode_str(r#"{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}"#);
        assert!(matches!(err, Err(DecodeError::Envelope { id: None, .. })));
    }

    #[test]
    fn the_id_rule_names_the_accepted_range() {
        use super::super::ids::{MAX_INTEGER_ID, MIN_INTEGER_ID};
        assert!(ID_RULE.contains(&MIN_INTEGER_ID.to_string()));
        assert!(ID_RULE.contains(&MAX_INTEGER_ID.to_string()));
    }

    #[test]
    fn numbers_beyond_a_float_are_not_parse_errors() {
        let id_out_of_range = decode_str(r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#);
        assert!(matches!(
            id_out_of_range,
            Err(DecodeError::Envelope { id: None, .. })
        ));
        let param = decode_str(r#"{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":-1e999}}"#);
        assert!(matches!(
            param,
            Err(DecodeError::Params { id: Some(_), .. })
        ));
        assert!(matches!(decode_str("{1e400}"), Err(DecodeError::Parse(_))));
    }

    #[test]
    fn a_lone_surrogate_escape_is_named_and_keeps_the_id() {
        for (text, escape) in [
            (r#""rfl \ud800""#, r"\ud800"),
            (r#""\udc00 x""#, r"\udc00"),
            (r#""\ud83d\ude00 then \ud800\u0041""#, r"\ud800"),
            (r#""\\ud800 \ud800""#, r"\ud800"),
        ] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":"a","method":"m","params":{{"text":{text}}}}}"#);
            match decode_str(&line) {
                Err(DecodeError::Params {
                    id: Some(id),
                    message,
                }) => {
                    assert_eq!(id, RequestId::String("a".into()));
                    assert!(
                        message.contains(&format!("the escape {escape} (")),
                        "{message}"
                    );
                    assert!(!message.contains("float"), "{message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        // Well-formed pairs are characters.
        assert!(
            decode_str(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"\ud83d\ude00"}"#).is_ok()
        );
        // The id is the bad string: no id to answer with.
        let id = decode_str(r#"{"jsonrpc":"2.0","id":"\ud800","method":"m"}"#);
        assert!(
            matches!(id, Err(DecodeError::Params { id: None, .. })),
            "{id:?}"
        );
        // Not JSON at all: a parse error, whatever escapes it holds.
        let broken = decode_str(r#"{"jsonrpc":"2.0","id":"\ud800""#);
        assert!(matches!(broken, Err(DecodeError::Parse(_))), "{broken:?}");
    }

    #[test]
    fn response_lines_are_single_lines() {
        let line = Response::ok(RequestId::String("a\nb".into()), json!({"t": "x\ny"})).to_line();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
    }
}
