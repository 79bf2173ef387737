//! `lean_lock`: the statements of named theorems of a file, as Lean has them, in a value to
//! pass back to `lean_certify` unchanged.
//!
//! Contract:
//! 1. The file is read and synced, past its strict barrier; a text Lean did not finish
//!    (`receipt` state other than `complete`) is refused (`invalidParams`, reason
//!    `snapshotIncomplete`, with the receipt; or the sync's own typed error, as stale imports
//!    give), and so is a text with errors (`invalidParams`, reason `fileErrors`): a lock is
//!    taken of a checked text that builds.
//! 2. Each name's candidates are the name as written and under each namespace the file enters
//!    (`certify::names`); the module is built from that text and the certification checker
//!    asked for every candidate and the module's own theorems (`certify::answers`). A name
//!    stands for the candidate the environment has, declared by this module: the name as
//!    written when it is one, else the only one. None is `theoremMissing` (with the module's
//!    theorems whose last component matches as `declared`, else the first few); two is
//!    `theoremAmbiguous` (naming them); a constant that is not a theorem is `notATheorem`. A
//!    checker that fails is `checkerFailed` (`runner`).
//! 3. The result is `{lock}` (`certify::lock`, contract 1), sealed with a `mac` when
//!    `LEAN_BEAM_LOCK_KEY` is set. It carries no receipt: the lock itself names the text
//!    (`base_sha256`) and the toolchain.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::schema::{LeanTool, path, read_only};
use crate::lean::certify::answers::{self, Question};
use crate::lean::certify::lock::{lock_path, missing, seal};
use crate::lean::certify::names::{candidates, components, printed};
use crate::lean::certify::runner::{PROTOCOL, Theorem};
use crate::lean::error::HostError;
use crate::lean::session::receipt::{self, ReceiptState};
use crate::lean::state::HostState;
use crate::lean::tools::call::LeanCall;
use crate::mcp::ToolSpec;

/// The tool's name.
pub const LOCK: &str = "lean_lock";

/// The most theorems one lock holds.
pub const MAX_THEOREMS: usize = 64;

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let properties = [
        ("path", path()),
        (
            "theorems",
            json!({
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_THEOREMS,
                "description": "Theorem names: full, or as written inside the file's \
                                namespaces (Lean decides which exist)."
            }),
        ),
    ];
    LeanTool::concurrent(
        LOCK,
        "Lock the statements of named theorems of a file before proving them (sorry is fine, \
         errors are not), for lean_certify: builds the module and asks a separate checker \
         process for each theorem's full name and statement closure. Returns {lock}, to pass \
         back unchanged (it survives a restart and records the toolchain).",
        &properties,
        &["path", "theorems"],
        read_only(),
    )
}

/// The `theorems` argument.
fn names(call: &LeanCall<'_>) -> Result<Vec<String>, HostError> {
    let given = call.args.0.get("theorems").and_then(Value::as_array);
    let given = given.ok_or_else(|| HostError::invalid_input("argument `theorems` is required"))?;
    given
        .iter()
        .enumerate()
        .map(|(n, name)| match name.as_str() {
            Some(name) if components(name).is_some() => Ok(name.to_owned()),
            _ => Err(
                HostError::invalid_input(format!("theorem {} must be a name", n + 1))
                    .with_path(&format!("/theorems/{n}")),
            ),
        })
        .collect()
}

