//! The one owner of what Lean has open: the only code that sends `didOpen`, `didChange`,
//! `didSave` and `didClose`, and the only writer of the mirror's places.
//!
//! Contract:
//! 1. Every call that uses a document holds a [`Pin`] on it for its duration; a speculative run
//!    holds a [`TwinLease`] on one of the document's twins for the whole run. Lookup, pinning or
//!    leasing, and making room happen in one critical section; there is one place (one entry, one
//!    lock) per URI, and a twin has one lease at a time, so two runs never edit one Lean
//!    document.
//! 2. A real document may have several twins (slots), so runs on one file go side by side. A
//!    lease takes, among the file's idle twins, the one whose text shares the longest prefix
//!    with the text the run will give it (Lean reuses every snapshot before the first changed
//!    byte); it opens a twin in a new slot only when the file has no idle twin (an idle one,
//!    sharing at least the header, is never worse than a new one, which shares nothing) and the
//!    bound allows it.
//! 3. Bounds are never exceeded. Pinning a document Lean does not have open when
//!    `--max-documents` are open closes the least recently used real document nobody pins (with
//!    its twins, when no run holds one); opening a twin when `--max-twins` (all files' twins
//!    together) are open closes the least recently used twin no run holds, of a file no run
//!    holds a twin of (`index`: the close erases the file's entry in Lean's reference index,
//!    which the real document is asked to report again at once). When everything is in use the
//!    call waits, saying so in a progress step, until something is given back; the wait is
//!    cancellable and bounded by the Lean timeout.
//! 4. Reading a file and giving Lean its text are serialized per document, so Lean keeps the
//!    last text read. A text is given in one critical section with the mirror's change: the
//!    first use sends `didOpen` with an explicit `dependencyBuildMode` (`once`: out-of-date
//!    imports are built on open, and never again behind the caller's back), a changed text sends
//!    `didChange` (full text) and, for a real file, `didSave` under every URI a Lean may have
//!    built for it (`text::lean_uris`), so Lean tells importers their imports are stale; an
//!    unchanged text sends nothing (one whose worker a request found dead is revived; a fatal
//!    report alone may still be explained by a header error, so `ask` judges it after the crash
//!    grace). Messages are queued in that
//!    critical section, so Lean receives versions in mirror order, and no barrier can be asked
//!    for a version Lean has not been sent. Room in the queue to Lean is taken before
//!    (`server/lsp/outbox.rs`).
//!    Each new text of a real file Lean is given (an open included: it may build out-of-date
//!    imports), and each checkpoint's rewritten artifacts, moves the set's
//!    [`generation`](DocumentSet::generation) on: what Lean answers about any document may
//!    depend on them, so an answer kept from an older generation is not reused
//!    (`speculation/verdicts.rs`).
//! 5. [`DocumentSet::close`] waits for the document's users (and its twins') to finish, takes no
//!    new ones meanwhile, then closes it and its twins; a close that is cancelled closes nothing.
//!    Everything given back, by a call that ends or is cancelled, goes back through this owner
//!    at once: nothing is ever left out of the set yet open in Lean, or the reverse.
//! 6. A twin's link (`speculation/twins.rs` places it) is made before Lean is given its text
//!    and removed when the twin is closed, in the same step, never through another link
//!    (`twin_file`). A twin is given a text only while Lean's reference index holds its real
//!    document's entry, and at LSP versions below the real document's (`index`).
//! 7. [`DocumentSet::end`] ends the set with its runtime: twin files are removed at once, every
//!    call waiting for a place or still holding one gets the runtime's end as its error when it
//!    next asks the set for anything, and nothing more is sent to Lean.
//! 8. When Lean sets a real document up (its `didOpen`, or a change of the modules its header
//!    imports, which restarts its worker), the set records what the document is checked
//!    against (`closure`: its import closure among the workspace's files, the files its text
//!    reads), hashed *before* the message is queued (`fingerprint`: a change after that hash
//!    shows as a difference, never the reverse); a change that keeps the header's modules keeps
//!    the import closure and finds the text's reads again (`LakeConfig::kept`). The hashing
//!    happens outside the lock, from the text just read; when the document changed meanwhile
//!    (closed by the budget), it is done again.

use std::path::Path;
use std::pin::Pin as Pinned;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::futures::Notified;

