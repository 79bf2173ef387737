//! `lean_check_receipt`: whether a receipt from an earlier result still describes the files it
//! names, answered without Lean.
//!
//! Contract:
//! 1. It never starts Lean and sends Lean nothing: it reads files only.
//! 2. The receipt is read whole before any file is: a malformed one is never `holds: false`. A
//!    field of the wrong type or shape (a hash that is not 64 lowercase hex digits, a state not
//!    in the list) is `invalidInput` from the schema, naming it; a `reason` without the
//!    `incomplete` state (or that state without one), `paths` without `stale_imports` (or the
//!    reverse), or an import path that is not a relative `.lean` path inside the workspace
//!    (absolute, or with `..`) is `invalidParams` naming the field (`data.path`, a JSON Pointer
//!    under `/receipt`).
//! 3. Then it hashes the file again (the `path` argument; a file that is gone differs), each of
//!    the receipt's imports (`<root>/<path>`; gone differs), each file it says the text reads
//!    (`includes`: `<root>/<path>`; a hash of null holds while the file is absent; a path outside
//!    the workspace, absolute or through `..`, is never read and differs), the Lake
//!    configuration (`fingerprint::config_sha256` over the files a runtime stamps), and reads
//!    `lean-toolchain`. `changed` names each difference in that order: `text`,
//!    `import:<module>`, `include:<path>`, `lake_config`, `toolchain` (a toolchain change is also
//!    one of the configuration).
//! 4. The answer is `{holds, changed, state}`: `holds` is true iff nothing changed (the receipt
//!    still describes the files); `state` is the receipt's, echoed, so `holds && state ==
//!    "complete"` is "still verified". Receipts are not signed: a receipt a client made up is
//!    checked like any other.

use std::path::{Component, Path};

use serde_json::{Value, json};

use super::schema::{LeanTool, path, read_only};
use crate::lean::error::HostError;
use crate::lean::session::fingerprint::{config_sha256, sha256_hex, toolchain};
use crate::lean::session::receipt::{REASONS, STATES};
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::config::CONFIG_FILES;
use crate::mcp::{Execution, StatusNotice, ToolSpec};

/// The tool name.
pub const CHECK: &str = "lean_check_receipt";

/// What every receipt state means: said once, here, and referred to by every tool whose result
/// carries a receipt (`schema::RECEIPT_HINT`), `--help` and CONTRIBUTING.md.
pub const STATES_EXPLAINED: &str = "A receipt {version, text_sha256, state, toolchain, \
    lake_config_sha256, imports, includes?} names exactly the text Lean checked (SHA-256, \
    lowercase hex), the toolchain and Lake configuration Lean loaded, the workspace files of its \
    import closure and the files it reads by include_str, as Lean set it up. state: complete = \
    Lean finished this very version (its diagnostics barrier answered and its progress done) \
    with no crash, set-up failure or stale import, and the files named are unchanged on disk; \
    incomplete = not final, see reason (elaborating, cancelled, timed_out, not_checked: the call \
    did not wait, lake_config_changed: Lean restarts on the next call, unnamed_include: it reads \
    a file by a computed path); stale_imports = checked against files that changed since, see paths \
    (lean_refresh rebuilds them); crashed = the file's Lean worker crashed; setup_failed = Lean \
    could not set the file up (its header, imports or Lake set-up); superseded = the document \
    moved on from the call's version (the receipt names the text the call read). Receipts are \
    not signed.";

/// A SHA-256 in lowercase hex. The schema bounds its length; its digits are checked by `hash`
/// (the schema subset has no `pattern`), with an error naming the field.
fn hex() -> Value {
    json!({
        "type": "string",
        "minLength": 64,
        "maxLength": 64,
    })
}

fn receipt_schema() -> Value {
    json!({
        "type": "object",
        "description": "As a result (or an error's data.receipt) carried it.",
        "properties": {
            "version": {"type": "integer", "minimum": 0},
            "text_sha256": hex(),
            "state": {"type": "string", "enum": STATES},
            "toolchain": {"type": ["string", "null"]},
            "lake_config_sha256": hex(),
            "imports": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "module": {"type": "string", "minLength": 1},
                        "path": {"type": "string", "minLength": 1},
                        "sha256": hex(),
                    },
                    "required": ["module", "path", "sha256"],
                    "additionalProperties": false
                }
            },
            "includes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1},
                        "sha256": {"type": ["string", "null"], "minLength": 64, "maxLength": 64},
                    },
                    "required": ["path", "sha256"],
                    "additionalProperties": false
                }
            },
            "reason": {"type": "string", "enum": REASONS},
            "paths": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["version", "text_sha256", "state", "toolchain", "lake_config_sha256",
                     "imports"],
        "additionalProperties": false
    })
}

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let base = format!(
        "Check, without Lean, whether a receipt from an earlier result still describes the \
         files on disk: answers {{holds, changed, state}}; holds && state == \"complete\" means \
         the result still stands. {STATES_EXPLAINED}"
    );
    LeanTool {
        name: CHECK,
        base: &base,
        properties: &[("path", path()), ("receipt", receipt_schema())],
        required: &["path", "receipt"],
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::Quiet,
    }
    .spec()
}

