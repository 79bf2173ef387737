//! The document mirror: what Lean has been told about each file, and what it has said back.
//!
//! Contract:
//! 1. Versions. A document has a *version* (what callers see: one more each time its text on
//!    disk changes; never reused for other text, also across a close and a reopen and across
//!    restarts of Lean, which share the workspace's [`VersionMemory`]; a reopen of the same
//!    text keeps its version, so closing a document to save Lean's memory, or restarting Lean,
//!    is invisible to a caller holding it) and an *LSP version* (what Lean sees: above every
//!    earlier one of the document, one more for each change, reopen or revival of a crashed
//!    worker). Both only increase, so a late publish for an earlier life is never taken for the
//!    new one.
//! 2. Notifications are applied in arrival order, as the client's reader delivers them. A
//!    publish for an LSP version older than the document's is ignored. A publish replaces the
//!    version's set, unless it says `isIncremental: true`, when it adds to it. Silent diagnostics
//!    are dropped; Lake setup lines become events and are never stored; stale-import notices are
//!    kept apart (see `diagnostics`).
//! 3. `$/lean/fileProgress` counts updates for the current LSP version, is done when
//!    `processing` is empty, and a `kind: 2` (fatal) range marks the version fatal: its worker
//!    crashed, so the next use revives it, unless an error explains it (`Document::crashed`).
//! 4. Each change is also broadcast as a [`DocEvent`] for calls that report live (logs,
//!    progress). A call that falls behind misses live events only: results always read the
//!    stored state, which is complete.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::lean::server::lsp::Inbox;
use crate::lean::session::diagnostics::{Diagnostic, Kind};
use crate::lean::speculation::twins::is_twin_uri;

/// How many live events a slow call may fall behind before it misses some.
const EVENT_BACKLOG: usize = 1024;

/// Lean's progress through one version of a document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileProgress {
    /// `$/lean/fileProgress` notifications seen for the version.
    pub updates: u64,
    /// Whether the last one said nothing is left to process.
    pub done: bool,
    /// The first line still being processed, 1-based, as last reported.
    pub range_start_line: Option<u64>,
    /// The last line of that range, 1-based, as last reported.
    pub range_end_line: Option<u64>,
    /// Lean reported a fatal error over the document (a crash, or a broken header).
    pub fatal: bool,
}

impl FileProgress {
    /// The `document_progress` object results carry.
    pub fn to_json(&self) -> Value {
        let mut progress = json!({ "updates": self.updates, "done": self.done });
        if let Some(start) = self.range_start_line {
            progress["range_start_line"] = json!(start);
        }
        if let Some(end) = self.range_end_line {
            progress["range_end_line"] = json!(end);
        }
        progress
    }
}

/// What a live call may hear about a document.
#[derive(Debug, Clone)]
pub enum EventKind {
    /// A diagnostic not seen before in this version.
    Diagnostic(Diagnostic),
    /// A line of Lake's setup output.
    SetupLine(String),
    /// File progress, as it stands after an update.
    Progress(FileProgress),
}

/// One change to a document, for live reporting.
#[derive(Debug, Clone)]
pub struct DocEvent {
    /// The document.
    pub uri: Arc<str>,
    /// The LSP version it concerns.
    pub lsp_version: i64,
    /// What happened.
    pub kind: EventKind,
}

/// One open document.
#[derive(Debug, Clone)]
pub struct Document {
    /// Its URI.
    pub uri: Arc<str>,
    /// The version callers see.
    pub version: i64,
    /// The version Lean sees.
    pub lsp_version: i64,
    /// The text Lean has.
    pub text: Arc<str>,
    /// A hash of that text.
    pub hash: u64,
    /// Elaboration diagnostics of the current LSP version.
    pub diagnostics: Vec<Diagnostic>,
    /// Stale-import notices of the current LSP version.
    pub stale: Vec<Diagnostic>,
    /// Progress through the current LSP version.
    pub progress: FileProgress,
    /// When it was last synced, on the mirror's own clock (for the document budget).
    last_used: u64,
    /// Identities of the diagnostics already broadcast for this version.
    seen: HashSet<String>,
}

/// The hash documents are compared by.
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The last version, LSP version and text hash each document of a workspace had, over every
/// runtime of that workspace, so a reopen continues after them.
#[derive(Debug, Default)]
pub struct VersionMemory(Mutex<HashMap<Arc<str>, Remembered>>);