use super::fingerprint::{Imports, LakeConfig};
use super::index::{self, Indexed};
use super::mirror::{Document, Entry, Mirror, Role, State, Twin, same_text};
use super::twin_file::TwinFile;
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::server::LeanServer;
use crate::lean::server::lsp::Batch;
use crate::lean::text::{Position, lean_uris};

/// Room taken in the queue to Lean for a text of `len` bytes: JSON escapes a control character
/// in six bytes, so a text never takes more than this.
fn room_for(len: usize) -> usize {
    len.saturating_mul(6).saturating_add(1024)
}

/// The bounds of one runtime's set.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Real documents open at once (`--max-documents`).
    pub documents: usize,
    /// Twins open at once (`--max-twins`).
    pub twins: usize,
    /// The longest wait for a place (the Lean timeout).
    pub wait: Duration,
    /// How long a fatal report waits for its explanation before the worker counts as crashed.
    pub crash_grace: Duration,
}

/// A document after [`Pin::sync`].
#[derive(Debug, Clone)]
pub struct Synced {
    /// The document as Lean now has it.
    pub document: Document,
    /// Whether its text changed (or it was opened).
    pub changed: bool,
}

/// Where a twin lives: its URI, and its link on disk.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The twin's URI.
    pub uri: Arc<str>,
    /// Its link to the real file.
    pub link: TwinFile,
}

/// The documents one Lean has open.
#[derive(Debug, Clone)]
pub struct DocumentSet {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    mirror: Arc<Mirror>,
    server: Arc<LeanServer>,
    limits: Limits,
    closed_for_budget: AtomicU64,
    generation: AtomicU64,
    /// The Lake configuration the runtime loaded, and the hashes of the workspace's files.
    config: LakeConfig,
}

/// What a sync knows of its text's imports before Lean is given it (see the contract).
#[derive(Debug)]
enum Setup {
    /// The text Lean has: nothing is set up.
    Same,
    /// Another text whose header imports the same modules as Lean's: nothing is set up anew;
    /// `imports` is what `known` (Lean's record) becomes with the new text's reads.
    Keep {
        known: Arc<Imports>,
        imports: Arc<Imports>,
    },
    /// Another header, or a document Lean does not have: its imports, hashed.
    New(Arc<Imports>),
}

/// A call's hold on a real document (see the contract).
#[derive(Debug)]
pub struct Pin {
    set: DocumentSet,
    uri: Arc<str>,
}

/// A run's hold on a document's twin (see the contract).
#[derive(Debug)]
pub struct TwinLease {
    set: DocumentSet,
    uri: Arc<str>,
    link: TwinFile,
    /// The real document's URI.
    real: Arc<str>,
}

impl DocumentSet {
    /// The set of `server`, over `mirror` (Lean's notifications reach it there), whose
    /// workspace's Lake configuration, as the runtime loaded it, is `config`.
    pub fn new(
        mirror: Arc<Mirror>,
        server: Arc<LeanServer>,
        limits: Limits,
        config: LakeConfig,
    ) -> DocumentSet {
        DocumentSet {
            inner: Arc::new(Inner {
                mirror,
                server,
                limits,
                closed_for_budget: AtomicU64::new(0),
                generation: AtomicU64::new(0),
                config,
            }),
        }
    }

    /// The Lake configuration the runtime loaded (receipts).
    pub fn lake_config(&self) -> &LakeConfig {
        &self.inner.config
    }

    /// What Lean will set up when `uri`, the file at `path`, is given `text` (see the
    /// contract).
    fn setup(&self, uri: &str, path: &Path, text: &Arc<str>) -> Setup {
        let known = {
            let state = self.inner.mirror.lock();
            match state.entries.get(uri).and_then(|e| e.document.as_ref()) {
                Some(document) if same_text(&document.text, text) => return Setup::Same,
                Some(document) => Some((document.imports.clone(), document.text.clone())),
                None => None,
            }
        };
        let modules = crate::lean::syntax::imports(text);
        let config = &self.inner.config;
        match known {
            Some((known, old)) if known.modules == modules => {
                let imports = config.kept(&known, &old, text, path);
                Setup::Keep { known, imports }
            }
            _ => Setup::New(Arc::new(config.imports(modules, text, path))),
        }
    }

