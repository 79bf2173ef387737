//! `lean_run_at`, `lean_run_at_handle`, `lean_run_with`, `lean_run_with_linear`, `lean_release`:
//! trying text at a position of a document without touching the document or its file.
//!
//! Contract:
//! 1. A run happens in the document's twin (see `twins`, `probe`): the real text before the
//!    anchor, then the probe. The user's document, its version and its diagnostics are never
//!    touched; nothing is written to the project's sources.
//! 2. `lean_run_at*` take a version that must be current and a position inside the document.
//!    Where Lean has proof goals (`$/lean/plainGoal` is not empty; asked once per document
//!    version and position, see `modes`) the text is a tactic block
//!    run in that proof state, anchored at the tactic that starts the position's line when the
//!    position is in its indentation; elsewhere it is one command (more is refused with
//!    `success: false` and a `runAtSupportsOneCommandOnly:` message, without asking Lean).
//! 3. The result is `{success, messages, traces, proof_state, next_handle}`: `success` when the
//!    probe raised no error; `proof_state` the goals after the probe (tactic mode, on success),
//!    else `null`; `next_handle` only from the handle tools, on success.
//! 4. `lean_run_with` continues a handle's state with more text (the probe is the handle's texts
//!    then this one) and keeps the handle; `lean_run_with_linear` consumes it first, whatever
//!    the run's outcome. A handle is checked against this process, workspace, runtime, file and
//!    the file's current version (see `handles`); `lean_release` forgets one (a stale handle
//!    may still be released).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::OwnedMutexGuard;

use super::documents::barrier;
use super::goals::plain_goals;
use super::schema::{LeanTool, character, line, path, read_only, version};
use crate::lean::error::{HostError, code};
use crate::lean::progress::LiveDiagnostics;
use crate::lean::session::mirror::Document;
use crate::lean::speculation::handles::{Expected, HandleState};
use crate::lean::speculation::probe::{self, TwinText};
use crate::lean::speculation::twins::{self, TwinDocument};
use crate::lean::state::HostState;
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::runtime::Runtime;
use crate::mcp::{ToolAnnotations, ToolSpec};

/// The tool names.
pub const RUN_AT: &str = "lean_run_at";
/// See [`RUN_AT`].
pub const RUN_AT_HANDLE: &str = "lean_run_at_handle";
/// See [`RUN_AT`].
pub const RUN_WITH: &str = "lean_run_with";
/// See [`RUN_AT`].
pub const RUN_WITH_LINEAR: &str = "lean_run_with_linear";
/// See [`RUN_AT`].
pub const RELEASE: &str = "lean_release";

/// What the run tools say about IO.
const NOT_A_SANDBOX: &str = "Speculative execution isolates Beam's source and document state, \
    but it is not an OS sandbox; Lean commands and project metaprogramming may perform IO.";
const KEEP_A_RESULT: &str = "Nothing is persisted: to keep a result, first edit and save the \
    Lean file with the client's normal file-editing tool, and only then call lean_sync.";

fn run_at_text() -> Value {
    json!({
        "type": "string",
        "description": "One Lean command or tactic block to run at the selected position. \
                        Top-level command sequences are not accepted by one runAt call."
    })
}

fn run_with_text() -> Value {
    json!({
        "type": "string",
        "description": "One Lean continuation command or tactic block to run from the stored \
                        handle."
    })
}

fn handle() -> Value {
    json!({
        "type": "object",
        "description": "An opaque handle returned as next_handle by lean_run_at_handle, \
                        lean_run_with or lean_run_with_linear, passed back unchanged."
    })
}

/// The catalog entries of the run tools (`lean_run_at`, `lean_run_at_handle`), in order.
pub fn run_at_specs() -> Vec<ToolSpec> {
    let properties = [
        ("path", path()),
        ("version", version()),
        ("line", line()),
        ("character", character()),
        ("text", run_at_text()),
    ];
    let required = ["path", "version", "line", "character", "text"];
    let run_at = format!(
        "Speculatively test one Lean command or tactic block at a file position, without \
         retaining follow-up state. {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    let run_at_handle = format!(
        "Speculatively test one Lean command or tactic block at a file position. A successful \
         result may include next_handle for follow-up execution. {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    vec![
        LeanTool::concurrent(RUN_AT, &run_at, &properties, &required, read_only()),
        LeanTool::concurrent(
            RUN_AT_HANDLE,
            &run_at_handle,
            &properties,
            &required,
            ToolAnnotations::default(),
        ),
    ]
}

