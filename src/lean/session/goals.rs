//! Lean's proof goals at a position, from its stock `$/lean/plainGoal`, in the goal shape
//! results use (lean-stock-speculation.md §B).
//!
//! Contract:
//! 1. [`plain_goals`] asks once (`ask`); `null` from Lean (no tactic there) is `None`, `no goals`
//!    is `Some([])`.
//! 2. A goal as Lean renders it (`case` line, hypotheses, `⊢ target`; indented lines continue the
//!    entry above) is `{userName?, goalPrefix, target, hyps: [{names, type, value?}]}`
//!    ([`parse_goal`]).

use serde_json::{Value, json};

use super::ask::ask_once;
use super::mirror::Document;
use super::set::DocumentSet;
use crate::lean::error::HostError;
use crate::lean::json::object;
use crate::lean::progress::Caller;
use crate::lean::text::Position;

/// Lean's goals at `position` of `document`, in the goal shape (see the contract).
pub async fn plain_goals(
    set: &DocumentSet,
    document: &Document,
    position: Position,
    caller: &Caller<'_>,
) -> Result<Option<Vec<Value>>, HostError> {
    let params = object([
        ("textDocument", json!({"uri": &*document.uri})),
        ("position", position.to_json()),
    ]);
    let answer = ask_once(set, document, caller, "$/lean/plainGoal", params).await?;
    let goals = answer.get("goals").and_then(Value::as_array).map(|goals| {
        goals
            .iter()
            .filter_map(Value::as_str)
            .map(parse_goal)
            .collect()
    });
    Ok(goals)
}

/// One goal as Lean renders it, in the goal shape.
pub fn parse_goal(rendered: &str) -> Value {
    let mut lines = rendered.lines().peekable();
    let mut goal = json!({"goalPrefix": "⊢ ", "hyps": [], "target": ""});
    if let Some(first) = lines.peek()
        && let Some(name) = first.strip_prefix("case ")
    {
        goal["userName"] = json!(name.trim());
        lines.next();
    }
    let mut entries: Vec<String> = Vec::new();
    let mut target: Option<String> = None;
    for line in lines {
        if let Some(rest) = line.strip_prefix("⊢ ") {
            target = Some(rest.to_owned());
        } else if let Some(target) = target.as_mut() {
            target.push('\n');
            target.push_str(line);
        } else if line.starts_with(char::is_whitespace) && !entries.is_empty() {
            let last = entries.last_mut().expect("not empty");
            last.push('\n');
            last.push_str(line);
        } else {
            entries.push(line.to_owned());
        }
    }
    goal["target"] = json!(target.unwrap_or_default());
    goal["hyps"] = entries.iter().map(|entry| hypothesis(entry)).collect();
    goal
}

fn hypothesis(entry: &str) -> Value {
    let Some((names, rest)) = entry.split_once(" : ") else {
        return json!({"names": [], "type": entry});
    };
    let names: Vec<&str> = names.split_whitespace().collect();
    match rest.split_once(" := ") {
        Some((ty, value)) => json!({"names": names, "type": ty, "value": value}),
        None => json!({"names": names, "type": rest}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_parse_into_the_goal_shape() {
        let goal = parse_goal("case succ\nn✝ : Nat\na✝ : 0 + n✝ = n✝\n⊢ 0 + (n✝ + 1) = n✝ + 1");
        assert_eq!(
            goal,
            json!({
                "userName": "succ",
                "goalPrefix": "⊢ ",
                "hyps": [
                    {"names": ["n✝"], "type": "Nat"},
                    {"names": ["a✝"], "type": "0 + n✝ = n✝"}
                ],
                "target": "0 + (n✝ + 1) = n✝ + 1"
            })
        );
        let grouped = parse_goal("p q : Prop\nx : Nat := 3\nh :\n  p ∧\n    q\n⊢ p");
        assert_eq!(grouped["hyps"][0]["names"], json!(["p", "q"]));
        assert_eq!(grouped["hyps"][1]["value"], "3");
        assert_eq!(grouped["hyps"].as_array().unwrap().len(), 3);
        assert_eq!(grouped["target"], "p");
    }
}
