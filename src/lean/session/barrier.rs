//! The diagnostics barrier: everything Lean publishes for one version of a document, known to be
//! in.
//!
//! Contract:
//! 1. [`barrier`] asks `textDocument/waitForDiagnostics` for the document's current LSP version
//!    (`ask`: reported on, bounded, cancellable, a crash revived once). Lean sends every
//!    diagnostic of a version before that answer on one ordered stream, so when it resolves the
//!    mirror holds the version's whole set. It is only ever asked for a version Lean was sent:
//!    the set queues a version's text before the mirror shows it.
//! 2. When the document moved on meanwhile, the barrier waits again for the version Lean now
//!    has, so what it returns always describes one complete version. [`Follow::AnyText`] follows
//!    any newer text (a real document another call changed); [`Follow::SameText`] only a
//!    revival of the same text (a twin under its lease, which nobody else changes): any other
//!    change is `internalError`, never another text's diagnostics.
//! 3. A version whose imports Lake could not build (new Lake's `Failed to build module
//!    dependencies.` header error, `diagnostics`) is final but checked nothing:
//!    `importBuildFailed`, naming the modules and Lake's errors, for every call that waits here.
//!    A version whose imports are out of date is not final: `syncBarrierIncomplete`, with the
//!    stale notices and a recovery plan; so is one whose import closure or read files changed on
//!    disk since Lean set the document up (`LakeConfig::changed_imports`), whether Lean says so
//!    or not (the 2022 watchdog never does; none is told of a file nobody saved): the same
//!    error, naming the files (`HostError::inputs_changed`). A version whose worker crashed is
//!    not final either: the typed crash (`HostError::worker_crashed`), never an
//!    ordinary-looking result.
//! 4. An empty answer (`null`, `[]`) about a document is only an answer once Lean is known to
//!    have processed its header: Lean answers `null` about a file whose header failed (it
//!    checked nothing), possibly before it publishes the header error. [`header_processed`]
//!    reads what the mirror already knows (the header error, or progress past the header) and
//!    only when it knows neither waits here for the version's barrier; a header failure is
//!    `importBuildFailed` or `headerFailed` (`invalidParams`) with Lean's words, a crash or
//!    out-of-date imports their typed errors.
//! 5. Lean's answer is recorded in the mirror for the LSP version it was asked about
//!    (`Mirror::barrier_answered`) before the mirror is read: receipts call a version
//!    `complete` only once it answered.

use serde_json::{Value, json};
use tokio::sync::broadcast::Receiver;

use super::ask::ask;
use super::mirror::{DocEvent, Document, same_text};
use super::report::LiveDiagnostics;
use super::set::DocumentSet;
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::text::Position;

/// Which newer versions a barrier follows (see the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Any: the document is shared with other calls.
    AnyText,
    /// Only the same text revived: the caller holds the document alone.
    SameText,
}

/// Waits until Lean has published everything for `document`'s current version (see the
/// contract); the document as it then stands.
pub async fn barrier(
    set: &DocumentSet,
    mut document: Document,
    caller: &Caller<'_>,
    live: LiveDiagnostics,
    events: &mut Receiver<DocEvent>,
    follow: Follow,
) -> Result<Document, HostError> {
    let method = "textDocument/waitForDiagnostics";
    let params = |d: &Document| Ok(json!({"uri": &*d.uri, "version": d.lsp_version}));
    loop {
        let (_, waited) = ask(set, &document, caller, live, events, method, params).await?;
        set.mirror().barrier_answered(&document.uri, waited);
        let current = set.mirror().get(&document.uri).ok_or_else(|| {
            HostError::internal(format!(
                "{} was closed while this call held it (a bug of lean-beam-mcp's: see its log); \
                 call again",
                caller.path
            ))
        })?;
        if current.lsp_version == waited {
            if current.crashed() {
                // Answered, then the worker died: its diagnostics are not the version's whole set.
                return Err(set.crash_error(caller.path, &current, false));
            }
            if let Some(failed) = import_build_failed(caller.path, &current) {
                return Err(failed);
            }
            if !current.stale.is_empty() {
                return Err(stale_imports(caller.path, &current));
            }
            let changed = set.lake_config().changed_imports(&current.imports);
            if !changed.is_empty() {
                return Err(HostError::inputs_changed(
                    caller.path,
                    current.version,
                    &changed,
                ));
            }
            return Ok(current);
        }
        if follow == Follow::SameText && current.hash != document.hash {
            return Err(HostError::internal(format!(
                "the text of {}'s twin changed while a run held it (a bug of lean-beam-mcp's: \
                 see its log); call again",
                caller.path
            )));
        }
        document = current;
    }
}

/// For an empty answer about `document`: whether Lean processed its header (see the contract).
pub async fn header_processed(
    set: &DocumentSet,
    document: &Document,
    caller: &Caller<'_>,
) -> Result<(), HostError> {
    let Some(current) = set.mirror().get(&document.uri) else {
        return Ok(());
    };
    if !same_text(&current.text, &document.text) {
        // Another text: the caller's own check reports that.
        return Ok(());
    }
    if let Some(known) = header_outcome(caller.path, &current) {
        return known;
    }
    let mut events = set.mirror().subscribe();
    let live = LiveDiagnostics::Off;
    let checked = barrier(set, current, caller, live, &mut events, Follow::AnyText).await?;
    header_outcome(caller.path, &checked).unwrap_or(Ok(()))
}

/// What `document` says of its header, when it says anything yet.
fn header_outcome(path: &str, document: &Document) -> Option<Result<(), HostError>> {
    if let Some(error) = document.header_error() {
        let failed = import_build_failed(path, document)
            .unwrap_or_else(|| HostError::header_failed(path, document.version, &error.message));
        return Some(Err(failed));
    }
    let progress = &document.progress;
    let beyond_header = progress
        .checking_at
        .is_some_and(|at| at != Position::new(0, 0));
    let past_header = !progress.fatal && (progress.done || beyond_header);
    past_header.then_some(Ok(()))
}

fn import_build_failed(path: &str, document: &Document) -> Option<HostError> {
    document.diagnostics.iter().find_map(|d| {
        let failure = d.import_build_failure()?;
        Some(HostError::import_build_failed(
            path,
            document.version,
            &failure.modules,
            &failure.errors,
            &d.message,
        ))
    })
}

fn stale_imports(path: &str, document: &Document) -> HostError {
    let notices: Vec<Value> = document
        .stale
        .iter()
        .map(|d| json!({"range": d.range(), "severity": d.severity_name(), "message": d.message}))
        .collect();
    HostError::stale_imports(path, document.version, notices)
}
