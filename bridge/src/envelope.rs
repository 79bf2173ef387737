//! What a POST body is: one JSON-RPC request or notification, or a 400.
//!
//! Contract: bytes that are not JSON are 400 -32700 (id null). A JSON array (a batch) and any
//! other non-object are 400 -32600 (id null). An object without a string `method` (a client
//! response, say: this server never sends requests) is 400 -32600 with its id when readable. An
//! `id` that is not a string or an integral number (null, boolean, fractional, structured) is
//! 400 -32600 with id null, the server's own rule, checked here because the bridge replaces ids
//! before the server sees them. Everything else is forwarded as is, for the server to judge.

use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::reply::Rejection;

/// One message from a client.
#[derive(Debug)]
pub(crate) enum Message {
    /// A request: it gets exactly one answer.
    Request {
        /// The client's id, as sent.
        id: Value,
        /// The method, as sent.
        method: String,
        /// The whole object.
        body: Map<String, Value>,
    },
    /// A notification: it gets 202.
    Notification {
        /// The whole object.
        body: Map<String, Value>,
    },
}

/// Reads a POST body.
pub(crate) fn classify(bytes: &[u8]) -> Result<Message, Rejection> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Rejection::new(StatusCode::BAD_REQUEST, -32700, format!("Parse error: {e}"))
    })?;
    let body = match value {
        Value::Object(body) => body,
        Value::Array(_) => {
            return Err(invalid(
                "JSON-RPC batches are not supported: POST one message per request",
            ));
        }
        _ => return Err(invalid("a JSON-RPC message must be a JSON object")),
    };
    let id = body.get("id").cloned();
    if let Some(id) = &id
        && !is_valid_id(id)
    {
        return Err(invalid("the id must be a string or an integral number"));
    }
    let Some(method) = body
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        let rejection = invalid(
            "the message must be a request or a notification with a string method (this server sends no requests to answer)",
        );
        return Err(match &id {
            Some(id) => rejection.for_id(id),
            None => rejection,
        });
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, body },
        None => Message::Notification { body },
    })
}

fn invalid(message: &str) -> Rejection {
    Rejection::new(
        StatusCode::BAD_REQUEST,
        -32600,
        format!("Invalid Request: {message}"),
    )
}

fn is_valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.223_372_036_854_775e18)
        }
        _ => false,
    }
}
