//! Asking Lean about one open document, the way every tool does: one request, reported on while
//! it waits, and a crashed worker revived once.
//!
//! Contract:
//! 1. [`ask`] sends one request about the document, with params built from the document as it
//!    stands when it is sent, through the server (bounded by the Lean timeout, cancellable).
//!    While it waits, the document's live events are reported through the call's [`Reporter`];
//!    events still queued when the answer arrives are reported before it returns (Lean sent them
//!    first).
//! 2. A request that fails because the document's worker died (-32901/-32902) while Lean is
//!    still there is sent again once, after reviving the worker (a version-bumped `didChange`
//!    of the text Lean now has: a newer text given Lean before the answer came may have died
//!    with the worker, and Lean holds every request about a dead worker's file), unless someone
//!    changed or revived the document since the answer came (that `didChange` restarted it;
//!    then it is only sent again). When it fails that way again, or the text may not be revived
//!    again (`mirror`'s bound), the call fails with the typed crash
//!    (`HostError::worker_crashed`: where checking stopped, Lean's stderr tail). A request
//!    about a document Lean said died is never sent before it is revived.
//! 3. A worker that crashes while the request waits (a fatal `fileProgress` that no header
//!    error explains) is revived: Lean holds requests for a crashed document until a
//!    `didChange`, so without it the wait would last until the Lean timeout. Lean may send a
//!    broken header's fatal progress before the error that explains it (Part 3, "Ordering"), so
//!    a fatal report is taken for a crash only once the crash grace has passed with no
//!    explanation and no answer. A crash that may not be revived again fails the call with the
//!    typed crash at once, and so does a request about a document already in that state: it is
//!    never sent to wait for a revival that will not come. The grace runs for the newest version
//!    reported fatal (a version already reported fatal when the call begins counts from then):
//!    when a revival (this call's or another's) crashes again while an older
//!    report's grace runs, Lean holds the request for that newer version, so it is the one
//!    revived (the no-false-complete suite hung on a sync whose own revival crashed before its
//!    request reached the new worker). Events lost to lag are read back from the mirror.
//! 4. The document must be one the caller pins or leases: a document that is not open is a bug
//!    of the host's, reported as `internalError`, never as the caller's fault.
//! 5. [`ask_once`] answers about the text the caller checked, or not at all: Lean answers a
//!    request for the text it has when it gets there, so when another call gave Lean a newer
//!    text before the request was sent or before it was answered, the answer could describe
//!    that text, and the call gets `contentModified` (`documentVersionMismatch`) instead. A
//!    revival (the same text) is no change. An empty answer counts only once Lean is known to
//!    have processed the document's header (`barrier::header_processed`).

use std::pin::pin;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::mirror::{DocEvent, Document, EventKind, same_text};
use super::report::{LiveDiagnostics, Reporter};
use super::set::DocumentSet;
use crate::lean::error::{HostError, code};
use crate::lean::progress::Caller;

