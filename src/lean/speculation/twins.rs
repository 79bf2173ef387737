//! Hidden twin documents: where speculative runs happen, in the same `lake serve`, never in the
//! user's document and never as a source file of the project.
//!
//! Contract:
//! 1. A real file's twin is `<dir>/<stem>.beam-twin.lean`, a sibling (file-relative paths keep
//!    working) that is never written to disk: Lean takes a document's text from the client, and
//!    Lake sets a missing file up as outside every library. A Lake that cannot set up a missing
//!    file (its header error names `lake setup-file`) switches the runtime to twins written
//!    under `<root>/.lake/beam/twins/<relative path>`, the build directory, for good; so does a
//!    sibling name that exists on disk.
//! 2. A runtime keeps at most `capacity` twins open (least recently used first out). A twin is
//!    leased for one run at a time (concurrent runs on one file queue; runs on different files
//!    do not), and only a twin nobody holds is closed to make room, so a burst of runs on many
//!    files may exceed the bound until they end.
//! 3. A twin's URI never leaks into a result. Lean indexes a twin's declarations like any
//!    file's, so references, definitions and symbols may point into one: since a twin is the
//!    real text up to its probe, a location before the probe is the real file's, and is mapped
//!    to it ([`TwinPool::real_location`]); any other twin location is dropped ([`is_twin_uri`]
//!    recognises one even after its twin is gone). A twin's edits (code actions) cannot be
//!    mapped onto the real file, whose text goes on after the probe: [`drop_twin_edits`] drops
//!    them.

use std::path::{Path, PathBuf};

use serde_json::Value;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::lean::workspace::runtime::file_uri;

const SIBLING_SUFFIX: &str = ".beam-twin.lean";
const FALLBACK_DIR: &str = ".lake/beam/twins";

/// Whether a URI (or path) is a twin's.
pub fn is_twin_uri(uri: &str) -> bool {
    uri.ends_with(SIBLING_SUFFIX) || uri.contains(&format!("/{FALLBACK_DIR}/"))
}

/// Whether a Lake header error says it could not set up a file that is not on disk.
pub fn is_setup_failure(message: &str) -> bool {
    message.starts_with("`lake setup-file ") && message.contains("failed")
}

/// Removes every change to a twin from `edit` (see the contract); how many were removed.
pub fn drop_twin_edits(edit: &mut Value) -> usize {
    let mut dropped = 0;
    if let Some(Value::Object(changes)) = edit.get_mut("changes") {
        let before = changes.len();
        changes.retain(|uri, _| !is_twin_uri(uri));
        dropped += before - changes.len();
    }
    if let Some(Value::Array(document_changes)) = edit.get_mut("documentChanges") {
        let before = document_changes.len();
        document_changes.retain(|change| !touches_twin(change));
        dropped += before - document_changes.len();
    }
    dropped
}

/// Whether one `documentChanges` item names a twin.
fn touches_twin(change: &Value) -> bool {
    let uris = [
        change.pointer("/textDocument/uri"),
        change.get("uri"),
        change.get("oldUri"),
        change.get("newUri"),
    ];
    uris.into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(is_twin_uri)
}

/// One twin document.
#[derive(Debug)]
pub struct TwinDocument {
    /// The real file's URI.
    pub real_uri: Arc<str>,
    /// The twin's URI.
    pub uri: Arc<str>,
    /// Where it lives on disk, when it is written there (the fallback).
    pub written: Option<PathBuf>,
    runs: Arc<AsyncMutex<()>>,
    /// Where its current probe starts: everything before is the real text.
    probe_start: Mutex<(u32, u32)>,
}

impl TwinDocument {
    /// Holds the twin for one run.
    pub async fn lease(&self) -> OwnedMutexGuard<()> {
        self.runs.clone().lock_owned().await
    }

    fn idle(&self) -> bool {
        self.runs.try_lock().is_ok()
    }

