//! What `suggest: "basic"` adds to `sorry` and hole items: the goals Lean has there and, where a
//! tactic can run, a first probe for `lean_run_at`.
//!
//! Contract:
//! 1. A `sorry`: `$/lean/plainGoal` at its first character, where Lean answers the goals
//!    *before* the tactic there, the ones the `sorry` stands for (lean-stock-speculation.md §B).
//!    Goals there make its `proof_state`, and when there is at least one, `run_at_text` is
//!    [`PROBE`]: a tactic can run at its position. Lean having no goals there (`null`: a
//!    `sorry` in a term) makes it a term, as below.
//! 2. A hole, or a `sorry` in a term: `$/lean/plainTermGoal` at its first character, the type
//!    the term must have, as a one-goal `proof_state`. No `run_at_text`: a term position is not
//!    one where a tactic runs.
//! 3. Lean answering `invalidParams` (no snapshot there) leaves the item as it was; any other
//!    failure (cancellation, a dead worker, a timeout) fails the call.
//! 4. Items are asked about one after another: one request each (two for a `sorry` in a term).

use serde_json::{Value, json};

use super::item::{Item, Kind, PROBE};
use crate::lean::error::{HostError, code};
use crate::lean::progress::Caller;
use crate::lean::session::DocumentSet;
use crate::lean::session::ask::ask_once;
use crate::lean::session::goals::parse_goal;
use crate::lean::session::mirror::Document;

/// Adds what Lean knows at a `sorry` or hole item (see the contract).
pub async fn add_goals(
    set: &DocumentSet,
    caller: &Caller<'_>,
    document: &Document,
    item: &mut Item,
) -> Result<(), HostError> {
    let params = json!({
        "textDocument": {"uri": &*document.uri},
        "position": item.range.start.to_json(),
    });
    if item.kind == Kind::Sorry {
        let answer = ask_once(set, document, caller, "$/lean/plainGoal", params.clone()).await;
        if let Some(goals) = unless_no_snapshot(answer)?
            .as_ref()
            .and_then(|a| a.get("goals"))
            .and_then(Value::as_array)
        {
            let goals: Vec<Value> = goals
                .iter()
                .filter_map(Value::as_str)
                .map(parse_goal)
                .collect();
            if !goals.is_empty() {
                item.extra.insert("run_at_text".into(), json!(PROBE));
            }
            item.extra
                .insert("proof_state".into(), json!({ "goals": goals }));
            return Ok(());
        }
    }
    let answer = ask_once(set, document, caller, "$/lean/plainTermGoal", params).await;
    if let Some(goal) = unless_no_snapshot(answer)?
        .as_ref()
        .and_then(|a| a.get("goal"))
        .and_then(Value::as_str)
    {
        item.extra
            .insert("proof_state".into(), json!({ "goals": [parse_goal(goal)] }));
    }
    Ok(())
}

/// Lean's answer, or `None` when it said there is nothing to ask about there.
fn unless_no_snapshot(answer: Result<Value, HostError>) -> Result<Option<Value>, HostError> {
    match answer {
        Ok(answer) => Ok(Some(answer)),
        Err(error) if error.code == code::INVALID_PARAMS => Ok(None),
        Err(error) => Err(error),
    }
}