/// Asks Lean `method` about `document` (see the contract); the answer, and the LSP version it
/// concerns.
pub async fn ask(
    set: &DocumentSet,
    document: &Document,
    caller: &Caller<'_>,
    live: LiveDiagnostics,
    events: &mut Receiver<DocEvent>,
    method: &str,
    params: impl Fn(&Document) -> Result<Value, HostError>,
) -> Result<(Value, i64), HostError> {
    let mut reporter = Reporter::new(*caller, document, live);
    let uri = document.uri.clone();
    let request = with_revival(set, &uri, caller, method, params);
    let mut request = pin!(request);
    let mut unexplained = Unexplained::new(set.limits().crash_grace);
    if let Some(current) = set.mirror().get(&uri)
        && current.crashed()
        && !current.died
    {
        // Reported fatal before this call: the grace runs from now (no revival has been sent
        // for it, and Lean holds the request until one is).
        unexplained.fatal(current.lsp_version, Instant::now());
    }
    let answer = loop {
        let due = unexplained.due();
        tokio::select! {
            biased;
            answer = &mut request => break answer,
            () = sleep_until(due), if due.is_some() => {
                let seen = unexplained.take().expect("due");
                if !set.revive_if_still(&uri, seen, false, caller).await
                    && let Some(dead) = set.mirror().get(&uri)
                    && dead.lsp_version == seen
                    && dead.crashed()
                {
                    // Lean holds the request until a revival that will not come.
                    break Err(set.crash_error(caller.path, &dead, false));
                }
            }
            event = events.recv() => match event {
                Ok(event) => {
                    reporter.report(&event);
                    let fatal = matches!(&event.kind, EventKind::Progress(p) if p.fatal);
                    if fatal && *event.uri == *uri {
                        unexplained.fatal(event.lsp_version, Instant::now());
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    if let Some(current) = set.mirror().get(&uri)
                        && current.crashed()
                    {
                        unexplained.fatal(current.lsp_version, Instant::now());
                    }
                }
                Err(RecvError::Closed) => break (&mut request).await,
            },
        }
    };
    reporter.drain(events);
    answer
}

/// The newest LSP version of the document reported fatal and not yet explained, and when that
/// report counts as a crash (see the contract, 3).
struct Unexplained {
    grace: Duration,
    newest: Option<(i64, Instant)>,
}

impl Unexplained {
    fn new(grace: Duration) -> Unexplained {
        Unexplained {
            grace,
            newest: None,
        }
    }

    /// A fatal report about `version`, heard at `now`: a newer version than the one whose grace
    /// runs replaces it (Lean holds the request for the newest worker); the same or an older
    /// one changes nothing.
    fn fatal(&mut self, version: i64, now: Instant) {
        if self.newest.is_none_or(|(seen, _)| version > seen) {
            self.newest = Some((version, now + self.grace));
        }
    }

    fn due(&self) -> Option<Instant> {
        self.newest.map(|(_, at)| at)
    }

    /// The version whose grace ran out, forgotten.
    fn take(&mut self) -> Option<i64> {
        self.newest.take().map(|(version, _)| version)
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// [`ask`] for a call that reports no live diagnostics and has no events of its own yet.
pub async fn ask_once(
    set: &DocumentSet,
    document: &Document,
    caller: &Caller<'_>,
    method: &str,
    params: Value,
) -> Result<Value, HostError> {
    let mut events = set.mirror().subscribe();
    let same = |other: &Document| same_text(&other.text, &document.text);
    let moved_on = |current: &Document| {
        HostError::version_mismatch(
            caller.path,
            &document.uri,
            document.version,
            current.version,
        )
    };
    // Refused before it is sent when Lean already has another text.
    let checked = |at: &Document| {
        if same(at) {
            Ok(params.clone())
        } else {
            Err(moved_on(at))
        }
    };
    let live = LiveDiagnostics::Off;
    let request = ask(set, document, caller, live, &mut events, method, checked);
    let (answer, _) = request.await?;
    if is_empty(&answer) {
        super::barrier::header_processed(set, document, caller).await?;
    }
    match set.mirror().get(&document.uri) {
        Some(current) if !same(&current) => Err(moved_on(&current)),
        _ => Ok(answer),
    }
}

/// Whether Lean's answer says nothing: `null` or `[]`.
fn is_empty(answer: &Value) -> bool {
    answer.is_null() || answer.as_array().is_some_and(Vec::is_empty)
}

/// The request, sent again once after a crash (see the contract).
async fn with_revival(
    set: &DocumentSet,
    uri: &str,
    caller: &Caller<'_>,
    method: &str,
    params: impl Fn(&Document) -> Result<Value, HostError>,
) -> Result<(Value, i64), HostError> {
    let mut retried = false;
    loop {
        let document = set.mirror().get(uri).ok_or_else(|| {
            HostError::internal(format!(
                "{} is not open in Lean although this call holds it (a bug of lean-beam-mcp's: \
                 see its log); call again",
                caller.path
            ))
        })?;
        if document.crashed() && !document.may_revive() {
            // Lean would hold the request until a revival that will not come.
            return Err(set.crash_error(caller.path, &document, false));
        }
        if document.died {
            // Lean holds the request until a didChange restarts the worker: revive it first,
            // unless another call just did or changed the text (its didChange restarted it).
            if !set
                .revive_if_still(uri, document.lsp_version, true, caller)
                .await
                && set
                    .mirror()
                    .get(uri)
                    .is_some_and(|d| d.lsp_version == document.lsp_version)
            {
                return Err(set.crash_error(caller.path, &document, false));
            }
            continue;
        }
        let server = set.server();
        let outcome = server
            .request(method, params(&document)?, caller.cancel)
            .await;
        match outcome {
            Err(error)
                if matches!(error.code, code::WORKER_EXITED | code::WORKER_CRASHED)
                    && server.is_alive()
                    && server.retirement().is_none() =>
            {
                let exited = error.code == code::WORKER_EXITED;
                let died = set.worker_died(uri, exited);
                if retried {
                    return Err(crashed(set, uri, caller, &document, exited));
                }
                retried = true;
                // The text Lean now has, perhaps newer than the request's, died with the worker
                // (see the contract); the loop revives it before sending again.
                if died.is_none() {
                    return Err(crashed(set, uri, caller, &document, exited));
                }
            }
            other => return other.map(|answer| (answer, document.lsp_version)),
        }
    }
}

/// The crash error for `uri`, as the mirror now has it (it may have heard where checking
/// stopped since the request was sent).
fn crashed(
    set: &DocumentSet,
    uri: &str,
    caller: &Caller<'_>,
    sent: &Document,
    exited: bool,
) -> HostError {
    let document = set.mirror().get(uri).unwrap_or_else(|| sent.clone());
    set.crash_error(caller.path, &document, exited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_fatal_report_restarts_the_grace_for_its_version() {
        let grace = Duration::from_millis(500);
        let start = Instant::now();
        let mut unexplained = Unexplained::new(grace);
        unexplained.fatal(1, start);
        // A revival crashed again before the first report's grace ran out: Lean now holds the
        // request for version 2, which is the one to revive.
        let later = start + Duration::from_millis(100);
        unexplained.fatal(2, later);
        assert_eq!(unexplained.due(), Some(later + grace));
        assert_eq!(unexplained.take(), Some(2));
        assert_eq!(unexplained.due(), None);
    }

    #[test]
    fn the_same_or_an_older_version_keeps_the_running_grace() {
        let grace = Duration::from_millis(500);
        let start = Instant::now();
        let mut unexplained = Unexplained::new(grace);
        unexplained.fatal(3, start);
        unexplained.fatal(3, start + Duration::from_millis(200));
        unexplained.fatal(2, start + Duration::from_millis(300));
        assert_eq!(unexplained.due(), Some(start + grace));
        assert_eq!(unexplained.take(), Some(3));
    }
}