    /// The mirror (what Lean has open and has said).
    pub fn mirror(&self) -> &Mirror {
        &self.inner.mirror
    }

    /// The set's bounds.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The Lean this set belongs to.
    pub fn server(&self) -> &LeanServer {
        &self.inner.server
    }

    /// The failure of a call whose document's worker crashed and is not revived again (the
    /// mirror bounds revivals): with where checking stopped and Lean's stderr tail. `exited`
    /// when Lean said the worker exited with an uncaught exception (-32901).
    pub fn crash_error(&self, path: &str, document: &Document, exited: bool) -> HostError {
        HostError::worker_crashed(
            path,
            document.version,
            document.progress.checking_at.map(|p| (p.line, p.character)),
            document.revivals,
            exited || document.exited,
            self.inner.server.stderr_tail(),
        )
    }

    /// Remembers that Lean said the worker of `uri` died, and how (`exited`: -32901), for the
    /// errors of later calls that Lean is no longer asked (see [`DocumentSet::crash_error`]);
    /// the document's LSP version as it now stands, which is marked dead (`Document::died`):
    /// one worker holds every version of a file, so a text given Lean before it died died too.
    pub fn worker_died(&self, uri: &str, exited: bool) -> Option<i64> {
        let mut state = self.inner.mirror.lock();
        let document = state
            .entries
            .get_mut(uri)
            .and_then(|e| e.document.as_mut())?;
        document.exited = exited;
        document.died = true;
        Some(document.lsp_version)
    }

    /// How many times Lean was given a new text of a real file or told of rewritten artifacts
    /// (see the contract).
    pub fn generation(&self) -> u64 {
        self.inner.generation.load(Ordering::Acquire)
    }

    /// Real documents closed to stay within `--max-documents` so far.
    pub fn closed_for_budget(&self) -> u64 {
        self.inner.closed_for_budget.load(Ordering::Relaxed)
    }

    /// Pins the real document `uri`, making a place for it if Lean does not have it open (see
    /// the contract).
    pub async fn pin(&self, uri: Arc<str>, caller: &Caller<'_>) -> Result<Pin, HostError> {
        self.wait_for(caller, |set, state| set.try_pin(state, &uri))
            .await?;
        Ok(Pin {
            set: self.clone(),
            uri,
        })
    }

    fn try_pin(&self, state: &mut State, uri: &Arc<str>) -> Result<(), String> {
        state.clock += 1;
        let now = state.clock;
        if let Some(entry) = state.entries.get_mut(uri) {
            if entry.closing > 0 {
                return Err("waiting for lean_close of this file to finish".into());
            }
            entry.users += 1;
            entry.last_used = now;
            return Ok(());
        }
        let limit = self.inner.limits.documents.max(1);
        let real = |e: &Entry| matches!(e.role, Role::Real);
        if state.entries.values().filter(|e| real(e)).count() >= limit {
            let Some(victim) = idle_real(state) else {
                return Err(format!(
                    "waiting for a document place: all {limit} documents Lean may keep open \
                     (--max-documents {limit}) are in use by other calls"
                ));
            };
            tracing::debug!(uri = %victim, "closing the least recently used document (budget)");
            self.close_locked(state, &victim);
            self.inner.closed_for_budget.fetch_add(1, Ordering::Relaxed);
        }
        state.entries.insert(uri.clone(), entry(Role::Real, now));
        Ok(())
    }

    /// Leases a twin of the document `real` pins for a run that will give it `text`: the idle
    /// one sharing the longest prefix with it, or one made in a new slot where `place` says (see
    /// the contract).
    pub async fn lease_twin(
        &self,
        real: &Pin,
        place: impl Fn(usize) -> Placement,
        text: &str,
        caller: &Caller<'_>,
    ) -> Result<TwinLease, HostError> {
        let (uri, link) = self
            .wait_for(caller, |set, state| {
                set.try_lease(state, &real.uri, &place, text)
            })
            .await?;
        Ok(TwinLease {
            set: self.clone(),
            uri,
            link,
            real: real.uri.clone(),
        })
    }

