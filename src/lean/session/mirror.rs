//! The mirror: what Lean has been told about each document it has open, and what it has said
//! back. `set` (the [`DocumentSet`](super::set::DocumentSet)) is the only code that changes what
//! Lean has open; the mirror applies what Lean reports.
//!
//! Contract:
//! 1. Versions. A document has a *version* (what callers see: one more each time its text on
//!    disk changes; never reused for other text, also across a close and a reopen and across
//!    restarts of Lean, which share the workspace's [`VersionMemory`]; a reopen of the same
//!    text keeps its version, so closing a document to save Lean's memory, or restarting Lean,
//!    is invisible to a caller holding it) and an *LSP version* (what Lean sees: above every
//!    earlier one of the document, one more for each change, reopen or revival of a crashed
//!    worker). Both only increase. Each is allocated by the [`VersionMemory`] in one step, so two
//!    runtimes of a workspace that overlap (one retiring, one starting) never give one version
//!    to two texts. A real document's LSP versions lie above [`REAL_LSP_VERSIONS`], a twin's
//!    below it, so each real document's is above every twin's (`index`: Lean's reference index
//!    takes a twin for its real file); both stay within LSP's `integer`.
//! 2. Notifications are applied in arrival order, as the client's reader delivers them, to the
//!    document their URI names in whatever form Lean wrote it (`text::canonical_uri`). A
//!    publish for an LSP version older than the document's is ignored. A publish replaces the
//!    version's set, unless it says `isIncremental: true`, when it adds to it. Silent diagnostics
//!    are dropped; Lake setup lines become events and are never stored; stale-import notices are
//!    kept apart (see `diagnostics`). A publish with no version whose every diagnostic has
//!    `source: "Lake"` is new Lake's report on a file it failed to build for *another*
//!    document's setup (`serialMessagesToCrossFileDiagnostics`): it describes that file's text
//!    on disk as Lake read it, not the version Lean has open, and may arrive after that
//!    version's own diagnostics, so it never replaces them.
//! 3. `$/lean/fileProgress` counts updates for the current LSP version, is done when
//!    `processing` is empty, and a `kind: 2` (fatal) range marks the version fatal: its worker
//!    crashed, unless a header error or a stale-import notice explains it
//!    ([`Document::crashed`]). A worker Lean itself says died (a request failed with -32901 or
//!    -32902: [`Document::died`]) crashed whatever else the version reported, until a new text
//!    or a revival reaches Lean. A header error ([`Document::header_error`]) is recognised by its
//!    shape, never its words, in either of the two shapes Lean gives one (reference Part 4,
//!    "Header errors"): Lake's (a `lake setup-file` that failed, whatever the Lake era writes,
//!    imports that do not build, imports out of date) is one error from 0:0 whose *extent*
//!    (`fullRange`, `diagnostics`) covers the file (`Language.diagnosticsOfHeaderError`; its
//!    `range` is cut at the first line, so never judged by it); Lean's own (`Elab.processHeader`
//!    could not import a module: a misspelt import, a module never built) is an error that starts
//!    in the header (`syntax::header_span`; Lean logs it at the header's first token, zero-width)
//!    in a version reported fatal. No other
//!    error spans the file or stands in the header of a fatal version. Ordinary errors elsewhere
//!    never hide a crash. Where checking stopped is the start of the last non-fatal `processing`
//!    range Lean reported for the version.
//! 4. Each change is also broadcast as a [`DocEvent`] for calls that report live (logs,
//!    progress). A call that falls behind misses live events only: results always read the
//!    stored state, which is complete.
//! 5. A crashed text is revived (a version-bumped `didChange` of the same text) at most
//!    [`MAX_REVIVALS`] times in a row: a text that crashes on every elaboration would otherwise
//!    be revived on every call. A version Lean finishes without a fatal report, or a new text,
//!    starts the count again.
//! 6. That Lean answered the barrier for an LSP version ([`Mirror::barrier_answered`]) is a
//!    report about that version alone: a revival or a new text starts without it. A text's
//!    SHA-256 is computed once, when first asked, and kept by every copy of its document; the
//!    imports Lean set a document up with are recorded by `set` and kept until it sets it up
//!    again (receipts, `receipt`).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::{Value, json};
use tokio::sync::{Notify, broadcast};

