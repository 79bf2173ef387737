//! The bridge's request checks for the fuzz targets (`fuzz/`), behind the `fuzzing` feature:
//! a POST's head and body run through exactly the checks the `/mcp` handler applies, in its
//! order, without HTTP. Not an API.

use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde_json::Value;

use crate::Mode;
use crate::envelope::Message;
use crate::service::{check_body, check_head};

/// What the checks decided about one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A request, forwarded to the server under this JSON-RPC method.
    Request {
        /// The client's id, as sent.
        id: Value,
        /// The method, as sent.
        method: String,
    },
    /// A notification, forwarded (202).
    Notification,
    /// Refused by the bridge itself.
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC error body.
        body: Value,
    },
}

/// Builds a header map as hyper would deliver it: names and values that are not valid HTTP are
/// left out, repeated names are kept as repeated values.
pub fn headers(pairs: &[(&[u8], &[u8])]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            map.append(name, value);
        }
    }
    map
}

/// Runs one request through the handler's checks: `method` is the HTTP method.
pub fn check(mode: Mode, port: u16, method: &[u8], headers: &HeaderMap, body: &[u8]) -> Verdict {
    let method = Method::from_bytes(method).unwrap_or(Method::POST);
    let outcome = check_head(port, &method, headers).and_then(|()| check_body(mode, headers, body));
    match outcome {
        Ok(Message::Request { id, method, .. }) => Verdict::Request { id, method },
        Ok(Message::Notification { .. }) => Verdict::Notification,
        Err(rejection) => Verdict::Rejected {
            status: rejection.status().as_u16(),
            body: rejection.body(),
        },
    }
}
