//! Id mapping between HTTP clients and the one stdio server, and delivery of what the server
//! writes to the request it belongs to.
//!
//! Contract:
//! 1. [`Routing::forward_request`] gives each request a fresh bridge-owned id (`"bridge-N"`),
//!    replaces a `_meta.progressToken` by that same string, records the client's originals and
//!    queues the line, all under one lock: so a cancellation can never overtake its request,
//!    and two clients using the same id never collide at the server.
//! 2. [`Routing::dispatch`] delivers a server response to its request with the client's id
//!    restored (string stays string, number stays number) and retires the request. Progress is
//!    matched by token and the `beam.status` notice by `data.requestId`, both restored; any
//!    other `notifications/message` goes to the only in-flight request if there is exactly one
//!    (the server writes a call's notifications before its answer, so it cannot belong to a
//!    request registered later), and is dropped otherwise. Notifications reach only requests
//!    that can stream; everything unmatched is dropped with a debug log.
//! 3. A client's `notifications/cancelled` names its own id: it is rewritten and forwarded only
//!    when exactly one in-flight request carries that id, and that request is then retired with
//!    [`End::Cancelled`] (the server sends nothing for a cancelled call). Otherwise it is not
//!    forwarded.
//! 4. [`Routing::fail_all`] (the server exited, closed its output or refused input) retires every
//!    request with [`End::Failed`] and refuses every later message with [`Gone`].

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};

/// The logger of the server's liveness notice, whose `data.requestId` names the call.
const STATUS_LOGGER: &str = "beam.status";
/// The prefix of every bridge-owned id.
const ID_PREFIX: &str = "bridge-";

/// What the server wrote for one request.
#[derive(Debug)]
pub(crate) enum Routed {
    /// A notification about the request, with client values restored.
    Notification(Value),
    /// The request's response, with the client's id restored. Always the last item.
    Response(Value),
    /// The request ended without a response. Always the last item.
    Ended(End),
}

/// Why a request ended without a response.
#[derive(Debug)]
pub(crate) enum End {
    /// The client cancelled it.
    Cancelled,
    /// The server is gone; the reason, for the client.
    Failed(String),
}

/// The server is not running any more; the reason, for the client.
#[derive(Debug)]
pub(crate) struct Gone(pub(crate) String);

/// A forwarded request's view of its answers.
pub(crate) type Answers = mpsc::UnboundedReceiver<Routed>;

struct Pending {
    original_id: Value,
    original_token: Option<Value>,
    streams: bool,
    tx: mpsc::UnboundedSender<Routed>,
}

struct Table {
    next: u64,
    pending: HashMap<String, Pending>,
    outbound: mpsc::UnboundedSender<Vec<u8>>,
    gone: Option<String>,
}

/// The routing table of one bridge.
pub(crate) struct Routing {
    table: Mutex<Table>,
    in_flight: watch::Sender<usize>,
}

