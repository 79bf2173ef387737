//! How the bridge answers over HTTP: its own JSON-RPC error bodies, the status a server answer
//! gets in each era, and the SSE framing of a streamed request.
//!
//! Contract:
//! 1. Every rejection the bridge decides itself is an `application/json` JSON-RPC error with the
//!    request's id when the body could be read far enough to know it, `null` otherwise.
//! 2. A server answer is HTTP 200 in the legacy era; in the modern era an error answer is 404 for
//!    -32601, 500 for -32603 and 400 for every other code.
//! 3. A stream is `text/event-stream` with `Cache-Control: no-cache` and `X-Accel-Buffering: no`;
//!    each message is one `event: message` frame whose `data` is the JSON on one line. The stream
//!    ends after the response (or the -32603 error that replaces it, or nothing when the request
//!    was cancelled).

use std::convert::Infallible;

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::Mode;
use crate::routing::{Answers, End, Routed};

/// JSON-RPC internal error: the bridge or the server failed.
pub(crate) const INTERNAL_ERROR: i64 = -32603;

/// An answer the bridge gives without the server.
#[derive(Debug)]
pub(crate) struct Rejection {
    status: StatusCode,
    id: Value,
    code: i64,
    message: String,
    data: Option<Value>,
    allow_post: bool,
}

impl Rejection {
    /// A rejection with id `null`.
    pub(crate) fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Rejection {
            status,
            id: Value::Null,
            code,
            message: message.into(),
            data: None,
            allow_post: false,
        }
    }

    /// The same rejection, correlated with the request's id.
    pub(crate) fn for_id(mut self, id: &Value) -> Self {
        self.id = id.clone();
        self
    }

    /// The same rejection with error `data`.
    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// 405 with `Allow: POST`.
    pub(crate) fn method_not_allowed(method: &str) -> Self {
        let mut rejection = Rejection::new(
            StatusCode::METHOD_NOT_ALLOWED,
            -32600,
            format!(
                "Method Not Allowed: {method}; this endpoint takes POST only (no SSE stream, no sessions)"
            ),
        );
        rejection.allow_post = true;
        rejection
    }
}

impl Rejection {
    /// The HTTP status it is answered with.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    /// The JSON-RPC error body it is answered with.
    pub(crate) fn body(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        json!({"jsonrpc": "2.0", "id": self.id, "error": error})
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let mut response = json_response(self.status, &self.body());
        if self.allow_post {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
        }
        response
    }
}

/// An `application/json` response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The HTTP status a server answer travels with.
pub(crate) fn status_of(mode: Mode, answer: &Value) -> StatusCode {
    if mode == Mode::Legacy {
        return StatusCode::OK;
    }
    match answer
        .get("error")
        .map(|e| e.get("code").and_then(Value::as_i64))
    {
        None => StatusCode::OK,
        Some(Some(-32601)) => StatusCode::NOT_FOUND,
        Some(Some(INTERNAL_ERROR)) => StatusCode::INTERNAL_SERVER_ERROR,
        Some(_) => StatusCode::BAD_REQUEST,
    }
}

/// The -32603 error that stands in for the answer of a request the server can no longer give.
pub(crate) fn failure_body(id: &Value, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": INTERNAL_ERROR, "message": format!("Internal error: {reason}")}
    })
}

/// A stream that starts with `first` and carries the rest of `answers` up to the last one.
pub(crate) fn event_stream(first: Value, answers: Answers, id: Value) -> Response {
    let state = Some((Some(first), answers, id));
    let events = futures_util::stream::unfold(state, |state| async move {
        let (first, mut answers, id) = state?;
        if let Some(first) = first {
            return Some((frame(&first), Some((None, answers, id))));
        }
        match answers.recv().await? {
            Routed::Notification(message) => Some((frame(&message), Some((None, answers, id)))),
            Routed::Response(message) => Some((frame(&message), None)),
            Routed::Ended(End::Failed(reason)) => Some((frame(&failure_body(&id, &reason)), None)),
            Routed::Ended(End::Cancelled) => None,
        }
    });
    let mut response = Sse::new(events).into_response();
    response.headers_mut().insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

fn frame(message: &Value) -> Result<Event, Infallible> {
    Ok(Event::default().event("message").data(message.to_string()))
}
