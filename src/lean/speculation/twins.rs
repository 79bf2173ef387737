//! Hidden twin documents: where speculative runs happen, in the same `lake serve`, never in the
//! user's document and never as a source file of the project. This file says where a twin lives
//! and what of it a client may see; the set (`session/set.rs`) owns twins that are open.
//!
//! Contract:
//! 1. A real file's twin is `<dir>/<stem>.beam-twin.lean`, a sibling (file-relative paths keep
//!    working) that is never written to disk: Lean takes a document's text from the client, and
//!    Lake sets a missing file up as outside every library. A Lake that cannot set up a missing
//!    file switches the runtime to twins written under `<root>/.lake/beam/twins/<owner>/<relative
//!    path>`, the build directory, for good (`session`); so does a sibling name that exists on
//!    disk ([`placement`]). Such a file is never written or removed through a link
//!    (`session/twin_file.rs`). The owner names this process and runtime (`<pid>-<epoch>`), so a
//!    runtime that is ending, or another lean-beam-mcp on the same project, never writes or
//!    removes another's twin.
//! 2. A twin's URI never leaks into a result. Lean indexes a twin's declarations like any
//!    file's, so references, definitions and symbols may point into one: since a twin is the
//!    real text up to its probe, a location before the probe is the real file's, and is mapped
//!    to it ([`shown_location`]); any other twin location is dropped ([`is_twin_uri`] recognises
//!    one even after its twin is gone). A twin's edits (code actions) cannot be mapped onto the
//!    real file, whose text goes on after the probe: [`for_client`] drops them, and an action
//!    that concerns only twins.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::lean::session::mirror::Document;
use crate::lean::session::{DocumentSet, Placement, TwinFile};
use crate::lean::text::{Position, file_uri};

const SIBLING_SUFFIX: &str = ".beam-twin.lean";
const FALLBACK_DIR: &str = ".lake/beam/twins";
/// [`FALLBACK_DIR`] inside `.lake`, where `session::TwinFile` confines a twin's file.
const FALLBACK_IN_LAKE: &str = "beam/twins";

/// Whether a URI (or path) is a twin's.
pub fn is_twin_uri(uri: &str) -> bool {
    uri.ends_with(SIBLING_SUFFIX) || uri.contains(&format!("/{FALLBACK_DIR}/"))
}

/// What Lean said when it could not process the twin's header, if it could not: the header
/// error (`mirror`'s rule: an error from 0:0 over the whole file), or a fatal report. Never told
/// by its words: the mid-era worker names Lake by its absolute path, newer ones write Lake's own
/// error with no command at all (`lean-language-server.md` Part 3).
pub fn setup_failure(twin: &Document) -> Option<String> {
    match twin.header_error() {
        Some(error) => Some(error.message.clone()),
        None if twin.progress.fatal => {
            Some(twin.diagnostics.iter().find(|d| d.is_error()).map_or_else(
                || "a fatal error over the file".to_owned(),
                |d| d.message.clone(),
            ))
        }
        None => None,
    }
}

/// Where the twin of the real file at `path`, in the workspace at `root`, lives for the runtime
/// `epoch` of this process (see the contract); `on_disk` when the runtime's twins are written
/// to disk.
pub fn placement(root: &Path, path: &Path, epoch: u64, on_disk: bool) -> Placement {
    let sibling = sibling_of(path);
    let (twin, written) = if on_disk || sibling.exists() {
        let owner = format!("{}-{epoch}", std::process::id());
        let owned = Path::new(&owner).join(relative(root, path));
        let file = TwinFile::new(root, Path::new(FALLBACK_IN_LAKE), &owned);
        (file.path(), Some(file))
    } else {
        (sibling, None)
    };
    Placement {
        uri: file_uri(&twin).into(),
        written,
    }
}

/// The URI to show for a location Lean gave at `uri` ending at `end`: its own, the real file's
/// for a twin's location before the probe, or `None` to drop it (see the contract).
pub fn shown_location(set: &DocumentSet, uri: &str, end: Position) -> Option<Arc<str>> {
    match set.twin_location(uri, end) {
        Some(real) => real,
        None if is_twin_uri(uri) => None,
        None => Some(uri.into()),
    }
}

/// The action as a client may see it, or `None` when it concerns only hidden twin documents
/// (see the contract): every edit of a twin is removed, and a versioned edit of `document` at
/// the LSP version Lean has carries the version callers know (Beam's) instead (they differ once
/// a crashed worker has been revived). `data` is untouched: Lean must get it back unchanged.
pub fn for_client(mut action: Value, document: &Document) -> Option<Value> {
    let owner = action.pointer("/data/params/textDocument/uri");
    if owner.and_then(Value::as_str).is_some_and(is_twin_uri) {
        return None;
    }
    if let Some(edit) = action.get_mut("edit") {
        let changes = change_count(edit);
        if changes > 0 && drop_twin_edits(edit) == changes {
            return None;
        }
        callers_versions(edit, document);
    }
    Some(action)
}

