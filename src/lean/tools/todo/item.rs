//! One `lean_todo` item, its kinds, their order, and the items Lean's diagnostics give.
//!
//! Contract:
//! 1. An item is `{kind, range, run_at_position, run_at_text?, message?, severity?,
//!    diagnostic?, code_action?, proof_state?}` (snake_case keys; `severity` is the LSP integer;
//!    `diagnostic` and `code_action` are Lean's objects as sent). `run_at_position` is where
//!    `lean_run_at` would probe for it: the range's start, except for an incomplete proof, whose
//!    proof continues at the range's end.
//! 2. Items are ordered by range start, then range end, then kind in the schema's order
//!    (`sorry`, `hole`, `diagnostic`, `code_action`, `incomplete_proof`); the sort is stable, so
//!    equal items keep the order Lean gave them.
//! 3. Every diagnostic Lean published for the version (silent ones were already dropped) is a
//!    `diagnostic` item over its extent (`fullRange`, else `range`: Lean cuts the `range` of a
//!    message of several lines at its first line, `session/diagnostics.rs`). An `unsolved goals` error (its `leanTags` hold 1, or its
//!    message starts so) is also an `incomplete_proof` item over the whole unfinished proof (its
//!    `fullRange`: from `by`, or the bullet, to the last tactic's end), with the goals its
//!    message lists as `proof_state`.
//! 4. A `code_action` item is one action Lean offers for a range it was asked about (Lean
//!    decides what applies there, so no overlap rule is applied to it), titled by its `title`,
//!    over the range of its first diagnostic, else of its first edit of the document, else the
//!    range it was asked about (a lazy action names no place of its own).

use serde_json::{Map, Value, json};

use super::range::{Position, Range};
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::session::goals::parse_goal;

/// The item kinds, in the schema's order (also their sort order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A `sorry` in the code.
    Sorry,
    /// A `?_` (or `?name`) hole in the code.
    Hole,
    /// A diagnostic Lean published.
    Diagnostic,
    /// A code action Lean offers.
    CodeAction,
    /// A proof with goals left.
    IncompleteProof,
}

impl Kind {
    /// Every kind, in order.
    pub const ALL: [Kind; 5] = [
        Kind::Sorry,
        Kind::Hole,
        Kind::Diagnostic,
        Kind::CodeAction,
        Kind::IncompleteProof,
    ];

    /// Its name in the protocol.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sorry => "sorry",
            Kind::Hole => "hole",
            Kind::Diagnostic => "diagnostic",
            Kind::CodeAction => "code_action",
            Kind::IncompleteProof => "incomplete_proof",
        }
    }

    /// The kind of that name.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Its kind.
    pub kind: Kind,
    /// Its range.
    pub range: Range,
    /// Where `lean_run_at` would probe for it.
    pub run_at_position: Position,
    /// The optional members, by their protocol names.
    pub extra: Map<String, Value>,
}

impl Item {
    /// An item probed at its range's start, with no optional member yet.
    pub fn new(kind: Kind, range: Range) -> Item {
        Item {
            kind,
            range,
            run_at_position: range.start,
            extra: Map::new(),
        }
    }

    /// The same item with an optional member set.
    pub fn with(mut self, key: &str, value: Value) -> Item {
        self.extra.insert(key.to_owned(), value);
        self
    }

    /// The item as the result shows it.
    pub fn to_json(&self) -> Value {
        let mut item = json!({
            "kind": self.kind.name(),
            "range": self.range.to_json(),
            "run_at_position": self.run_at_position.to_json(),
        });
        let object = item.as_object_mut().expect("an object");
        object.extend(self.extra.clone());
        item
    }
}

/// Sorts items into the result's order.
pub fn sort(items: &mut [Item]) {
    items.sort_by_key(|item| (item.range.start, item.range.end, item.kind));
}

/// The `diagnostic` item of a published diagnostic, if it has a range.
pub fn diagnostic(d: &Diagnostic) -> Option<Item> {
    let extent = d.extent()?;
    let range = Range::new(extent.start, extent.end);
    let mut item = Item::new(Kind::Diagnostic, range)
        .with("message", json!(d.message))
        .with("diagnostic", d.raw.clone());
    if let Some(severity) = d.severity {
        item = item.with("severity", json!(severity));
    }
    Some(item)
}

