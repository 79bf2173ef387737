//! `lean_certify`: whether the theorems of a lock are, in the file as Lean checked it now, the
//! locked statements, proved with no `sorry`, no axiom outside the allowlist and no trick.
//!
//! Contract:
//! 1. The lock is checked first (`certify::lock::verify`: forged → `lockForged`; a lock that is
//!    not `{path, theorems: [{name, kind, header, type}, …], …}` with at least one theorem →
//!    `invalidInput`, reason `lockMalformed`; a lock of another file → `invalidParams`,
//!    reason `lockPathMismatch`). Then the file is read, synced and taken past its strict barrier: a
//!    receipt other than `complete` (stale imports, a version superseded while it was checked:
//!    also when the sync itself answers so) is the one failure `stale_snapshot` (certified
//!    false), nothing else is judged; other typed errors (a crash, a set-up failure, Lean's
//!    timeout) are the call's error. Nothing is read from `.olean`s: only the document and one twin
//!    of it.
//! 2. File-level failures: `forbidden_declaration` and `forbidden_option` (`certify::checks`),
//!    and `file_errors` for each error Lean reported on the document (at most
//!    [`MAX_ERRORS`]).
//! 3. Per theorem, in the lock's order: `theorem_missing` when no declaration has its exact
//!    full name, or Lean does not know it in the twin; else `statement_changed` when its
//!    normalized header or its elaborated type differs from the lock's, and the failures of its
//!    axioms (`#print axioms` in the same twin: `uses_sorry`, `native_decide`,
//!    `axiom_not_allowed`). `certified` is true only when there is no failure at all.
//! 4. With `bundle: true` and a certified file, the comparator bundle is written
//!    (`certify::bundle`) and `bundle_dir` returned. The result carries the document's
//!    receipt.

use serde_json::{Value, json};

use super::schema::{LeanTool, path};
use crate::lean::certify::ask::{Answer, ask, axioms, axioms_command, check_command, checked_type};
use crate::lean::certify::bundle;
use crate::lean::certify::checks::{axiom_failures, failure, forbidden};
use crate::lean::certify::lock::{find, lock_path, malformed, missing, of_file, verify};
use crate::lean::error::HostError;
use crate::lean::session::receipt::{self, ReceiptState};
use crate::lean::state::HostState;
use crate::lean::text::Position;
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
        "Certify that the theorems of a lock (from lean_lock) are still the locked statements \
         and proved, in the file as Lean checks it now (never from .olean files): no sorry, no \
         axiom beyond propext, Classical.choice and Quot.sound, no native_decide, forbidden \
         declaration or option, no error in the file. certified is true only with no failure; \
         each failure has a reason (statement_changed, theorem_missing, uses_sorry, \
         axiom_not_allowed, native_decide, forbidden_declaration, forbidden_option, \
         file_errors, stale_snapshot) and a range.",
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

/// A locked theorem.
struct Locked {
    name: String,
    header: String,
    ty: String,
}

fn locked(lock: &Value) -> Result<Vec<Locked>, HostError> {
    let theorems = lock
        .get("theorems")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("it has no theorems array"))?;
    if theorems.is_empty() {
        return Err(malformed("it locks no theorem"));
    }
    theorems
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let field = |name: &str| {
                t.get(name)
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| malformed(&format!("theorems[{i}].{name} is not a string")))
            };
            field("kind")?;
            Ok(Locked {
                name: field("name")?,
                header: field("header")?,
                ty: field("type")?,
            })
        })
        .collect()
}

/// Runs the tool (see the contract).
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let lock = call.args.object("lock")?;
    verify(lock)?;
    let theorems = locked(lock)?;
    let want_bundle = call.args.flag("bundle", false)?;
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let path = call.path_argument();
    of_file(lock, &lock_path(runtime.root().path(), &file), path)?;
    let (pin, base) = match call.finished(&runtime).await {
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
    let text = &base.text;
    let mut failures = forbidden(text);
    let errors = base.diagnostics.iter().filter(|d| d.severity == Some(1));
    for error in errors.take(MAX_ERRORS) {
        let range = error.extent().map(|r| (r.start, r.end));
        failures.push(failure("file_errors", error.message.clone(), range));
    }
    let commands: Vec<String> = theorems
        .iter()
        .flat_map(|t| [check_command(&t.name), axioms_command(&t.name)])
        .collect();
    let answers = ask(&runtime, &pin, &file, text, &commands, &caller).await?;
    let mut shown = Vec::new();
    let mut bodies = Vec::new();
    for (t, answers) in theorems.iter().zip(answers.chunks(2)) {
        let (result, body) = judge(text, t, answers, path);
        bodies.extend(body);
        shown.push(result);
    }
    let certified = failures.is_empty()
        && shown
            .iter()
            .all(|t| t["failures"].as_array().is_some_and(Vec::is_empty));
    let mut result = json!({
        "certified": certified,
        "theorems": shown,
        "failures": failures,
        "receipt": receipt.to_json(),
    });
    if want_bundle && certified {
        let names: Vec<String> = theorems.iter().map(|t| t.name.clone()).collect();
        let root = runtime.root().path();
        let dir = bundle::write(root, &base.text_sha256(), text, &names, &bodies)?;
        result["bundle_dir"] = json!(dir.display().to_string());
    }
    Ok(result)
}

/// The result on a text Lean has not finished (see the contract).
fn stale(path: &str, state: &str, receipt: Value) -> Value {
    let message = format!(
        "Lean has not finished {path} ({state}): nothing is certified on an unchecked text"
    );
    json!({
        "certified": false,
        "theorems": [],
        "failures": [failure("stale_snapshot", message, None)],
        "receipt": receipt,
    })
}

/// One theorem's result, and its body's range when it is found (see the contract).
fn judge(
    text: &str,
    t: &Locked,
    answers: &[Answer],
    path: &str,
) -> (Value, Option<(Position, Position)>) {
    let shown = |axioms: Value, failures: Vec<Value>| json!({"name": t.name, "axioms": axioms, "failures": failures});
    let said = |k: usize| match answers.get(k) {
        Some(Answer::Said(said)) => Some(said.as_str()),
        _ => None,
    };
    let (found, ty, axioms) = match (
        find(text, &t.name, true),
        said(0).and_then(checked_type),
        said(1).and_then(axioms),
    ) {
        (Some(found), Some(ty), Some(axioms)) => (found, ty, axioms),
        _ => {
            let message = missing(&t.name, path).message;
            let gone = failure("theorem_missing", message, None);
            return (shown(Value::Null, vec![gone]), None);
        }
    };
    let at = (
        found.command.start,
        found.command.body.unwrap_or(found.command.code_end),
    );
    let mut failures = Vec::new();
    if found.header != t.header {
        let message = format!(
            "{}'s statement changed: locked `{}`, now `{}`",
            t.name, t.header, found.header
        );
        failures.push(failure("statement_changed", message, Some(at)));
    } else if ty != t.ty {
        let message = format!(
            "{}'s elaborated type changed: locked `{}`, now `{ty}`",
            t.name, t.ty
        );
        failures.push(failure("statement_changed", message, Some(at)));
    }
    failures.extend(axiom_failures(&t.name, &axioms, at));
    (shown(json!(axioms), failures), Some(found.body))
}
