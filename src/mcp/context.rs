//! What a tool call may do besides answering: watch for cancellation, report progress, log to the
//! client, set what its liveness notice says, and see who asked.
//!
//! Contract:
//! 1. Every notification a call emits is queued before its terminal response, never after: each
//!    call has one `CallSink` whose lock orders notifications (queued straight to the writer)
//!    before the terminal line (handed to the coordinator, which retires the id and then queues
//!    the line). Once the call is cancelled nothing more is written; once its task has ended
//!    (answered, or cancelled and cleaned up) the sink holds no sender at all, so a
//!    [`CallContext`] clone that outlives the call keeps nothing of the server alive.
//! 2. Progress is only sent when the request carried `_meta.progressToken`; `progress` is
//!    strictly increasing (an update that would not increase it is dropped) and an optional
//!    `total` is never below it.
//! 3. Log notifications obey the request's [`LogPolicy`]: the legacy session level, or the modern
//!    per-request level, where an absent level means no log notifications at all.
//! 4. Notifications are advisory: while the client has stopped reading and the outbound queue is
//!    full, they are dropped rather than buffered (the answer itself is never dropped).
//! 5. The liveness notice follows `status`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use super::jsonrpc::{RequestId, notification_line};
use super::protocol::{ClientInfo, LogLevel};
use super::status::StatusLine;
use super::transport::OutboundSender;

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

/// One progress update, as a host reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    value: Option<f64>,
    total: Option<f64>,
    message: String,
}

impl Progress {
    /// The next step: one more than the last progress reported.
    pub fn step(message: impl Into<String>) -> Self {
        Progress {
            value: None,
            total: None,
            message: message.into(),
        }
    }

    /// Progress at `value`, which must exceed the last progress reported (any finite value,
    /// 0 included, may come first).
    pub fn at(value: f64, message: impl Into<String>) -> Self {
        Progress {
            value: Some(value),
            ..Progress::step(message)
        }
    }

    /// The same update with the total it counts toward (at least its progress).
    pub fn of_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }
}

/// A number as JSON: integral values without a fraction, so `1` is not sent as `1.0`.
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// A call's identity inside the coordinator: unlike its request id, never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct CallKey(pub(crate) u64);

/// A call's end, for the coordinator: the call to retire and the line to write (empty when the
/// call was cancelled and answers nothing).
#[derive(Debug)]
pub(crate) struct Terminal {
    pub(crate) key: CallKey,
    pub(crate) line: Vec<u8>,
}

#[derive(Debug)]
struct SinkState {
    /// Where notifications go; `None` once the call has answered or was cancelled.
    out: Option<OutboundSender>,
    /// Where the terminal line goes; taken by `finish`.
    terminal: Option<UnboundedSender<Terminal>>,
    /// The last progress sent, if any.
    progress: Option<f64>,
    /// When the last progress notification was queued, if one was.
    progress_at: Option<tokio::time::Instant>,
    status: StatusLine,
}

/// The output side of one call: notifications and exactly one terminal frame.
#[derive(Debug)]
pub(crate) struct CallSink {
    key: CallKey,
    id: RequestId,
    tool: String,
    progress_token: Option<Value>,
    log_policy: LogPolicy,
    client: ClientInfo,
    state: Mutex<SinkState>,
}

/// Who a sink belongs to, and the request-scoped policies it applies.
#[derive(Debug)]
pub(crate) struct CallIdentity {
    pub(crate) key: CallKey,
    pub(crate) id: RequestId,
    pub(crate) tool: String,
    pub(crate) progress_token: Option<Value>,
    pub(crate) log_policy: LogPolicy,
    pub(crate) client: ClientInfo,
}

