//! `lean_hover`, `lean_signature_help`, `lean_definition`, `lean_references`,
//! `lean_document_symbols`, `lean_workspace_symbols`: Lean's own answers, at a checked position
//! of a checked version.
//!
//! Contract:
//! 1. Position tools re-read the file, require the caller's `version` to be current
//!    (`contentModified` otherwise) and the position to lie inside it (`invalidParams`), then ask
//!    Lean once: nothing else is sent.
//! 2. Hover and signature help answer Lean's object, or `{result: null}` when there is nothing.
//! 3. Definitions accept both forms Lean uses (`Location[]` from the watchdog's index,
//!    `LocationLink[]` from the worker, or one `Location`) and answer `{result: [Location]}`;
//!    references answer `{result: [Location]}` (`include_declaration` defaults to true). Each
//!    location's `uri` is the host's for its file, whichever form Lean wrote it in, and it also
//!    names its `path` (relative to the workspace root when inside it).
//! 4. Symbols answer `{result: [...]}` as Lean gives them; workspace symbols need no document.
//!    What Lean answers from its reference index (references, definitions, workspace symbols)
//!    is asked once Lean holds again every real file's entry a twin's close erased
//!    (`session/index.rs`), so it is the real texts', never a probe's.
//!    Every answer about a document carries its `receipt` (`session/receipt.rs`); workspace
//!    symbols, about no document, none.
//! 5. A tool whose request this Lean does not offer (its `initialize` capabilities,
//!    `server/capabilities.rs`) is refused before its document is opened: `invalidParams` with
//!    `reason: "leanLacksFeature"`.

use serde_json::{Value, json};

use super::schema::{LeanTool, character, line, path, read_only, version};
use crate::lean::error::HostError;
use crate::lean::json::object;
use crate::lean::session::DocumentSet;
use crate::lean::session::ask::ask_once;
use crate::lean::session::index;
use crate::lean::session::receipt;
use crate::lean::speculation::twins::shown_location;
use crate::lean::state::HostState;
use crate::lean::text::{Position, canonical_uri, uri_path};
use crate::lean::tools::call::LeanCall;
use crate::mcp::ToolSpec;

/// The tool names.
pub const HOVER: &str = "lean_hover";
/// See [`HOVER`].
pub const SIGNATURE_HELP: &str = "lean_signature_help";
/// See [`HOVER`].
pub const DEFINITION: &str = "lean_definition";
/// See [`HOVER`].
pub const REFERENCES: &str = "lean_references";
/// See [`HOVER`].
pub const DOCUMENT_SYMBOLS: &str = "lean_document_symbols";
/// See [`HOVER`].
pub const WORKSPACE_SYMBOLS: &str = "lean_workspace_symbols";

fn tool(name: &str, base: &str, properties: &[(&str, Value)], required: &[&str]) -> ToolSpec {
    LeanTool::concurrent(name, base, properties, required, read_only())
}