/// Runs the tool (see the contract).
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let names = names(call)?;
    let runtime = call.runtime(&state.registry).await?;
    let file = call.file()?;
    let path = call.path_argument();
    let (_pin, base) = call.finished(&runtime).await?;
    let caller = call.caller();
    let receipt = receipt::now(runtime.documents(), &base, None);
    if receipt.state != ReceiptState::Complete {
        return Err(HostError::invalid_params(format!(
            "Lean has not finished {path} ({}); sync it and lock again",
            receipt.state.name()
        ))
        .with_data(json!({"reason": "snapshotIncomplete", "receipt": receipt.to_json()})));
    }
    if base.diagnostics.iter().any(|d| d.is_error()) {
        return Err(HostError::invalid_params(format!(
            "{path} has errors, so it cannot be built and locked; state the theorems with \
             `sorry` as their proofs, sync, and lock again"
        ))
        .with_data(json!({"reason": "fileErrors", "receipt": receipt.to_json()})));
    }
    let text = &base.text;
    let wanted: Vec<Vec<Vec<String>>> = names.iter().map(|n| candidates(text, n)).collect();
    let mut asked: Vec<Vec<String>> = Vec::new();
    for candidate in wanted.iter().flatten() {
        if !asked.contains(candidate) {
            asked.push(candidate.clone());
        }
    }
    let sync = call.sync_result(&base);
    let question = Question {
        file: &file,
        text,
        receipt: &receipt,
        sync: &sync,
        names: asked,
        list_theorems: true,
    };
    let lake = state.lake(&call.root);
    let answered = answers::ask(
        &state.answers,
        &state.checkpoints,
        lake,
        &runtime,
        question,
        &caller,
    )
    .await?;
    let response = &answered.response;
    let by_name: HashMap<&Vec<String>, &Theorem> =
        response.theorems.iter().map(|t| (&t.name, t)).collect();
    let declared: Vec<String> = response
        .declared
        .iter()
        .flatten()
        .map(|n| printed(n))
        .collect();
    let mut theorems = Vec::new();
    for (written, candidates) in names.iter().zip(&wanted) {
        let own: Vec<&Theorem> = candidates
            .iter()
            .filter_map(|c| by_name.get(c).copied())
            .filter(|t| t.found && t.module.as_deref() == Some(answered.module.as_str()))
            .collect();
        let chosen = match own.as_slice() {
            [] => return Err(missing(written, path, &suggestions(&declared, written))),
            [one] => *one,
            [first, ..] if first.name == candidates[0] => *first,
            many => {
                let named: Vec<&str> = many.iter().map(|t| t.printed.as_str()).collect();
                return Err(HostError::invalid_params(format!(
                    "{written:?} names several theorems of {path} ({}): lock it by its full \
                     name",
                    named.join(", ")
                ))
                .with_data(
                    json!({"reason": "theoremAmbiguous", "theorem": written, "candidates": named}),
                ));
            }
        };
        let kind = chosen.kind.as_deref().unwrap_or_default();
        if kind != "theorem" {
            return Err(HostError::invalid_params(format!(
                "{} is a {kind} of {path}, not a theorem: only theorems are locked",
                chosen.printed
            ))
            .with_data(json!({"reason": "notATheorem", "theorem": chosen.printed, "kind": kind})));
        }
        theorems.push(json!({
            "name": chosen.printed,
            "components": chosen.name,
            "kind": kind,
            "type": chosen.ty,
            "closure_hash": chosen.closure.as_ref().map(|c| c.hash.as_str()),
        }));
    }
    let lock = json!({
        "checker": PROTOCOL,
        "path": lock_path(runtime.root().path(), &file),
        "base_sha256": &*base.text_sha256(),
        "toolchain": receipt.toolchain,
        "lean_version": response.lean_version,
        "module": answered.module,
        "theorems": theorems,
    });
    Ok(json!({"lock": seal(lock)}))
}

/// The module's theorems to suggest for `written`: those with its last component, else the
/// first few.
fn suggestions(declared: &[String], written: &str) -> Vec<String> {
    const SHOWN: usize = 10;
    let last = components(written).and_then(|c| c.last().cloned());
    let same: Vec<String> = declared
        .iter()
        .filter(|d| components(d).and_then(|c| c.last().cloned()) == last)
        .take(SHOWN)
        .cloned()
        .collect();
    if same.is_empty() {
        declared.iter().take(SHOWN).cloned().collect()
    } else {
        same
    }
}