    /// Records where the probe of the text Lean is given starts (call while holding a lease).
    pub fn set_probe_start(&self, start: (u32, u32)) {
        *self.probe_start.lock().unwrap_or_else(|p| p.into_inner()) = start;
    }
}

/// The twins of one runtime.
#[derive(Debug)]
pub struct TwinPool {
    root: PathBuf,
    capacity: usize,
    state: Mutex<PoolState>,
}

#[derive(Debug, Default)]
struct PoolState {
    /// Twins written to disk from now on.
    on_disk: bool,
    /// Most recently used last.
    twins: Vec<Arc<TwinDocument>>,
}

impl TwinPool {
    /// An empty pool for the workspace at `root`.
    pub fn new(root: &Path, capacity: usize) -> Self {
        TwinPool {
            root: root.to_path_buf(),
            capacity: capacity.max(1),
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The twin of the real file at `path` (made if needed), and the idle twins it displaced,
    /// which the caller closes.
    pub fn twin_of(&self, path: &Path) -> (Arc<TwinDocument>, Vec<Arc<TwinDocument>>) {
        let real_uri: Arc<str> = file_uri(path).into();
        let mut state = self.lock();
        let found = state.twins.iter().position(|t| t.real_uri == real_uri);
        let twin = match found {
            Some(i) => state.twins.remove(i),
            None => Arc::new(self.make(&state, path, real_uri)),
        };
        state.twins.push(twin.clone());
        let mut displaced = Vec::new();
        while state.twins.len() > self.capacity {
            let Some(i) = state.twins.iter().position(|t| t.idle()) else {
                break;
            };
            displaced.push(state.twins.remove(i));
        }
        (twin, displaced)
    }

    fn make(&self, state: &PoolState, path: &Path, real_uri: Arc<str>) -> TwinDocument {
        let sibling = sibling_of(path);
        let (twin_path, written) = if state.on_disk || sibling.exists() {
            let under = self
                .root
                .join(FALLBACK_DIR)
                .join(relative(&self.root, path));
            (under.clone(), Some(under))
        } else {
            (sibling, None)
        };
        TwinDocument {
            real_uri,
            uri: file_uri(&twin_path).into(),
            written,
            runs: Arc::default(),
            probe_start: Mutex::new((0, 0)),
        }
    }

    /// Switches to twins on disk (see the contract) and forgets `failed`, which the caller
    /// closes; the next [`TwinPool::twin_of`] makes the new twin.
    pub fn fall_back_to_disk(&self, failed: &Arc<TwinDocument>) {
        let mut state = self.lock();
        state.on_disk = true;
        state.twins.retain(|t| !Arc::ptr_eq(t, failed));
    }

    /// Forgets the twin of `real_uri` (its real document closed); the caller closes it.
    pub fn remove(&self, real_uri: &str) -> Option<Arc<TwinDocument>> {
        let mut state = self.lock();
        let i = state.twins.iter().position(|t| &*t.real_uri == real_uri)?;
        Some(state.twins.remove(i))
    }

    /// For a location at `uri` ending at `end` (an LSP position): `None` when `uri` is not a
    /// twin's; else the real file's URI when the location lies before the twin's probe, or
    /// `Some(None)` when it must be dropped (see the contract).
    pub fn real_location(&self, uri: &str, end: (u32, u32)) -> Option<Option<Arc<str>>> {
        if !is_twin_uri(uri) {
            return None;
        }
        let state = self.lock();
        let twin = state.twins.iter().find(|t| &*t.uri == uri);
        Some(twin.and_then(|t| {
            let probe = *t.probe_start.lock().unwrap_or_else(|p| p.into_inner());
            (end <= probe).then(|| t.real_uri.clone())
        }))
    }

    /// Every twin, for the runtime's end.
    pub fn drain(&self) -> Vec<Arc<TwinDocument>> {
        std::mem::take(&mut self.lock().twins)
    }
}

fn sibling_of(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}{SIBLING_SUFFIX}"))
}

/// `path` relative to the root, or its file name for a file outside it.
fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.file_name().map(PathBuf::from).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn twins_are_siblings_recognised_everywhere() {
        let pool = TwinPool::new(Path::new("/w"), 2);
        let (twin, displaced) = pool.twin_of(Path::new("/w/A/B.lean"));
        assert_eq!(&*twin.uri, "file:///w/A/B.beam-twin.lean");
        assert!(displaced.is_empty() && twin.written.is_none());
        assert!(is_twin_uri(&twin.uri));
        assert!(is_twin_uri("file:///w/.lake/beam/twins/A/B.lean"));
        assert!(!is_twin_uri("file:///w/A/B.lean"));
        twin.set_probe_start((10, 2));
        let real = pool.real_location(&twin.uri, (4, 7));
        assert_eq!(real.flatten().as_deref(), Some("file:///w/A/B.lean"));
        assert_eq!(
            pool.real_location(&twin.uri, (10, 5)),
            Some(None),
            "in the probe"
        );
        assert_eq!(
            pool.real_location("file:///w/A/C.beam-twin.lean", (0, 0)),
            Some(None)
        );
        assert_eq!(pool.real_location("file:///w/A/B.lean", (0, 0)), None);
    }

