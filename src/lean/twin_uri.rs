//! Which document URIs belong to Beam's hidden twin documents, and keeping them out of the edits
//! a client is given. (The twin pool itself lives elsewhere; this is only the naming rule, so
//! every tool that returns URIs can apply it, and the twin module can own it later.)
//!
//! Contract:
//! 1. A twin is the hidden speculative copy of a real file (DESIGN.md "Speculation"): a sibling
//!    named `<stem>.beam-twin.lean`, or any file under a `.lake/beam/` directory (the fallback
//!    for toolchains whose Lake cannot set up a file that is not on disk). [`is_twin_uri`] says
//!    so from the URI alone: both markers are plain ASCII, so percent-encoding never hides them.
//! 2. [`drop_twin_edits`] removes from an LSP `WorkspaceEdit` every change whose document is a
//!    twin: entries of `changes`, and `documentChanges` items (text edits by
//!    `textDocument.uri`, create/delete by `uri`, rename by `oldUri` or `newUri`). A twin's text
//!    is not the user's text, so its edits cannot be mapped onto the real file; they are dropped,
//!    never rewritten. Everything else is left exactly as Lean sent it.

use serde_json::Value;

/// The file name suffix of a sibling twin.
const SIBLING_SUFFIX: &str = ".beam-twin.lean";
/// The directory of the on-disk twin fallback, as it appears in a URI.
const FALLBACK_DIR: &str = "/.lake/beam/";

/// Whether `uri` names a hidden twin document.
pub fn is_twin_uri(uri: &str) -> bool {
    uri.ends_with(SIBLING_SUFFIX) || uri.contains(FALLBACK_DIR)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn twins_are_known_by_their_names() {
        assert!(is_twin_uri("file:///p/Fixture/Basic.beam-twin.lean"));
        assert!(is_twin_uri("file:///p/.lake/beam/twins/Fixture/Basic.lean"));
        assert!(is_twin_uri("file:///a%20b/.lake/beam/twins/X.lean"));
        assert!(!is_twin_uri("file:///p/Fixture/Basic.lean"));
        assert!(!is_twin_uri("file:///p/.lake/packages/beam/X.lean"));
        assert!(!is_twin_uri("file:///p/beam-twin.lean.md"));
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