use super::diagnostics::{Diagnostic, Kind};
use super::fingerprint::{Imports, sha256_hex};
use super::index::Indexed;
use crate::lean::server::lsp::Inbox;
use crate::lean::text::{Position, canonical_uri};

/// How many times in a row one text is revived after a crash (see the contract).
pub const MAX_REVIVALS: u32 = 1;

/// Where real documents' LSP versions start: a twin's stay below, so Lean's reference index,
/// which takes a twin for its real file, never prefers a twin's report (see the contract).
pub const REAL_LSP_VERSIONS: i64 = 1_000_000_000;

/// The highest LSP version: LSP's `integer` is 32 bits.
pub const LAST_LSP_VERSION: i64 = i32::MAX as i64;

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
    /// Where the last non-fatal `processing` range started (0-based): where checking stopped
    /// when the version turns fatal.
    pub checking_at: Option<Position>,
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

/// One document as Lean has it.
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
    /// Identities of the diagnostics already broadcast for this version.
    seen: HashSet<String>,
    /// How many times in a row this text was revived after a crash (see the contract).
    pub revivals: u32,
    /// Lean said this text's worker exited with an uncaught exception (-32901) the last time
    /// it died, rather than crashing otherwise (-32902).
    pub exited: bool,
    /// Lean said the worker of this LSP version died (a request about it failed with -32901 or
    /// -32902): Lean holds every request about the file until a `didChange` restarts it.
    pub died: bool,
    /// The text's SHA-256, computed once when first asked and shared by every copy of this
    /// document and its revivals ([`Document::text_sha256`]).
    sha256: Arc<OnceLock<Arc<str>>>,
    /// What Lean set the document up against (see `set`, `closure`); none for a twin.
    pub imports: Arc<Imports>,
    /// Lean answered the barrier for this LSP version ([`Mirror::barrier_answered`]).
    pub barrier: bool,
}