    fn try_lease(
        &self,
        state: &mut State,
        real: &Arc<str>,
        place: &dyn Fn(usize) -> Placement,
        text: &str,
    ) -> Result<(Arc<str>, TwinFile), String> {
        state.clock += 1;
        let now = state.clock;
        let shared = |e: &Entry| {
            e.document
                .as_ref()
                .map_or(0, |d| shared_prefix(&d.text, text))
        };
        let best = state
            .entries
            .iter_mut()
            .filter(|(_, e)| twin_of(e, real) && e.users == 0 && e.closing == 0)
            .max_by_key(|(_, e)| (shared(e), e.last_used));
        if let Some((uri, entry)) = best {
            entry.users = 1;
            entry.last_used = now;
            return Ok((uri.clone(), link_of(entry)));
        }
        let limit = self.inner.limits.twins.max(1);
        let twin = |e: &Entry| matches!(e.role, Role::Twin(_));
        if state.entries.values().filter(|e| twin(e)).count() >= limit {
            let victim = state
                .entries
                .iter()
                .filter(|(_, e)| twin(e) && e.users == 0 && e.closing == 0)
                .filter(|(_, e)| index::may_close(state, e))
                .min_by_key(|(_, e)| e.last_used)
                .map(|(uri, _)| uri.clone());
            let Some(victim) = victim else {
                return Err(format!(
                    "waiting for a twin document: all {limit} twins Lean may keep open \
                     (--max-twins {limit}) are in use by other speculative runs, or by runs \
                     on the same file"
                ));
            };
            self.close_locked(state, &victim);
        }
        let taken: Vec<usize> = state
            .entries
            .values()
            .filter_map(|e| match &e.role {
                Role::Twin(twin) if twin.real == *real => Some(twin.slot),
                _ => None,
            })
            .collect();
        let slot = (0..).find(|n| !taken.contains(n)).expect("a free slot");
        let placement = place(slot);
        let role = Role::Twin(Twin {
            real: real.clone(),
            slot,
            link: placement.link.clone(),
            probe_start: Position::default(),
        });
        let mut made = entry(role, now);
        made.users = 1;
        state.entries.insert(placement.uri.clone(), made);
        Ok((placement.uri, placement.link))
    }

    /// Runs `attempt` under the lock until it succeeds, waiting between attempts for something
    /// to be given back (see the contract).
    async fn wait_for<T>(
        &self,
        caller: &Caller<'_>,
        mut attempt: impl FnMut(&DocumentSet, &mut State) -> Result<T, String>,
    ) -> Result<T, HostError> {
        let deadline = Instant::now() + self.inner.limits.wait;
        let mut told = None;
        loop {
            let released = self.inner.mirror.released.notified();
            let mut released: Pinned<&mut Notified<'_>> = std::pin::pin!(released);
            let why = {
                let mut state = self.inner.mirror.lock();
                released.as_mut().enable();
                if let Some(ended) = &state.ended {
                    return Err(ended.clone());
                }
                match attempt(self, &mut state) {
                    Ok(done) => return Ok(done),
                    Err(why) => why,
                }
            };
            if told.as_ref() != Some(&why) {
                caller.step(&why);
                told = Some(why.clone());
            }
            tokio::select! {
                () = released => {}
                () = caller.cancel.cancelled() => {
                    return Err(HostError::cancelled(format!("cancelled while {why}")));
                }
                () = tokio::time::sleep_until(deadline.into()) => {
                    return Err(HostError::place_timeout(&why, self.inner.limits.wait));
                }
            }
        }
    }

    /// Closes the real document `uri` and its twin once nobody uses them (see the contract);
    /// whether Lean had it open.
    pub async fn close(&self, uri: &Arc<str>, caller: &Caller<'_>) -> Result<bool, HostError> {
        let mut closing = Closing {
            set: self,
            uri,
            marked: false,
        };
        let closed = self
            .wait_for(caller, |set, state| {
                let Some(entry) = state.entries.get_mut(uri) else {
                    return Ok(false);
                };
                if !closing.marked {
                    entry.closing += 1;
                    closing.marked = true;
                }
                let twin_busy = state
                    .entries
                    .values()
                    .any(|e| twin_of(e, uri) && e.users > 0);
                let users = state.entries.get(uri).map_or(0, |e| e.users);
                if users > 0 || twin_busy {
                    return Err("waiting for the calls using this file to finish before \
                                closing it"
                        .into());
                }
                Ok(set.close_locked(state, uri))
            })
            .await?;
        closing.marked = false;
        self.inner.mirror.released.notify_waiters();
        Ok(closed)
    }

