//! `lean_lock`: fingerprints of named theorems of a file, as a value to pass back to
//! `lean_certify` unchanged.
//!
//! Contract:
//! 1. The file is read and synced, past its strict barrier; a text Lean did not finish
//!    (`receipt` state other than `complete`) is refused (`invalidParams`, reason
//!    `snapshotIncomplete`, with the receipt; or the sync's own typed error, as stale imports
//!    give): a lock is taken from a checked text only.
//! 2. Each name is found as `certify::lock::find` does (as written or with its namespaces);
//!    one that no declaration answers to is refused (`invalidParams`, reason `theoremMissing`,
//!    naming it). Its type is asked in one twin (`certify::ask`: `#check @Name` per theorem);
//!    a name Lean does not know there is `theoremMissing` too.
//! 3. The result is `{lock}`: `{path, base_sha256, toolchain, theorems: [{name, kind, header,
//!    type}]}`, sealed with a `mac` when `LEAN_BEAM_LOCK_KEY` is set (`certify::lock`). It
//!    carries no receipt: the lock itself names the text (`base_sha256`).

use serde_json::{Value, json};

use super::schema::{LeanTool, path, read_only};
use crate::lean::certify::ask::{Answer, ask, check_command, checked_type};
use crate::lean::certify::lock::{find, lock_path, missing, seal};
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
                "description": "Theorem names, as written or with namespaces."
            }),
        ),
    ];
    LeanTool::concurrent(
        LOCK,
        "Lock the statements of named theorems of a file before proving them, for \
         lean_certify to check later: returns {lock}, a value to pass back unchanged (it \
         survives a server restart). Refuses a name the file does not declare.",
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
            Some(name) if !name.is_empty() => Ok(name.to_owned()),
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
    let (pin, base) = call.finished(&runtime).await?;
    let caller = call.caller();
    let receipt = receipt::now(runtime.documents(), &base, None);
    if receipt.state != ReceiptState::Complete {
        return Err(HostError::invalid_params(format!(
            "Lean has not finished {path} ({}); sync it and lock again",
            receipt.state.name()
        ))
        .with_data(json!({"reason": "snapshotIncomplete", "receipt": receipt.to_json()})));
    }
    let text = &base.text;
    let found = names
        .iter()
        .map(|name| find(text, name, false).ok_or_else(|| missing(name, path)))
        .collect::<Result<Vec<_>, _>>()?;
    let checks: Vec<String> = found.iter().map(|f| check_command(&f.name)).collect();
    let answers = ask(&runtime, &pin, &file, text, &checks, &caller).await?;
    let mut theorems = Vec::new();
    for (found, answer) in found.iter().zip(answers) {
        let ty = match answer {
            Answer::Said(said) => checked_type(&said),
            _ => None,
        };
        let ty = ty.ok_or_else(|| missing(&found.name, path))?;
        theorems.push(json!({
            "name": found.name, "kind": found.kind, "header": found.header, "type": ty,
        }));
    }
    let lock = json!({
        "path": lock_path(runtime.root().path(), &file),
        "base_sha256": &*base.text_sha256(),
        "toolchain": receipt.toolchain,
        "theorems": theorems,
    });
    Ok(json!({"lock": seal(lock)}))
}
