//! What a running tool call may do besides answering: watch for cancellation, report progress,
//! and log to the client.
//!
//! Contract:
//! 1. Every notification a call emits is written before its terminal response, never after:
//!    each call has one `CallSink` whose lock orders notifications (queued straight to the
//!    writer) before the terminal line (handed to the coordinator, which retires the id and then
//!    queues the line); once the call has answered or was cancelled the sink drops everything.
//! 2. Progress is only sent when the request carried `_meta.progressToken`, with `progress`
//!    strictly increasing from 1.
//! 3. Log notifications obey the request's [`LogPolicy`]: the legacy session level, or the modern
//!    per-request level, where an absent level means no log notifications at all.
//! 4. The `beam.status` liveness notice is sent at most once per call.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::jsonrpc::{RequestId, notification_line};
use super::protocol::LogLevel;

/// The logger name of the one-shot liveness notice.
pub const STATUS_LOGGER: &str = "beam.status";
/// The hint the liveness notice carries.
pub const PROGRESS_HINT: &str =
    "For detailed live updates, pass tools/call params._meta.progressToken.";

/// Which log notifications a request admits.
#[derive(Debug, Clone)]
pub enum LogPolicy {
    /// Legacy: the session level set by `logging/setLevel`, read when a log is emitted.
    Session(SessionLogLevel),
    /// Modern: the request's own `io.modelcontextprotocol/logLevel`, or none.
    Request(Option<LogLevel>),
}

impl LogPolicy {
    /// Whether a log at `level` may be sent.
    pub fn admits(&self, level: LogLevel) -> bool {
        match self {
            LogPolicy::Session(session) => level >= session.get(),
            LogPolicy::Request(minimum) => minimum.is_some_and(|minimum| level >= minimum),
        }
    }
}

/// The legacy session's minimum log level, shared between the protocol state and running calls.
#[derive(Debug, Clone)]
pub struct SessionLogLevel(Arc<AtomicU8>);

impl SessionLogLevel {
    /// A session level starting at `level`.
    pub fn new(level: LogLevel) -> Self {
        SessionLogLevel(Arc::new(AtomicU8::new(level as u8)))
    }

    /// The current level.
    pub fn get(&self) -> LogLevel {
        LogLevel::ALL[usize::from(self.0.load(Ordering::Relaxed))]
    }

    /// Changes the level for every later log, running calls included.
    pub fn set(&self, level: LogLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }
}

#[derive(Debug)]
struct SinkState {
    closed: bool,
    progress: u64,
    status_sent: bool,
}

/// The output side of one call: notifications and exactly one terminal frame.
#[derive(Debug)]
pub(crate) struct CallSink {
    id: RequestId,
    tool: String,
    progress_token: Option<Value>,
    log_policy: LogPolicy,
    out: UnboundedSender<Vec<u8>>,
    terminal: UnboundedSender<Terminal>,
    state: Mutex<SinkState>,
}

/// A call's end, for the coordinator: the id to retire and the line to write (empty when the
/// call was cancelled and answers nothing).
#[derive(Debug)]
pub(crate) struct Terminal {
    pub(crate) id: RequestId,
    pub(crate) line: Vec<u8>,
}

impl CallSink {
    pub(crate) fn new(
        id: RequestId,
        tool: String,
        progress_token: Option<Value>,
        log_policy: LogPolicy,
        out: UnboundedSender<Vec<u8>>,
        terminal: UnboundedSender<Terminal>,
    ) -> Self {
        let state = SinkState {
            closed: false,
            progress: 0,
            status_sent: false,
        };
        CallSink {
            id,
            tool,
            progress_token,
            log_policy,
            out,
            terminal,
            state: Mutex::new(state),
        }
    }

    fn notify(&self, build: impl FnOnce(&mut SinkState) -> Option<Vec<u8>>) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.closed {
            return false;
        }
        match build(&mut state) {
            Some(line) => self.out.send(line).is_ok(),
            None => false,
        }
    }

    /// Hands over the terminal line (empty for a cancelled call) and closes the sink.
    pub(crate) fn finish(&self, line: Vec<u8>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.closed = true;
        // A send error means the coordinator is gone: the server is already shutting down.
        let _ = self.terminal.send(Terminal {
            id: self.id.clone(),
            line,
        });
    }

    pub(crate) fn status_notice(&self, state_name: &str, path: Option<&str>) -> bool {
        if self.progress_token.is_some() || !self.log_policy.admits(LogLevel::Notice) {
            return false;
        }
        self.notify(|state| {
            if state.status_sent {
                return None;
            }
            state.status_sent = true;
            let message = match path {
                Some(path) => format!("{} on {path} is still working.", self.tool),
                None => format!("{} is still working.", self.tool),
            };
            let mut data = json!({
                "requestId": self.id.to_value(),
                "tool": self.tool,
                "state": state_name,
                "message": message,
                "progressHint": PROGRESS_HINT,
            });
            if let Some(path) = path {
                data["path"] = json!(path);
            }
            let params = json!({ "level": "notice", "logger": STATUS_LOGGER, "data": data });
            Some(notification_line("notifications/message", &params))
        })
    }
}

/// The handle a host gets for one call. Cheap to clone; valid until the call answers.
#[derive(Debug, Clone)]
pub struct CallContext {
    sink: Arc<CallSink>,
    token: CancellationToken,
}

impl CallContext {
    pub(crate) fn new(sink: Arc<CallSink>, token: CancellationToken) -> Self {
        CallContext { sink, token }
    }

    /// The JSON-RPC id of the call.
    pub fn request_id(&self) -> &RequestId {
        &self.sink.id
    }

    /// The tool being called.
    pub fn tool(&self) -> &str {
        &self.sink.tool
    }

    /// Whether the call has been cancelled (by the client or by shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// A token that is cancelled with the call, for work the host runs elsewhere.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.token.child_token()
    }

    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.sink.progress_token.is_some()
    }

    /// Sends a `notifications/progress` with the next progress number; `false` when the call has
    /// no progress token or has already answered.
    pub fn progress(&self, message: impl Into<String>) -> bool {
        let Some(token) = &self.sink.progress_token else {
            return false;
        };
        let message = message.into();
        self.sink.notify(|state| {
            state.progress += 1;
            let params =
                json!({ "progressToken": token, "progress": state.progress, "message": message });
            Some(notification_line("notifications/progress", &params))
        })
    }

    /// Whether a log at `level` would reach the client.
    pub fn logs_admit(&self, level: LogLevel) -> bool {
        self.sink.log_policy.admits(level)
    }

    /// Sends a `notifications/message` if the request's log policy admits `level`.
    pub fn log(&self, level: LogLevel, logger: &str, data: Value) -> bool {
        if !self.logs_admit(level) {
            return false;
        }
        self.sink.notify(|_| {
            let params = json!({ "level": level.as_str(), "logger": logger, "data": data });
            Some(notification_line("notifications/message", &params))
        })
    }

    /// Sends the one-shot `beam.status` notice now (for example when slow setup is observed)
    /// instead of waiting for the status delay; `false` if it was already sent or is not admitted.
    pub fn status_notice(&self, state: &str, path: Option<&str>) -> bool {
        self.sink.status_notice(state, path)
    }
}