    /// Closes `uri` in Lean now, with its twins when it is a real document; whether Lean had it
    /// open. Call under the lock, for an entry nobody uses.
    fn close_locked(&self, state: &mut State, uri: &Arc<str>) -> bool {
        let Some(entry) = state.entries.remove(uri) else {
            return false;
        };
        let open = entry.document.is_some();
        if open {
            let client = self.inner.server.client();
            client.notify_control(
                "textDocument/didClose",
                json!({"textDocument": {"uri": &**uri}}),
            );
        }
        match entry.role {
            Role::Twin(twin) => {
                twin.link.remove();
                if open {
                    self.report_again(state, &twin.real);
                }
            }
            Role::Real => {
                let twins: Vec<Arc<str>> = state
                    .entries
                    .iter()
                    .filter(|(_, e)| twin_of(e, uri))
                    .map(|(twin, _)| twin.clone())
                    .collect();
                for twin in twins {
                    self.close_locked(state, &twin);
                }
            }
        }
        open
    }

    /// A twin of `real` was closed, and with it Lean's entry of `real` in its reference index:
    /// reports `real` again at once when Lean has it open and alive (`index`). Call under the
    /// lock, after the twin's `didClose`.
    fn report_again(&self, state: &mut State, real: &str) {
        let Some(entry) = state.entries.get_mut(real) else {
            return;
        };
        let Some(document) = entry.document.as_mut() else {
            entry.indexed = Indexed::Unreported;
            return;
        };
        if document.died || document.crashed() {
            // Its revival reports it again.
            entry.indexed = Indexed::Unreported;
            return;
        }
        let again = document.again(&self.inner.mirror.memory);
        let nothing =
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
        // An empty edit: no text to send, and a change that needs no room in the queue.
        self.inner.server.client().notify_control(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": real, "version": again.lsp_version},
                "contentChanges": [{"range": nothing, "text": ""}]
            }),
        );
        *document = again;
        entry.indexed = Indexed::Erased;
    }

    /// Gives Lean `text` as the whole of `uri`, a place `users` hold (see the contract).
    /// `setup` is what the real document's sync knew of the text's imports (none for a twin);
    /// `probe`, for a twin, where its probe starts and whether Lean must still hold its real
    /// document's entry (`index`). `None` back when it no longer fits (see the contract), and
    /// nothing was sent.
    async fn give(
        &self,
        uri: &Arc<str>,
        text: Arc<str>,
        save: bool,
        probe: Option<(Position, bool)>,
        setup: Option<&Setup>,
        caller: &Caller<'_>,
    ) -> Result<Option<Synced>, HostError> {
        let batch = self.room(room_for(text.len()), caller).await?;
        let mut state = self.inner.mirror.lock();
        if let Some(ended) = &state.ended {
            return Err(ended.clone());
        }
        let real = match state.entries.get(uri).map(|e| &e.role) {
            Some(Role::Twin(twin)) => Some(twin.real.clone()),
            _ => None,
        };
        let held = probe.is_some_and(|(_, held)| held);
        if held && real.is_some_and(|real| !index::holds(&state, &real)) {
            // Lean's index lost the real document's entry meanwhile (`index`).
            return Ok(None);
        }
        let Some(entry) = state.entries.get_mut(uri) else {
            return Err(HostError::internal(format!(
                "{} lost its place in Lean while this call held it (a bug of lean-beam-mcp's: \
                 see its log); call again",
                caller.path
            )));
        };
        if let (Some((start, _)), Role::Twin(twin)) = (probe, &mut entry.role) {
            twin.probe_start = start;
        }
        let Some((synced, batch)) = self.apply(entry, uri, text, save, setup, batch) else {
            return Ok(None);
        };
        batch.send();
        Ok(Some(synced))
    }

    /// Decides what Lean must be told for `entry` to have `text`, and records it; `None` when
    /// `setup` no longer fits (nothing is told).
    fn apply(
        &self,
        entry: &mut Entry,
        uri: &Arc<str>,
        text: Arc<str>,
        save: bool,
        setup: Option<&Setup>,
        mut batch: Batch,
    ) -> Option<(Synced, Batch)> {
        let memory = &self.inner.mirror.memory;
        let changed = match &entry.document {
            None => {
                let imports = set_up(setup, None)?;
                let mut document = given(&entry.role, uri, &text, memory);
                document.imports = imports;
                batch.notify(
                    "textDocument/didOpen",
                    json!({
                        "textDocument": {
                            "uri": &**uri, "languageId": "lean",
                            "version": document.lsp_version, "text": &*text
                        },
                        "dependencyBuildMode": "once"
                    }),
                );
                entry.document = Some(document);
                true
            }
            Some(document) if !same_text(&document.text, &text) => {
                let imports = set_up(setup, Some(document))?;
                let mut document = given(&entry.role, uri, &text, memory);
                document.imports = imports;
                batch.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": &**uri, "version": document.lsp_version},
                        "contentChanges": [{"text": &*text}]
                    }),
                );
                if save {
                    // Lean finds the importers by the exact URI it built: each form it may have.
                    for form in lean_uris(uri) {
                        batch.notify(
                            "textDocument/didSave",
                            json!({"textDocument": {"uri": form}}),
                        );
                    }
                }
                entry.document = Some(document);
                true
            }
            // Only a death a request saw is certain here: a fatal report may be a broken
            // header whose error is on its way (`ask` waits the crash grace for it).
            Some(document) if document.died && document.may_revive() => {
                let revived = document.revived(memory);
                revival(&mut batch, &revived);
                entry.document = Some(revived);
                entry.indexed = Indexed::Unreported;
                false
            }
            Some(_) => false,
        };
        if changed && save {
            self.inner.generation.fetch_add(1, Ordering::AcqRel);
        }
        let document = entry.document.clone().expect("given just now");
        Some((Synced { document, changed }, batch))
    }

    async fn room(&self, bytes: usize, caller: &Caller<'_>) -> Result<Batch, HostError> {
        let timeout = self.inner.server.timeout();
        tokio::select! {
            batch = self.inner.server.client().batch(bytes) => Ok(batch),
            () = caller.cancel.cancelled() => Err(HostError::cancelled(
                "cancelled while waiting for Lean to read what it was sent",
            )),
            () = tokio::time::sleep(timeout) => Err(HostError::lean_timeout(
                format!(
                    "Lean did not read what it was sent within {timeout:?} (its input is full); \
                     raise --lean-timeout-ms if it is busy"
                ),
                self.inner.server.stderr_tail(),
            )),
        }
    }

    /// Sends the version-bumped `didChange` that restarts a crashed worker, if Lean still has
    /// the LSP version `seen` of `uri` (nobody changed or revived it since), unless `known_dead`
    /// the mirror says it crashed, and the text may still be revived (the mirror's bound).
    /// Whether a revival was sent.
    pub async fn revive_if_still(
        &self,
        uri: &str,
        seen: i64,
        known_dead: bool,
        caller: &Caller<'_>,
    ) -> bool {
        let Some(len) = self.inner.mirror.get(uri).map(|d| d.text.len()) else {
            return false;
        };
        let Ok(mut batch) = self.room(room_for(len), caller).await else {
            return false;
        };
        let mut state = self.inner.mirror.lock();
        if state.ended.is_some() {
            return false;
        }
        let Some(entry) = state.entries.get_mut(uri) else {
            return false;
        };
        let Some(document) = entry.document.as_mut() else {
            return false;
        };
        if document.lsp_version != seen
            || !(known_dead || document.crashed())
            || !document.may_revive()
        {
            return false;
        }
        let revived = document.revived(&self.inner.mirror.memory);
        tracing::debug!(%uri, lsp_version = revived.lsp_version, "reviving a crashed Lean worker");
        revival(&mut batch, &revived);
        *document = revived;
        entry.indexed = Indexed::Unreported;
        batch.send();
        true
    }

    /// Tells Lean that a module's artifacts were rewritten on disk (a checkpoint): `didSave` of
    /// its source (a watched `.lean` change when it is not open), so open importers learn their
    /// imports are out of date, then the `.ilean` change (`created` when it is new), so the
    /// reference index reloads it (`lean-stock-speculation.md` §C, "After saving"). It never
    /// waits, so a call that is being cancelled can still say it.
    pub fn artifacts_rewritten(&self, source: &str, ilean: &str, created: bool) {
        const CREATED: u8 = 1;
        const CHANGED: u8 = 2;
        let state = self.inner.mirror.lock();
        if state.ended.is_some() {
            return;
        }
        let client = self.inner.server.client();
        let mut changes = Vec::new();
        // Lean finds the importers by the exact URI it built: each form it may have.
        let forms = lean_uris(source);
        if state
            .entries
            .get(source)
            .is_some_and(|e| e.document.is_some())
        {
            for form in forms {
                client.notify_control(
                    "textDocument/didSave",
                    json!({"textDocument": {"uri": form}}),
                );
            }
        } else {
            changes.extend(
                forms
                    .into_iter()
                    .map(|uri| json!({"uri": uri, "type": CHANGED})),
            );
        }
        self.inner.generation.fetch_add(1, Ordering::AcqRel);
        let kind = if created { CREATED } else { CHANGED };
        changes.push(json!({"uri": ilean, "type": kind}));
        client.notify_control(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        );
    }

    /// For a location at `uri` ending at `end`: `None` when `uri` is no open twin's; else the
    /// real file's URI when the location lies before the twin's probe (a twin is the real text
    /// up to there), or `Some(None)` when it lies in the probe.
    pub fn twin_location(&self, uri: &str, end: Position) -> Option<Option<Arc<str>>> {
        let state = self.inner.mirror.lock();
        match &state.entries.get(uri)?.role {
            Role::Twin(twin) => Some((end <= twin.probe_start).then(|| twin.real.clone())),
            Role::Real => None,
        }
    }

    /// Ends the set with its runtime, `why` being what calls still using it get (see the
    /// contract); removes every twin file it wrote. Never waits.
    pub fn end(&self, why: HostError) {
        let mut state = self.inner.mirror.lock();
        if state.ended.is_none() {
            state.ended = Some(why);
            for entry in state.entries.values() {
                if let Role::Twin(twin) = &entry.role {
                    twin.link.remove();
                }
            }
        }
        drop(state);
        self.inner.mirror.released.notify_waiters();
    }
}

