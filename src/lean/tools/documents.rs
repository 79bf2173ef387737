//! `lean_update`, `lean_sync`, `lean_refresh`, `lean_close`: the document lifecycle and the
//! diagnostics barrier.
//!
//! Contract:
//! 1. `lean_update` re-reads the file and brings Lean's copy up to date without waiting:
//!    `{version, changed}`.
//! 2. `lean_sync` does the same, then waits on `textDocument/waitForDiagnostics` for that
//!    version (the only message an unchanged document costs), streaming progress and live
//!    diagnostics, and answers `{path, version, diagnostics: {counts, items?}, readiness,
//!    document_progress}`. Counts and readiness are always complete; `diagnostic_scope` (errors
//!    or all) filters live logs and items, `diagnostics_in_result` adds the items.
//! 3. A document whose imports are out of date is not final: `syncBarrierIncomplete`, with the
//!    stale notices and a recovery plan.
//! 4. `lean_refresh` closes the document, reopens it from disk (its imports rebuilt if needed)
//!    and syncs; `lean_close` closes it and is idempotent.

use serde_json::{Value, json};
use tokio::sync::broadcast::Receiver;

use super::schema::{LeanTool, path, string_enum};
use super::wait::watched;
use crate::lean::error::{HostError, code};
use crate::lean::progress::LiveDiagnostics;
use crate::lean::session::diagnostics;
use crate::lean::session::mirror::{DocEvent, Document};
use crate::lean::state::HostState;
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
        "Which diagnostics live logs and result items include: errors (the default) or all \
         severities. Counts and readiness always cover everything.",
    );
    scope["default"] = json!("errors");
    scope
}

fn in_result() -> Value {
    json!({
        "type": "boolean",
        "default": false,
        "description": "Also return the current diagnostics (filtered by diagnostic_scope) in the \
                        result, for clients that do not keep log notifications."
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
    let mut close = tool(CLOSE, "Close the tracked LSP document.", &path_only);
    close.annotations.idempotent_hint = Some(true);
    vec![
        tool(
            UPDATE,
            "Read one Lean file from disk into Beam's document mirror and return its version \
             and whether it changed, without waiting for diagnostics.",
            &path_only,
        ),
        tool(
            SYNC,
            "Read one Lean file from disk, wait until Lean has finished it, and return its \
             version, diagnostic counts, readiness and progress. Use the returned version with \
             the position tools. This never applies or recovers speculative text.",
            &with_diagnostics,
        ),
        tool(
            REFRESH,
            "Close the tracked Lean document, reread it from disk (rebuilding out-of-date \
             imports) and wait for fresh diagnostics.",
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
    let runtime = call.runtime(&state.registry).await?;
    match tool {
        UPDATE => {
            let synced = call.document(&runtime).await?;
            Ok(json!({"version": synced.document.version, "changed": synced.changed}))
        }
        SYNC => sync(call, &runtime, false).await,
        REFRESH => sync(call, &runtime, true).await,
        CLOSE => {
            runtime.close_document(&call.file_to_close()?).await;
            Ok(json!({"closed": true}))
        }
        other => Err(HostError::new(
            code::INTERNAL_ERROR,
            format!("{other} is not a document tool"),
        )),
    }
}

async fn sync(call: &LeanCall<'_>, runtime: &Runtime, reopen: bool) -> Result<Value, HostError> {
    let file = call.file()?;
    if reopen {
        runtime.close_document(&file).await;
    }
    let all = call.text("diagnostic_scope") == "all";
    let live = if all {
        LiveDiagnostics::All
    } else {
        LiveDiagnostics::Errors
    };
    let mut events = runtime.documents().subscribe();
    let synced = runtime.sync_document(&file).await?;
    let document = barrier(call, runtime, synced.document, &mut events, live).await?;
    let path = call.path_argument();
    let mut counts = json!({"counts": diagnostics::counts(&document.diagnostics)});
    if call.args.get("diagnostics_in_result") == Some(&Value::Bool(true)) {
        counts["items"] = document
            .diagnostics
            .iter()
            .filter(|d| d.in_scope(all))
            .map(|d| diagnostics::item(d, path, &document.uri, document.version))
            .collect();
    }
    Ok(json!({
        "path": path,
        "version": document.version,
        "diagnostics": counts,
        "readiness": diagnostics::readiness(&document.diagnostics),
        "document_progress": document.progress.to_json(),
    }))
}

/// Waits until Lean has published everything for the document's current version, reporting
/// as it goes; the document as it then stands. When the document moved on meanwhile (another
/// call changed it, or its worker was revived), waits for the version Lean now has, so the
/// counts always describe one complete version.
pub async fn barrier(
    call: &LeanCall<'_>,
    runtime: &Runtime,
    mut document: Document,
    events: &mut Receiver<DocEvent>,
    live: LiveDiagnostics,
) -> Result<Document, HostError> {
    let method = "textDocument/waitForDiagnostics";
    let params = |d: &Document| json!({"uri": &*d.uri, "version": d.lsp_version});
    loop {
        let (_, waited) = watched(call, runtime, &document, events, live, method, params).await?;
        let current = runtime.documents().get(&document.uri).ok_or_else(|| {
            HostError::new(
                code::CONTENT_MODIFIED,
                format!(
                    "{} was closed while Lean processed it",
                    call.path_argument()
                ),
            )
        })?;
        if current.lsp_version == waited {
            if !current.stale.is_empty() {
                return Err(stale_imports(call.path_argument(), &current));
            }
            return Ok(current);
        }
        document = current;
    }
}

fn stale_imports(path: &str, document: &Document) -> HostError {
    let notices: Vec<Value> = document
        .stale
        .iter()
        .map(|d| json!({"range": d.range(), "severity": d.severity_name(), "message": d.message}))
        .collect();
    HostError::new(
        code::SYNC_BARRIER_INCOMPLETE,
        format!(
            "{path}: Lean reports that its imports are out of date, so its diagnostics are not \
             final. Call lean_refresh on {path} to reopen it and rebuild its imports (or run \
             `lake build` in the workspace first)"
        ),
    )
    .with_data(json!({
        "reason": "staleImports",
        "targetPath": path,
        "version": document.version,
        "staleDirectDeps": [],
        "completionBlockingDiagnostics": notices,
        "recoveryPlan": [
            format!("lean_refresh {path}"),
            format!("lake build, then lean_refresh {path}"),
        ],
    }))
}