/// One import a receipt names.
struct Import<'a> {
    module: &'a str,
    path: &'a str,
    sha256: &'a str,
}

/// One file a receipt says the text reads.
struct Included<'a> {
    path: &'a str,
    sha256: Option<&'a str>,
}

/// What a receipt claims, read (see the contract).
struct Claimed<'a> {
    text_sha256: &'a str,
    state: &'a str,
    toolchain: Option<&'a str>,
    lake_config_sha256: &'a str,
    imports: Vec<Import<'a>>,
    includes: Vec<Included<'a>>,
}

/// Runs `lean_check_receipt` (see the contract).
pub fn call(call: &LeanCall<'_>) -> Result<Value, HostError> {
    let claimed = read(call.args.object("receipt")?)?;
    let file = call.file_to_close()?;
    let root = call.root.path();
    let mut changed = Vec::new();
    if !same(&file, claimed.text_sha256) {
        changed.push("text".to_owned());
    }
    for import in &claimed.imports {
        if !same(&root.join(import.path), import.sha256) {
            changed.push(format!("import:{}", import.module));
        }
    }
    for include in &claimed.includes {
        let holds = relative(include.path)
            && match include.sha256 {
                Some(sha256) => same(&root.join(include.path), sha256),
                None => !root.join(include.path).exists(),
            };
        if !holds {
            changed.push(format!("include:{}", include.path));
        }
    }
    if config_sha256(root, &CONFIG_FILES) != claimed.lake_config_sha256 {
        changed.push("lake_config".to_owned());
    }
    if toolchain(root).as_deref() != claimed.toolchain {
        changed.push("toolchain".to_owned());
    }
    Ok(json!({"holds": changed.is_empty(), "changed": changed, "state": claimed.state}))
}

/// Whether `file` still hashes to `sha256` (a file that cannot be read does not).
fn same(file: &Path, sha256: &str) -> bool {
    std::fs::read(file).is_ok_and(|contents| sha256_hex(&contents) == sha256)
}

/// `invalidParams` about the receipt's field at `pointer` (under `/receipt`).
fn bad(pointer: &str, why: String) -> HostError {
    HostError::invalid_params(format!("the receipt is malformed: {why}"))
        .with_data(json!({"path": format!("/receipt{pointer}"), "reason": "malformedReceipt"}))
}

/// `invalidInput` for a field the schema should have held.
fn wrong(pointer: &str, what: &str) -> HostError {
    HostError::invalid_input(format!("receipt field {pointer} must be {what}"))
        .with_path(&format!("/receipt{pointer}"))
}

fn text<'a>(value: &'a Value, pointer: &str) -> Result<&'a str, HostError> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| wrong(pointer, "a string"))
}

fn hash<'a>(value: &'a Value, pointer: &str) -> Result<&'a str, HostError> {
    let hash = text(value, pointer)?;
    let hex = hash.len() == 64 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if hex {
        Ok(hash)
    } else {
        Err(wrong(pointer, "64 lowercase hex digits (a SHA-256)"))
    }
}

/// Reads a receipt (see the contract).
fn read(receipt: &Value) -> Result<Claimed<'_>, HostError> {
    let state = text(receipt, "/state")?;
    if !STATES.contains(&state) {
        return Err(wrong("/state", &format!("one of {}", STATES.join(", "))));
    }
    let toolchain = match receipt.get("toolchain") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(Value::Null) => None,
        _ => return Err(wrong("/toolchain", "a string or null")),
    };
    if !receipt.get("version").is_some_and(Value::is_u64) {
        return Err(wrong("/version", "a natural number"));
    }
    let has = |field: &str| receipt.get(field).is_some();
    match (state, has("reason"), has("paths")) {
        (_, true, _) if state != "incomplete" => {
            return Err(bad("/reason", format!("a {state} receipt has no reason")));
        }
        ("incomplete", false, _) => {
            return Err(bad(
                "/reason",
                "an incomplete receipt names its reason".into(),
            ));
        }
        (_, _, true) if state != "stale_imports" => {
            return Err(bad("/paths", format!("a {state} receipt has no paths")));
        }
        ("stale_imports", _, false) => {
            return Err(bad(
                "/paths",
                "a stale_imports receipt names its paths".into(),
            ));
        }
        _ => {}
    }
    let listed = receipt
        .get("imports")
        .and_then(Value::as_array)
        .ok_or_else(|| wrong("/imports", "an array"))?;
    let mut imports = Vec::with_capacity(listed.len());
    for n in 0..listed.len() {
        let at = format!("/imports/{n}");
        let path = text(receipt, &format!("{at}/path"))?;
        if !inside(path) {
            return Err(bad(
                &format!("{at}/path"),
                format!(
                    "import path {path:?} is not a relative .lean path inside the workspace \
                     (no .., not absolute)"
                ),
            ));
        }
        imports.push(Import {
            module: text(receipt, &format!("{at}/module"))?,
            path,
            sha256: hash(receipt, &format!("{at}/sha256"))?,
        });
    }
    Ok(Claimed {
        text_sha256: hash(receipt, "/text_sha256")?,
        state,
        toolchain,
        lake_config_sha256: hash(receipt, "/lake_config_sha256")?,
        imports,
        includes: included(receipt)?,
    })
}

