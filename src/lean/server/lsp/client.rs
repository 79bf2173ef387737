//! A language-server client with no MCP knowledge: one writer, one reader, request correlation,
//! and answers to the server's own requests.
//!
//! Contract:
//! 1. Requests get increasing integer ids. [`LspClient::request`] sends at once and returns a
//!    [`PendingRequest`] that the response with that id resolves. Dropping it unresolved sends
//!    `$/cancelRequest` for the id and forgets it, so a cancelled MCP call cancels its Lean work;
//!    one made [`PendingRequest::uncancellable`] (`initialize`: LSP allows no message before
//!    its answer, and Lean's watchdog reads `initialized` next, failing on anything else) is
//!    only forgotten.
//! 2. The reader hands every notification to the [`Inbox`] synchronously and in arrival order,
//!    before it resolves any later response: Lean writes a version's diagnostics before its
//!    `textDocument/waitForDiagnostics` answer on one stream, so when a barrier resolves, the
//!    inbox has already seen them.
//! 3. Every server→client request is answered: `client/registerCapability` (Lean's
//!    `register_lean_watcher`) and the refresh requests with `null`, `workspace/applyEdit` with
//!    `{applied: false}` (Beam never edits sources), anything else with -32601.
//! 4. When the stream ends or breaks, every pending request fails with [`LspError::Closed`],
//!    later requests fail at once, and [`LspClient::closed_reason`] says why.
//! 5. With a trace stream, every message body sent (`beam→lean`) and received (`lean→beam`,
//!    unreadable frames included) is written to it, in the order it was sent or received.
//! 6. Once the last [`LspClient`] clone and [`PendingRequest`] are dropped, the writer ends and
//!    closes the server's stdin: a client holds nothing of a server it no longer uses.
//! 7. What is queued for the server's stdin is bounded (`outbox`): a request, and a [`Batch`] of
//!    notifications, first wait for room; cancellations, answers to the server and
//!    [`LspClient::notify_control`] never wait.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::{oneshot, watch};

use super::framing::{FrameReader, encode};
use super::outbox::{Outbox, Room};
use crate::trace::Stream;

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq)]
pub enum LspError {
    /// The server answered with a JSON-RPC error.
    Response {
        /// The error code (Lean's own codes included: -32801, -32901, -32902, ...).
        code: i64,
        /// Its message.
        message: String,
        /// Its data, if any.
        data: Option<Value>,
    },
    /// The connection is gone (the server exited, or its output broke).
    Closed(String),
}

/// Where the reader delivers the server's notifications, in order.
pub trait Inbox: Send + Sync + 'static {
    /// One notification, applied before anything the server sent after it is delivered.
    fn notification(&self, method: &str, params: Value);
}

type Answer = Result<Value, LspError>;

#[derive(Debug)]
struct Shared {
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    out: Outbox,
    next_id: AtomicI64,
    sent: AtomicU64,
    closed: watch::Sender<Option<String>>,
    trace: Option<Stream>,
}

impl Shared {
    /// The message framed, counted and traced, as it is queued.
    fn frame(&self, body: &[u8]) -> Vec<u8> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        if let Some(trace) = &self.trace {
            trace.write("beam→lean", body);
        }
        encode(body)
    }

    /// Queues a control message (see the contract).
    fn send(&self, message: &Value) -> bool {
        let body = serde_json::to_vec(message).expect("serializing JSON values cannot fail");
        let frame = self.frame(&body);
        self.out.control(frame)
    }

    /// Marks the connection closed and fails every pending request. Both happen under the
    /// pending lock, which a new request also takes to check for a close: none slips between.
    fn close(&self, reason: String) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        self.closed.send_if_modified(|closed| {
            if closed.is_none() {
                *closed = Some(reason.clone());
                true
            } else {
                false
            }
        });
        for (_, waiter) in pending.drain() {
            let _ = waiter.send(Err(LspError::Closed(reason.clone())));
        }
    }
}

/// A connection to one language server.
#[derive(Debug, Clone)]
pub struct LspClient {
    shared: Arc<Shared>,
}