/// Whether two texts are the same (the same allocation, or equal).
pub fn same_text(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// A hash of a text, for a quick look (texts are compared whole: [`same_text`]).
pub fn text_hash(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The last version, LSP version and text hash each document of a workspace had, over every
/// runtime of that workspace: the one place versions are allocated (see the contract).
#[derive(Debug, Default)]
pub struct VersionMemory(Mutex<HashMap<Arc<str>, Remembered>>);

#[derive(Debug, Clone, Default)]
struct Remembered {
    version: i64,
    lsp_version: i64,
    /// The last text: compared whole, so no two texts can ever share a version.
    text: Option<Arc<str>>,
}

impl VersionMemory {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Remembered>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The versions of `uri` given Lean `text` now (an open or a change): the last version when
    /// that was this text, else the next; the next LSP version, above `floor` (its band).
    fn text(&self, uri: &Arc<str>, text: &Arc<str>, floor: i64) -> (i64, i64) {
        let mut memory = self.lock();
        let last = memory.entry(uri.clone()).or_default();
        if last
            .text
            .as_ref()
            .is_none_or(|known| !same_text(known, text))
        {
            last.version += 1;
            last.text = Some(text.clone());
        }
        last.lsp_version = last.lsp_version.max(floor) + 1;
        (last.version, last.lsp_version)
    }

    /// The next LSP version of `uri` after `current` (its document's), for the same text again.
    fn bump(&self, uri: &Arc<str>, current: i64) -> i64 {
        let mut memory = self.lock();
        let last = memory.entry(uri.clone()).or_default();
        last.lsp_version = last.lsp_version.max(current) + 1;
        last.lsp_version
    }
}

impl Document {
    /// The real document Lean is given `text` of, at the versions `memory` allocates.
    pub(super) fn given(uri: Arc<str>, text: Arc<str>, memory: &VersionMemory) -> Document {
        Document::given_in(uri, text, memory, REAL_LSP_VERSIONS)
    }

    /// The twin Lean is given `text` of, at the versions `memory` allocates, below every real
    /// document's LSP version (see the contract).
    pub(super) fn given_twin(uri: Arc<str>, text: Arc<str>, memory: &VersionMemory) -> Document {
        Document::given_in(uri, text, memory, 0)
    }

    fn given_in(uri: Arc<str>, text: Arc<str>, memory: &VersionMemory, floor: i64) -> Document {
        let hash = text_hash(&text);
        let (version, lsp_version) = memory.text(&uri, &text, floor);
        Document {
            uri,
            version,
            lsp_version,
            text,
            hash,
            diagnostics: Vec::new(),
            stale: Vec::new(),
            progress: FileProgress::default(),
            seen: HashSet::new(),
            revivals: 0,
            exited: false,
            died: false,
            sha256: Arc::default(),
            imports: Arc::default(),
            barrier: false,
        }
    }

    /// The SHA-256 of the text, in lowercase hex (computed once per text).
    pub fn text_sha256(&self) -> Arc<str> {
        self.sha256
            .get_or_init(|| sha256_hex(self.text.as_bytes()).into())
            .clone()
    }

    /// The same text again under the next LSP version (a revived worker), nothing reported yet.
    pub(super) fn revived(&self, memory: &VersionMemory) -> Document {
        Document {
            revivals: self.revivals + 1,
            ..self.again(memory)
        }
    }

    /// The same text again under the next LSP version, for Lean to report it again (`index`),
    /// nothing reported yet.
    pub(super) fn again(&self, memory: &VersionMemory) -> Document {
        Document {
            lsp_version: memory.bump(&self.uri, self.lsp_version),
            diagnostics: Vec::new(),
            stale: Vec::new(),
            progress: FileProgress::default(),
            seen: HashSet::new(),
            barrier: false,
            died: false,
            ..self.clone()
        }
    }

    /// Whether this LSP version may still be followed by another (see the contract).
    pub fn lsp_versions_left(&self) -> bool {
        let last = if self.lsp_version > REAL_LSP_VERSIONS {
            LAST_LSP_VERSION
        } else {
            REAL_LSP_VERSIONS
        };
        self.lsp_version < last
    }

    /// The same document without what Lean reported of it: what a call keeps to name the text
    /// it read (a receipt on its error) without copying the diagnostics.
    pub fn without_reports(&self) -> Document {
        Document {
            diagnostics: Vec::new(),
            stale: Vec::new(),
            progress: FileProgress::default(),
            seen: HashSet::new(),
            barrier: false,
            uri: self.uri.clone(),
            text: self.text.clone(),
            sha256: self.sha256.clone(),
            imports: self.imports.clone(),
            ..*self
        }
    }

    /// Whether a crash of this text may still be revived (see the contract).
    pub fn may_revive(&self) -> bool {
        self.revivals < MAX_REVIVALS
    }

    /// A document at the given versions, for tests of code that reads documents.
    #[cfg(test)]
    pub(crate) fn for_tests(uri: &str, text: &str, version: i64, lsp_version: i64) -> Document {
        let memory = VersionMemory::default();
        Document {
            version,
            lsp_version,
            ..Document::given(uri.into(), text.into(), &memory)
        }
    }

    /// Whether its worker crashed, so the next use must revive it: Lean said so ([`died`]), or
    /// a fatal report that no header error or stale-import notice explains (a broken header is
    /// fatal too, but reviving it would only fail again). Judged when asked, as the explanation
    /// may arrive after.
    ///
    /// [`died`]: Document::died
    pub fn crashed(&self) -> bool {
        self.died || (self.progress.fatal && self.stale.is_empty() && self.header_error().is_none())
    }

    /// The error that says Lean could not process the file's header (see the contract).
    pub fn header_error(&self) -> Option<&Diagnostic> {
        let errors = || self.diagnostics.iter().filter(|d| d.is_error());
        // Lines counted only for an error from 0:0: receipts ask this of every result.
        let mut from_origin = errors().filter(|d| d.start() == Some(Position::new(0, 0)));
        let last_line = std::cell::OnceCell::new();
        let lakes = from_origin.find(|d| {
            let last = last_line
                .get_or_init(|| memchr::memchr_iter(b'\n', self.text.as_bytes()).count() as u32);
            d.spans_file(*last)
        });
        if lakes.is_some() || !self.progress.fatal || errors().next().is_none() {
            return lakes;
        }
        // Lean's own (`Elab.processHeader`): at a token of the header, and fatal.
        let (first, last) = crate::lean::syntax::header_span(&self.text)?;
        errors().find(|d| d.start().is_some_and(|at| first <= at && at <= last))
    }

    /// Applies a publish (see the contract); the events it makes.
    pub(super) fn publish(&mut self, params: &Value) -> Vec<EventKind> {
        let version = params.get("version").and_then(Value::as_i64);
        if version.is_some_and(|v| v < self.lsp_version) || is_lakes_report(params) {
            return Vec::new();
        }
        if params.get("isIncremental") != Some(&Value::Bool(true)) {
            self.diagnostics.clear();
            self.stale.clear();
        }
        let mut events = Vec::new();
        let published = params.get("diagnostics").and_then(Value::as_array);
        for raw in published.into_iter().flatten() {
            let diagnostic = Diagnostic::new(raw.clone());
            match diagnostic.classify() {
                Kind::Silent => {}
                Kind::SetupLine => events.push(EventKind::SetupLine(diagnostic.message.clone())),
                Kind::StaleImports => self.stale.push(diagnostic),
                Kind::Lean => {
                    if self.seen.insert(diagnostic.identity()) {
                        events.push(EventKind::Diagnostic(diagnostic.clone()));
                    }
                    self.diagnostics.push(diagnostic);
                }
            }
        }
        events
    }

    /// Applies file progress (see the contract); the event it makes.
    fn file_progress(&mut self, params: &Value) -> Option<EventKind> {
        let version = params
            .pointer("/textDocument/version")
            .and_then(Value::as_i64);
        if version.is_some_and(|v| v < self.lsp_version) {
            return None;
        }
        let processing = params.get("processing").and_then(Value::as_array);
        let processing = processing.map(Vec::as_slice).unwrap_or_default();
        let progress = &mut self.progress;
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
        let fatal = |p: &Value| p.get("kind").and_then(Value::as_u64) == Some(2);
        if processing.iter().any(fatal) {
            progress.fatal = true;
        } else if let Some(start) = processing.first().and_then(|p| p.pointer("/range/start")) {
            let at = |field: &str| start.get(field).and_then(Value::as_u64);
            if let (Some(line), Some(character)) = (at("line"), at("character")) {
                progress.checking_at = Some(Position::new(line as u32, character as u32));
            }
        }
        if progress.done && !progress.fatal {
            self.revivals = 0;
        }
        Some(EventKind::Progress(progress.clone()))
    }
}

/// Whether a publish is Lake's report on a file it built for another document (see the
/// contract): no version, and every diagnostic Lake's.
fn is_lakes_report(params: &Value) -> bool {
    let diagnostics = params.get("diagnostics").and_then(Value::as_array);
    params.get("version").is_none_or(Value::is_null)
        && diagnostics.is_some_and(|ds| {
            !ds.is_empty() && ds.iter().all(|d| d.get("source") == Some(&json!("Lake")))
        })
}

/// What a document Lean has open is to the host.
#[derive(Debug, Clone)]
pub(super) enum Role {
    /// A file of the project.
    Real,
    /// The hidden twin of a real document (`speculation`).
    Twin(Twin),
}

/// A twin document's part.
#[derive(Debug, Clone)]
pub(super) struct Twin {
    /// The real document's URI.
    pub real: Arc<str>,
    /// Which of the real document's twins it is (`speculation/twins.rs` places each slot).
    pub slot: usize,
    /// Its link on disk, to the real file.
    pub link: super::twin_file::TwinFile,
    /// Where its current probe starts: everything before is the real text.
    pub probe_start: Position,
}

/// One document the host holds a place for in Lean: open (it has a `document`), or a place
/// reserved for a call that is about to open it.
#[derive(Debug)]
pub(super) struct Entry {
    pub role: Role,
    /// What Lean has, once `didOpen` was sent.
    pub document: Option<Document>,
    /// Calls using it (pins of a real document; the one lease of a twin).
    pub users: usize,
    /// Closes waiting for its users: no new ones meanwhile.
    pub closing: usize,
    /// When a call last took it, on the set's own clock (for the budget).
    pub last_used: u64,
    /// Serializes reading the file and giving Lean its text, so Lean keeps the last text read.
    pub order: Arc<tokio::sync::Mutex<()>>,
    /// What Lean's reference index holds of it (`index`; a real document's).
    pub indexed: Indexed,
}

/// Everything the host holds a place for in one Lean.
#[derive(Debug, Default)]
pub(super) struct State {
    pub entries: HashMap<Arc<str>, Entry>,
    pub clock: u64,
    /// The runtime has ended: every call still holding a place gets this, and none gets one.
    pub ended: Option<crate::lean::error::HostError>,
}

/// The mirror of one runtime: its state, the live events, and where waiting calls are woken.
#[derive(Debug)]
pub struct Mirror {
    state: Mutex<State>,
    /// Versions over every runtime of the workspace.
    pub(super) memory: Arc<VersionMemory>,
    events: broadcast::Sender<DocEvent>,
    /// Notified whenever a place is given back (a user leaves, a document closes).
    pub(super) released: Notify,
}

impl Mirror {
    /// An empty mirror whose versions continue those in `memory`.
    pub fn new(memory: Arc<VersionMemory>) -> Mirror {
        Mirror {
            state: Mutex::default(),
            memory,
            events: broadcast::channel(EVENT_BACKLOG).0,
            released: Notify::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Live events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<DocEvent> {
        self.events.subscribe()
    }

    /// Records that Lean answered the barrier (`textDocument/waitForDiagnostics`) for
    /// `lsp_version` of `uri`: a report of Lean's, kept for that version only (receipts).
    pub fn barrier_answered(&self, uri: &str, lsp_version: i64) {
        let mut state = self.lock();
        let Some(entry) = state.entries.get_mut(uri) else {
            return;
        };
        let document = entry.document.as_mut();
        if let Some(document) = document.filter(|d| d.lsp_version == lsp_version) {
            document.barrier = true;
            // Lean sent the version's final report before this answer (`index`).
            entry.indexed = Indexed::Reported;
        }
    }

    /// The document, if Lean has it open.
    pub fn get(&self, uri: &str) -> Option<Document> {
        self.lock().entries.get(uri)?.document.clone()
    }

    /// Every open real file (twins aside), in no particular order.
    pub fn real_documents(&self) -> Vec<Document> {
        let state = self.lock();
        let real = state
            .entries
            .values()
            .filter(|e| matches!(e.role, Role::Real));
        real.filter_map(|e| e.document.clone()).collect()
    }

    /// How many documents Lean has open: `(real files, twins)`.
    pub fn open_counts(&self) -> (usize, usize) {
        let state = self.lock();
        let open = state.entries.values().filter(|e| e.document.is_some());
        open.fold((0, 0), |(real, twins), e| match e.role {
            Role::Real => (real + 1, twins),
            Role::Twin(_) => (real, twins + 1),
        })
    }

    fn broadcast(&self, uri: &Arc<str>, lsp_version: i64, kinds: Vec<EventKind>) {
        for kind in kinds {
            let _ = self.events.send(DocEvent {
                uri: uri.clone(),
                lsp_version,
                kind,
            });
        }
    }
}

impl Inbox for Mirror {
    fn notification(&self, method: &str, params: Value) {
        let uri = match method {
            "textDocument/publishDiagnostics" => params.get("uri"),
            "$/lean/fileProgress" => params.pointer("/textDocument/uri"),
            _ => return,
        };
        let Some(uri) = uri.and_then(Value::as_str) else {
            return;
        };
        // Lean names a file it found itself (Lake's reports) in its own form, which need not be
        // the one the host opened it by.
        let uri = canonical_uri(uri);
        let mut state = self.lock();
        let Some(document) = state
            .entries
            .get_mut(uri.as_str())
            .and_then(|e| e.document.as_mut())
        else {
            return;
        };
        let events = match method {
            "textDocument/publishDiagnostics" => document.publish(&params),
            _ => document.file_progress(&params).into_iter().collect(),
        };
        // Sent under the lock, so events of one document reach listeners in the order applied.
        let (uri, lsp_version) = (document.uri.clone(), document.lsp_version);
        self.broadcast(&uri, lsp_version, events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "file:///p/A.lean";

    /// A document whose LSP versions count from 1 (a twin's band: the rules below do not
    /// depend on it).
    fn document(memory: &VersionMemory, text: &str) -> Document {
        Document::given_twin(URI.into(), text.into(), memory)
    }

    fn publish(
        document: &mut Document,
        version: i64,
        incremental: Option<bool>,
        messages: &[&str],
    ) {
        let diagnostics: Vec<Value> = messages
            .iter()
            .map(|m| json!({"severity": 1, "source": "Lean 4", "message": m,
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 3}}}))
            .collect();
        let mut params = json!({"uri": URI, "version": version, "diagnostics": diagnostics});
        if let Some(incremental) = incremental {
            params["isIncremental"] = json!(incremental);
        }
        document.publish(&params);
    }

    fn messages(document: &Document) -> Vec<String> {
        document
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn reports_reach_the_document_whatever_form_lean_writes_its_uri_in() {
        let memory = Arc::new(VersionMemory::default());
        let mirror = Mirror::new(memory.clone());
        let ours: Arc<str> = "file:///p/My%20Proofs/proofs%2B%28v2%29%40x/%C3%BC.lean".into();
        let given = Document::given(ours.clone(), "def a := 1\n".into(), &memory);
        let version = given.lsp_version;
        let entry = Entry {
            role: Role::Real,
            document: Some(given),
            users: 0,
            closing: 0,
            last_used: 0,
            order: Arc::default(),
            indexed: Indexed::default(),
        };
        mirror.lock().entries.insert(ours.clone(), entry);
        let theirs = "file:///p/My Proofs/proofs%2b%28v2%29%40x/%c3%bc.lean";
        let error = json!({"severity": 1, "message": "bad", "range":
            {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}});
        mirror.notification(
            "textDocument/publishDiagnostics",
            json!({"uri": theirs, "version": version, "diagnostics": [error]}),
        );
        mirror.notification(
            "$/lean/fileProgress",
            json!({"textDocument": {"uri": theirs, "version": version}, "processing": []}),
        );
        let document = mirror.get(&ours).expect("open");
        assert_eq!(messages(&document), ["bad"]);
        assert!(document.progress.done);
    }

    #[test]
    fn lakes_report_on_a_file_built_for_another_document_replaces_nothing() {
        let memory = VersionMemory::default();
        let mut document = document(&memory, "def a := 1\n");
        publish(&mut document, 1, None, &["own"]);
        let lake = json!({"severity": 1, "source": "Lake", "message": "from disk", "range":
            {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 1}}});
        let report = json!({"uri": URI, "diagnostics": [lake]});
        assert!(document.publish(&report).is_empty());
        assert_eq!(messages(&document), ["own"]);
        // Lean's own publishes, versioned or not, still replace.
        publish(&mut document, 1, None, &["again"]);
        assert_eq!(messages(&document), ["again"]);
        document.publish(&json!({"uri": URI, "diagnostics": []}));
        assert_eq!(messages(&document), Vec::<String>::new());
    }

    #[test]
    fn publishes_replace_unless_incremental() {
        let memory = VersionMemory::default();
        let mut document = document(&memory, "def a := 1\n");
        publish(&mut document, 1, None, &["a"]);
        publish(&mut document, 1, None, &["a", "b"]);
        assert_eq!(messages(&document), ["a", "b"]);
        publish(&mut document, 1, Some(false), &["c"]);
        publish(&mut document, 1, Some(true), &["d"]);
        assert_eq!(messages(&document), ["c", "d"]);
        publish(&mut document, 0, None, &["older"]);
        assert_eq!(
            messages(&document),
            ["c", "d"],
            "an older version is ignored"
        );
    }

    #[test]
    fn versions_only_increase_and_the_same_text_keeps_its_version() {
        let memory = VersionMemory::default();
        let real = |text: &str| Document::given(URI.into(), text.into(), &memory);
        const R: i64 = REAL_LSP_VERSIONS;
        let first = real("a");
        assert_eq!((first.version, first.lsp_version), (1, R + 1));
        let changed = real("b");
        assert_eq!((changed.version, changed.lsp_version), (2, R + 2));
        let revived = changed.revived(&memory);
        assert_eq!((revived.version, revived.lsp_version), (2, R + 3));
        assert_eq!(revived.revivals, 1);
        let again = revived.again(&memory);
        assert_eq!((again.version, again.lsp_version), (2, R + 4));
        assert_eq!(again.revivals, 1, "reported again, not revived");
        let reopened = real("b");
        assert_eq!(
            (reopened.version, reopened.lsp_version),
            (2, R + 5),
            "the same text keeps its version; Lean's stays above the last life's"
        );
        let other = real("a");
        assert_eq!(
            (other.version, other.lsp_version),
            (3, R + 6),
            "other text, the next"
        );
    }

    #[test]
    fn every_twins_lsp_version_lies_below_every_real_documents() {
        let memory = VersionMemory::default();
        let twin: Arc<str> = "file:///p/.lake/beam/twins/1-1/A.lean".into();
        let mut given = Document::given_twin(twin.clone(), "a".into(), &memory);
        assert_eq!((given.version, given.lsp_version), (1, 1));
        for n in 0..100 {
            given = Document::given_twin(twin.clone(), format!("{n}").into(), &memory);
        }
        given = given.revived(&memory).again(&memory);
        let real = Document::given(URI.into(), "a".into(), &memory);
        assert!(given.lsp_version < REAL_LSP_VERSIONS && REAL_LSP_VERSIONS < real.lsp_version);
        assert!(given.lsp_versions_left() && real.lsp_versions_left());
        let last_twin = Document::for_tests(&twin, "a", 1, REAL_LSP_VERSIONS);
        assert!(!last_twin.lsp_versions_left());
        let last_real = Document::for_tests(URI, "a", 1, LAST_LSP_VERSION);
        assert!(!last_real.lsp_versions_left());
    }

    #[test]
    fn two_runtimes_sharing_a_memory_never_give_one_version_to_two_texts() {
        let memory = Arc::new(VersionMemory::default());
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let memory = memory.clone();
                std::thread::spawn(move || {
                    (0..500)
                        .map(|i| {
                            let text = format!("text {} {}", n % 2, i % 3);
                            let given = Document::given(URI.into(), text.as_str().into(), &memory);
                            (given.version, given.lsp_version, text)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut named: HashMap<i64, String> = HashMap::new();
        let mut lsp_versions = HashSet::new();
        for thread in threads {
            for (version, lsp_version, text) in thread.join().unwrap() {
                let previous = named.insert(version, text.clone());
                assert!(
                    previous.is_none_or(|p| p == text),
                    "version {version} names two texts"
                );
                assert!(
                    lsp_versions.insert(lsp_version),
                    "LSP version {lsp_version} given twice"
                );
            }
        }
    }

    #[test]
    fn progress_counts_and_a_fatal_range_marks_a_crash() {
        let memory = VersionMemory::default();
        let mut document = document(&memory, "def a := 1\n");
        let range =
            json!({"start": {"line": 4, "character": 0}, "end": {"line": 9, "character": 0}});
        for processing in [json!([{"range": range, "kind": 1}]), json!([])] {
            document.file_progress(
                &json!({"textDocument": {"uri": URI, "version": 1}, "processing": processing}),
            );
        }
        assert_eq!(
            document.progress.to_json(),
            json!({"updates": 2, "done": true, "range_start_line": 5, "range_end_line": 10})
        );
        assert!(!document.crashed());
        document.file_progress(
            &json!({"textDocument": {"uri": URI, "version": 1}, "processing": [{"range": range, "kind": 2}]}),
        );
        assert!(document.crashed());
        publish(&mut document, 1, None, &["unknown identifier 'x'"]);
        assert!(
            document.crashed(),
            "an ordinary error does not explain a crash"
        );
        assert_eq!(document.progress.checking_at, Some(Position::new(4, 0)));
        let whole_file = json!({"uri": URI, "version": 1, "diagnostics": [{
            "severity": 1, "message": "lake setup-file failed",
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}]});
        document.publish(&whole_file);
        assert!(document.header_error().is_some());
        assert!(!document.crashed(), "a fatal header error is not a crash");
    }

    fn fatal(document: &mut Document) {
        let processing = json!([{"kind": 2, "range":
            {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}}]);
        document.file_progress(&json!({"textDocument": {"uri": URI, "version": 1},
            "processing": processing}));
    }

    fn error_at(document: &mut Document, range: Value, full: Option<Value>) {
        let mut error = json!({"severity": 1, "source": "Lean 4", "message": "m", "range": range});
        if let Some(full) = full {
            error["fullRange"] = full;
        }
        document.publish(&json!({"uri": URI, "version": 1, "diagnostics": [error]}));
    }

    fn range(a: (u32, u32), b: (u32, u32)) -> Value {
        json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
    }

    #[test]
    fn lakes_header_error_is_told_by_its_extent_not_its_cut_range() {
        let memory = VersionMemory::default();
        let text = "import Missing\n\ndef one : Nat := 1\n";
        let mut document = document(&memory, text);
        // What Lean sends: cut at the first line, the file in `fullRange`.
        error_at(
            &mut document,
            range((0, 0), (1, 0)),
            Some(range((0, 0), (3, 0))),
        );
        assert!(document.header_error().is_some());
        fatal(&mut document);
        assert!(!document.crashed(), "a header error is no crash");
        // An error of the first line alone is no Lake failure.
        let mut other = Document::given("file:///p/B.lean".into(), text.into(), &memory);
        let first_line = range((0, 0), (1, 0));
        other.publish(
            &json!({"uri": "file:///p/B.lean", "version": 1, "diagnostics": [
            {"severity": 1, "message": "m", "range": first_line, "fullRange": first_line}]}),
        );
        assert!(other.header_error().is_none());
    }

    #[test]
    fn leans_own_header_error_is_an_error_in_the_header_of_a_fatal_version() {
        let memory = VersionMemory::default();
        let text = "/- A file. -/\n-- about it\nimport Fixture.Basik\n\ntheorem t : True := by\n  trivial\n";
        let mut document = document(&memory, text);
        let at_import = range((2, 0), (2, 0));
        error_at(&mut document, at_import.clone(), Some(at_import.clone()));
        assert!(
            document.header_error().is_none(),
            "not before Lean says the version is fatal"
        );
        fatal(&mut document);
        assert!(document.header_error().is_some());
        assert!(!document.crashed());
        // A fatal version whose error is past the header crashed.
        error_at(&mut document, range((4, 20), (4, 22)), None);
        assert!(document.header_error().is_none());
        assert!(document.crashed());
        // A file without a header has none to fail.
        let b = "file:///p/B.lean";
        let mut plain = Document::given(b.into(), "def a := b\n".into(), &memory);
        let v = plain.lsp_version;
        plain.file_progress(&json!({"textDocument": {"uri": b, "version": v},
            "processing": [{"kind": 2, "range": range((0, 0), (1, 0))}]}));
        plain.publish(&json!({"uri": b, "version": v, "diagnostics": [
            {"severity": 1, "message": "m", "range": range((0, 0), (0, 0))}]}));
        assert!(plain.header_error().is_none() && plain.crashed());
    }

    #[test]
    fn a_text_is_revived_a_bounded_number_of_times_in_a_row() {
        let memory = VersionMemory::default();
        let document = document(&memory, "def a := 1\n");
        let mut revived = document.clone();
        for _ in 0..MAX_REVIVALS {
            assert!(revived.may_revive());
            revived = revived.revived(&memory);
        }
        assert!(
            !revived.may_revive(),
            "a text that keeps crashing is not revived forever"
        );
        revived.file_progress(
            &json!({"textDocument": {"uri": URI, "version": revived.lsp_version},
            "processing": []}),
        );
        assert!(
            revived.may_revive(),
            "a version Lean finished starts the count again"
        );
    }

    #[test]
    fn setup_lines_and_silent_ones_are_not_stored() {
        let memory = VersionMemory::default();
        let mut document = document(&memory, "x");
        let events = document.publish(&json!({"uri": URI, "version": 1, "diagnostics": [
            {"severity": 3, "message": "✔ [1/2] Built Dep",
             "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}},
            {"severity": 3, "isSilent": true, "message": "Goals accomplished!",
             "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 1}}}
        ]}));
        assert!(messages(&document).is_empty());
        assert!(matches!(
            &events[..],
            [EventKind::SetupLine(line)] if line == "✔ [1/2] Built Dep"
        ));
    }
}