impl CallSink {
    pub(crate) fn new(
        call: CallIdentity,
        out: OutboundSender,
        terminal: UnboundedSender<Terminal>,
    ) -> Self {
        CallSink {
            key: call.key,
            id: call.id,
            tool: call.tool,
            progress_token: call.progress_token,
            log_policy: call.log_policy,
            client: call.client,
            state: Mutex::new(SinkState {
                out: Some(out),
                terminal: Some(terminal),
                progress: None,
                progress_at: None,
                status: StatusLine::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn notify(&self, build: impl FnOnce(&mut SinkState) -> Option<Vec<u8>>) -> bool {
        let mut state = self.lock();
        if state.out.is_none() {
            return false;
        }
        let Some(line) = build(&mut state) else {
            return false;
        };
        let bytes = line.len();
        let queued = state.out.as_ref().is_some_and(|out| out.offer(line, bytes));
        if !queued {
            tracing::debug!(id = %self.id, "a notification was dropped: the client is not reading");
        }
        queued
    }

    /// Stops all notifications: the call was cancelled and its cancellation won.
    pub(crate) fn close(&self) {
        self.lock().out = None;
    }

    /// Hands over the terminal line (empty for a cancelled call) and drops every sender.
    pub(crate) fn finish(&self, line: Vec<u8>) {
        let mut state = self.lock();
        state.out = None;
        if let Some(terminal) = state.terminal.take() {
            // A send error means the coordinator is gone: the server is already shutting down.
            let _ = terminal.send(Terminal {
                key: self.key,
                line,
            });
        }
    }

    /// Sends the liveness notice if it is due and admitted (see `status`).
    pub(crate) fn status_notice(&self) -> bool {
        let has_token = self.progress_token.is_some();
        self.notify(|state| {
            state
                .status
                .take(&self.id, &self.tool, has_token, &self.log_policy)
        })
    }

    pub(crate) fn has_progress_token(&self) -> bool {
        self.progress_token.is_some()
    }

    /// When the last progress notification was queued, if one was.
    pub(crate) fn progress_at(&self) -> Option<tokio::time::Instant> {
        self.lock().progress_at
    }

    /// Sends a heartbeat: the next progress step, with the liveness notice's words.
    pub(crate) fn heartbeat(&self) -> bool {
        let message = self.lock().status.message(&self.tool);
        self.report(Progress::step(message))
    }

    /// Sends a progress update (see [`CallContext::report`]).
    fn report(&self, update: Progress) -> bool {
        let Some(token) = &self.progress_token else {
            return false;
        };
        self.notify(|state| {
            let value = update
                .value
                .unwrap_or_else(|| state.progress.map_or(1.0, |last| last + 1.0));
            let valid = value.is_finite()
                && state.progress.is_none_or(|last| value > last)
                && update
                    .total
                    .is_none_or(|total| total.is_finite() && total >= value);
            if !valid {
                return None;
            }
            state.progress = Some(value);
            state.progress_at = Some(tokio::time::Instant::now());
            let mut params = json!({
                "progressToken": token,
                "progress": number(value),
                "message": update.message,
            });
            if let Some(total) = update.total {
                params["total"] = number(total);
            }
            Some(notification_line("notifications/progress", &params))
        })
    }
}

/// The handle a host gets for one call. Cheap to clone; inert once the call has answered.
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

    /// Who asked: the protocol family of the request, and the client's name if it gave one.
    pub fn client(&self) -> &ClientInfo {
        &self.sink.client
    }

    /// Whether the call has been cancelled (by the client or by shutdown).
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes when the call is cancelled. A host that must clean up (tell a backend to stop,
    /// release a resource) does so when this completes: its future keeps being polled for the
    /// server's cancellation grace, and whatever it then returns is discarded.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// A token that is cancelled with the call, for work the host runs elsewhere.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.token.child_token()
    }

    /// Whether the client asked for progress on this call.
    pub fn wants_progress(&self) -> bool {
        self.sink.has_progress_token()
    }

    /// Sends the next progress step with a message; `false` when the call has no progress token,
    /// has answered, or the update was dropped.
    pub fn progress(&self, message: impl Into<String>) -> bool {
        self.report(Progress::step(message))
    }

    /// Sends a progress update; `false` when the call has no progress token, has answered, or
    /// the update would not increase progress (or names a total below it).
    pub fn report(&self, update: Progress) -> bool {
        self.sink.report(update)
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

    /// Sets what the call's liveness notice will say: its `state` (`running` until set) and its
    /// subject (shown as `path`), for when the server sends it or [`Self::status_notice_now`].
    pub fn set_status(&self, state: impl Into<String>, subject: Option<&str>) {
        let mut sink = self.sink.lock();
        sink.status.set(state.into(), subject.map(str::to_owned));
    }

    /// Sends the liveness notice now (for example when slow setup is observed) instead of
    /// waiting for the status delay; `false` if it was sent already or is not admitted.
    pub fn status_notice_now(&self) -> bool {
        self.sink.status_notice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::protocol::ProtocolFamily;
    use crate::mcp::transport::{QueueLimits, bounded};

    fn context() -> (CallContext, crate::mcp::transport::OutboundReceiver) {
        let (out, lines) = bounded(QueueLimits {
            items: 64,
            bytes: 1 << 20,
        });
        let (terminal, _) = tokio::sync::mpsc::unbounded_channel();
        let call = CallIdentity {
            key: CallKey(0),
            id: RequestId::from_value(&json!(1)).unwrap(),
            tool: "t".into(),
            progress_token: Some(json!("p")),
            log_policy: LogPolicy::Request(None),
            client: ClientInfo {
                family: ProtocolFamily::Modern,
                name: None,
            },
        };
        let sink = Arc::new(CallSink::new(call, out, terminal));
        (CallContext::new(sink, CancellationToken::new()), lines)
    }

    fn progress_values(lines: &mut crate::mcp::transport::OutboundReceiver) -> Vec<Value> {
        std::iter::from_fn(|| lines.try_recv())
            .map(|line| {
                serde_json::from_slice::<Value>(&line).unwrap()["params"]["progress"].clone()
            })
            .collect()
    }

    #[test]
    fn progress_may_start_at_zero_and_only_increases() {
        let (ctx, mut lines) = context();
        assert!(ctx.report(Progress::at(0.0, "none yet").of_total(4.0)));
        assert!(!ctx.report(Progress::at(0.0, "again")));
        assert!(ctx.progress("next"));
        assert!(ctx.report(Progress::at(2.5, "a fraction")));
        assert!(!ctx.report(Progress::at(3.0, "past the total").of_total(2.0)));
        assert_eq!(
            progress_values(&mut lines),
            [json!(0), json!(1), json!(2.5)]
        );
    }

    #[test]
    fn a_finished_call_writes_nothing_more() {
        let (ctx, mut lines) = context();
        ctx.sink.finish(Vec::new());
        assert!(!ctx.progress("late"));
        assert!(progress_values(&mut lines).is_empty());
    }
}