/// The `incomplete_proof` item of an `unsolved goals` error; `suggest` adds the probe text.
pub fn incomplete_proof(d: &Diagnostic, suggest: bool) -> Option<Item> {
    let goals = unsolved_goals(d)?;
    let whole = d.extent()?;
    let range = Range::new(whole.start, whole.end);
    let mut item = Item::new(Kind::IncompleteProof, range)
        .with(
            "message",
            json!(d.message.lines().next().unwrap_or_default()),
        )
        .with("diagnostic", d.raw.clone())
        .with("proof_state", json!({ "goals": goals }));
    if let Some(severity) = d.severity {
        item = item.with("severity", json!(severity));
    }
    item.run_at_position = range.end;
    if suggest {
        item = item.with("run_at_text", json!(PROBE));
    }
    Some(item)
}

/// The `code_action` item of an action Lean offers for the range `asked` of document `uri`.
pub fn code_action(action: Value, uri: &str, asked: Range) -> Item {
    let diagnosed = action.pointer("/diagnostics/0/range");
    let range = diagnosed
        .or_else(|| first_edit_range(&action, uri))
        .and_then(Range::from_json)
        .unwrap_or(asked);
    let title = action.get("title").cloned().unwrap_or(Value::Null);
    Item::new(Kind::CodeAction, range)
        .with("message", title)
        .with("code_action", action)
}

/// The range of an action's first edit of document `uri`, in either `WorkspaceEdit` form.
fn first_edit_range<'a>(action: &'a Value, uri: &str) -> Option<&'a Value> {
    let edit = action.get("edit")?;
    let versioned = edit
        .get("documentChanges")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|change| change.pointer("/textDocument/uri").and_then(Value::as_str) == Some(uri))
        .find_map(|change| change.pointer("/edits/0/range"));
    versioned.or_else(|| edit.get("changes")?.get(uri)?.pointer("/0/range"))
}

/// The probe `suggest: "basic"` offers where a tactic can run: it closes nothing and shows the
/// goals there as the run's `proof_state`, ready to be replaced by the next step.
pub const PROBE: &str = "exact ?_";

/// Lean's tag for an `unsolved goals` error (`Lean.Lsp.DiagnosticTag`-like `leanTags`).
const UNSOLVED_GOALS_TAG: u64 = 1;
const UNSOLVED_GOALS: &str = "unsolved goals";