/// Removes every change to a twin from `edit`; how many were removed.
fn drop_twin_edits(edit: &mut Value) -> usize {
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

fn change_count(edit: &Value) -> usize {
    let changes = edit
        .get("changes")
        .and_then(Value::as_object)
        .map_or(0, |c| c.len());
    let document_changes = edit
        .get("documentChanges")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    changes + document_changes
}

fn callers_versions(edit: &mut Value, document: &Document) {
    let Some(Value::Array(changes)) = edit.get_mut("documentChanges") else {
        return;
    };
    for change in changes {
        let Some(text_document) = change.get_mut("textDocument") else {
            continue;
        };
        let ours = text_document.get("uri").and_then(Value::as_str) == Some(&*document.uri);
        let at_lean_version =
            text_document.get("version").and_then(Value::as_i64) == Some(document.lsp_version);
        if ours && at_lean_version {
            text_document["version"] = json!(document.version);
        }
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

    const URI: &str = "file:///p/A.lean";
    const TWIN: &str = "file:///p/A.beam-twin.lean";

    #[test]
    fn twins_are_siblings_or_under_the_build_directory_and_recognised_everywhere() {
        let sibling = placement(Path::new("/w"), Path::new("/w/A/B.lean"), 3, false);
        assert_eq!(&*sibling.uri, "file:///w/A/B.beam-twin.lean");
        assert!(sibling.written.is_none());
        let on_disk = placement(Path::new("/w"), Path::new("/w/A/B.lean"), 3, true);
        let owned = format!("/w/.lake/beam/twins/{}-3/A/B.lean", std::process::id());
        assert_eq!(&*on_disk.uri, format!("file://{owned}"));
        assert_eq!(on_disk.written.map(|f| f.path()), Some(owned.into()));
        assert!(is_twin_uri(&sibling.uri) && is_twin_uri(&on_disk.uri));
        assert_eq!(FALLBACK_DIR, format!(".lake/{FALLBACK_IN_LAKE}"));
        assert!(!is_twin_uri("file:///w/A/B.lean"));
    }

    fn text_edit(uri: &str, version: i64) -> Value {
        json!({"textDocument": {"uri": uri, "version": version},
               "edits": [{"range": {"start": {"line": 0, "character": 0},
                                    "end": {"line": 0, "character": 1}}, "newText": "x"}]})
    }

    #[test]
    fn twin_changes_are_dropped_and_the_rest_kept() {
        let mut edit = json!({
            "changes": {URI: [], TWIN: []},
            "documentChanges": [
                text_edit(URI, 3),
                text_edit(TWIN, 3),
                {"kind": "create", "uri": TWIN},
                {"kind": "rename", "oldUri": URI, "newUri": TWIN},
                {"kind": "delete", "uri": "file:///p/.lake/beam/twins/A.lean"},
            ]
        });
        assert_eq!(drop_twin_edits(&mut edit), 5);
        assert_eq!(
            edit,
            json!({"changes": {URI: []}, "documentChanges": [text_edit(URI, 3)]})
        );
    }

    /// A revival: Lean's version moves on, the caller's does not.
    fn revived_document() -> Document {
        Document::for_tests(URI, "text", 1, 2)
    }

    #[test]
    fn clients_see_their_versions_and_no_twin() {
        let document = revived_document();
        assert_eq!((document.version, document.lsp_version), (1, 2));
        let action = json!({
            "title": "t",
            "edit": {"documentChanges": [text_edit(URI, 2), text_edit(TWIN, 7)]},
            "data": {"params": {"textDocument": {"uri": URI}}, "providerResultIndex": 0}
        });
        let shown = for_client(action.clone(), &document).expect("kept");
        assert_eq!(shown["edit"]["documentChanges"], json!([text_edit(URI, 1)]));
        assert_eq!(shown["data"], action["data"], "data is untouched");
        let twin_only = json!({"title": "t", "edit": {"documentChanges": [text_edit(TWIN, 7)]}});
        assert_eq!(for_client(twin_only, &document), None);
        let twin_data = json!({"title": "t", "data": {"params": {"textDocument": {"uri": TWIN}}}});
        assert_eq!(for_client(twin_data, &document), None);
        let lazy = json!({"title": "t", "data": {"params": {"textDocument": {"uri": URI}}}});
        assert_eq!(for_client(lazy.clone(), &document), Some(lazy));
    }
}