/// The files a receipt says the text reads (none when it names none).
fn included(receipt: &Value) -> Result<Vec<Included<'_>>, HostError> {
    let Some(listed) = receipt.get("includes") else {
        return Ok(Vec::new());
    };
    let listed = listed
        .as_array()
        .ok_or_else(|| wrong("/includes", "an array"))?;
    let mut includes = Vec::with_capacity(listed.len());
    for n in 0..listed.len() {
        let at = format!("/includes/{n}");
        let sha256 = match receipt.pointer(&format!("{at}/sha256")) {
            Some(Value::Null) => None,
            _ => Some(hash(receipt, &format!("{at}/sha256"))?),
        };
        includes.push(Included {
            path: text(receipt, &format!("{at}/path"))?,
            sha256,
        });
    }
    Ok(includes)
}

/// Whether an import path stays inside the workspace: relative, plain parts only, a `.lean`
/// file.
fn inside(path: &str) -> bool {
    Path::new(path).extension().is_some_and(|e| e == "lean") && relative(path)
}

/// Whether a path is relative to the workspace root and stays inside it: plain parts only.
fn relative(path: &str) -> bool {
    Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> Value {
        json!({
            "version": 3,
            "text_sha256": "a".repeat(64),
            "state": "complete",
            "toolchain": null,
            "lake_config_sha256": "b".repeat(64),
            "imports": [{"module": "A.B", "path": "A/B.lean", "sha256": "c".repeat(64)}],
        })
    }

    fn refused(change: impl FnOnce(&mut Value)) -> HostError {
        let mut receipt = receipt();
        change(&mut receipt);
        match read(&receipt) {
            Ok(_) => panic!("accepted: {receipt}"),
            Err(error) => error,
        }
    }

    fn path_of(error: &HostError) -> &str {
        error.data.as_ref().unwrap()["path"].as_str().unwrap()
    }

    #[test]
    fn a_well_formed_receipt_is_read() {
        let receipt = receipt();
        let claimed = read(&receipt).unwrap();
        assert_eq!(claimed.state, "complete");
        assert_eq!(claimed.toolchain, None);
        assert_eq!(claimed.imports[0].module, "A.B");
    }

    #[test]
    fn a_malformed_receipt_names_its_field() {
        let upper = refused(|r| r["text_sha256"] = json!("A".repeat(64)));
        assert_eq!(
            (upper.code, path_of(&upper)),
            ("invalidInput", "/receipt/text_sha256")
        );
        let short = refused(|r| r["lake_config_sha256"] = json!("ab"));
        assert_eq!(path_of(&short), "/receipt/lake_config_sha256");
        let missing = refused(|r| {
            r.as_object_mut().unwrap().remove("state");
        });
        assert_eq!(path_of(&missing), "/receipt/state");
        let version = refused(|r| r["version"] = json!("3"));
        assert_eq!(path_of(&version), "/receipt/version");
        let reason = refused(|r| r["reason"] = json!("elaborating"));
        assert_eq!(
            (reason.code, path_of(&reason)),
            ("invalidParams", "/receipt/reason")
        );
        let no_reason = refused(|r| r["state"] = json!("incomplete"));
        assert_eq!(path_of(&no_reason), "/receipt/reason");
        let no_paths = refused(|r| r["state"] = json!("stale_imports"));
        assert_eq!(path_of(&no_paths), "/receipt/paths");
        for escape in ["../A.lean", "/etc/A.lean", "A/../../B.lean", "A/B.olean"] {
            let error = refused(|r| r["imports"][0]["path"] = json!(escape));
            assert_eq!(path_of(&error), "/receipt/imports/0/path", "{escape}");
        }
        let module = refused(|r| r["imports"][0]["module"] = json!(1));
        assert_eq!(path_of(&module), "/receipt/imports/0/module");
        let include = refused(|r| r["includes"] = json!([{"path": "d.txt", "sha256": "ab"}]));
        assert_eq!(path_of(&include), "/receipt/includes/0/sha256");
        let unnamed = refused(|r| r["includes"] = json!([{"sha256": null}]));
        assert_eq!(path_of(&unnamed), "/receipt/includes/0/path");
    }

    #[test]
    fn included_files_are_read_and_those_outside_the_workspace_never_hold() {
        let mut receipt = receipt();
        receipt["includes"] = json!([{"path": "d/x.txt", "sha256": "d".repeat(64)},
                                     {"path": "../y.txt", "sha256": null}]);
        let claimed = read(&receipt).unwrap();
        assert_eq!(claimed.includes[0].sha256, Some("d".repeat(64).as_str()));
        assert_eq!(claimed.includes[1].sha256, None);
        assert!(relative(claimed.includes[0].path));
        assert!(!relative(claimed.includes[1].path) && !relative("/etc/y.txt"));
    }
}
