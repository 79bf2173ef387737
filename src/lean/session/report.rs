//! What a call waiting on a document tells its client: progress steps, the liveness notice and
//! live `lean.diagnostic` logs, from the document's events (the seed's display-control matrix).
//!
//! Contract:
//! 1. Lake setup lines: the first one switches the liveness notice to `preparing_dependencies`
//!    and sends it at once (when the request has no progress token and its log policy admits
//!    `notice`); progress reports the first line and every tenth.
//! 2. File progress: the first update, then every 25 more, and one `done` (never two).
//! 3. Live diagnostics, for the tools that stream them: each diagnostic new to the version is
//!    logged once as `lean.diagnostic` when `diagnostic_scope` admits it and the request's log
//!    policy admits its level (error, warning, info, debug for hints).
//! 4. Only events of the document the call waits on, of the LSP version it waits for, are
//!    reported: a newer version's are another text's (the barrier reports them, waiting for that
//!    version, under its own version). A call that fell behind misses live events, never
//!    results.

use serde_json::json;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::TryRecvError;

use super::diagnostics::Diagnostic;
use super::mirror::{DocEvent, Document, EventKind, FileProgress};
use crate::lean::progress::Caller;

/// The logger of live Lean diagnostics.
pub const DIAGNOSTIC_LOGGER: &str = "lean.diagnostic";
/// File progress is reported again after this many more updates.
const PROGRESS_STEP: u64 = 25;
/// Setup progress is reported for the first line and every this many.
const SETUP_STEP: u64 = 10;

/// Which live diagnostics a call streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveDiagnostics {
    /// None (navigation and goal tools).
    Off,
    /// Errors only (`diagnostic_scope: "errors"`).
    Errors,
    /// Everything (`diagnostic_scope: "all"`).
    All,
}

/// Reports one call's document events.
pub struct Reporter<'a> {
    caller: Caller<'a>,
    uri: String,
    version: i64,
    lsp_version: i64,
    live: LiveDiagnostics,
    setup_lines: u64,
    reported_updates: Option<u64>,
    done_reported: bool,
}

impl<'a> Reporter<'a> {
    /// A reporter for events of `document` from its current LSP version on.
    pub fn new(caller: Caller<'a>, document: &Document, live: LiveDiagnostics) -> Self {
        Reporter {
            caller,
            uri: document.uri.to_string(),
            version: document.version,
            lsp_version: document.lsp_version,
            live,
            setup_lines: 0,
            reported_updates: None,
            done_reported: false,
        }
    }

    /// Reports every event waiting in `events`.
    pub fn drain(&mut self, events: &mut Receiver<DocEvent>) {
        loop {
            match events.try_recv() {
                Ok(event) => self.report(&event),
                Err(TryRecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "a call fell behind its document's live events");
                }
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
    }

    /// Reports one event.
    pub fn report(&mut self, event: &DocEvent) {
        if *event.uri != *self.uri || event.lsp_version != self.lsp_version {
            return;
        }
        match &event.kind {
            EventKind::SetupLine(line) => self.setup_line(line),
            EventKind::Progress(progress) => self.file_progress(progress),
            EventKind::Diagnostic(diagnostic) => self.diagnostic(diagnostic),
        }
    }

    fn setup_line(&mut self, line: &str) {
        self.setup_lines += 1;
        if self.setup_lines == 1 {
            let observer = self.caller.observer;
            observer.status("preparing_dependencies", Some(self.caller.path));
            observer.status_now();
        }
        if self.setup_lines == 1 || self.setup_lines.is_multiple_of(SETUP_STEP) {
            self.caller
                .step(&format!("preparing Lean dependencies — {line}"));
        }
    }

    fn file_progress(&mut self, progress: &FileProgress) {
        if self.done_reported {
            return;
        }
        let due = match self.reported_updates {
            None => true,
            Some(last) => progress.done || progress.updates >= last + PROGRESS_STEP,
        };
        if !due {
            return;
        }
        self.reported_updates = Some(progress.updates);
        self.done_reported = progress.done;
        let range = match (progress.range_start_line, progress.range_end_line) {
            // The text uses the tools' 0-based lines (document_progress keeps the seed's 1-based).
            (Some(start), Some(end)) => format!(
                "lines {}..{}, 0-based; ",
                start.saturating_sub(1),
                end.saturating_sub(1)
            ),
            _ => String::new(),
        };
        let verb = if progress.done {
            "processed"
        } else {
            "processing"
        };
        let (tool, path) = (self.caller.tool, self.caller.path);
        self.caller.observer.step(format!(
            "{tool}: {verb} {path} ({range}updates={} done={})",
            progress.updates, progress.done
        ));
    }

    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        let admitted = match self.live {
            LiveDiagnostics::Off => false,
            LiveDiagnostics::Errors => diagnostic.in_scope(false),
            LiveDiagnostics::All => true,
        };
        if admitted {
            self.caller.observer.log(
                diagnostic.log_level(),
                DIAGNOSTIC_LOGGER,
                json!({
                    "path": self.caller.path,
                    "uri": self.uri,
                    "version": self.version,
                    "severity": diagnostic.severity_name(),
                    "range": diagnostic.range(),
                    "message": diagnostic.message,
                }),
            );
        }
    }
}
