//! The request headers a Streamable HTTP server validates: the media types, and the MCP
//! headers that must agree with the JSON-RPC body.
//!
//! Contract:
//! 1. `Content-Type` must have the media type `application/json` (parameters such as `charset`
//!    allowed, case-insensitive), else 415. `Accept` must list both `application/json` and
//!    `text/event-stream` (across all Accept headers; parameters ignored; wildcards do not count,
//!    as clients MUST list both), else 406.
//! 2. Legacy era: `MCP-Protocol-Version`, when present, must be `2025-11-25`, else 400 -32600.
//! 3. Modern era, requests only (notifications are not checked, as in the official SDKs), in this
//!    order, all 400: `MCP-Protocol-Version` missing → -32020; the body's
//!    `_meta["io.modelcontextprotocol/protocolVersion"]` missing or not a string → -32602; header
//!    ≠ body → -32020 (so a mismatch wins over an unsupported version); a version other than
//!    2026-07-28 → -32022 with `data {supported, requested}`; `Mcp-Method` missing or ≠ the body
//!    method (case-sensitive) → -32020; for `tools/call` and `prompts/get` (`params.name`) and
//!    `resources/read` (`params.uri`), when the body carries the value, `Mcp-Name` missing or
//!    ≠ it → -32020.
//! 4. Header values are compared after trimming optional whitespace (SP, HTAB); a value that is
//!    not visible ASCII, or that appears more than once, never matches. `Mcp-Name` may carry the
//!    sentinel `=?base64?<canonical padded Base64 of UTF-8>?=`, decoded before comparing; a
//!    sentinel with invalid Base64 or UTF-8 is a mismatch; a value missing either end of the
//!    sentinel is taken literally.

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use serde_json::{Map, Value, json};

use crate::reply::Rejection;

/// The revision the legacy era speaks.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";
/// The revisions the modern era serves.
pub(crate) const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// The body key naming a modern request's revision.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;
const INVALID_PARAMS: i64 = -32602;
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// 415 unless the body is declared `application/json`.
pub(crate) fn check_content_type(headers: &HeaderMap) -> Result<(), Rejection> {
    let declared = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(media_type);
    if declared.as_deref() == Some("application/json") {
        return Ok(());
    }
    Err(Rejection::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        -32600,
        format!(
            "Unsupported Media Type: Content-Type must be application/json, not {}",
            declared.as_deref().unwrap_or("(missing)")
        ),
    ))
}

/// 406 unless `Accept` lists both `application/json` and `text/event-stream`.
pub(crate) fn check_accept(headers: &HeaderMap) -> Result<(), Rejection> {
    let listed: Vec<String> = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(media_type)
        .collect();
    let lists = |wanted: &str| listed.iter().any(|m| m == wanted);
    if lists("application/json") && lists("text/event-stream") {
        return Ok(());
    }
    Err(Rejection::new(
        StatusCode::NOT_ACCEPTABLE,
        -32600,
        "Not Acceptable: Accept must list both application/json and text/event-stream",
    ))
}

/// The media type of a `Content-Type`/`Accept` element, lower-cased, without parameters.
fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The legacy era's one header rule.
pub(crate) fn check_legacy(headers: &HeaderMap, id: &Value) -> Result<(), Rejection> {
    if !headers.contains_key(PROTOCOL_VERSION) {
        return Ok(());
    }
    match single(headers, PROTOCOL_VERSION) {
        Some(version) if version == LEGACY_VERSION => Ok(()),
        other => Err(Rejection::new(
            StatusCode::BAD_REQUEST,
            -32600,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version {:?}; this endpoint speaks {LEGACY_VERSION}",
                other.unwrap_or("(unreadable)")
            ),
        )
        .for_id(id)),
    }
}