impl LspClient {
    /// Starts the reader and writer tasks over the server's stdout and stdin, writing the
    /// traffic to `trace` if there is one.
    pub fn start(
        output: impl AsyncBufRead + Unpin + Send + 'static,
        input: impl AsyncWrite + Unpin + Send + 'static,
        inbox: Arc<dyn Inbox>,
        trace: Option<Stream>,
    ) -> LspClient {
        let (out, writer) = Outbox::new(input);
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            out,
            next_id: AtomicI64::new(0),
            sent: AtomicU64::new(0),
            closed: watch::channel(None).0,
            trace,
        });
        // The writer holds the client weakly: it ends (closing the server's stdin) once the last
        // client and request are gone, rather than keeping itself alive through `out`.
        let client = Arc::downgrade(&shared);
        tokio::spawn(async move {
            if let Some(e) = writer.run().await
                && let Some(shared) = client.upgrade()
            {
                shared.close(format!("writing to the server failed: {e}"));
            }
        });
        tokio::spawn(read_frames(FrameReader::new(output), shared.clone(), inbox));
        LspClient { shared }
    }

    /// Sends a request once there is room for it (see the contract); the returned request
    /// resolves with its result. Dropped before it is sent, nothing is sent.
    pub async fn request(&self, method: &str, params: Value) -> PendingRequest {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let body = serde_json::to_vec(&message).expect("serializing JSON values cannot fail");
        let room = self.shared.out.room(body.len()).await;
        let (tx, rx) = oneshot::channel();
        let admitted = {
            let mut pending = self
                .shared
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let closed = self.shared.closed.borrow().clone();
            match closed {
                Some(reason) => {
                    let _ = tx.send(Err(LspError::Closed(reason)));
                    false
                }
                None => {
                    pending.insert(id, tx);
                    true
                }
            }
        };
        if admitted {
            room.send(self.shared.frame(&body));
        }
        PendingRequest {
            id,
            rx,
            shared: self.shared.clone(),
            done: false,
            cancel_on_drop: true,
        }
    }

    /// Waits for room for about `bytes` of notifications, to be queued together later without
    /// waiting (see [`Batch`]).
    pub async fn batch(&self, bytes: usize) -> Batch {
        Batch {
            room: Some(self.shared.out.room(bytes).await),
            shared: self.shared.clone(),
            frames: Vec::new(),
        }
    }

    /// Sends a small notification at once, without waiting for room (see the contract); `false`
    /// when the connection is gone.
    pub fn notify_control(&self, method: &str, params: Value) -> bool {
        self.shared
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Messages sent to the server so far (requests, notifications, answers).
    pub fn messages_sent(&self) -> u64 {
        self.shared.sent.load(Ordering::Relaxed)
    }

    /// Why the connection closed, if it has.
    pub fn closed_reason(&self) -> Option<String> {
        self.shared.closed.borrow().clone()
    }

    /// Completes once the connection has closed, for whatever reason.
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut closed = self.shared.closed.subscribe();
        async move {
            let _ = closed.wait_for(Option::is_some).await;
        }
    }

    /// Marks the connection gone (for a caller that killed the server): pending requests fail.
    pub fn close(&self, reason: &str) {
        self.shared.close(reason.into());
    }
}

/// Notifications queued together in room taken beforehand, so that code which must not wait
/// between deciding them and queueing them (under a lock) does not.
#[derive(Debug)]
pub struct Batch {
    room: Option<Room>,
    shared: Arc<Shared>,
    frames: Vec<u8>,
}

impl Batch {
    /// Adds a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let body = serde_json::to_vec(&message).expect("serializing JSON values cannot fail");
        let frame = self.shared.frame(&body);
        self.frames.extend_from_slice(&frame);
    }

    /// Queues what was added, in order; `false` when the connection is gone.
    pub fn send(mut self) -> bool {
        let frames = std::mem::take(&mut self.frames);
        match self.room.take() {
            Some(room) if !frames.is_empty() => room.send(frames),
            _ => true,
        }
    }
}

/// A request in flight. Dropping it before it resolves cancels it on the server.
#[derive(Debug)]
pub struct PendingRequest {
    id: i64,
    rx: oneshot::Receiver<Answer>,
    shared: Arc<Shared>,
    done: bool,
    cancel_on_drop: bool,
}

impl PendingRequest {
    /// Dropped unresolved, this request is forgotten without a `$/cancelRequest` (see the
    /// contract).
    pub fn uncancellable(mut self) -> PendingRequest {
        self.cancel_on_drop = false;
        self
    }
}

