//! The HTTP side: one endpoint, `/mcp`, whose POST handler applies the rules in their fixed
//! order and then forwards the message.
//!
//! Contract (order of checks; the first failure answers): Host/Origin (403, `origin`) → method
//! (405 for anything but POST) → Content-Type (415) → Accept (406) → body size (413) → parse and
//! shape (400, `envelope`) → era headers (400, `headers`) → forward. A notification is answered
//! 202 with no body once queued for the server. A request waits for its first routed item: its
//! response (JSON, status per era), a notification (the answer turns into an SSE stream), a
//! cancellation (204, no body) or the server's end (500 -32603). Any other path is 404.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::Value;

use crate::envelope::{self, Message};
use crate::headers;
use crate::reply::{self, Rejection};
use crate::routing::{End, Gone, Routed, Routing};
use crate::{Mode, origin};

/// The `_meta` key of a modern request's own log level.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// What every request handler shares.
pub(crate) struct Shared {
    pub(crate) mode: Mode,
    pub(crate) port: u16,
    pub(crate) max_body_bytes: usize,
    pub(crate) routing: Arc<Routing>,
}

/// The bridge's routes.
pub(crate) fn router(shared: Shared) -> Router {
    Router::new()
        .route("/mcp", any(endpoint))
        .fallback(not_found)
        .with_state(Arc::new(shared))
}

async fn not_found(uri: Uri) -> Response {
    Rejection::new(
        StatusCode::NOT_FOUND,
        -32600,
        format!("Not Found: {}; the MCP endpoint is /mcp", uri.path()),
    )
    .into_response()
}

async fn endpoint(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    match handle(&shared, request).await {
        Ok(response) => response,
        Err(rejection) => rejection.into_response(),
    }
}

async fn handle(shared: &Shared, request: Request) -> Result<Response, Rejection> {
    let (parts, body) = request.into_parts();
    check_head(shared.port, &parts.method, &parts.headers)?;
    let bytes = read_body(body, shared.max_body_bytes).await?;
    let message = check_body(shared.mode, &parts.headers, &bytes)?;
    match message {
        Message::Notification { body } => {
            shared
                .routing
                .forward_notification(body)
                .map_err(|gone| failure(&Value::Null, gone))?;
            Ok(StatusCode::ACCEPTED.into_response())
        }
        Message::Request { id, body, .. } => {
            let streams = can_stream(&body);
            let mut answers = shared
                .routing
                .forward_request(body, streams)
                .map_err(|gone| failure(&id, gone))?;
            Ok(match answers.recv().await {
                Some(Routed::Response(answer)) => {
                    reply::json_response(reply::status_of(shared.mode, &answer), &answer)
                }
                Some(Routed::Notification(first)) => reply::event_stream(first, answers, id),
                Some(Routed::Ended(End::Cancelled)) => StatusCode::NO_CONTENT.into_response(),
                Some(Routed::Ended(End::Failed(reason))) => {
                    failure(&id, Gone(reason)).into_response()
                }
                None => failure(&id, Gone("the request was dropped".into())).into_response(),
            })
        }
    }
}

/// The checks that come before the body is read: Host/Origin, method, Content-Type, Accept.
pub(crate) fn check_head(port: u16, method: &Method, headers: &HeaderMap) -> Result<(), Rejection> {
    origin::check(headers, port)?;
    if method != Method::POST {
        return Err(Rejection::method_not_allowed(method.as_str()));
    }
    headers::check_content_type(headers)?;
    headers::check_accept(headers)?;
    Ok(())
}

/// The checks of a read body: its shape, then the era's header rules.
pub(crate) fn check_body(
    mode: Mode,
    headers: &HeaderMap,
    bytes: &[u8],
) -> Result<Message, Rejection> {
    let message = envelope::classify(bytes)?;
    check_era(mode, headers, &message)?;
    Ok(message)
}

async fn read_body(body: Body, limit: usize) -> Result<axum::body::Bytes, Rejection> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        Rejection::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            format!("the request body could not be read (at most {limit} bytes): {e}"),
        )
    })
}

fn check_era(mode: Mode, headers: &HeaderMap, message: &Message) -> Result<(), Rejection> {
    match (mode, message) {
        (Mode::Legacy, Message::Request { id, .. }) => headers::check_legacy(headers, id),
        (Mode::Legacy, Message::Notification { .. }) => {
            headers::check_legacy(headers, &Value::Null)
        }
        (Mode::Modern, Message::Request { id, method, body }) => {
            headers::check_modern(headers, id, method, body.get("params"))
        }
        (Mode::Modern, Message::Notification { .. }) => Ok(()),
    }
}

/// Whether notifications about a request are wanted: it asked for progress or for logs.
fn can_stream(body: &serde_json::Map<String, Value>) -> bool {
    body.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key("progressToken") || meta.contains_key(META_LOG_LEVEL))
}

fn failure(id: &Value, Gone(reason): Gone) -> Rejection {
    Rejection::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        reply::INTERNAL_ERROR,
        format!("Internal error: {reason}"),
    )
    .for_id(id)
}