    #[tokio::test]
    async fn the_least_recently_used_idle_twin_makes_room() {
        let pool = TwinPool::new(Path::new("/w"), 2);
        let (a, _) = pool.twin_of(Path::new("/w/A.lean"));
        let (_b, _) = pool.twin_of(Path::new("/w/B.lean"));
        let held = a.lease().await;
        let (_c, displaced) = pool.twin_of(Path::new("/w/C.lean"));
        assert_eq!(displaced.len(), 1);
        assert_eq!(
            &*displaced[0].real_uri, "file:///w/B.lean",
            "A is busy, B goes"
        );
        drop(held);
        let (again, _) = pool.twin_of(Path::new("/w/A.lean"));
        assert!(Arc::ptr_eq(&again, &a), "a twin is reused, not remade");
    }

    #[test]
    fn a_failed_sibling_switches_the_pool_to_disk() {
        let pool = TwinPool::new(Path::new("/w"), 2);
        let (sibling, _) = pool.twin_of(Path::new("/w/A/B.lean"));
        pool.fall_back_to_disk(&sibling);
        let (twin, _) = pool.twin_of(Path::new("/w/A/B.lean"));
        assert_eq!(&*twin.uri, "file:///w/.lake/beam/twins/A/B.lean");
        assert_eq!(
            twin.written.as_deref(),
            Some(Path::new("/w/.lake/beam/twins/A/B.lean"))
        );
        assert!(is_setup_failure(
            "`lake setup-file /w/A/B.beam-twin.lean -` failed:\n\nstderr:\nno such file"
        ));
    }

    #[test]
    fn twin_changes_are_dropped_and_the_rest_kept() {
        let real = "file:///p/A.lean";
        let twin = "file:///p/A.beam-twin.lean";
        let text_edit = |uri: &str| {
            json!({"textDocument": {"uri": uri, "version": 3},
                   "edits": [{"range": {"start": {"line": 0, "character": 0},
                                        "end": {"line": 0, "character": 1}}, "newText": "x"}]})
        };
        let mut edit = json!({
            "changes": {real: [], twin: []},
            "documentChanges": [
                text_edit(real),
                text_edit(twin),
                {"kind": "create", "uri": twin},
                {"kind": "rename", "oldUri": real, "newUri": twin},
                {"kind": "delete", "uri": "file:///p/.lake/beam/twins/A.lean"},
            ]
        });
        assert_eq!(drop_twin_edits(&mut edit), 5);
        assert_eq!(
            edit,
            json!({"changes": {real: []}, "documentChanges": [text_edit(real)]})
        );
        let mut untouched = json!({"documentChanges": [text_edit(real)]});
        assert_eq!(drop_twin_edits(&mut untouched), 0);
        assert_eq!(untouched, json!({"documentChanges": [text_edit(real)]}));
    }
}