impl Future for PendingRequest {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let answer = match Pin::new(&mut self.rx).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(answer)) => answer,
            Poll::Ready(Err(_)) => Err(LspError::Closed("the connection was dropped".into())),
        };
        self.done = true;
        Poll::Ready(answer)
    }
}

impl Drop for PendingRequest {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let waiting = self
            .shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id)
            .is_some();
        if waiting && self.cancel_on_drop {
            self.shared.send(&json!({
                "jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": self.id}
            }));
        }
    }
}

async fn read_frames(
    mut reader: FrameReader<impl AsyncBufRead + Unpin>,
    shared: Arc<Shared>,
    inbox: Arc<dyn Inbox>,
) {
    let reason = loop {
        let body = match reader.next().await {
            Ok(Some(body)) => body,
            Ok(None) => break "the server closed its output".to_string(),
            Err(e) => break e.to_string(),
        };
        if let Some(trace) = &shared.trace {
            trace.write("lean→beam", &body);
        }
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            tracing::warn!(
                bytes = body.len(),
                "ignoring a frame from the server that is not JSON"
            );
            continue;
        };
        dispatch(message, &shared, inbox.as_ref());
    };
    tracing::debug!(%reason, "language server connection closed");
    shared.close(reason);
}

fn dispatch(mut message: Value, shared: &Shared, inbox: &dyn Inbox) {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = message.get("id").cloned();
    let params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    match (method, id) {
        (Some(method), Some(id)) => answer_server_request(shared, &method, id),
        (Some(method), None) => inbox.notification(&method, params),
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else {
                tracing::debug!(%id, "a response to no request of ours");
                return;
            };
            let waiter = shared
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            let Some(waiter) = waiter else {
                return; // cancelled, or answered twice
            };
            let answer = match message.get_mut("error") {
                Some(error) => Err(LspError::Response {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    data: error.get_mut("data").map(Value::take),
                }),
                None => Ok(message
                    .get_mut("result")
                    .map(Value::take)
                    .unwrap_or(Value::Null)),
            };
            let _ = waiter.send(answer);
        }
        (None, None) => tracing::debug!("ignoring a message with neither method nor id"),
    }
}