impl Pin {
    /// The document's URI.
    pub fn uri(&self) -> &Arc<str> {
        &self.uri
    }

    /// The document as Lean has it, once it was given a text.
    pub fn document(&self) -> Option<Document> {
        self.set.inner.mirror.get(&self.uri)
    }

    /// Reads `path` (this document's file) from disk and brings Lean's copy up to date (see the
    /// contract).
    pub async fn sync(&self, path: &Path, caller: &Caller<'_>) -> Result<Synced, HostError> {
        let order = {
            let state = self.set.inner.mirror.lock();
            let entry = state.entries.get(&self.uri);
            entry.map(|e| e.order.clone()).ok_or_else(|| {
                let lost = state.ended.clone();
                lost.unwrap_or_else(|| HostError::internal("a pinned document lost its place"))
            })?
        };
        let _in_order = order.lock().await;
        let text: Arc<str> = super::source::read_source(path)
            .await
            .map_err(|e| HostError::invalid_params(format!("cannot read {}: {e}", path.display())))?
            .into();
        let set = &self.set;
        let mut setup = set.setup(&self.uri, path, &text);
        loop {
            let given = set.give(&self.uri, text.clone(), true, None, Some(&setup), caller);
            if let Some(synced) = given.await? {
                return Ok(synced);
            }
            // The document changed since (closed for the budget): hash what Lean sets up now.
            let modules = crate::lean::syntax::imports(&text);
            setup = Setup::New(Arc::new(set.inner.config.imports(modules, &text, path)));
        }
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        let mirror = &self.set.inner.mirror;
        let mut state = mirror.lock();
        if let Some(entry) = state.entries.get_mut(&self.uri) {
            entry.users = entry.users.saturating_sub(1);
            if entry.users == 0 && entry.document.is_none() {
                state.entries.remove(&self.uri);
            }
        }
        drop(state);
        mirror.released.notify_waiters();
    }
}

