//! `lean_todo`: what is left to do in a range of a file — `sorry`s, holes, diagnostics, code
//! actions and incomplete proofs — each with where `lean_run_at` would probe for it.
//!
//! Contract:
//! 1. The caller's version must be current (`contentModified`); the range must lie in the
//!    document with its start first (`invalidParams`, see `query`).
//! 2. When a wanted kind comes from Lean's diagnostics (`diagnostic`, `code_action`,
//!    `incomplete_proof`), the diagnostics barrier runs first, as for `lean_sync` (so stale
//!    imports are `syncBarrierIncomplete`, imports that do not build `importBuildFailed`), and
//!    the caller's version must still be current after
//!    it. Only `sorry` and `hole` wanted: no barrier.
//! 3. Items (see `item`, `range`): `sorry` and `hole` from the code (`syntax`); `diagnostic` and
//!    `incomplete_proof` from the version's diagnostics; each kept when it lies in the range.
//!    `code_action`: `textDocument/codeAction` over the range, one command at a time (Lean offers
//!    the actions of one command per request, see `commands`), with the diagnostics in each
//!    request's range as its context; each action goes through `code_actions::for_client` (no
//!    twin URI ever leaks), and an action with the same complete edit is listed once. A kind not
//!    wanted costs nothing: no request is made for it.
//! 4. `suggest` (default `basic`): `none` returns what the text and the diagnostics say and
//!    asks Lean nothing more (`proof_state` only on incomplete proofs, from their message);
//!    `basic` also gives incomplete proofs `run_at_text: "exact ?_"`, and asks Lean the goals at
//!    each `sorry` and hole in the range (see `suggest`).
//! 5. The result is `{version, range, items, receipt}`, items in order (start, end, kind). When the
//!    document moved to another version while Lean was asked (another call changed it), the
//!    items could mix two texts: `contentModified`.

mod commands;
mod item;
mod query;
mod range;
mod suggest;

use serde_json::{Value, json};

use super::schema::{LeanTool, natural, path, read_only, string_enum, version};
use crate::lean::error::HostError;
use crate::lean::session::DocumentSet;
use crate::lean::session::ask::ask_once;
use crate::lean::session::barrier::{Follow, barrier};
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt;
use crate::lean::session::report::LiveDiagnostics;
use crate::lean::speculation::twins::for_client;
use crate::lean::state::HostState;
use crate::lean::syntax::{self, Found};
use crate::lean::tools::call::LeanCall;
use crate::mcp::{Execution, StatusNotice, ToolSpec};
use item::{Item, Kind};
use query::Query;
use range::Range;

/// The tool name.
pub const TODO: &str = "lean_todo";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
    let kinds = json!({
        "type": "array",
        "items": {"type": "string", "enum": names},
        "description": "Omitted or []: all."
    });
    let mut suggest = string_enum(
        &["none", "basic"],
        "basic: also the goals at each sorry and hole, and a first tactic to try there.",
    );
    suggest["default"] = json!("basic");
    LeanTool {
        name: TODO,
        base: "What is left to do in a range of a synced file (a point when start = end): sorry \
               and ?_ holes, diagnostics, code actions, unfinished proofs, each with the \
               position to try it at with lean_run_at.",
        properties: &[
            ("path", path()),
            ("version", version()),
            ("start_line", natural("0-based.")),
            ("start_character", natural("0-based, UTF-16.")),
            ("end_line", natural("0-based.")),
            ("end_character", natural("0-based, UTF-16.")),
            ("kinds", kinds),
            ("suggest", suggest),
        ],
        required: &[
            "path",
            "version",
            "start_line",
            "start_character",
            "end_line",
            "end_character",
        ],
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::WhenSlow,
    }
    .spec()
}

