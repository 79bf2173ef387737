//! One admitted tool call, from admission to its terminal line, as a task of its own.
//!
//! Contract:
//! 1. A call that must wait for its turn (behind a fence, or the bound on running calls) waits
//!    for the coordinator's start signal; a dropped signal (cancelled while waiting, or the
//!    server is gone) ends it with nothing written.
//! 2. The host's future is built and polled under `catch_unwind`: a host that panics, whether
//!    while building the future or while it runs, answers -32603 and the server keeps serving.
//! 3. A cancellation that has happened always wins over work that becomes ready at the same
//!    time: the call ends with an empty terminal line (the coordinator, which closed the sink
//!    when it cancelled, would drop any other anyway), after the host's future has been polled
//!    for at most the cancellation grace so it can clean up. A call cancelled before it started
//!    never reaches the host. Fences are never cancelled.
//! 4. Without a progress token, a [`StatusNotice::WhenSlow`] call still unanswered after the
//!    status delay (waiting for its turn included) gets its liveness notice.
//! 5. With a progress token, a [`StatusNotice::WhenSlow`] call gets a heartbeat whenever the
//!    heartbeat period passes without a progress notification (`status` says what it is).
//! 6. However the task ends (a panic in a host future's destructor included), its terminal line
//!    reaches the coordinator exactly once, so no id stays owned and no call stays counted.

use std::future::{Future, poll_fn};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use super::catalog::{ToolHost, call_tool_result};
use super::context::{CallContext, CallSink};
use super::jsonrpc::{ErrorObject, RequestId, Response, code};
use super::protocol::{ProtocolFamily, ServerIdentity};
use super::status::StatusNotice;

/// Everything a call's task needs.
pub(crate) struct CallTask<H> {
    pub(crate) host: Arc<H>,
    pub(crate) identity: ServerIdentity,
    pub(crate) id: RequestId,
    pub(crate) tool: String,
    pub(crate) family: ProtocolFamily,
    pub(crate) status: StatusNotice,
    pub(crate) status_delay: Duration,
    pub(crate) heartbeat: Duration,
    pub(crate) cancel_grace: Duration,
    pub(crate) sink: Arc<CallSink>,
    pub(crate) token: CancellationToken,
    pub(crate) cancellable: bool,
}

impl<H: ToolHost> CallTask<H> {
    /// Runs the call to its end and hands its terminal line to the coordinator.
    pub(crate) async fn run(self, arguments: Value, start: Option<oneshot::Receiver<()>>) {
        let _ends = Ends(self.sink.clone());
        let timed = self.status.timed(self.sink.has_progress_token());
        let notice = timed.then(|| Box::pin(tokio::time::sleep(self.status_delay)));
        let beats = self.status.heartbeats(self.sink.has_progress_token());
        let beat = beats.then(|| Box::pin(tokio::time::sleep(self.heartbeat)));
        let mut timers = Timers { notice, beat };
        if let Some(start) = start {
            let started = self.wait(start.map(|r| r.is_ok()), &mut timers).await;
            if started != Some(true) {
                return self.sink.finish(Vec::new());
            }
        }
        if self.cancellable && self.token.is_cancelled() {
            // Started and cancelled in the same breath: the host never sees it.
            return self.sink.finish(Vec::new());
        }
        let ctx = CallContext::new(self.sink.clone(), self.token.clone());
        let built = catch_unwind(AssertUnwindSafe(|| {
            self.host.call(&self.tool, arguments, ctx)
        }));
        let line = match built {
            Err(panic) => self.panicked(panic.as_ref()),
            Ok(call) => match self
                .wait(AssertUnwindSafe(call).catch_unwind(), &mut timers)
                .await
            {
                None => Vec::new(),
                Some(Err(panic)) => self.panicked(panic.as_ref()),
                Some(Ok(result)) => {
                    let mut result = call_tool_result(result);
                    self.identity.envelope(self.family, &mut result);
                    Response::ok(self.id.clone(), result).to_line()
                }
            },
        };
        self.sink.finish(line);
    }

    fn panicked(&self, panic: &(dyn std::any::Any + Send)) -> Vec<u8> {
        let error = internal_error(&self.tool, &self.id, panic);
        Response::error(Some(self.id.clone()), error).to_line()
    }

    /// Drives `work` to completion, or to cancellation (`None`), sending the liveness notice and
    /// heartbeats as their timers fire first (see the contract for how a cancellation wins).
    async fn wait<T>(&self, work: impl Future<Output = T>, timers: &mut Timers) -> Option<T> {
        let Timers { notice, beat } = timers;
        let mut work = pin!(work);
        if let Poll::Ready(output) = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
            return Some(output);
        }
        loop {
            tokio::select! {
                biased;
                _ = self.token.cancelled(), if self.cancellable => break,
                output = &mut work => return Some(output),
                _ = async { notice.as_mut().expect("guarded").await }, if notice.is_some() => {
                    *notice = None;
                    self.sink.status_notice();
                }
                _ = async { beat.as_mut().expect("guarded").await }, if beat.is_some() => {
                    let beat = beat.as_mut().expect("guarded");
                    let now = tokio::time::Instant::now();
                    // A progress step the host sent meanwhile counts: the next beat is due a
                    // period after the last notification, whoever sent it.
                    let due = self.sink.progress_at().map(|at| at + self.heartbeat);
                    match due {
                        Some(due) if due > now => beat.as_mut().reset(due),
                        _ => {
                            self.sink.heartbeat();
                            beat.as_mut().reset(now + self.heartbeat);
                        }
                    }
                }
            }
        }
        // The host saw the cancellation through its context; let it clean up, for a while.
        let _ = tokio::time::timeout(self.cancel_grace, work).await;
        None
    }
}

/// A call's timers: its one liveness notice, and its heartbeat.
struct Timers {
    notice: Option<Pin<Box<Sleep>>>,
    beat: Option<Pin<Box<Sleep>>>,
}

/// Hands over an empty terminal line if the task ends any other way than through `finish` (a
/// panic unwinding through it); `finish` makes this a no-op.
struct Ends(Arc<CallSink>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.finish(Vec::new());
    }
}

/// The -32603 a call answers when the host panicked (and the log of it).
pub(crate) fn internal_error(
    tool: &str,
    id: &RequestId,
    panic: &(dyn std::any::Any + Send),
) -> ErrorObject {
    let detail = panic_message(panic);
    tracing::error!(%id, %tool, %detail, "tool call panicked");
    ErrorObject::new(
        code::INTERNAL_ERROR,
        format!("{tool} failed internally: {detail}"),
    )
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
#[path = "heartbeat_tests.rs"]
mod heartbeat_tests;
