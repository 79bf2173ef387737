//! What a Lean call tells its client while it waits: progress notifications, the liveness
//! notice, and live `lean.diagnostic` logs, from the document events Lean produces.
//!
//! Contract (the seed's display-control matrix):
//! 1. One preparation update per call (sent when the call is admitted, see `LeanHost`).
//! 2. Lake setup lines: the first one switches the liveness notice to `preparing_dependencies`
//!    and sends it at once (when the request has no progress token and its log policy admits
//!    `notice`); progress reports the first line and every tenth.
//! 3. File progress: the first update, then every 25 more, and one `done` (never two).
//! 4. Live diagnostics, for the tools that stream them: each diagnostic new to the version is
//!    logged once as `lean.diagnostic` when `diagnostic_scope` admits it and the request's log
//!    policy admits its level (error, warning, info, debug for hints).
//! 5. Only events of the document the call waits on, at or after the LSP version it waits for,
//!    are reported. A call that fell behind misses live events, never results.
//! 6. A checkpoint's `lake build` ([`build_line`]): job lines (`✔ [i/n] Built M`; through a
//!    pipe Lake prints one only for a job that did work or logged something,
//!    `lean-stock-speculation.md` §C) are progress steps: the first, then one per ten jobs, the
//!    last, and every one that warned or failed (a first build of a Mathlib-sized project has
//!    thousands); the job logs between them are not (they reach the result of a failed build).

use serde_json::json;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::TryRecvError;

use crate::lean::lake::output::job_line;
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::session::mirror::{DocEvent, Document, EventKind, FileProgress};
use crate::mcp::CallContext;

/// The logger of live Lean diagnostics.
pub const DIAGNOSTIC_LOGGER: &str = "lean.diagnostic";
/// File progress is reported again after this many more updates.
const PROGRESS_STEP: u64 = 25;
/// A build's job lines are reported for the first job, then every this many jobs, the last
/// job, and any job that warned or failed.
const BUILD_STEP: u64 = 10;
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
    ctx: &'a CallContext,
    tool: String,
    path: String,
    uri: String,
    version: i64,
    lsp_version: i64,
    live: LiveDiagnostics,
    setup_lines: u64,
    reported_updates: Option<u64>,
    done_reported: bool,
}

impl<'a> Reporter<'a> {
    /// A reporter for events of `document` from its current LSP version on; `path` is how the
    /// caller named it.
    pub fn new(
        ctx: &'a CallContext,
        path: &str,
        document: &Document,
        live: LiveDiagnostics,
    ) -> Self {
        Reporter {
            tool: ctx.tool().to_owned(),
            ctx,
            path: path.to_owned(),
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
        if *event.uri != *self.uri || event.lsp_version < self.lsp_version {
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
            self.ctx
                .set_status("preparing_dependencies", Some(&self.path));
            self.ctx.status_notice_now();
        }
        if self.setup_lines == 1 || self.setup_lines.is_multiple_of(SETUP_STEP) {
            self.ctx.progress(format!(
                "{} on {}: preparing Lean dependencies — {line}",
                self.tool, self.path
            ));
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
            (Some(start), Some(end)) => format!("range={start}..{end} "),
            _ => String::new(),
        };
        let verb = if progress.done {
            "processed"
        } else {
            "processing"
        };
        self.ctx.progress(format!(
            "{}: {verb} {} ({range}updates={} done={})",
            self.tool, self.path, progress.updates, progress.done
        ));
    }

    fn diagnostic(&mut self, diagnostic: &Diagnostic) {
        let admitted = match self.live {
            LiveDiagnostics::Off => false,
            LiveDiagnostics::Errors => diagnostic.in_scope(false),
            LiveDiagnostics::All => true,
        };
        if admitted {
            self.ctx.log(
                diagnostic.log_level(),
                DIAGNOSTIC_LOGGER,
                json!({
                    "path": self.path,
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

/// Reports one line of a checkpoint's `lake build` (see the contract); `last` is the index of
/// the last job line reported for this build (0 before any).
pub fn build_line(ctx: &CallContext, path: &str, line: &str, last: &mut u64) {
    let Some(job) = job_line(line) else {
        return;
    };
    if build_line_due(job.icon, job.index, job.total, *last) {
        *last = job.index.max(1);
        ctx.progress(format!("{} on {path}: {line}", ctx.tool()));
    }
}

/// Whether job `index` of `total` is reported, after job `last` was (0: none yet).
fn build_line_due(icon: char, index: u64, total: u64, last: u64) -> bool {
    last == 0 || index >= last + BUILD_STEP || index == total || icon != '✔'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_build_reports_its_first_every_tenth_its_last_and_its_troubles() {
        let mut last = 0;
        let mut reported = Vec::new();
        for index in 1..=35u64 {
            let icon = if index == 17 { '⚠' } else { '✔' };
            if build_line_due(icon, index, 35, last) {
                last = index;
                reported.push(index);
            }
        }
        assert_eq!(reported, [1, 11, 17, 27, 35]);
    }
}
