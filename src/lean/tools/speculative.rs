//! `lean_run_at`, `lean_run_at_handle`, `lean_run_with`, `lean_run_with_linear`, `lean_release`:
//! trying text at a position of a document without touching the document or its file.
//!
//! Contract:
//! 1. A run happens in the document's twin (`speculation/run.rs`): the real text before the
//!    anchor, then the probe. The user's document, its version and its diagnostics are never
//!    touched; nothing is written to the project's sources. The call pins the document for the
//!    whole run.
//! 2. `lean_run_at*` take a version that must be current and a position inside the document;
//!    the run's mode and anchor are Lean's (`run::start_at`); a command-mode text of more than
//!    one command is refused with `success: false` and a `runAtSupportsOneCommandOnly:` message,
//!    without asking Lean. A text that writes a terminal command (`#exit`, an `import` after the
//!    header) is refused with `terminalCommand` before Lean is asked anything (`probe`), for
//!    every run tool (a linear handle is spent all the same).
//! 3. The result is the run's verdict `{success, messages, traces, proof_state, uses_sorry,
//!    sorry_unconfirmed?}` (`run`: `uses_sorry` from Lean's axioms, not its warnings),
//!    `next_handle`, only from the handle tools, on success, and the `receipt` of the document's
//!    version the run's text came from, in the state of the twin's strict barrier for that text
//!    (`superseded` when the document moved on meanwhile).
//! 4. `lean_run_with` continues a handle's state with more text (the probe is the handle's texts
//!    then this one) and keeps the handle; `lean_run_with_linear` spends it first, whatever the
//!    run's outcome, in the same step as it is checked (two linear runs never spend one
//!    handle). A handle is checked against this process, workspace, runtime, file and the
//!    file's current version (see `handles`). `lean_release` forgets one (a stale handle may
//!    still be released) and needs no Lean: it never starts one, and the file may be gone.

use std::path::Path;

use serde_json::{Value, json};

use super::schema::{LeanTool, character, line, path, read_only, version};
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::session::Pin;
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt;
use crate::lean::speculation::handles::{Expected, HandleState};
use crate::lean::speculation::{probe, run};
use crate::lean::state::HostState;
use crate::lean::text::{Position, file_uri, offset_of};
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
const NOT_A_SANDBOX: &str = "It runs in a hidden copy of the file, but is no OS sandbox: Lean \
    code may do IO.";
const KEEP_A_RESULT: &str = "Nothing is persisted: to keep a result, edit the file yourself, \
    then lean_sync.";

fn run_at_text() -> Value {
    json!({
        "type": "string",
        "description": "One tactic block or command (not a sequence of commands)."
    })
}

fn run_with_text() -> Value {
    json!({
        "type": "string",
        "description": "One tactic block or command to run from the handle."
    })
}

fn handle() -> Value {
    json!({
        "type": "object",
        "description": "A next_handle, passed back unchanged."
    })
}

/// Not read-only, yet not destructive: the tool's only Beam-managed effect is additive (it may
/// retain a fresh handle, and consumes none), as the seed annotates `lean_run_at_handle` and
/// `lean_run_with`.
fn additive() -> ToolAnnotations {
    ToolAnnotations {
        destructive_hint: Some(false),
        ..ToolAnnotations::default()
    }
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
        "Try a tactic or command at a position of the synced file without editing it: whether \
         it worked, its messages, the goals after it. {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    let run_at_handle = format!(
        "As lean_run_at, and a success returns next_handle to continue from with lean_run_with. \
         {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    vec![
        LeanTool::concurrent(RUN_AT, &run_at, &properties, &required, read_only()),
        LeanTool::concurrent(
            RUN_AT_HANDLE,
            &run_at_handle,
            &properties,
            &required,
            additive(),
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
        "Run the next tactic or command from a handle, which stays usable; a success returns \
         next_handle. {KEEP_A_RESULT} {NOT_A_SANDBOX}"
    );
    let linear = format!(
        "As lean_run_with, but the handle is used up either way. {KEEP_A_RESULT} \
         {NOT_A_SANDBOX}"
    );
    let none = ToolAnnotations::default;
    vec![
        LeanTool::concurrent(RUN_WITH, &run_with, &properties, &required, additive()),
        LeanTool::concurrent(RUN_WITH_LINEAR, &linear, &properties, &required, none()),
        LeanTool::concurrent(
            RELEASE,
            "Forget a handle.",
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
    let handle_argument = call.args.object("handle");
    let key = call.root.key();
    if tool == RELEASE {
        let uri = file_uri(&call.file_to_close()?);
        let expect = Expected {
            workspace: &key,
            epoch: None,
            uri: &uri,
            version: None,
        };
        state.handles.release(handle_argument?, expect)?;
        return Ok(json!({"result": null}));
    }
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let (pin, synced) = call.document(&runtime).await?;
    let document = synced.document;
    let caller = call.caller();
    let run = Run {
        state,
        runtime: &runtime,
        pin: &pin,
        file: &file,
        document: &document,
        caller: &caller,
    };
    match tool {
        RUN_AT | RUN_AT_HANDLE => {
            let version = call.args.version()?;
            let at = call.args.position("line", "character")?;
            let text = call.args.text("text")?;
            call.check_version(&document, version)?;
            let at = call.inside(&document, at)?;
            let anchor = offset_of(&document.text, at);
            probe::refuse_terminal(&document.text, anchor, text)?;
            let modes = &state.modes;
            let start = run::start_at(&runtime, &document, at, text, modes, &caller).await?;
            run.answer(start, tool == RUN_AT_HANDLE).await
        }
        RUN_WITH | RUN_WITH_LINEAR => {
            let expect = Expected {
                workspace: &key,
                epoch: Some(runtime.epoch()),
                uri: &document.uri,
                version: Some(document.version),
            };
            let handle = if tool == RUN_WITH_LINEAR {
                state.handles.spend(handle_argument?, expect)?
            } else {
                state.handles.check(handle_argument?, expect)?
            };
            let mut start = handle.state;
            let text = call.args.text("text")?;
            let at = Position::new(start.line, start.character);
            probe::refuse_terminal(&document.text, offset_of(&document.text, at), text)?;
            start.steps.push(text.to_owned());
            run.answer(start, true).await
        }
        other => Err(HostError::internal(format!(
            "{other} is not a speculative tool"
        ))),
    }
}

/// What one run call holds.
struct Run<'a> {
    state: &'a HostState,
    runtime: &'a Runtime,
    pin: &'a Pin,
    file: &'a Path,
    document: &'a Document,
    caller: &'a Caller<'a>,
}

impl Run<'_> {
    /// Runs `start`'s steps and answers, with a handle for the state reached when `store` and
    /// the run succeeded.
    async fn answer(&self, start: HandleState, store: bool) -> Result<Value, HostError> {
        let verdict = run::run(
            self.runtime,
            self.pin,
            self.file,
            self.document,
            &start,
            &self.state.verdicts,
            self.caller,
        )
        .await?;
        let next_handle = if store && verdict.success {
            self.state.handles.mint(start)
        } else {
            Value::Null
        };
        let mut result = verdict.to_json();
        result["next_handle"] = next_handle;
        let set = self.runtime.documents();
        let checked = Some(verdict.checked);
        result["receipt"] = receipt::now(set, self.document, checked).to_json();
        Ok(result)
    }
}