impl TwinLease {
    /// The twin's URI.
    pub fn uri(&self) -> &Arc<str> {
        &self.uri
    }

    /// Gives Lean `text` as the twin's whole text, whose probe starts at `probe_start`, making
    /// its link first, once Lean holds its real document's entry (`index`); never saved
    /// (nothing imports a twin).
    pub async fn give(
        &self,
        text: &str,
        probe_start: Position,
        caller: &Caller<'_>,
    ) -> Result<Document, HostError> {
        self.link.link().await?;
        let text: Arc<str> = text.into();
        loop {
            if self
                .set
                .mirror()
                .get(&self.uri)
                .is_some_and(|d| !d.lsp_versions_left())
            {
                return Err(HostError::internal(format!(
                    "{}'s twin has used every LSP version it may (a new runtime gives it more: \
                     lean_drop_workspace, then call again)",
                    caller.path
                )));
            }
            let held = index::before_twin(&self.set, &self.real, caller).await?;
            let given = self.set.give(
                &self.uri,
                text.clone(),
                false,
                Some((probe_start, held)),
                None,
                caller,
            );
            if let Some(given) = given.await? {
                return Ok(given.document);
            }
        }
    }
}

impl Drop for TwinLease {
    fn drop(&mut self) {
        let mirror = &self.set.inner.mirror;
        let mut state = mirror.lock();
        if let Some(entry) = state.entries.get_mut(&self.uri) {
            entry.users = 0;
        }
        if state.ended.is_none() && !index::holds(&state, &self.real) {
            // Lean may hold this twin's report as its real file's: closed, it is erased.
            self.set.close_locked(&mut state, &self.uri);
        }
        drop(state);
        mirror.released.notify_waiters();
    }
}

