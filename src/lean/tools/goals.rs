//! `lean_goals`: the proof goals before or after the tactic at a position, from Lean's stock
//! `$/lean/plainGoal` (lean-stock-speculation.md §B).
//!
//! Contract:
//! 1. Lean answers goals *before* a tactic when asked at its first character, and goals *after*
//!    it when asked anywhere later in it or in its trailing whitespace. So `mode: "before"` asks
//!    at the start of the tactic the position is in, and `mode: "after"` at its end, as
//!    `syntax::tactic_column` finds them on the position's line: between the line's indentation
//!    (or a `by`, a `·` bullet, a `;` or `<;>` before the position) and the next `;`/`<;>` or the
//!    end of the line's code, comments and literals read as the lexer reads the whole text. A
//!    tactic spread over several lines is seen from its line.
//! 2. `null` from Lean means no tactic is there: `invalidParams`, saying Lean has no proof
//!    goals at that position.
//! 3. Goals are answered in the goal shape (`session/goals.rs`), with the position Lean was
//!    asked at, and the document's `receipt`.

use serde_json::{Value, json};

use super::schema::{LeanTool, character, line, path, read_only, version};
use crate::lean::error::HostError;
use crate::lean::json::object;
use crate::lean::session::goals::plain_goals;
use crate::lean::session::receipt;
use crate::lean::state::HostState;
use crate::lean::syntax::tactic_column;
use crate::lean::tools::call::LeanCall;
use crate::mcp::{Execution, StatusNotice, ToolSpec};

/// The tool name.
pub const GOALS: &str = "lean_goals";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    LeanTool {
        name: GOALS,
        base: "The proof goals before or after the tactic at a position.",
        properties: &[
            ("path", path()),
            ("version", version()),
            ("line", line()),
            ("character", character()),
            (
                "mode",
                json!({"type": "string", "enum": ["before", "after"]}),
            ),
        ],
        required: &["path", "version", "line", "character", "mode"],
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::WhenSlow,
    }
    .spec()
}

/// Runs `lean_goals`.
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let runtime = call.runtime(&state.registry).await?;
    let (_pin, synced) = call.document(&runtime).await?;
    let document = synced.document;
    let version = call.args.version()?;
    let mode = call.args.choice("mode", &["before", "after"], None)?;
    let at = call.args.position("line", "character")?;
    call.check_version(&document, version)?;
    let position = call.inside(&document, at)?;
    let asked = tactic_column(&document.text, position, mode == "before");
    let (line, character, column) = (position.line, position.character, asked.character);
    let set = runtime.documents();
    let Some(goals) = plain_goals(set, &document, asked, &call.caller()).await? else {
        return Err(HostError::invalid_params(format!(
            "Lean has no proof goals at {line}:{character} ({} the tactic there, asked at \
             {line}:{column}): the position is not inside a tactic proof",
            mode
        ))
        .with_data(json!({"position": position.to_json(), "asked": asked.to_json()})));
    };
    let receipt = receipt::now(set, &document, None).to_json();
    Ok(object([
        ("mode", mode.into()),
        ("position", asked.to_json()),
        ("goals", Value::Array(goals)),
        ("receipt", receipt),
    ]))
}