/// Runs `lean_todo`.
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let runtime = call.runtime(&state.registry).await?;
    let set = runtime.documents();
    let caller = call.caller();
    let mut events = set.mirror().subscribe();
    let (_pin, synced) = call.document(&runtime).await?;
    let mut document = synced.document;
    let version = call.args.version()?;
    call.check_version(&document, version)?;
    let query = Query::read(call, &document)?;
    if query.needs_diagnostics() {
        let live = LiveDiagnostics::Off;
        document = barrier(set, document, &caller, live, &mut events, Follow::AnyText).await?;
        call.check_version(&document, version)?;
    }
    let mut items = text_items(&query, &document);
    items.extend(diagnostic_items(&query, &document));
    if query.wants(Kind::CodeAction) {
        items.extend(code_action_items(call, set, &document, query.range).await?);
    }
    if query.suggest {
        for item in items
            .iter_mut()
            .filter(|i| matches!(i.kind, Kind::Sorry | Kind::Hole))
        {
            suggest::add_goals(set, &caller, &document, item).await?;
        }
    }
    still_current(call, set, &document, version)?;
    item::sort(&mut items);
    Ok(json!({
        "version": document.version,
        "range": query.range.to_json(),
        "items": items.iter().map(Item::to_json).collect::<Vec<_>>(),
        "receipt": receipt::now(set, &document, None).to_json(),
    }))
}

/// `sorry` and hole items of the code.
fn text_items(query: &Query, document: &Document) -> Vec<Item> {
    syntax::scan(&document.text)
        .into_iter()
        .map(|token| {
            let range = Range::new(token.start, token.end);
            match token.found {
                Found::Sorry => {
                    Item::new(Kind::Sorry, range).with("message", json!("syntactic sorry"))
                }
                Found::Hole => Item::new(Kind::Hole, range).with("message", json!("term hole")),
            }
        })
        .filter(|item| query.wants(item.kind) && query.range.admits(item.range))
        .collect()
}

/// `diagnostic` and `incomplete_proof` items of the version's diagnostics.
fn diagnostic_items(query: &Query, document: &Document) -> Vec<Item> {
    let mut items = Vec::new();
    for d in &document.diagnostics {
        if query.wants(Kind::Diagnostic) {
            items.extend(item::diagnostic(d));
        }
        if query.wants(Kind::IncompleteProof) {
            items.extend(item::incomplete_proof(d, query.suggest));
        }
    }
    items.retain(|item| query.range.admits(item.range));
    items
}

/// The code actions Lean offers for the range, asked about one command at a time (`commands`).
async fn code_action_items(
    call: &LeanCall<'_>,
    set: &DocumentSet,
    document: &Document,
    query: Range,
) -> Result<Vec<Item>, HostError> {
    let mut items: Vec<Item> = Vec::new();
    for range in commands::code_action_ranges(query, &document.text) {
        let in_range: Vec<Value> = document
            .diagnostics
            .iter()
            .filter(|d| item::diagnostic(d).is_some_and(|i| range.admits(i.range)))
            .map(|d| d.raw.clone())
            .collect();
        let params = json!({
            "textDocument": {"uri": &*document.uri},
            "range": range.to_json(),
            "context": {"diagnostics": in_range},
        });
        let method = "textDocument/codeAction";
        let answer = ask_once(set, document, &call.caller(), method, params).await?;
        let Value::Array(actions) = answer else {
            continue;
        };
        for action in actions {
            // A bare `Command` (its `command` a string) is for an editor to run, not an action.
            if action.get("command").is_some_and(Value::is_string) {
                continue;
            }
            let Some(action) = for_client(action, document) else {
                continue;
            };
            let item = item::code_action(action, &document.uri, range);
            if !items.iter().any(|seen| same_edit(seen, &item)) {
                items.push(item);
            }
        }
    }
    Ok(items)
}

/// Whether two code action items carry the same complete edit (asked about from two chunks of
/// one command); a lazy action is never taken for another, its `data` tells them apart.
fn same_edit(a: &Item, b: &Item) -> bool {
    let (Some(x), Some(y)) = (a.extra.get("code_action"), b.extra.get("code_action")) else {
        return false;
    };
    let without_data = |action: &Value| {
        let mut action = action.clone();
        if let Some(object) = action.as_object_mut() {
            object.remove("data");
        }
        action
    };
    x.get("edit").is_some() && without_data(x) == without_data(y)
}

/// Fails when the document is no longer at the version the items were computed for.
fn still_current(
    call: &LeanCall<'_>,
    set: &DocumentSet,
    document: &Document,
    version: i64,
) -> Result<(), HostError> {
    match set.mirror().get(&document.uri) {
        Some(current) => call.check_version(&current, version),
        None => Err(HostError::internal(format!(
            "{} was closed while this call held it (a bug of lean-beam-mcp's: see its log); call \
             again",
            call.path_argument()
        ))),
    }
}