/// Clears a close's mark when the close is given up (cancelled, timed out).
struct Closing<'a> {
    set: &'a DocumentSet,
    uri: &'a Arc<str>,
    marked: bool,
}

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        if !self.marked {
            return;
        }
        let mirror = &self.set.inner.mirror;
        if let Some(entry) = mirror.lock().entries.get_mut(self.uri) {
            entry.closing = entry.closing.saturating_sub(1);
        }
        mirror.released.notify_waiters();
    }
}

fn entry(role: Role, now: u64) -> Entry {
    Entry {
        role,
        document: None,
        users: 1,
        closing: 0,
        last_used: now,
        order: Arc::default(),
        indexed: Indexed::default(),
    }
}

/// The document Lean is given `text` of at `uri`, in its role's band of LSP versions (`mirror`).
fn given(
    role: &Role,
    uri: &Arc<str>,
    text: &Arc<str>,
    memory: &super::mirror::VersionMemory,
) -> Document {
    match role {
        Role::Real => Document::given(uri.clone(), text.clone(), memory),
        Role::Twin(_) => Document::given_twin(uri.clone(), text.clone(), memory),
    }
}

fn twin_of(entry: &Entry, real: &str) -> bool {
    matches!(&entry.role, Role::Twin(twin) if &*twin.real == real)
}

/// How many leading bytes two texts share.
fn shared_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn link_of(entry: &Entry) -> TwinFile {
    match &entry.role {
        Role::Twin(twin) => twin.link.clone(),
        Role::Real => unreachable!("twin_of found a twin"),
    }
}

/// The least recently used real document that may be closed: nobody pins it, no close waits on
/// it, and no run holds one of its twins.
fn idle_real(state: &State) -> Option<Arc<str>> {
    let busy_twin = |real: &str| {
        state
            .entries
            .values()
            .any(|e| twin_of(e, real) && e.users > 0)
    };
    state
        .entries
        .iter()
        .filter(|(uri, e)| {
            matches!(e.role, Role::Real) && e.users == 0 && e.closing == 0 && !busy_twin(uri)
        })
        .min_by_key(|(_, e)| e.last_used)
        .map(|(uri, _)| uri.clone())
}

/// The imports to record for a document Lean sets up now (`previous` its document before):
/// none for a twin (no `setup`); `None` when `setup` was read for another state of the
/// document (see the contract).
fn set_up(setup: Option<&Setup>, previous: Option<&Document>) -> Option<Arc<Imports>> {
    match (setup, previous) {
        (None, _) => Some(Arc::default()),
        (Some(Setup::New(imports)), _) => Some(imports.clone()),
        (Some(Setup::Keep { known, imports }), Some(previous))
            if Arc::ptr_eq(&previous.imports, known) =>
        {
            Some(imports.clone())
        }
        _ => None,
    }
}

fn revival(batch: &mut Batch, document: &Document) {
    batch.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": &*document.uri, "version": document.lsp_version},
            "contentChanges": [{"text": &*document.text}]
        }),
    );
}
