//! Hidden twin documents: where speculative runs happen, in the same `lake serve`, never in the
//! user's document and never as a source file of the project. This file says where a twin lives
//! and what of it a client may see; the set (`session/set.rs`) owns twins that are open.
//!
//! Contract:
//! 1. A real file's twins (one per slot: several runs on one file go side by side, see
//!    `session/set.rs`) are `<root>/.lake/beam/twins/<owner>/<relative path>`, in the build
//!    directory, never among the project's sources: a link to the real file
//!    (`session/twin_file.rs`), so that Lake, which finds a file by its real path, sets the twin
//!    up exactly as the real module (its library's `leanOptions`, plugins and name) on every Lake
//!    era, and a Lake that cannot set up a file missing from disk (mid-2025) finds it there. Lean
//!    takes the twin's text from the client, never from the link. The cost: a path relative to
//!    the file (`include_str`) resolves from the twin's directory. The owner names this process
//!    and runtime (`<pid>-<epoch>`), so a runtime that is ending, or another lean-beam-mcp on the
//!    same project, never makes or removes another's twin; slot `n > 0` has an owner of its own,
//!    `<pid>-<epoch>-<n>`, so no slot's path can be another file's (a relative path may start
//!    with any directory name, a number included). A twin whose header Lean could not process
//!    all the same ([`setup_failure`]) gives no verdict.
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

/// Where twins' links live, inside `.lake` (where `session::TwinFile` confines a twin's link).
const TWINS_IN_LAKE: &str = "beam/twins";
/// The twins' directory as a part of a path or URI (every call checks its path against it).
const TWINS_PART: &str = "/.lake/beam/twins/";

/// Whether a URI (or path) is a twin's.
pub fn is_twin_uri(uri: &str) -> bool {
    uri.contains(TWINS_PART)
}

/// What Lean said when it could not process the twin's header, if it could not: the header
/// error (`mirror`'s rule: Lake's error from 0:0 over the whole file, or Lean's own in the
/// header of a fatal version), or a fatal report. Never told
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

/// Where the twin in `slot` of the real file at `path`, in the workspace at `root`, lives for
/// the runtime `epoch` of this process (see the contract).
pub fn placement(root: &Path, path: &Path, epoch: u64, slot: usize) -> Placement {
    let owner = match slot {
        0 => format!("{}-{epoch}", std::process::id()),
        n => format!("{}-{epoch}-{n}", std::process::id()),
    };
    let owned = Path::new(&owner).join(relative(root, path));
    let link = TwinFile::new(root, Path::new(TWINS_IN_LAKE), &owned, path);
    Placement {
        uri: file_uri(&link.path()).into(),
        link,
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
    const TWIN: &str = "file:///p/.lake/beam/twins/1-1/A.lean";

    #[test]
    fn twins_live_under_the_build_directory_and_are_recognised_everywhere() {
        let twin = placement(Path::new("/w"), Path::new("/w/A/B.lean"), 3, 0);
        let owned = format!("/w/.lake/beam/twins/{}-3/A/B.lean", std::process::id());
        assert_eq!(&*twin.uri, format!("file://{owned}"));
        assert_eq!(twin.link.path(), PathBuf::from(owned));
        assert!(is_twin_uri(&twin.uri));
        let second = placement(Path::new("/w"), Path::new("/w/A/B.lean"), 3, 1);
        let owned = format!("/w/.lake/beam/twins/{}-3-1/A/B.lean", std::process::id());
        assert_eq!(second.link.path(), PathBuf::from(owned));
        assert!(is_twin_uri(&second.uri));
        // A slot never lands on another file's twin, whatever its relative path.
        let numbered = placement(Path::new("/w"), Path::new("/w/1/A/B.lean"), 3, 0);
        assert_ne!(numbered.link.path(), second.link.path());
        assert_eq!(TWINS_PART, format!("/.lake/{TWINS_IN_LAKE}/"));
        assert!(!is_twin_uri("file:///w/A/B.lean"));
        assert!(!is_twin_uri("file:///w/A/B.beam-twin.lean"));
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
                {"kind": "delete", "uri": "file:///p/.lake/beam/twins/1-1/B.lean"},
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