/// The modern era's header rules for one request.
pub(crate) fn check_modern(
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> Result<(), Rejection> {
    let mismatch = |message: String| {
        Rejection::new(
            StatusCode::BAD_REQUEST,
            HEADER_MISMATCH,
            format!("Header mismatch: {message}"),
        )
        .for_id(id)
    };
    let Some(header_version) = single(headers, PROTOCOL_VERSION) else {
        return Err(mismatch(
            "a single readable MCP-Protocol-Version header is required".into(),
        ));
    };
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let Some(body_version) = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
    else {
        return Err(Rejection::new(
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
            format!(
                "Invalid params: modern requests require the string _meta {META_PROTOCOL_VERSION}"
            ),
        )
        .for_id(id));
    };
    if header_version != body_version {
        return Err(mismatch(format!(
            "MCP-Protocol-Version {header_version:?} does not match _meta {META_PROTOCOL_VERSION} {body_version:?}"
        )));
    }
    if !MODERN_VERSIONS.contains(&body_version) {
        return Err(Rejection::new(
            StatusCode::BAD_REQUEST,
            UNSUPPORTED_VERSION,
            "Unsupported protocol version",
        )
        .for_id(id)
        .with_data(json!({"supported": MODERN_VERSIONS, "requested": body_version})));
    }
    match single(headers, MCP_METHOD) {
        None => {
            return Err(mismatch(format!(
                "a single readable Mcp-Method header is required (the body method is {method:?})"
            )));
        }
        Some(header_method) if header_method != method => {
            return Err(mismatch(format!(
                "Mcp-Method {header_method:?} does not match the body method {method:?}"
            )));
        }
        Some(_) => {}
    }
    let Some((field, body_name)) = name_source(method, params) else {
        return Ok(());
    };
    if !headers.contains_key(MCP_NAME) {
        return match body_name {
            Some(name) => Err(mismatch(format!(
                "the Mcp-Name header is required (the body has params.{field} {name:?})"
            ))),
            None => Ok(()),
        };
    }
    let decoded = single(headers, MCP_NAME).and_then(decode_name);
    match (decoded, body_name) {
        (None, _) => Err(mismatch(
            "Mcp-Name must be one visible-ASCII value, its =?base64?...?= sentinel valid Base64 of UTF-8".into(),
        )),
        (Some(header_name), Some(name)) if header_name != name => Err(mismatch(format!(
            "Mcp-Name {header_name:?} does not match params.{field} {name:?}"
        ))),
        _ => Ok(()),
    }
}

/// Which body field `Mcp-Name` mirrors for `method`, and its value when it is a string.
fn name_source<'a>(
    method: &str,
    params: Option<&'a Value>,
) -> Option<(&'static str, Option<&'a str>)> {
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    let value = params
        .and_then(Value::as_object)
        .and_then(|p: &Map<String, Value>| p.get(field))
        .and_then(Value::as_str);
    Some((field, value))
}

/// The one value of header `name`, visible ASCII, OWS-trimmed; `None` if absent, repeated or
/// unreadable.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    let text = value.to_str().ok()?;
    Some(text.trim_matches([' ', '\t']))
}

/// An `Mcp-Name` value as the client meant it: the sentinel decoded, anything else literal.
/// `None` when the sentinel's payload is not canonical Base64 of UTF-8.
fn decode_name(value: &str) -> Option<String> {
    let payload = value
        .strip_prefix(BASE64_PREFIX)
        .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX));
    let Some(payload) = payload else {
        return Some(value.to_string());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentinel_decoding() {
        assert_eq!(decode_name("=?base64?SGVsbG8=?=").as_deref(), Some("Hello"));
        assert_eq!(decode_name("=?base64?SGVsbG8?=").as_deref(), None);
        assert_eq!(decode_name("=?base64?SGVs!!!bG8=?=").as_deref(), None);
        assert_eq!(decode_name("=?base64?/w==?=").as_deref(), None);
        assert_eq!(decode_name("SGVsbG8=").as_deref(), Some("SGVsbG8="));
        assert_eq!(
            decode_name("=?base64?SGVsbG8=").as_deref(),
            Some("=?base64?SGVsbG8=")
        );
        assert_eq!(
            decode_name("=?BASE64?SGVsbG8=?=").as_deref(),
            Some("=?BASE64?SGVsbG8=?=")
        );
    }

    #[test]
    fn media_types_ignore_parameters_and_case() {
        assert_eq!(
            media_type(" Application/JSON ; charset=utf-8"),
            "application/json"
        );
        assert_eq!(media_type("text/event-stream;q=0.5"), "text/event-stream");
    }
}