/// The catalog entries of the handle tools (`lean_run_with`, `lean_run_with_linear`,
/// `lean_release`), in order.
pub fn handle_specs() -> Vec<ToolSpec> {
    let properties = [
        ("path", path()),
        ("handle", handle()),
        ("text", run_with_text()),
    ];
    let required = ["path", "handle", "text"];
    let run_with = format!(
        "Continue speculative execution from a stored Lean handle without consuming it; a \
         successful result may include next_handle. {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    let linear = format!(
        "Continue speculative execution from a stored Lean handle and consume it, on success \
         and on failure; a successful result may include next_handle. {KEEP_A_RESULT} \
         {NOT_A_SANDBOX}"
    );
    let none = ToolAnnotations::default;
    vec![
        LeanTool::concurrent(RUN_WITH, &run_with, &properties, &required, none()),
        LeanTool::concurrent(RUN_WITH_LINEAR, &linear, &properties, &required, none()),
        LeanTool::concurrent(
            RELEASE,
            "Release a stored Lean follow-up handle.",
            &properties[..2],
            &required[..2],
            none(),
        ),
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
    let document = runtime.sync_document(&file).await?.document;
    let key = call.root.key();
    let expect = |strict: bool| Expected {
        workspace: &key,
        epoch: strict.then_some(runtime.epoch()),
        uri: &document.uri,
        version: strict.then_some(document.version),
    };
    let handle_argument = call.args.get("handle").unwrap_or(&Value::Null);
    match tool {
        RUN_AT | RUN_AT_HANDLE => {
            call.check_version(&document)?;
            call.position(&document)?;
            let start = start_at(call, &runtime, &document).await?;
            run(
                call,
                state,
                &runtime,
                &file,
                &document,
                start,
                tool == RUN_AT_HANDLE,
            )
            .await
        }
        RUN_WITH | RUN_WITH_LINEAR => {
            let handle = state.handles.check(handle_argument, expect(true))?;
            if tool == RUN_WITH_LINEAR {
                state.handles.consume(&handle);
            }
            let mut start = handle.state;
            start.steps.push(call.text("text").to_owned());
            run(call, state, &runtime, &file, &document, start, true).await
        }
        RELEASE => {
            let handle = state.handles.check(handle_argument, expect(false))?;
            state.handles.release(&handle);
            Ok(json!({"result": null}))
        }
        other => Err(HostError::new(
            code::INTERNAL_ERROR,
            format!("{other} is not a speculative tool"),
        )),
    }
}

/// Where a `lean_run_at*` call runs, and in which mode (see the contract).
async fn start_at(
    call: &LeanCall<'_>,
    runtime: &Runtime,
    document: &Document,
) -> Result<HandleState, HostError> {
    let line = call.natural("line").unwrap_or_default() as u32;
    let mut character = call.natural("character").unwrap_or_default() as u32;
    let modes = runtime.proof_modes();
    let known = modes.get(&document.uri, document.lsp_version, line, character);
    let tactic = match known {
        Some(tactic) => tactic,
        None => {
            let position = json!({"line": line, "character": character});
            let goals = plain_goals(call, runtime, document, position).await?;
            let tactic = goals.is_some_and(|goals| !goals.is_empty());
            modes.remember(&document.uri, document.lsp_version, line, character, tactic);
            tactic
        }
    };
    if tactic {
        // A position in a tactic's indentation means that tactic: the probe takes its column.
        let text = document
            .text
            .split('\n')
            .nth(line as usize)
            .unwrap_or_default();
        let indentation = text.len() - text.trim_start().len();
        let column = text[..indentation].encode_utf16().count() as u32;
        if character < column && !text.trim().is_empty() {
            character = column;
        }
    }
    Ok(HandleState {
        workspace: call.root.key(),
        epoch: runtime.epoch(),
        uri: document.uri.to_string(),
        version: document.version,
        line,
        character,
        tactic,
        steps: vec![call.text("text").to_owned()],
    })
}

/// Runs `start`'s steps in the twin and answers (see the contract).
async fn run(
    call: &LeanCall<'_>,
    state: &HostState,
    runtime: &Runtime,
    file: &Path,
    document: &Document,
    start: HandleState,
    store: bool,
) -> Result<Value, HostError> {
    let last = start.steps.last().map(String::as_str).unwrap_or_default();
    if !start.tactic {
        let extra = probe::extra_commands(last);
        if !extra.is_empty() {
            return Ok(json!({
                "success": false,
                "messages": [{"severity": "error", "text": probe::one_command_message(&extra)}],
                "traces": [],
                "proof_state": null,
                "next_handle": null,
            }));
        }
    }
    let anchor = probe::offset_of(&document.text, start.line, start.character);
    let twin_text = probe::twin_text(&document.text, anchor, &start.steps, start.tactic);
    let (ran, _lease) = in_twin(call, runtime, file, &twin_text).await?;
    let (success, messages, traces) = probe::outcome(&ran.diagnostics, twin_text.start);
    let proof_state = if start.tactic && success {
        let (line, character) = twin_text.end;
        let at = json!({"line": line, "character": character});
        plain_goals(call, runtime, &ran, at)
            .await?
            .map_or(Value::Null, |goals| json!({ "goals": goals }))
    } else {
        Value::Null
    };
    let next_handle = if store && success {
        state.handles.mint(start)
    } else {
        Value::Null
    };
    Ok(json!({
        "success": success,
        "messages": messages,
        "traces": traces,
        "proof_state": proof_state,
        "next_handle": next_handle,
    }))
}

/// Gives the file's twin `text` and waits until Lean has finished it; the twin as it then
/// stands, held for this run. A Lake that cannot set up a sibling twin moves the runtime's
/// twins to disk, and the run is tried there.
async fn in_twin(
    call: &LeanCall<'_>,
    runtime: &Runtime,
    file: &Path,
    text: &TwinText,
) -> Result<(Document, OwnedMutexGuard<()>), HostError> {
    let mut fell_back = false;
    loop {
        let (twin, displaced) = runtime.twins().twin_of(file);
        for old in displaced {
            runtime.close_twin(&old).await;
        }
        let lease = twin.lease().await;
        twin.set_probe_start(text.start);
        write_if_on_disk(&twin, &text.text).await?;
        let mut events = runtime.documents().subscribe();
        let synced = runtime
            .set_text(twin.uri.clone(), Arc::from(text.text.as_str()))
            .await;
        let ran = barrier(
            call,
            runtime,
            synced.document,
            &mut events,
            LiveDiagnostics::Off,
        )
        .await?;
        let failed_setup = ran
            .diagnostics
            .iter()
            .any(|d| twins::is_setup_failure(&d.message));
        if failed_setup && twin.written.is_none() && !fell_back {
            tracing::info!(
                uri = %twin.uri,
                "Lake cannot set up a file that is not on disk; twins move to .lake/beam/twins"
            );
            runtime.twins().fall_back_to_disk(&twin);
            drop(lease);
            runtime.close_twin(&twin).await;
            fell_back = true;
            continue;
        }
        return Ok((ran, lease));
    }
}

async fn write_if_on_disk(twin: &TwinDocument, text: &str) -> Result<(), HostError> {
    let Some(path) = &twin.written else {
        return Ok(());
    };
    let write = async {
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        tokio::fs::write(path, text).await
    };
    write.await.map_err(|e| {
        HostError::new(
            code::INTERNAL_ERROR,
            format!(
                "cannot write the speculative twin {}: {e}; check that the workspace's .lake \
                 directory is writable",
                path.display()
            ),
        )
    })
}
