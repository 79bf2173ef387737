//! `lean_code_action_resolve`, and what every Lean code action goes through before a client
//! sees it (`lean_todo` returns them too).
//!
//! Contract:
//! 1. Every action a client sees goes through `speculation::twins::for_client`: nothing of a
//!    hidden twin reaches it, and versions are the caller's.
//! 2. `lean_code_action_resolve` resolves only an action that carries `data` whose
//!    `params.textDocument.uri` is the requested file; anything else is `invalidParams` before
//!    Lean hears anything (the watchdog routes a resolve by that URI and panics on an action
//!    without `data`, lean-stock-speculation.md §D), or when this Lean does not offer
//!    `codeActionProvider.resolveProvider` (`leanLacksFeature`, `server/capabilities.rs`), before
//!    the document is opened. Then the caller's version must be current
//!    (`contentModified`), then `codeAction/resolve` is sent with the action exactly as given,
//!    and the answer is `{version, code_action, receipt}` with the resolved action through
//!    `for_client`.
//! 3. Beam applies nothing: the client applies the returned `WorkspaceEdit` itself, then calls
//!    `lean_update` or `lean_sync` so Beam reads the edited file.

use serde_json::{Value, json};

use super::schema::{LeanTool, path, read_only, version};
use crate::lean::error::HostError;
use crate::lean::session::ask::ask_once;
use crate::lean::session::receipt;
use crate::lean::speculation::twins::{for_client, is_twin_uri};
use crate::lean::state::HostState;
use crate::lean::text::file_uri;
use crate::lean::tools::call::LeanCall;
use crate::mcp::{Execution, StatusNotice, ToolSpec};

/// The tool name.
pub const RESOLVE: &str = "lean_code_action_resolve";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    LeanTool {
        name: RESOLVE,
        base: "Complete a code action lean_todo returned with a `data` field, returning its edit \
               (to apply yourself); one without `data` is complete already.",
        properties: &[
            ("path", path()),
            ("version", version()),
            (
                "code_action",
                json!({
                    "type": "object",
                    "description": "As lean_todo returned it for this path, unchanged."
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
    let version = call.args.version()?;
    let action = call.args.object("code_action")?.clone();
    let uri = file_uri(&call.file()?);
    resolvable(&action, &uri, call.path_argument())?;
    let runtime = call.runtime(&state.registry).await?;
    runtime.server().require("codeAction/resolve")?;
    let (_pin, synced) = call.document(&runtime).await?;
    let document = synced.document;
    call.check_version(&document, version)?;
    let set = runtime.documents();
    let resolved = ask_once(set, &document, &call.caller(), "codeAction/resolve", action).await?;
    let resolved = for_client(resolved, &document).ok_or_else(|| {
        HostError::invalid_params(
            "Lean resolved the code action to edits of Beam's hidden speculative documents \
             only; there is nothing to apply to the file",
        )
    })?;
    let receipt = receipt::now(set, &document, None).to_json();
    Ok(json!({"version": document.version, "code_action": resolved, "receipt": receipt}))
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

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "file:///p/A.lean";
    const TWIN: &str = "file:///p/.lake/beam/twins/1-1/A.lean";

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
