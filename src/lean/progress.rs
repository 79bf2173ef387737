//! What a call tells its client while it waits, as the wings below the tools see it: a small
//! [`Observer`] the call implements, and a [`Caller`] saying how the call names itself and when
//! it stops. `session` and `lake` report through these, never through the MCP call itself;
//! what they report, and how often, each states in its own file (`session/report.rs`,
//! `lake/output.rs`).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::mcp::{CallContext, LogLevel};

/// Where a waiting call's news goes.
pub trait Observer: Send + Sync {
    /// A progress step (a notification, when the client asked for progress).
    fn step(&self, message: String);
    /// What the call's liveness notice says: its state and subject.
    fn status(&self, state: &str, subject: Option<&str>);
    /// Sends the liveness notice now, when it is due and the request's log policy admits it.
    fn status_now(&self);
    /// A live log, when the request's log policy admits its level.
    fn log(&self, level: LogLevel, logger: &str, data: Value);
}

impl Observer for CallContext {
    fn step(&self, message: String) {
        self.progress(message);
    }

    fn status(&self, state: &str, subject: Option<&str>) {
        self.set_status(state, subject);
    }

    fn status_now(&self) {
        self.status_notice_now();
    }

    fn log(&self, level: LogLevel, logger: &str, data: Value) {
        CallContext::log(self, level, logger, data);
    }
}

/// A call waiting on Lean or Lake: who hears of it, how it is named, when it stops.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    /// Where its news goes.
    pub observer: &'a dyn Observer,
    /// The tool's name.
    pub tool: &'a str,
    /// The file as the call named it (empty when it names none).
    pub path: &'a str,
    /// Cancelled with the call.
    pub cancel: &'a CancellationToken,
}

impl Caller<'_> {
    /// A progress step about what the call is doing: `<tool> on <path>: <what>`.
    pub fn step(&self, what: &str) {
        let message = if self.path.is_empty() {
            format!("{}: {what}", self.tool)
        } else {
            format!("{} on {}: {what}", self.tool, self.path)
        };
        self.observer.step(message);
    }
}