#[derive(Debug, Clone, Copy, Default)]
struct Remembered {
    version: i64,
    lsp_version: i64,
    hash: Option<u64>,
}

impl VersionMemory {
    fn last(&self, uri: &str) -> Remembered {
        let memory = self.0.lock().unwrap_or_else(|p| p.into_inner());
        memory.get(uri).copied().unwrap_or_default()
    }

    fn remember(&self, document: &Document) {
        let mut memory = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let remembered = Remembered {
            version: document.version,
            lsp_version: document.lsp_version,
            hash: Some(document.hash),
        };
        memory.insert(document.uri.clone(), remembered);
    }
}

/// The mirror of one runtime.
#[derive(Debug)]
pub struct Documents {
    open: Mutex<HashMap<Arc<str>, Document>>,
    memory: Arc<VersionMemory>,
    events: broadcast::Sender<DocEvent>,
    clock: AtomicU64,
}

impl Documents {
    /// An empty mirror whose versions continue those in `memory`.
    pub fn new(memory: Arc<VersionMemory>) -> Self {
        Documents {
            open: Mutex::default(),
            memory,
            events: broadcast::channel(EVENT_BACKLOG).0,
            clock: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Document>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Live events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<DocEvent> {
        self.events.subscribe()
    }

    /// The document, if open.
    pub fn get(&self, uri: &str) -> Option<Document> {
        self.lock().get(uri).cloned()
    }

    /// Every open real file (twins aside), in no particular order.
    pub fn all(&self) -> Vec<Document> {
        let open = self.lock();
        open.values()
            .filter(|d| !is_twin_uri(&d.uri))
            .cloned()
            .collect()
    }

    /// How many documents are open: `(real files, twins)`.
    pub fn open_counts(&self) -> (usize, usize) {
        let open = self.lock();
        let twins = open.keys().filter(|uri| is_twin_uri(uri)).count();
        (open.len() - twins, twins)
    }

    /// Marks a document used now.
    pub fn touch(&self, uri: &str) {
        if let Some(document) = self.lock().get_mut(uri) {
            document.last_used = self.clock.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The real files (twins aside) to close so that at most `keep` stay open, least recently
    /// used first.
    pub fn over_budget(&self, keep: usize) -> Vec<Arc<str>> {
        let open = self.lock();
        let mut real: Vec<(&Arc<str>, u64)> = open
            .iter()
            .filter(|(uri, _)| !is_twin_uri(uri))
            .map(|(uri, d)| (uri, d.last_used))
            .collect();
        real.sort_by_key(|(_, used)| *used);
        let extra = real.len().saturating_sub(keep);
        real.into_iter()
            .take(extra)
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// Records a `didOpen`; returns the document: the same version as its last life when the
    /// text is the same, else the next; an LSP version past every earlier one.
    pub fn opened(&self, uri: Arc<str>, text: Arc<str>) -> Document {
        let last = self.memory.last(&uri);
        let hash = text_hash(&text);
        let version = if last.hash == Some(hash) {
            last.version
        } else {
            last.version + 1
        };
        let document = Document {
            uri: uri.clone(),
            version,
            lsp_version: (last.lsp_version + 1).max(version),
            hash,
            text,
            diagnostics: Vec::new(),
            stale: Vec::new(),
            progress: FileProgress::default(),
            seen: HashSet::new(),
            last_used: self.clock.fetch_add(1, Ordering::Relaxed),
        };
        self.memory.remember(&document);
        self.lock().insert(uri, document.clone());
        document
    }

    /// Records a `didChange` to new text; returns the document as it now is.
    pub fn changed(&self, uri: &str, text: Arc<str>) -> Option<Document> {
        let mut open = self.lock();
        let document = open.get_mut(uri)?;
        document.version += 1;
        document.lsp_version += 1;
        document.hash = text_hash(&text);
        document.text = text;
        reset_version(document);
        self.memory.remember(document);
        Some(document.clone())
    }

    /// Records a revival (`didChange` with the same text): a new LSP version only.
    pub fn revived(&self, uri: &str) -> Option<Document> {
        let mut open = self.lock();
        let document = open.get_mut(uri)?;
        document.lsp_version += 1;
        reset_version(document);
        self.memory.remember(document);
        Some(document.clone())
    }

    /// Records a `didClose`.
    pub fn closed(&self, uri: &str) -> bool {
        self.lock().remove(uri).is_some()
    }

    fn publish(&self, params: &Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return;
        };
        let incremental = params.get("isIncremental") == Some(&Value::Bool(true));
        let mut events = Vec::new();
        {
            let mut open = self.lock();
            let Some(document) = open.get_mut(uri) else {
                return;
            };
            let version = params.get("version").and_then(Value::as_i64);
            if version.is_some_and(|v| v < document.lsp_version) {
                return;
            }
            if !incremental {
                document.diagnostics.clear();
                document.stale.clear();
            }
            let published = params.get("diagnostics").and_then(Value::as_array);
            for raw in published.into_iter().flatten() {
                let diagnostic = Diagnostic::new(raw.clone());
                match diagnostic.classify() {
                    Kind::Silent => {}
                    Kind::SetupLine => {
                        events.push(EventKind::SetupLine(diagnostic.message.clone()));
                    }
                    Kind::StaleImports => document.stale.push(diagnostic),
                    Kind::Lean => {
                        if document.seen.insert(diagnostic.identity()) {
                            events.push(EventKind::Diagnostic(diagnostic.clone()));
                        }
                        document.diagnostics.push(diagnostic);
                    }
                }
            }
            for kind in events {
                let _ = self.events.send(DocEvent {
                    uri: document.uri.clone(),
                    lsp_version: document.lsp_version,
                    kind,
                });
            }
        }
    }

    fn file_progress(&self, params: &Value) {
        let document_id = params.get("textDocument");
        let Some(uri) = document_id
            .and_then(|d| d.get("uri"))
            .and_then(Value::as_str)
        else {
            return;
        };
        let version = document_id
            .and_then(|d| d.get("version"))
            .and_then(Value::as_i64);
        let mut open = self.lock();
        let Some(document) = open.get_mut(uri) else {
            return;
        };
        if version.is_some_and(|v| v < document.lsp_version) {
            return;
        }
        let processing = params.get("processing").and_then(Value::as_array);
        let processing = processing.map(Vec::as_slice).unwrap_or_default();
        let progress = &mut document.progress;
        progress.updates += 1;
        progress.done = processing.is_empty();
        if let Some(first) = processing.first() {
            let line = |end: &str| {
                first
                    .pointer(&format!("/range/{end}/line"))
                    .and_then(Value::as_u64)
                    .map(|l| l + 1)
            };
            progress.range_start_line = line("start");
            progress.range_end_line = line("end");
        }
        if processing
            .iter()
            .any(|p| p.get("kind").and_then(Value::as_u64) == Some(2))
        {
            progress.fatal = true;
        }
        let _ = self.events.send(DocEvent {
            uri: document.uri.clone(),
            lsp_version: document.lsp_version,
            kind: EventKind::Progress(progress.clone()),
        });
    }
}

fn reset_version(document: &mut Document) {
    document.diagnostics.clear();
    document.stale.clear();
    document.seen.clear();
    document.progress = FileProgress::default();
}

impl Document {
    /// Whether its worker crashed, so the next use must revive it: a fatal error that no error
    /// diagnostic or stale-import notice explains (a broken header is fatal too, but reviving
    /// it would only fail again). Judged when asked, as the explanation may arrive after.
    pub fn crashed(&self) -> bool {
        self.progress.fatal
            && self.stale.is_empty()
            && !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

impl Inbox for Documents {
    fn notification(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => self.publish(&params),
            "$/lean/fileProgress" => self.file_progress(&params),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "file:///p/A.lean";

    fn open() -> Documents {
        let documents = Documents::new(Arc::default());
        documents.opened(URI.into(), "def a := 1\n".into());
        documents
    }

    fn publish(documents: &Documents, version: i64, incremental: Option<bool>, messages: &[&str]) {
        let diagnostics: Vec<Value> = messages
            .iter()
            .map(|m| json!({"severity": 1, "source": "Lean 4", "message": m,
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 3}}}))
            .collect();
        let mut params = json!({"uri": URI, "version": version, "diagnostics": diagnostics});
        if let Some(incremental) = incremental {
            params["isIncremental"] = json!(incremental);
        }
        documents.notification("textDocument/publishDiagnostics", params);
    }

    fn messages(documents: &Documents) -> Vec<String> {
        let document = documents.get(URI).unwrap();
        document
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn publishes_replace_unless_incremental() {
        let documents = open();
        publish(&documents, 1, None, &["a"]);
        publish(&documents, 1, None, &["a", "b"]);
        assert_eq!(messages(&documents), ["a", "b"]);
        publish(&documents, 1, Some(false), &["c"]);
        publish(&documents, 1, Some(true), &["d"]);
        assert_eq!(messages(&documents), ["c", "d"]);
    }

    #[test]
    fn older_versions_are_ignored_and_versions_only_increase() {
        let documents = open();
        let changed = documents.changed(URI, "def a := 2\n".into()).unwrap();
        assert_eq!((changed.version, changed.lsp_version), (2, 2));
        publish(&documents, 1, None, &["stale"]);
        assert!(messages(&documents).is_empty());
        let revived = documents.revived(URI).unwrap();
        assert_eq!((revived.version, revived.lsp_version), (2, 3));
        let changed = documents.changed(URI, "def a := 3\n".into()).unwrap();
        assert_eq!((changed.version, changed.lsp_version), (3, 4));
        assert!(documents.closed(URI));
        let same = documents.opened(URI.into(), "def a := 3\n".into());
        assert_eq!(
            (same.version, same.lsp_version),
            (3, 5),
            "the same text keeps its version; Lean's stays above the last life's"
        );
        publish(&documents, 4, None, &["from the earlier life"]);
        assert!(messages(&documents).is_empty());
        assert!(documents.closed(URI));
        let other = documents.opened(URI.into(), "x".into());
        assert_eq!(
            (other.version, other.lsp_version),
            (4, 6),
            "other text, the next"
        );
    }

    #[test]
    fn a_new_mirror_over_the_same_memory_continues_the_versions() {
        let memory = Arc::new(VersionMemory::default());
        let first = Documents::new(memory.clone());
        first.opened(URI.into(), "a".into());
        first.changed(URI, "b".into());
        let restarted = Documents::new(memory);
        let reopened = restarted.opened(URI.into(), "b".into());
        assert_eq!((reopened.version, reopened.lsp_version), (2, 3));
        restarted.closed(URI);
        let changed = restarted.opened(URI.into(), "c".into());
        assert_eq!((changed.version, changed.lsp_version), (3, 4));
    }

    #[test]
    fn progress_counts_and_a_fatal_range_marks_a_crash() {
        let documents = open();
        let mut events = documents.subscribe();
        let range =
            json!({"start": {"line": 4, "character": 0}, "end": {"line": 9, "character": 0}});
        for (processing, kind) in [(json!([{"range": range, "kind": 1}]), 1), (json!([]), 0)] {
            documents.notification(
                "$/lean/fileProgress",
                json!({"textDocument": {"uri": URI, "version": 1}, "processing": processing}),
            );
            let _ = kind;
        }
        let document = documents.get(URI).unwrap();
        assert_eq!(
            document.progress.to_json(),
            json!({"updates": 2, "done": true, "range_start_line": 5, "range_end_line": 10})
        );
        assert!(!document.crashed());
        assert!(matches!(
            events.try_recv().unwrap().kind,
            EventKind::Progress(_)
        ));
        documents.notification(
            "$/lean/fileProgress",
            json!({"textDocument": {"uri": URI, "version": 1}, "processing": [{"range": range, "kind": 2}]}),
        );
        assert!(documents.get(URI).unwrap().crashed());
        publish(&documents, 1, None, &["unknown module prefix 'Missing'"]);
        assert!(
            !documents.get(URI).unwrap().crashed(),
            "a fatal header error is not a crash"
        );
    }

    #[test]
    fn setup_lines_and_silent_ones_are_not_stored() {
        let documents = open();
        let mut events = documents.subscribe();
        documents.notification(
            "textDocument/publishDiagnostics",
            json!({"uri": URI, "version": 1, "diagnostics": [
                {"severity": 3, "message": "✔ [1/2] Built Dep",
                 "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}},
                {"severity": 3, "isSilent": true, "message": "Goals accomplished!",
                 "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 1}}}
            ]}),
        );
        assert!(messages(&documents).is_empty());
        assert!(matches!(
            events.try_recv().unwrap().kind,
            EventKind::SetupLine(line) if line == "✔ [1/2] Built Dep"
        ));
    }
}