impl Routing {
    /// A table whose forwarded lines go to `outbound` (the server's stdin writer).
    pub(crate) fn new(outbound: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Routing {
            table: Mutex::new(Table {
                next: 1,
                pending: HashMap::new(),
                outbound,
                gone: None,
            }),
            in_flight: watch::Sender::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Watches how many requests are waiting for the server.
    pub(crate) fn in_flight(&self) -> watch::Receiver<usize> {
        self.in_flight.subscribe()
    }

    fn count(&self, table: &Table) {
        self.in_flight.send_replace(table.pending.len());
    }

    /// Forwards a request object (which has a valid `id`). `streams` says whether notifications
    /// about it should be delivered.
    pub(crate) fn forward_request(
        &self,
        mut request: Map<String, Value>,
        streams: bool,
    ) -> Result<Answers, Gone> {
        let mut table = self.lock();
        if let Some(reason) = &table.gone {
            return Err(Gone(reason.clone()));
        }
        let bridge_id = format!("{ID_PREFIX}{}", table.next);
        table.next += 1;
        let original_id = request
            .insert("id".into(), Value::String(bridge_id.clone()))
            .unwrap_or(Value::Null);
        let original_token = request
            .get_mut("params")
            .and_then(|params| params.get_mut("_meta"))
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.get_mut("progressToken"))
            .map(|token| std::mem::replace(token, Value::String(bridge_id.clone())));
        let line = to_line(request);
        if table.outbound.send(line).is_err() {
            let reason = "the bridge is shutting down".to_string();
            table.gone = Some(reason.clone());
            return Err(Gone(reason));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        table.pending.insert(
            bridge_id,
            Pending {
                original_id,
                original_token,
                streams,
                tx,
            },
        );
        self.count(&table);
        Ok(rx)
    }

    /// Forwards a notification object, mapping `notifications/cancelled` (see the contract).
    pub(crate) fn forward_notification(
        &self,
        mut notification: Map<String, Value>,
    ) -> Result<(), Gone> {
        let mut table = self.lock();
        if let Some(reason) = &table.gone {
            return Err(Gone(reason.clone()));
        }
        let mut cancelled = None;
        if notification.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
            let target = notification
                .get("params")
                .and_then(|params| params.get("requestId"))
                .cloned()
                .unwrap_or(Value::Null);
            let matches: Vec<&String> = table
                .pending
                .iter()
                .filter(|(_, pending)| same_id(&pending.original_id, &target))
                .map(|(bridge_id, _)| bridge_id)
                .collect();
            let [bridge_id] = matches.as_slice() else {
                tracing::debug!(
                    requestId = %target,
                    in_flight = matches.len(),
                    "not forwarding a cancellation that names no single in-flight request"
                );
                return Ok(());
            };
            let bridge_id = (*bridge_id).clone();
            if let Some(params) = notification
                .get_mut("params")
                .and_then(Value::as_object_mut)
            {
                params.insert("requestId".into(), Value::String(bridge_id.clone()));
            }
            cancelled = Some(bridge_id);
        }
        if table.outbound.send(to_line(notification)).is_err() {
            let reason = "the bridge is shutting down".to_string();
            table.gone = Some(reason.clone());
            return Err(Gone(reason));
        }
        if let Some(pending) = cancelled.and_then(|id| table.pending.remove(&id)) {
            let _ = pending.tx.send(Routed::Ended(End::Cancelled));
            self.count(&table);
        }
        Ok(())
    }

    /// Routes one message the server wrote.
    pub(crate) fn dispatch(&self, message: Value) {
        let Value::Object(mut message) = message else {
            tracing::warn!("dropping server output that is not a JSON object: {message}");
            return;
        };
        let mut table = self.lock();
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        match method.as_deref() {
            None => {
                let key = message.get("id").and_then(Value::as_str).map(str::to_owned);
                let Some(pending) = key.and_then(|key| table.pending.remove(&key)) else {
                    tracing::debug!(
                        id = ?message.get("id"),
                        "dropping a response for no waiting request"
                    );
                    return;
                };
                message.insert("id".into(), pending.original_id);
                let _ = pending.tx.send(Routed::Response(Value::Object(message)));
                self.count(&table);
            }
            Some("notifications/progress") => {
                let key = message
                    .get("params")
                    .and_then(|p| p.get("progressToken"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let target = key.and_then(|key| table.pending.get(&key));
                match target {
                    Some(pending) if pending.streams => {
                        if let (Some(Value::Object(params)), Some(token)) =
                            (message.get_mut("params"), &pending.original_token)
                        {
                            params.insert("progressToken".into(), token.clone());
                        }
                        let _ = pending
                            .tx
                            .send(Routed::Notification(Value::Object(message)));
                    }
                    _ => tracing::debug!("dropping progress for no streaming request"),
                }
            }
            Some("notifications/message") => {
                let status_for = message
                    .get("params")
                    .filter(|p| p.get("logger").and_then(Value::as_str) == Some(STATUS_LOGGER))
                    .and_then(|p| p.get("data"))
                    .and_then(|d| d.get("requestId"))
                    .and_then(Value::as_str)
                    .filter(|id| id.starts_with(ID_PREFIX))
                    .map(str::to_owned);
                let target = match &status_for {
                    Some(key) => table.pending.get(key),
                    None if table.pending.len() == 1 => table.pending.values().next(),
                    None => None,
                };
                match target {
                    Some(pending) if pending.streams => {
                        if status_for.is_some()
                            && let Some(Value::Object(data)) =
                                message.get_mut("params").and_then(|p| p.get_mut("data"))
                        {
                            data.insert("requestId".into(), pending.original_id.clone());
                        }
                        let _ = pending
                            .tx
                            .send(Routed::Notification(Value::Object(message)));
                    }
                    _ => tracing::debug!("dropping a log message no single streaming request owns"),
                }
            }
            Some(other) => tracing::debug!(method = other, "dropping a server notification"),
        }
    }

    /// Retires every waiting request with `reason` and refuses all later messages.
    pub(crate) fn fail_all(&self, reason: String) {
        let mut table = self.lock();
        if table.gone.is_none() {
            tracing::info!("{reason}");
            table.gone = Some(reason.clone());
        }
        for (_, pending) in table.pending.drain() {
            let _ = pending.tx.send(Routed::Ended(End::Failed(reason.clone())));
        }
        self.count(&table);
    }
}

fn to_line(message: Map<String, Value>) -> Vec<u8> {
    let mut line = serde_json::to_vec(&Value::Object(message)).expect("JSON values serialize");
    line.push(b'\n');
    line
}

/// Whether a client id names the same request as `target` (1 and 1.0 do; 1 and "1" do not).
fn same_id(id: &Value, target: &Value) -> bool {
    match (id, target) {
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => a == b,
            _ => match (a.as_u64(), b.as_u64()) {
                (Some(a), Some(b)) => a == b,
                _ => a.as_f64() == b.as_f64(),
            },
        },
        _ => false,
    }
}
