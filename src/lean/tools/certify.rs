//! `lean_certify`: whether the theorems of a lock are, in the file as Lean checked it now, the
//! locked statements, proved with no `sorry`, no axiom outside the allowlist and nothing the
//! kernel refuses, judged from the certification checker's answer about the built module.
//!
//! Contract:
//! 1. The lock is checked first (`certify::lock`: forged → `lockForged`; not a lock of this
//!    server's shape, with at least one theorem → `invalidInput`, reason `lockMalformed`; a
//!    lock of another file → `invalidParams`, reason `lockPathMismatch`). Then the file is read,
//!    synced and taken past its strict barrier: a receipt other than `complete` (stale imports,
//!    a version superseded while it was checked: also when the sync itself answers so) is the
//!    one failure `staleSnapshot` (certified false), nothing else is judged; other typed errors
//!    (a crash, a set-up failure, Lean's timeout) are the call's error.
//! 2. The fast refusals, with nothing built: the pre-filter (`certify::checks`:
//!    `forbiddenDeclaration`, `forbiddenOption`), `fileErrors` for each error Lean reported
//!    on the document (at most [`MAX_ERRORS`]), and `toolchainChanged` when the workspace's
//!    toolchain is not the lock's (relock: closures are compared within one toolchain).
//! 3. Otherwise the module is built from exactly that text and the checker asked about the
//!    locked full names (`certify::answers`; an unchanged file reuses the last answer, nothing
//!    built or run). A checker that fails is the one failure `checkerFailed` (its words, the
//!    toolchain); a theorem whose components Lean prints as another name than the lock's is a
//!    malformed lock; a Lean version that is not the lock's is `toolchainChanged`. Per theorem, in
//!    the lock's order, the failures `certify::checks::judge` finds in the answer alone.
//!    `certified` is true only when there is no failure at all.
//! 4. With `bundle: true` and a certified file, the comparator bundle is written
//!    (`certify::bundle`) and `bundle_dir` returned. The result carries the document's
//!    receipt.

use serde_json::{Value, json};

use super::schema::{LeanTool, path};
use crate::lean::certify::answers::{self, Question};
use crate::lean::certify::bundle;
use crate::lean::certify::checks::{Range, failure, forbidden, judge};
use crate::lean::certify::lock::{LockRead, find, lock_path, malformed, of_file, read, verify};
use crate::lean::error::HostError;
use crate::lean::session::receipt::{self, ReceiptState};
use crate::lean::state::HostState;
use crate::lean::tools::call::LeanCall;
use crate::mcp::{ToolAnnotations, ToolSpec};

/// The tool's name.
pub const CERTIFY: &str = "lean_certify";

/// The most `file_errors` failures one result lists.
pub const MAX_ERRORS: usize = 20;

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let properties = [
        ("path", path()),
        (
            "lock",
            json!({"type": "object", "description": "The lock lean_lock returned, unchanged."}),
        ),
        (
            "bundle",
            json!({"type": "boolean", "default": false,
                   "description": "When certified, also write the comparator bundle under \
                                   <root>/.beam/certify/."}),
        ),
    ];
    LeanTool::concurrent(
        CERTIFY,
        "Certify that the theorems of a lock (from lean_lock) are the locked statements and \
         proved: builds the module from the text Lean checked and asks a separate checker \
         process, never the file's messages: same statement closure, axioms within propext, \
         Classical.choice, Quot.sound (full names), kernel replay of the workspace's \
         constants, no error in the file. certified is true only with no failure, each with \
         a reason (statementChanged, usesSorry, axiomsNotAllowed, replayFailed, \
         toolchainChanged, checkerFailed, …) and a range. Trusts the toolchain and dependency \
         packages.",
        &properties,
        &["path", "lock"],
        ToolAnnotations {
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            ..ToolAnnotations::default()
        },
    )
}

