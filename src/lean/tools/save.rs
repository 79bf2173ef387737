//! `lean_save` and `lean_close_save`: checkpoints of a module, for the local development loop.
//!
//! Contract:
//! 1. A save is a sync first: the file is re-read, Lean's diagnostics for that version awaited
//!    (the barrier of `lean_sync`, streaming progress and live diagnostics filtered by
//!    `diagnostic_scope`), and `{path, version, diagnostics: {counts}, readiness}` is the save's
//!    `sync` result.
//! 2. A document that is not save-ready is refused: `invalidParams` "cannot save artifacts for a
//!    document with errors; diagnostics: …", with `{sync}` as data. Nothing is built.
//! 3. Then the checkpoint (`checkpoint`): `lake build +<Module>`, which re-elaborates the module
//!    in a fresh Lean process (the language server's results cannot be written out), or fetches
//!    it from Lake's artifact cache, its job lines forwarded as progress; then where Lake says
//!    the artifacts are (`lake query`), checked to exist; importers told.
//! 4. The result: `{path, module, version, source_hash, olean, ilean, c, trace, olean_server?,
//!    olean_private?, ir?, bc?, sync, document_progress, receipt}`, the paths absolute: `olean`
//!    and `c` may be in Lake's artifact cache, outside the workspace; `trace`, Lake's record of
//!    the build, is in its build directory. `source_hash` is 16 hex digits
//!    identifying the checked text (FNV-1a 64 of its UTF-8 bytes; not Lake's own hash, which
//!    depends on the toolchain).
//! 5. `lean_close_save` saves, then closes the document: `{closed: true, saved: <the save
//!    result>, document_progress, receipt}` (the save's receipt). A save that fails leaves the document open.
//! 6. Descriptions call the result a checkpoint, never CI success.

use serde_json::{Value, json};

use super::schema::{LeanTool, path, string_enum};
use crate::lean::error::HostError;
use crate::lean::lake::checkpoint::{self, Checkpoint};
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::session::receipt;
use crate::lean::state::HostState;
use crate::lean::text::file_uri;
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::runtime::Runtime;
use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// The tool names.
pub const SAVE: &str = "lean_save";
/// See [`SAVE`].
pub const CLOSE_SAVE: &str = "lean_close_save";

/// Blocking diagnostics named in a refusal's message (all are in its data).
const NAMED_IN_REFUSAL: usize = 5;

const CHECKPOINT: &str = "A development checkpoint, not CI success; it writes build artifacts, \
    never source.";

fn scope() -> Value {
    let mut scope = string_enum(
        &["errors", "all"],
        "all: also warnings and information in live logs.",
    );
    scope["default"] = json!("errors");
    scope
}

/// The catalog entries, in listing order.
pub fn specs() -> Vec<ToolSpec> {
    let properties = [("path", path()), ("diagnostic_scope", scope())];
    let tool = |name, base: &str| {
        LeanTool {
            name,
            base: &format!("{base} {CHECKPOINT}"),
            properties: &properties,
            required: &["path"],
            annotations: ToolAnnotations::default(),
            execution: Execution::Concurrent,
            status: StatusNotice::WhenSlow,
        }
        .spec()
    };
    vec![
        tool(
            SAVE,
            "Build a module that has no errors (lean_sync, then `lake build +<Module>`, which \
             checks it once more) so files importing it see it; returns the artifact paths.",
        ),
        tool(CLOSE_SAVE, "lean_save, then lean_close."),
    ]
}

/// Runs one of this family's tools.
pub async fn call(
    tool: &str,
    state: &HostState,
    call: &mut LeanCall<'_>,
) -> Result<Value, HostError> {
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let saved = save(state, call, &runtime, &file).await?;
    match tool {
        SAVE => Ok(saved),
        CLOSE_SAVE => {
            let uri = file_uri(&file).into();
            runtime.documents().close(&uri, &call.caller()).await?;
            let progress = saved["document_progress"].clone();
            let receipt = saved["receipt"].clone();
            Ok(json!({
                "closed": true,
                "saved": saved,
                "document_progress": progress,
                "receipt": receipt,
            }))
        }
        other => Err(HostError::internal(format!("{other} is not a save tool"))),
    }
}