/// The catalog entries, in listing order.
pub fn specs() -> Vec<ToolSpec> {
    let position = [
        ("path", path()),
        ("version", version()),
        ("line", line()),
        ("character", character()),
    ];
    let at = ["path", "version", "line", "character"];
    let mut references = position.to_vec();
    references.push((
        "include_declaration",
        json!({"type": "boolean", "default": true,
               "description": "Include the declaration itself."}),
    ));
    vec![
        tool(
            HOVER,
            "The type and documentation of what is at a position.",
            &position,
            &at,
        ),
        tool(
            SIGNATURE_HELP,
            "The signature of the function being applied at a position.",
            &position,
            &at,
        ),
        tool(
            DEFINITION,
            "Where the symbol at a position is defined.",
            &position,
            &at,
        ),
        tool(
            REFERENCES,
            "Where the symbol at a position is used.",
            &references,
            &at,
        ),
        tool(
            DOCUMENT_SYMBOLS,
            "The declarations of a synced file, as an outline.",
            &[("path", path()), ("version", version())],
            &["path", "version"],
        ),
        tool(
            WORKSPACE_SYMBOLS,
            "Search the project's declarations by name.",
            &[("query", json!({"type": "string"}))],
            &["query"],
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
    let set = runtime.documents();
    let method = method(tool)?;
    runtime.server().require(method)?;
    if tool == WORKSPACE_SYMBOLS {
        index::settle(set, &call.caller()).await?;
        let answer = runtime
            .server()
            .request(
                method,
                json!({"query": call.args.text("query")?}),
                &call.cancel,
            )
            .await?;
        let Value::Array(symbols) = list(answer) else {
            unreachable!("list always gives an array")
        };
        let mut shown = Vec::new();
        for mut symbol in symbols {
            let uri = symbol.pointer("/location/uri").cloned().unwrap_or_default();
            let range = symbol
                .pointer("/location/range")
                .cloned()
                .unwrap_or_default();
            let Some(uri) = untwinned(set, uri, &range) else {
                continue;
            };
            symbol["location"]["uri"] = uri;
            if !shown.contains(&symbol) {
                shown.push(symbol);
            }
        }
        return Ok(json!({ "result": shown }));
    }
    let (_pin, synced) = call.document(&runtime).await?;
    let document = synced.document;
    call.check_version(&document, call.args.version()?)?;
    let params = match tool {
        DOCUMENT_SYMBOLS => json!({"textDocument": {"uri": &*document.uri}}),
        _ => {
            let at = call.args.position("line", "character")?;
            let position = call.inside(&document, at)?.to_json();
            let mut params = object([
                ("textDocument", json!({"uri": &*document.uri})),
                ("position", position),
            ]);
            if tool == REFERENCES {
                let include = call.args.flag("include_declaration", true)?;
                params["context"] = json!({"includeDeclaration": include});
            }
            params
        }
    };
    if matches!(tool, DEFINITION | REFERENCES) {
        index::settle(set, &call.caller()).await?;
    }
    let answer = ask_once(set, &document, &call.caller(), method, params).await?;
    let mut result = match tool {
        HOVER | SIGNATURE_HELP => match answer {
            Value::Null => json!({"result": null}),
            object => object,
        },
        DEFINITION | REFERENCES => object([("result", locations(answer, call, set))]),
        _ => object([("result", list(answer))]),
    };
    result["receipt"] = receipt::now(set, &document, None).to_json();
    Ok(result)
}

/// The LSP request a tool of this family makes.
fn method(tool: &str) -> Result<&'static str, HostError> {
    Ok(match tool {
        HOVER => "textDocument/hover",
        SIGNATURE_HELP => "textDocument/signatureHelp",
        DEFINITION => "textDocument/definition",
        REFERENCES => "textDocument/references",
        DOCUMENT_SYMBOLS => "textDocument/documentSymbol",
        WORKSPACE_SYMBOLS => "workspace/symbol",
        other => {
            return Err(HostError::internal(format!(
                "{other} is not a navigation tool"
            )));
        }
    })
}

fn list(answer: Value) -> Value {
    match answer {
        Value::Null => json!([]),
        Value::Array(items) => Value::Array(items),
        one => json!([one]),
    }
}

/// The URI to show for a location Lean gave, in the host's form whatever form Lean wrote it in:
/// its own, the real file's for a twin's location before the probe, or `None` to drop it (see
/// `twins`).
fn untwinned(set: &DocumentSet, uri: Value, range: &Value) -> Option<Value> {
    let Some(text) = uri.as_str() else {
        return Some(uri);
    };
    let end = range
        .get("end")
        .and_then(Position::from_json)
        .unwrap_or_default();
    shown_location(set, &canonical_uri(text), end).map(|shown| json!(&*shown))
}

/// `Location`, `Location[]` or `LocationLink[]` as `Location[]`, each with its `path`; a twin's
/// locations are mapped to the real file or dropped, without repeats.
fn locations(answer: Value, call: &LeanCall<'_>, set: &DocumentSet) -> Value {
    let Value::Array(items) = list(answer) else {
        return json!([]);
    };
    let mut located: Vec<Value> = Vec::new();
    let all = items.into_iter().filter_map(|item| {
        let (uri, range) = match item.get("targetUri") {
            Some(uri) => (
                uri.clone(),
                item.get("targetSelectionRange")
                    .or_else(|| item.get("targetRange"))
                    .cloned()?,
            ),
            None => (item.get("uri")?.clone(), item.get("range")?.clone()),
        };
        let uri = untwinned(set, uri, &range)?;
        let mut location = json!({"uri": uri, "range": range});
        if let Some(file) = uri.as_str().and_then(uri_path) {
            let shown = file
                .strip_prefix(call.root.path())
                .map(|relative| relative.to_path_buf())
                .unwrap_or(file);
            location["path"] = json!(shown.display().to_string());
        }
        Some(location)
    });
    for location in all {
        if !located.contains(&location) {
            located.push(location);
        }
    }
    Value::Array(located)
}
