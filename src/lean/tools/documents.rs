//! `lean_update`, `lean_sync`, `lean_refresh`, `lean_close`: the document lifecycle and the
//! diagnostics barrier.
//!
//! Contract:
//! 1. `lean_update` re-reads the file and brings Lean's copy up to date without waiting:
//!    `{version, changed, receipt}`, the receipt `incomplete` (`not_checked`) unless an earlier
//!    call saw Lean finish the version.
//! 2. `lean_sync` does the same, then waits on `textDocument/waitForDiagnostics` for that
//!    version (the only message an unchanged document costs), streaming progress and live
//!    diagnostics, and answers `{path, version, diagnostics: {counts, items?}, readiness,
//!    document_progress, receipt}`. Counts and readiness are always complete; `diagnostic_scope` (errors
//!    or all) filters live logs and items, `diagnostics_in_result` adds the items.
//! 3. A document whose imports are out of date is not final: `syncBarrierIncomplete`, with the
//!    stale notices and a recovery plan; one whose imports Lake could not build is
//!    `importBuildFailed`, naming the import and Lake's errors (`session/barrier.rs`).
//! 4. `lean_refresh` closes the document, reopens it from disk (its imports rebuilt if needed)
//!    and syncs; `lean_close` closes it and is idempotent. Both wait for the calls using the
//!    document to finish first (`session/set.rs`). `lean_close` never starts Lean: without a
//!    running Lean for the workspace, nothing is open.

use std::sync::Arc;

use serde_json::{Value, json};

use super::schema::{LeanTool, path, string_enum};
use crate::lean::error::HostError;
use crate::lean::json::object;
use crate::lean::session::diagnostics;
use crate::lean::session::receipt::{self, Reason, ReceiptState};
use crate::lean::state::HostState;
use crate::lean::text::file_uri;
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::runtime::Runtime;
use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool names.
pub const UPDATE: &str = "lean_update";
/// See [`UPDATE`].
pub const SYNC: &str = "lean_sync";
/// See [`UPDATE`].
pub const REFRESH: &str = "lean_refresh";
/// See [`UPDATE`].
pub const CLOSE: &str = "lean_close";

fn scope() -> Value {
    let mut scope = string_enum(
        &["errors", "all"],
        "all: also warnings and information. Counts always cover all.",
    );
    scope["default"] = json!("errors");
    scope
}

fn in_result() -> Value {
    json!({
        "type": "boolean",
        "default": false,
        "description": "Return the diagnostics themselves, not only their counts."
    })
}

/// The catalog entries, in listing order.
pub fn specs() -> Vec<ToolSpec> {
    let path_only = [("path", path())];
    let with_diagnostics = [
        ("path", path()),
        ("diagnostic_scope", scope()),
        ("diagnostics_in_result", in_result()),
    ];
    let tool = |name, base, properties| {
        LeanTool {
            name,
            base,
            properties,
            required: &["path"],
            annotations: ToolAnnotations::default(),
            execution: Execution::Concurrent,
            status: StatusNotice::WhenSlow,
        }
        .spec()
    };
    let mut close = tool(
        CLOSE,
        "Close a file in Lean (its worker stops).",
        &path_only,
    );
    close.annotations.idempotent_hint = Some(true);
    vec![
        tool(
            UPDATE,
            "Read a file from disk into Lean and return its version and whether it changed, \
             without waiting for Lean to check it.",
            &path_only,
        ),
        tool(
            SYNC,
            "Read a file from disk, wait until Lean has checked it, and return its version (for \
             the position tools), diagnostic counts and whether it is ready to save. Call it \
             after each edit.",
            &with_diagnostics,
        ),
        tool(
            REFRESH,
            "As lean_sync, after rebuilding out-of-date imports: use it when Lean says the \
             imports are stale.",
            &with_diagnostics,
        ),
        close,
    ]
}

/// Runs one of this family's tools.
pub async fn call(
    tool: &str,
    state: &HostState,
    call: &mut LeanCall<'_>,
) -> Result<Value, HostError> {
    if tool == CLOSE {
        let uri: Arc<str> = file_uri(&call.file_to_close()?).into();
        if let Some(runtime) = state.registry.running_for(&call.root) {
            runtime.documents().close(&uri, &call.caller()).await?;
        }
        return Ok(json!({"closed": true}));
    }
    let runtime = call.runtime(&state.registry).await?;
    match tool {
        UPDATE => {
            let (_pin, synced) = call.document(&runtime).await?;
            let mut receipt = receipt::now(runtime.documents(), &synced.document, None);
            if receipt.state == ReceiptState::Incomplete(Reason::Elaborating) {
                // Unless an earlier call saw Lean finish this version, this one did not wait.
                receipt.state = ReceiptState::Incomplete(Reason::NotChecked);
            }
            Ok(json!({
                "version": synced.document.version,
                "changed": synced.changed,
                "receipt": receipt.to_json(),
            }))
        }
        SYNC => sync(call, &runtime, false).await,
        REFRESH => sync(call, &runtime, true).await,
        other => Err(HostError::internal(format!(
            "{other} is not a document tool"
        ))),
    }
}

async fn sync(call: &LeanCall<'_>, runtime: &Runtime, reopen: bool) -> Result<Value, HostError> {
    if reopen {
        let file = call.file()?;
        let uri = file_uri(&file).into();
        runtime.documents().close(&uri, &call.caller()).await?;
    }
    let in_result = call.args.flag("diagnostics_in_result", false)?;
    let (_pin, document, all) = call.settled(runtime).await?;
    let path = call.path_argument();
    let mut counts = object([("counts", diagnostics::counts(&document.diagnostics))]);
    if in_result {
        counts["items"] = document
            .diagnostics
            .iter()
            .filter(|d| d.in_scope(all))
            .map(|d| diagnostics::item(d, path, &document.uri, document.version))
            .collect();
    }
    let header_failed = document.header_error().is_some();
    Ok(object([
        ("path", path.into()),
        ("version", document.version.into()),
        ("diagnostics", counts),
        (
            "readiness",
            diagnostics::readiness(&document.diagnostics, header_failed),
        ),
        ("document_progress", document.progress.to_json()),
        (
            "receipt",
            receipt::now(runtime.documents(), &document, None).to_json(),
        ),
    ]))
}
