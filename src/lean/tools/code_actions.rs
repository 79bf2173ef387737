//! `lean_code_action_resolve`, and what every Lean code action goes through before a client
//! sees it (`lean_todo` returns them too).
//!
//! Contract:
//! 1. [`for_client`]: an action whose `data` names a hidden twin document is dropped; every edit
//!    of a twin is removed from its `edit`, and an action whose edits all were a twin's is
//!    dropped (`twin_uri`); a versioned edit of the requested document carries the version
//!    callers know (Beam's), not the LSP version Lean was sent (they differ once a crashed
//!    worker has been revived). Everything else is as Lean sent it; in particular `data` is
//!    untouched, since Lean must get it back unchanged.
//! 2. `lean_code_action_resolve` resolves only an action that carries `data` whose
//!    `params.textDocument.uri` is the requested file; anything else is `invalidParams` before
//!    Lean hears anything (the watchdog routes a resolve by that URI and panics on an action
//!    without `data`, lean-stock-speculation.md §D). Then the caller's version must be current
//!    (`contentModified`), then `codeAction/resolve` is sent with the action exactly as given,
//!    and the answer is `{version, code_action}` with the resolved action through
//!    [`for_client`].
//! 3. Beam applies nothing: the client applies the returned `WorkspaceEdit` itself, then calls
//!    `lean_update` or `lean_sync` so Beam reads the edited file.

use serde_json::{Value, json};

use super::navigation::ask;
use super::schema::{LeanTool, path, read_only, version};
use crate::lean::error::HostError;
use crate::lean::session::mirror::Document;
use crate::lean::speculation::twins::{drop_twin_edits, is_twin_uri};
use crate::lean::state::HostState;
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::runtime::file_uri;
use crate::mcp::{Execution, StatusNotice, ToolSpec};

/// The tool name.
pub const RESOLVE: &str = "lean_code_action_resolve";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    LeanTool {
        name: RESOLVE,
        base: "Resolve and return a Lean code action payload from lean_todo. If it contains an \
               LSP WorkspaceEdit, the client must apply it. Only an action that carries `data` \
               can be resolved; one without it is already complete as lean_todo returned it.",
        properties: &[
            ("path", path()),
            ("version", version()),
            (
                "code_action",
                json!({
                    "type": "object",
                    "description": "Raw Lean LSP CodeAction payload returned by lean_todo. The \
                                    action must include its data field, unchanged, and belong \
                                    to the file named by path."
                }),
            ),
        ],
        required: &["path", "version", "code_action"],
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::WhenSlow,
    }
    .spec()
}

/// Runs `lean_code_action_resolve`.
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let action = call.args.get("code_action").cloned().unwrap_or(Value::Null);
    let uri = file_uri(&call.file()?);
    resolvable(&action, &uri, call.path_argument())?;
    let runtime = call.runtime(&state.registry).await?;
    let document = call.document(&runtime).await?.document;
    call.check_version(&document)?;
    let resolved = ask(call, &runtime, &document, "codeAction/resolve", action).await?;
    let resolved = for_client(resolved, &document).ok_or_else(|| {
        HostError::invalid_params(
            "Lean resolved the code action to edits of Beam's hidden speculative documents \
             only; there is nothing to apply to the file",
        )
    })?;
    Ok(json!({"version": document.version, "code_action": resolved}))
}

/// Checks that `action` can be sent to Lean for the file `uri` (see the contract).
fn resolvable(action: &Value, uri: &str, path: &str) -> Result<(), HostError> {
    let title = action.get("title").and_then(Value::as_str).unwrap_or("");
    if action.get("data").is_none_or(Value::is_null) {
        return Err(HostError::invalid_params(format!(
            "the code action {title:?} carries no `data`, so Lean has nothing to resolve: it is \
             complete as lean_todo returned it (apply its `edit`, if any, yourself)"
        ))
        .with_data(json!({"path": "/code_action/data", "reason": "codeActionWithoutData"})));
    }
    let owner = action
        .pointer("/data/params/textDocument/uri")
        .and_then(Value::as_str);
    if owner != Some(uri) || is_twin_uri(uri) {
        return Err(HostError::invalid_params(format!(
            "the code action {title:?} was not offered for {path}: its data names {}; pass the \
             path (and version) of the file lean_todo returned it for",
            owner.unwrap_or("no document")
        ))
        .with_data(json!({
            "path": "/code_action/data/params/textDocument/uri",
            "reason": "codeActionForAnotherFile",
            "actionUri": owner,
            "uri": uri,
        })));
    }
    Ok(())
}

/// The action as a client may see it, or `None` when it concerns only hidden twin documents
/// (see the contract).
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

/// Versioned edits of `document` at the LSP version Lean has carry the caller's version instead.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::session::mirror::{Documents, VersionMemory};
    use std::sync::Arc;

    const URI: &str = "file:///p/A.lean";
    const TWIN: &str = "file:///p/A.beam-twin.lean";

    fn document() -> Document {
        let documents = Documents::new(Arc::new(VersionMemory::default()));
        documents.opened(URI.into(), "text".into());
        // A revival: Lean's version moves on, the caller's does not.
        documents.revived(URI).expect("open")
    }

    fn text_edit(uri: &str, version: i64) -> Value {
        json!({"textDocument": {"uri": uri, "version": version},
               "edits": [{"range": {"start": {"line": 0, "character": 0},
                                    "end": {"line": 0, "character": 4}}, "newText": "x"}]})
    }

    #[test]
    fn clients_see_their_versions_and_no_twin() {
        let document = document();
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

    #[test]
    fn only_actions_with_data_for_the_file_are_resolvable() {
        let path = "A.lean";
        let with =
            |uri: &str| json!({"title": "t", "data": {"params": {"textDocument": {"uri": uri}}}});
        assert!(resolvable(&with(URI), URI, path).is_ok());
        let bare = json!({"title": "t", "edit": {}});
        let error = resolvable(&bare, URI, path).unwrap_err();
        assert_eq!(error.code, "invalidParams");
        assert_eq!(error.data.unwrap()["reason"], "codeActionWithoutData");
        let null_data = json!({"title": "t", "data": null});
        assert!(resolvable(&null_data, URI, path).is_err());
        let other = resolvable(&with("file:///p/B.lean"), URI, path).unwrap_err();
        assert_eq!(other.data.unwrap()["reason"], "codeActionForAnotherFile");
        assert!(resolvable(&json!({"data": {}}), URI, path).is_err());
        assert!(resolvable(&with(TWIN), TWIN, path).is_err(), "never a twin");
    }
}