/// Runs the tool (see the contract).
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let lock = call.args.object("lock")?;
    verify(lock)?;
    let locked = read(lock)?;
    let want_bundle = call.args.flag("bundle", false)?;
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let path = call.path_argument();
    of_file(lock, &lock_path(runtime.root().path(), &file), path)?;
    let (_pin, base) = match call.finished(&runtime).await {
        Ok(finished) => finished,
        Err(error) => match receipt::state_for_error(&error) {
            Some(state @ (ReceiptState::StaleImports(_) | ReceiptState::Superseded)) => {
                let error = call.with_receipt(error);
                let shown = error.data.as_ref().and_then(|d| d.get("receipt")).cloned();
                return Ok(stale(path, state.name(), shown.unwrap_or(Value::Null)));
            }
            _ => return Err(error),
        },
    };
    let caller = call.caller();
    let receipt = receipt::now(runtime.documents(), &base, None);
    if receipt.state != ReceiptState::Complete {
        return Ok(stale(path, receipt.state.name(), receipt.to_json()));
    }
    let shown_receipt = receipt.to_json();
    let refused = |failures: Vec<Value>| json!({"certified": false, "theorems": [], "failures": failures, "receipt": shown_receipt});
    let text = &base.text;
    let mut failures = forbidden(text);
    let errors = base.diagnostics.iter().filter(|d| d.is_error());
    for error in errors.take(MAX_ERRORS) {
        let range = error.extent().map(|r| (r.start, r.end));
        failures.push(failure("fileErrors", error.message.clone(), range));
    }
    if receipt.toolchain != locked.toolchain {
        failures.push(toolchain_changed(
            &locked,
            receipt.toolchain.as_deref(),
            None,
        ));
    }
    if !failures.is_empty() {
        return Ok(refused(failures));
    }
    let sync = call.sync_result(&base);
    let question = Question {
        file: &file,
        text,
        receipt: &receipt,
        sync: &sync,
        names: locked
            .theorems
            .iter()
            .map(|t| t.components.clone())
            .collect(),
        list_theorems: false,
    };
    let lake = state.lake(&call.root);
    let asked = answers::ask(
        &state.answers,
        &state.checkpoints,
        lake,
        &runtime,
        question,
        &caller,
    );
    let answered = match asked.await {
        Ok(answered) => answered,
        Err(error)
            if error
                .data
                .as_ref()
                .is_some_and(|d| d["reason"] == "checkerFailed") =>
        {
            let mut failed = failure("checkerFailed", error.message, None);
            if let (Some(fields), Some(data)) = (failed.as_object_mut(), error.data) {
                fields.insert("what".into(), data["what"].clone());
                fields.insert("lean_output".into(), data["leanOutput"].clone());
                fields.insert("toolchain".into(), data["toolchain"].clone());
            }
            return Ok(refused(vec![failed]));
        }
        Err(error) => return Err(error),
    };
    let response = &answered.response;
    let named = locked.theorems.iter().zip(&response.theorems);
    if let Some((t, _)) = named.clone().find(|(t, found)| found.printed != t.name) {
        return Err(malformed(&format!(
            "the components of {} name another constant",
            t.name
        )));
    }
    if response.lean_version != locked.lean_version {
        let now = Some(response.lean_version.as_str());
        let changed = toolchain_changed(&locked, receipt.toolchain.as_deref(), now);
        return Ok(refused(vec![changed]));
    }
    let mut shown = Vec::new();
    let mut bodies = Vec::new();
    for (t, found) in named {
        let place = find(text, &t.name, true);
        let at: Option<Range> = place.as_ref().map(|f| {
            (
                f.command.start,
                f.command.body.unwrap_or(f.command.code_end),
            )
        });
        bodies.extend(place.map(|f| f.body));
        shown.push(json!({
            "name": t.name,
            "type": found.ty,
            "axioms": found.axioms,
            "failures": judge(t, found, &answered.module, at),
        }));
    }
    let certified = shown
        .iter()
        .all(|t| t["failures"].as_array().is_some_and(Vec::is_empty));
    let mut result = json!({
        "certified": certified,
        "theorems": shown,
        "failures": [],
        "receipt": receipt.to_json(),
    });
    if want_bundle && certified {
        let names: Vec<String> = locked.theorems.iter().map(|t| t.name.clone()).collect();
        let root = runtime.root().path();
        let dir = bundle::write(root, &base.text_sha256(), text, &names, &bodies)?;
        result["bundle_dir"] = json!(dir.display().to_string());
    }
    Ok(result)
}

/// `toolchainChanged`: the lock was taken under another toolchain (or Lean version `lean`).
fn toolchain_changed(locked: &LockRead, now: Option<&str>, lean: Option<&str>) -> Value {
    let shown = |t: Option<&str>| t.unwrap_or("(no lean-toolchain)").to_owned();
    let message = match lean {
        Some(lean) => format!(
            "the lock was taken under Lean {}, the workspace now runs Lean {lean}: take a new \
             lock with lean_lock (statements are compared within one toolchain)",
            locked.lean_version
        ),
        None => format!(
            "the lock was taken under toolchain {}, the workspace now has {}: take a new lock \
             with lean_lock (statements are compared within one toolchain)",
            shown(locked.toolchain.as_deref()),
            shown(now)
        ),
    };
    failure("toolchainChanged", message, None)
}

/// The result on a text Lean has not finished (see the contract).
fn stale(path: &str, state: &str, receipt: Value) -> Value {
    let message = format!(
        "Lean has not finished {path} ({state}): nothing is certified on an unchecked text"
    );
    json!({
        "certified": false,
        "theorems": [],
        "failures": [failure("staleSnapshot", message, None)],
        "receipt": receipt,
    })
}