/// The goals an `unsolved goals` error lists, in the goal shape; `None` for other diagnostics.
pub fn unsolved_goals(d: &Diagnostic) -> Option<Vec<Value>> {
    if !d.is_error() {
        return None;
    }
    let tagged = d
        .raw
        .get("leanTags")
        .and_then(Value::as_array)
        .is_some_and(|tags| tags.iter().any(|t| t.as_u64() == Some(UNSOLVED_GOALS_TAG)));
    let (first, rest) = d.message.split_once('\n').unwrap_or((&d.message, ""));
    if !tagged && first.trim() != UNSOLVED_GOALS {
        return None;
    }
    // Lean separates the goals of the message with an empty line.
    Some(
        rest.split("\n\n")
            .filter(|goal| !goal.trim().is_empty())
            .map(parse_goal)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(a: (u32, u32), b: (u32, u32)) -> Value {
        Range::new(Position::new(a.0, a.1), Position::new(b.0, b.1)).to_json()
    }

    fn unsolved() -> Diagnostic {
        Diagnostic::new(json!({
            "range": range((14, 60), (15, 0)),
            "fullRange": range((14, 60), (16, 10)),
            "severity": 1,
            "leanTags": [1],
            "message": "unsolved goals\ncase right\np q : Prop\nhp : p\nhq : q\n⊢ q\n\ncase left\n⊢ p",
            "source": "Lean 4"
        }))
    }

    #[test]
    fn an_unsolved_goals_error_is_an_incomplete_proof_with_its_goals() {
        let item = incomplete_proof(&unsolved(), true).expect("an item");
        let shown = item.to_json();
        assert_eq!(shown["kind"], "incomplete_proof");
        assert_eq!(shown["range"], range((14, 60), (16, 10)));
        assert_eq!(
            shown["run_at_position"],
            json!({"line": 16, "character": 10})
        );
        assert_eq!(shown["run_at_text"], "exact ?_");
        assert_eq!(shown["message"], "unsolved goals");
        assert_eq!(shown["severity"], 1);
        let goals = shown["proof_state"]["goals"].as_array().unwrap();
        assert_eq!(goals.len(), 2);
        assert_eq!(goals[0]["userName"], "right");
        assert_eq!(
            goals[0]["hyps"][0],
            json!({"names": ["p", "q"], "type": "Prop"})
        );
        assert_eq!(goals[1]["target"], "p");
        assert!(
            incomplete_proof(&unsolved(), false)
                .unwrap()
                .extra
                .get("run_at_text")
                .is_none()
        );
        // The diagnostic item is over the message's extent, not its `range` cut at a line.
        let as_diagnostic = diagnostic(&unsolved()).unwrap();
        assert_eq!(
            as_diagnostic.range,
            Range::from_json(&range((14, 60), (16, 10))).unwrap()
        );
    }

    #[test]
    fn other_diagnostics_are_not_incomplete_proofs() {
        let warning = Diagnostic::new(json!({
            "range": range((1, 0), (1, 5)), "severity": 2,
            "message": "unsolved goals\n⊢ p"
        }));
        assert!(unsolved_goals(&warning).is_none());
        let other = Diagnostic::new(json!({
            "range": range((1, 0), (1, 5)), "severity": 1, "message": "Type mismatch"
        }));
        assert!(incomplete_proof(&other, true).is_none());
        // Untagged (older Lean): recognised by its first line.
        let untagged = Diagnostic::new(json!({
            "range": range((1, 0), (1, 5)), "severity": 1, "message": "unsolved goals\n⊢ p"
        }));
        assert_eq!(unsolved_goals(&untagged).unwrap().len(), 1);
    }

    #[test]
    fn a_code_action_sits_where_it_applies() {
        let uri = "file:///p/A.lean";
        let query = Range::new(Position::new(3, 0), Position::new(3, 0));
        let edit = |uri: &str| {
            json!({"documentChanges": [{"textDocument": {"uri": uri, "version": 1},
                   "edits": [{"range": range((2, 2), (2, 7)), "newText": "x"}]}]})
        };
        let eager = json!({"title": "Try this: x", "kind": "quickfix", "edit": edit(uri)});
        let item = code_action(eager.clone(), uri, query).to_json();
        assert_eq!(item["range"], range((2, 2), (2, 7)));
        assert_eq!(item["message"], "Try this: x");
        assert_eq!(item["code_action"], eager);
        let other_file = json!({"title": "t", "edit": edit("file:///p/B.lean")});
        assert_eq!(code_action(other_file, uri, query).range, query);
        let mapped = json!({"title": "t", "edit": {"changes": {uri: [{"range": range((5, 0), (5, 1)), "newText": ""}]}}});
        assert_eq!(
            code_action(mapped, uri, query).to_json()["range"],
            range((5, 0), (5, 1))
        );
        let diagnosed = json!({"title": "t", "diagnostics": [{"range": range((7, 1), (7, 2)), "message": "m"}], "edit": edit(uri)});
        assert_eq!(
            code_action(diagnosed, uri, query).to_json()["range"],
            range((7, 1), (7, 2))
        );
        let lazy = json!({"title": "t", "data": {}});
        assert_eq!(code_action(lazy, uri, query).range, query);
    }

    #[test]
    fn items_sort_by_start_end_then_kind() {
        let r = |a: u32, b: u32| Range::new(Position::new(0, a), Position::new(0, b));
        let mut items = vec![
            Item::new(Kind::IncompleteProof, r(1, 3)),
            Item::new(Kind::Diagnostic, r(1, 3)),
            Item::new(Kind::Sorry, r(1, 4)),
            Item::new(Kind::CodeAction, r(0, 9)),
            Item::new(Kind::Hole, r(1, 3)),
        ];
        sort(&mut items);
        let order: Vec<&str> = items.iter().map(|i| i.kind.name()).collect();
        assert_eq!(
            order,
            [
                "code_action",
                "hole",
                "diagnostic",
                "incomplete_proof",
                "sorry"
            ]
        );
    }
}
