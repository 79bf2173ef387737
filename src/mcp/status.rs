//! The `beam.status` liveness notice: one `notifications/message` at level `notice` telling a
//! client without a progress token that a slow call is still working. Every rule about it is here.
//!
//! Contract:
//! 1. Only a [`StatusNotice::WhenSlow`] tool gets the timed notice, and only when its request
//!    carried no progress token: the server sends it when the call has not answered after the
//!    status delay (still waiting for its turn counts).
//! 2. The host may send it earlier (for example on the first sign of slow setup); either way a
//!    call gets it at most once, and never when its request's log policy does not admit `notice`
//!    or the request has a progress token.
//! 3. Its content is the host's to set: a `state` (`running` until the host says otherwise) and
//!    an optional subject, rendered as `path`; the core never reads a tool's arguments for it.
//! 4. Heartbeats: a [`StatusNotice::WhenSlow`] call whose request carried a progress token gets,
//!    whenever the heartbeat period passes with no progress notification sent (waiting for its
//!    turn included), a progress step saying it is still working, with the notice's words: a
//!    client that resets its idle timeout on progress keeps waiting while Lean says nothing new.
//!    It is an ordinary step (one more than the last progress), so it keeps progress strictly
//!    increasing, and like every notification it is never sent after the answer.

use serde_json::json;

use super::context::LogPolicy;
use super::jsonrpc::{RequestId, notification_line};
use super::protocol::LogLevel;

/// The logger name of the one-shot liveness notice.
pub const STATUS_LOGGER: &str = "beam.status";
/// The hint the liveness notice carries.
pub const PROGRESS_HINT: &str =
    "For detailed live updates, pass tools/call params._meta.progressToken.";
/// The state a notice reports until the host sets another.
pub const DEFAULT_STATE: &str = "running";
/// How long a call with a progress token may go without a progress notification before it gets
/// a heartbeat: half the 10 s within which a client should hear from a waiting call.
pub const DEFAULT_HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether a call without a progress token gets the timed `beam.status` liveness notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusNotice {
    /// Never by timer: the tool answers quickly and has nothing to report.
    Quiet,
    /// Once, if the call is still running after the server's status delay.
    WhenSlow,
}

impl StatusNotice {
    /// Whether the server arms the timer for a call of this tool.
    pub(crate) fn timed(self, has_progress_token: bool) -> bool {
        self == StatusNotice::WhenSlow && !has_progress_token
    }

    /// Whether a call of this tool gets heartbeats (see the contract).
    pub(crate) fn heartbeats(self, has_progress_token: bool) -> bool {
        self == StatusNotice::WhenSlow && has_progress_token
    }
}

/// What one call's notice will say, and whether it has been sent.
#[derive(Debug)]
pub(crate) struct StatusLine {
    state: String,
    subject: Option<String>,
    sent: bool,
}

impl StatusLine {
    pub(crate) fn new() -> Self {
        StatusLine {
            state: DEFAULT_STATE.into(),
            subject: None,
            sent: false,
        }
    }

    pub(crate) fn set(&mut self, state: String, subject: Option<String>) {
        self.state = state;
        self.subject = subject;
    }

    /// What the notice, and a heartbeat, say.
    pub(crate) fn message(&self, tool: &str) -> String {
        match &self.subject {
            Some(subject) => format!("{tool} on {subject} is still working."),
            None => format!("{tool} is still working."),
        }
    }

    /// The notice, once per call; `None` when it was sent already or is not admitted.
    pub(crate) fn take(
        &mut self,
        id: &RequestId,
        tool: &str,
        has_progress_token: bool,
        policy: &LogPolicy,
    ) -> Option<Vec<u8>> {
        if self.sent || has_progress_token || !policy.admits(LogLevel::Notice) {
            return None;
        }
        self.sent = true;
        let message = self.message(tool);
        let mut data = json!({
            "requestId": id.to_value(),
            "tool": tool,
            "state": self.state,
            "message": message,
            "progressHint": PROGRESS_HINT,
        });
        if let Some(subject) = &self.subject {
            data["path"] = json!(subject);
        }
        let params = json!({ "level": "notice", "logger": STATUS_LOGGER, "data": data });
        Some(notification_line("notifications/message", &params))
    }
}