async fn save(
    state: &HostState,
    call: &LeanCall<'_>,
    runtime: &Runtime,
    file: &std::path::Path,
) -> Result<Value, HostError> {
    let set = runtime.documents();
    let caller = call.caller();
    let (_pin, document, _) = call.settled(runtime).await?;
    let path = call.path_argument();
    let sync = call.sync_result(&document);
    if sync["readiness"]["save_ready"] != true {
        return Err(refusal(&document.diagnostics, sync));
    }
    let lake = state.lake(&call.root);
    let Checkpoint { module, artifacts } = checkpoint::write(
        &state.checkpoints,
        lake,
        runtime,
        file,
        &document.text,
        &sync,
        &caller,
    )
    .await?;
    let receipt = receipt::now(set, &document, None).to_json();
    // The latest observation of the checked version (a newer version is another text).
    let progress = set
        .mirror()
        .get(&document.uri)
        .filter(|d| d.lsp_version == document.lsp_version)
        .map_or(document.progress, |d| d.progress);
    let mut result = json!({
        "path": path,
        "module": module,
        "version": document.version,
        "source_hash": source_hash(&document.text),
        "sync": sync,
        "document_progress": progress.to_json(),
        "receipt": receipt,
    });
    if let Value::Object(fields) = &mut result {
        fields.extend(artifacts.fields());
    }
    Ok(result)
}

fn refusal(diagnostics: &[Diagnostic], sync: Value) -> HostError {
    let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.is_error()).collect();
    let mut named: Vec<String> = errors
        .iter()
        .take(NAMED_IN_REFUSAL)
        .map(|d| {
            let at = d.start().unwrap_or_default();
            let first = d.message.lines().next().unwrap_or_default();
            // The tools' numbers, so the agent can pass them on as they are.
            format!("{}:{}: {first}", at.line, at.character)
        })
        .collect();
    if errors.len() > NAMED_IN_REFUSAL {
        named.push(format!("… and {} more", errors.len() - NAMED_IN_REFUSAL));
    }
    HostError::invalid_params(format!(
        "cannot save artifacts for a document with errors; diagnostics: {} (at 0-based \
         line:character)",
        named.join(" | ")
    ))
    .with_data(json!({ "sync": sync }))
}

/// 16 hex digits identifying a text: FNV-1a 64 of its UTF-8 bytes.
fn source_hash(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::error::code;

    #[test]
    fn the_source_hash_is_fnv1a_in_16_hex_digits() {
        assert_eq!(source_hash(""), "cbf29ce484222325");
        assert_eq!(source_hash("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn a_refusal_names_the_first_errors_and_carries_the_sync() {
        let error = |line: u64, message: &str| {
            Diagnostic::new(json!({
                "severity": 1, "message": message,
                "range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 6}}
            }))
        };
        let mut set: Vec<Diagnostic> = (0..7).map(|n| error(n, "bad\nmore")).collect();
        set.push(Diagnostic::new(json!({"severity": 2, "message": "fine"})));
        let refused = refusal(&set, json!({"version": 3}));
        assert_eq!(refused.code, code::INVALID_PARAMS);
        assert!(
            refused.message.starts_with(
                "cannot save artifacts for a document with errors; diagnostics: 0:4: bad | 1:4: bad"
            ),
            "{}",
            refused.message
        );
        assert!(
            refused
                .message
                .ends_with("| … and 2 more (at 0-based line:character)"),
            "{}",
            refused.message
        );
        assert_eq!(refused.data.unwrap()["sync"]["version"], 3);
    }
}