fn answer_server_request(shared: &Shared, method: &str, id: Value) {
    let answer = match method {
        "client/registerCapability"
        | "client/unregisterCapability"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh"
        | "workspace/diagnostic/refresh"
        | "window/workDoneProgress/create" => json!({"jsonrpc": "2.0", "id": id, "result": null}),
        "workspace/applyEdit" => {
            json!({"jsonrpc": "2.0", "id": id, "result": {"applied": false,
                "failureReason": "lean-beam-mcp never edits sources; the client applies edits"}})
        }
        other => json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601, "message": format!("lean-beam-mcp does not serve {other}")}}),
    };
    shared.send(&answer);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, duplex};

    #[derive(Default)]
    struct Seen(Mutex<Vec<String>>);

    impl Inbox for Seen {
        fn notification(&self, method: &str, params: Value) {
            self.0.lock().unwrap().push(format!("{method} {params}"));
        }
    }

    /// A client wired to an in-memory "server" whose two ends the test drives.
    fn wired() -> (LspClient, Arc<Seen>, DuplexStream, DuplexStream) {
        let (client_out, server_in) = duplex(1 << 16);
        let (server_out, client_in) = duplex(1 << 16);
        let seen = Arc::new(Seen::default());
        let client = LspClient::start(BufReader::new(client_in), client_out, seen.clone(), None);
        (client, seen, server_in, server_out)
    }

    async fn read_message(from: &mut DuplexStream) -> Value {
        let mut reader = FrameReader::new(BufReader::new(from));
        let body = reader.next().await.unwrap().unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    async fn write_message(to: &mut DuplexStream, message: Value) {
        to.write_all(&encode(message.to_string().as_bytes()))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn notifications_are_seen_before_the_response_that_follows_them() {
        let (client, seen, mut server_in, mut server_out) = wired();
        let barrier = client
            .request("textDocument/waitForDiagnostics", json!({}))
            .await;
        let request = read_message(&mut server_in).await;
        assert_eq!(request["id"], 0);
        write_message(
            &mut server_out,
            json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"v": 1}}),
        )
        .await;
        write_message(
            &mut server_out,
            json!({"jsonrpc": "2.0", "id": 0, "result": {}}),
        )
        .await;
        assert_eq!(barrier.await, Ok(json!({})));
        assert_eq!(
            seen.0.lock().unwrap().as_slice(),
            [r#"textDocument/publishDiagnostics {"v":1}"#]
        );
    }

    #[tokio::test]
    async fn a_trace_stream_gets_both_directions_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let trace = crate::trace::TraceDir::open(dir.path(), 1 << 20).unwrap();
        let stream = trace.stream("lsp-test-1");
        let (client_out, mut server_in) = duplex(1 << 16);
        let (mut server_out, client_in) = duplex(1 << 16);
        let seen = Arc::new(Seen::default());
        let client = LspClient::start(
            BufReader::new(client_in),
            client_out,
            seen,
            Some(stream.clone()),
        );
        let hover = client.request("textDocument/hover", json!({})).await;
        read_message(&mut server_in).await;
        write_message(
            &mut server_out,
            json!({"jsonrpc": "2.0", "id": 0, "result": null}),
        )
        .await;
        assert_eq!(hover.await, Ok(Value::Null));
        let text = std::fs::read_to_string(stream.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with(
                r#" beam→lean {"id":0,"jsonrpc":"2.0","method":"textDocument/hover","params":{}}"#
            ),
            "{text}"
        );
        assert!(
            lines[1].ends_with(r#" lean→beam {"id":0,"jsonrpc":"2.0","result":null}"#),
            "{text}"
        );
    }

    #[tokio::test]
    async fn dropping_a_pending_request_cancels_it_on_the_server() {
        let (client, _seen, mut server_in, _server_out) = wired();
        let pending = client.request("$/lean/plainGoal", json!({})).await;
        let sent = read_message(&mut server_in).await;
        drop(pending);
        let cancel = read_message(&mut server_in).await;
        assert_eq!(cancel["method"], "$/cancelRequest");
        assert_eq!(cancel["params"]["id"], sent["id"]);
    }

    #[tokio::test]
    async fn an_uncancellable_request_dropped_is_forgotten_without_a_message() {
        let (client, _seen, mut server_in, _server_out) = wired();
        let pending = client.request("initialize", json!({})).await;
        read_message(&mut server_in).await;
        drop(pending.uncancellable());
        // The next message the server reads is the next request, not a cancellation.
        let _next = client.request("shutdown", Value::Null).await;
        assert_eq!(read_message(&mut server_in).await["method"], "shutdown");
    }

    #[tokio::test]
    async fn server_requests_are_answered() {
        let (_client, _seen, mut server_in, mut server_out) = wired();
        for (id, method) in [
            (json!("register_lean_watcher"), "client/registerCapability"),
            (json!(7), "workspace/semanticTokens/refresh"),
            (json!(8), "something/else"),
        ] {
            write_message(
                &mut server_out,
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}),
            )
            .await;
            let answer = read_message(&mut server_in).await;
            assert_eq!(answer["id"], id);
            if method == "something/else" {
                assert_eq!(answer["error"]["code"], -32601);
            } else {
                assert_eq!(answer["result"], Value::Null);
            }
        }
    }

    #[tokio::test]
    async fn a_dropped_client_lets_go_of_the_servers_stdin() {
        // Found by the lsp_client fuzz target: the writer task kept the client alive, so the
        // stdin of every server the host had replaced stayed open, with the task, for good.
        let (client, _seen, mut server_in, server_out) = wired();
        let pending = client.request("textDocument/hover", json!({})).await;
        drop(server_out);
        assert!(matches!(pending.await, Err(LspError::Closed(_))));
        drop(client);
        let mut rest = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            tokio::io::AsyncReadExt::read_to_end(&mut server_in, &mut rest),
        )
        .await;
        assert!(read.is_ok(), "the server's stdin is still open");
    }

    #[tokio::test]
    async fn a_closed_stream_fails_pending_and_later_requests() {
        let (client, _seen, mut server_in, server_out) = wired();
        let pending = client.request("textDocument/hover", json!({})).await;
        read_message(&mut server_in).await;
        drop(server_out);
        assert!(matches!(pending.await, Err(LspError::Closed(_))));
        assert!(matches!(
            client.request("textDocument/hover", json!({})).await.await,
            Err(LspError::Closed(_))
        ));
        let reason = client.closed_reason().expect("closed");
        assert!(reason.contains("closed its output"), "{reason}");
    }
}
