//! One candidate of `lean_try_edit`: the text it makes, the declaration it edits, and what
//! Lean's diagnostics of that text say of it against the base's. Pure: no Lean, no I/O.
//!
//! Contract:
//! 1. A candidate replaces one range of the base (0-based lines, UTF-16 columns) with its text;
//!    the whole result is what Lean checks. Its *declaration* is the command around the edit
//!    (`syntax::command_around`), in the result's coordinates (and the base's, for the base).
//! 2. A diagnostic is the declaration's when its range starts inside the declaration; it is *in
//!    the edit* when its range meets the edited span of the result. Another diagnostic is
//!    *elsewhere*; a base diagnostic elsewhere is carried into the result's coordinates (one
//!    after the edit moves with it), and an error elsewhere that no base error matches (start and
//!    message) is *new*.
//! 3. The declaration uses `sorry` when the candidate writes `sorry` or `admit`
//!    (`syntax::writes_sorry`), when Lean warns so on it (in any wording: `probe`), or when
//!    Lean's axioms of the declarations the edit touches list `sorryAx` (`axioms`, asked in the
//!    same twin text). The verdict, in this order: `failed` when the declaration has an error
//!    other than `unsolved goals`, or there is a new error elsewhere; `failed` with the typed
//!    reason of `axioms::Axioms::unconfirmed` (`axiomsNotAnswered`, `axiomsNotAskable`) when
//!    it would close but Lean's axioms could not rule `sorry` out — a verdict never rests on the
//!    absence of a warning; `closed` when the declaration has no `unsolved goals` and does not
//!    use `sorry`, unless the statement changed (5) and the candidate did not allow it: then
//!    `failed` (`statementChanged`); `progressed` when what remains of it (its goals, and whether it uses `sorry`)
//!    differs from what remained of the base's (its goals, and Lean's warnings); otherwise
//!    `failed` (`noProgress`). Each verdict but `closed` says why (`reason`).
//! 4. The goals are those Lean's `unsolved goals` errors on the declaration name, each message's
//!    lines after the first, goal by goal (a blank line between two), in the goal shape
//!    (`session::goals::parse_goal`); none when it closed. No other Lean request is needed.
//! 5. The gate: the new errors elsewhere, the count of ``declaration uses 'sorry'`` warnings in
//!    the base and in the result (one more in the result when the declaration uses `sorry` with
//!    no warning on it), and `statement_changed` when the result states something the
//!    base did not, anywhere in the file, or the edit changed a definition's value reaching past
//!    it (`syntax::statement_changes`: a declaration added, removed, restated, renamed or moved,
//!    an axiom added, a command outside declarations added, removed or changed), with
//!    `statement_changes`, each `{change, line, kind?, name?, was?, command?}`.
//! 6. Bounded: at most [`MAX_DIAGNOSTICS`] diagnostics (the declaration's first, then the
//!    others, each group in Lean's order), each message at most [`MAX_MESSAGE_CHARS`]
//!    characters, at most [`MAX_STATEMENT_CHANGES`] statement changes; `truncated: true` says
//!    something was cut.

use serde_json::{Value, json};

use super::axioms::Axioms;
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::session::goals::parse_goal;
use crate::lean::syntax::{Change, Command, command_around, statement_changes, writes_sorry};
use crate::lean::text::{Position, offset_of, position_at};

/// The most diagnostics a candidate's result carries.
pub const MAX_DIAGNOSTICS: usize = 50;
/// The most characters of one message a candidate's result carries.
pub const MAX_MESSAGE_CHARS: usize = 2000;
/// The most statement changes a candidate's gate lists.
pub const MAX_STATEMENT_CHANGES: usize = 50;

/// What Lean says at the head of the error that lists the goals a proof leaves.
const UNSOLVED_GOALS: &str = "unsolved goals";

/// A candidate applied to its base (see the contract).
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The whole text with the candidate.
    pub text: String,
    /// The replaced range of the base.
    pub from: Position,
    /// See `from`.
    pub to: Position,
    /// The candidate's text.
    pub inserted: String,
    /// The end of the candidate's text in the result.
    pub edit_end: Position,
    /// The declaration in the base.
    pub base_declaration: Command,
    /// The declaration in the result.
    pub declaration: Command,
    /// Whether what the file states differs from the base's (see the contract).
    pub statement_changed: bool,
    /// What differs.
    pub statement_changes: Vec<Change>,
    /// Whether the candidate may close with a statement changed.
    pub statement_change_allowed: bool,
}

/// Replaces `[from, to)` of `base` with `text` (see the contract).
pub fn apply(base: &str, from: Position, to: Position, text: &str) -> Applied {
    let (a, b) = (offset_of(base, from), offset_of(base, to));
    let result = format!("{}{text}{}", &base[..a], &base[b..]);
    let edit_end = position_at(&result, a + text.len());
    let base_declaration = command_around(base, from, to);
    let declaration = command_around(&result, from, edit_end);
    let statement_changes = statement_changes(base, &result, from, to);
    Applied {
        text: result,
        from,
        to,
        inserted: text.to_owned(),
        edit_end,
        base_declaration,
        declaration,
        statement_changed: !statement_changes.is_empty(),
        statement_changes,
        statement_change_allowed: false,
    }
}

impl Applied {
    /// `self`, which may close with a statement changed when `allowed`.
    pub fn allowing_statement_change(self, allowed: bool) -> Applied {
        Applied {
            statement_change_allowed: allowed,
            ..self
        }
    }
}

/// A candidate's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Lean confirmed the declaration closed, with no new error anywhere.
    Closed,
    /// Goals remain, different from the base's; no error of its own.
    Progressed,
    /// An error of its own or a new one elsewhere, or no progress.
    Failed,
    /// The call's deadline came first.
    Timeout,
    /// Not run: another candidate closed first (`prefer: "first_closed"`).
    Skipped,
}

impl Verdict {
    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Closed => "closed",
            Verdict::Progressed => "progressed",
            Verdict::Failed => "failed",
            Verdict::Timeout => "timeout",
            Verdict::Skipped => "skipped",
        }
    }
}

/// What Lean's diagnostics say of a candidate (see the contract).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// The verdict.
    pub verdict: Verdict,
    /// Why it is not `closed`, when it is not.
    pub reason: Option<&'static str>,
    /// The goals left on the declaration.
    pub goals: Vec<Value>,
    /// The diagnostics, bounded.
    pub diagnostics: Vec<Value>,
    /// Whether diagnostics or messages were cut.
    pub truncated: bool,
    /// The regression gate.
    pub gate: Value,
    /// Why Lean's axioms could not rule `sorry` out of a declaration that would close: a typed
    /// reason and a message.
    pub sorry_unconfirmed: Option<(&'static str, String)>,
}

/// Judges `applied`, whose text Lean answered with `diagnostics` and `axioms`, against the
/// base's (see the contract); `path` names the file in the diagnostics.
pub fn judge(
    base: &[Diagnostic],
    applied: &Applied,
    diagnostics: &[Diagnostic],
    axioms: &Axioms,
    path: &str,
) -> Judged {
    let ours = |d: &Diagnostic| within(d, &applied.declaration);
    let base_ours = |d: &Diagnostic| within(d, &applied.base_declaration);
    let own_errors = diagnostics
        .iter()
        .filter(|d| ours(d) && d.is_error() && !is_unsolved_goals(d))
        .count();
    let mut base_elsewhere: Vec<(Position, &str)> = base
        .iter()
        .filter(|d| d.is_error() && !base_ours(d))
        .filter_map(|d| Some((carried(applied, start(d)?), d.message.as_str())))
        .collect();
    let mut new_elsewhere = Vec::new();
    for d in diagnostics.iter().filter(|d| d.is_error() && !ours(d)) {
        let key = start(d).map(|at| (at, d.message.as_str()));
        match base_elsewhere.iter().position(|b| Some(*b) == key) {
            Some(k) => {
                base_elsewhere.swap_remove(k);
            }
            None => new_elsewhere.push(d),
        }
    }
    let goals = goals_of(diagnostics.iter().filter(|d| ours(d)));
    let warned = diagnostics.iter().any(|d| ours(d) && is_sorry_warning(d));
    let mut sorry = warned || writes_sorry(&applied.inserted);
    let base_goals = goals_of(base.iter().filter(|d| base_ours(d)));
    let base_sorry = base.iter().any(|d| base_ours(d) && is_sorry_warning(d));
    let mut sorry_unconfirmed = None;
    if own_errors == 0 && new_elsewhere.is_empty() && goals.is_empty() && !sorry {
        // It would close: only Lean's axioms can say it does not use `sorry`.
        sorry_unconfirmed = axioms.unconfirmed();
        sorry = axioms.uses_sorry();
    }
    let (verdict, reason) = if own_errors > 0 {
        (Verdict::Failed, Some("errorInDeclaration"))
    } else if !new_elsewhere.is_empty() {
        (Verdict::Failed, Some("newErrorElsewhere"))
    } else if let Some((why, _)) = &sorry_unconfirmed {
        (Verdict::Failed, Some(*why))
    } else if goals.is_empty() && !sorry {
        match applied.statement_changed && !applied.statement_change_allowed {
            true => (Verdict::Failed, Some("statementChanged")),
            false => (Verdict::Closed, None),
        }
    } else if (&goals, sorry) != (&base_goals, base_sorry) {
        let why = if goals.is_empty() {
            "usesSorry"
        } else {
            "goalsRemain"
        };
        (Verdict::Progressed, Some(why))
    } else {
        (Verdict::Failed, Some("noProgress"))
    };
    let mut truncated = false;
    let mut item = |d: &Diagnostic| shown(d, applied, path, &mut truncated);
    let changes = applied.statement_changes.iter().take(MAX_STATEMENT_CHANGES);
    let changes: Vec<Value> = changes.map(change_shown).collect();
    let gate = json!({
        "new_errors_elsewhere": new_elsewhere.iter().map(|d| item(d)).collect::<Vec<_>>(),
        "sorry": {
            "base": base.iter().filter(|d| is_sorry_warning(d)).count(),
            "candidate": diagnostics.iter().filter(|d| is_sorry_warning(d)).count()
                + usize::from(sorry && !warned),
        },
        "statement_changed": applied.statement_changed,
        "statement_changes": changes,
    });
    let ordered = diagnostics
        .iter()
        .filter(|d| ours(d))
        .chain(diagnostics.iter().filter(|d| !ours(d)));
    let shown_items: Vec<Value> = ordered.take(MAX_DIAGNOSTICS).map(&mut item).collect();
    truncated |= diagnostics.len() > MAX_DIAGNOSTICS;
    truncated |= applied.statement_changes.len() > MAX_STATEMENT_CHANGES;
    Judged {
        verdict,
        reason,
        goals: if verdict == Verdict::Closed {
            Vec::new()
        } else {
            goals
        },
        diagnostics: shown_items,
        truncated,
        gate,
        sorry_unconfirmed,
    }
}

/// One diagnostic as a candidate's result shows it.
fn shown(d: &Diagnostic, applied: &Applied, path: &str, truncated: &mut bool) -> Value {
    let cut = d.message.chars().count() > MAX_MESSAGE_CHARS;
    *truncated |= cut;
    let message: String = if cut {
        d.message
            .chars()
            .take(MAX_MESSAGE_CHARS)
            .collect::<String>()
            + "…"
    } else {
        d.message.clone()
    };
    json!({
        "path": path,
        "severity": d.severity_name(),
        "range": d.range(),
        "message": message,
        "in_edit": in_edit(d, applied),
    })
}

/// One statement change as the gate shows it.
fn change_shown(change: &Change) -> Value {
    let mut shown = json!({"change": change.changed.name(), "line": change.line});
    let fields = [
        ("kind", change.kind.map(str::to_owned)),
        ("name", change.name.clone()),
        ("was", change.was.clone()),
        ("command", change.command.clone()),
    ];
    for (field, value) in fields {
        if let Some(value) = value {
            shown[field] = json!(value);
        }
    }
    shown
}

/// Whether `d`'s range meets the edited span of the result.
fn in_edit(d: &Diagnostic, applied: &Applied) -> bool {
    let range = d.range();
    let at = |end: &str| range.get(end).and_then(Position::from_json);
    match (at("start"), at("end")) {
        (Some(from), Some(to)) => from <= applied.edit_end && to >= applied.from,
        _ => false,
    }
}

/// Where a base position lies in the result: before the edit, where it was; after it, moved
/// with it.
fn carried(applied: &Applied, at: Position) -> Position {
    if at < applied.to {
        return at;
    }
    let line = at.line - applied.to.line + applied.edit_end.line;
    let character = if at.line == applied.to.line {
        at.character - applied.to.character + applied.edit_end.character
    } else {
        at.character
    };
    Position::new(line, character)
}

/// Where a diagnostic's range starts.
fn start(d: &Diagnostic) -> Option<Position> {
    d.raw.pointer("/range/start").and_then(Position::from_json)
}

fn within(d: &Diagnostic, command: &Command) -> bool {
    start(d).is_some_and(|at| at >= command.start && at < command.end)
}

fn is_unsolved_goals(d: &Diagnostic) -> bool {
    d.message == UNSOLVED_GOALS || d.message.starts_with("unsolved goals\n")
}

/// The goals Lean's `unsolved goals` errors among `diagnostics` list (see the contract).
pub fn goals_of<'a>(diagnostics: impl Iterator<Item = &'a Diagnostic>) -> Vec<Value> {
    diagnostics
        .filter(|d| d.is_error() && is_unsolved_goals(d))
        .flat_map(|d| {
            let rest = d.message.split_once('\n').map_or("", |(_, rest)| rest);
            rest.split("\n\n")
                .filter(|goal| !goal.trim().is_empty())
                .map(parse_goal)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn is_sorry_warning(d: &Diagnostic) -> bool {
    super::probe::is_sorry_warning(&d.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "theorem a : True := by\n  skip\n\ntheorem t (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n\ndef after := 1\n";

    fn p(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    /// Lean's axioms, answered, listing no `sorryAx`.
    fn seen() -> Axioms {
        Axioms::Answered { sorry: Vec::new() }
    }

    fn diagnostic(severity: u64, from: Position, to: Position, message: &str) -> Diagnostic {
        Diagnostic::new(json!({"severity": severity, "message": message,
            "range": {"start": from.to_json(), "end": to.to_json()}}))
    }

    #[test]
    fn an_edit_replaces_its_range_and_knows_its_declaration() {
        let applied = apply(BASE, p(4, 2), p(6, 12), "exact ⟨hq, hp⟩");
        assert!(
            applied
                .text
                .contains(":= by\n  exact ⟨hq, hp⟩\n\ndef after")
        );
        assert_eq!(applied.edit_end, p(4, 16));
        assert_eq!(applied.declaration.start, p(3, 0));
        assert_eq!(applied.declaration.end, p(6, 0));
        assert_eq!(applied.base_declaration.end, p(8, 0));
        assert!(!applied.statement_changed);
        assert!(apply(BASE, p(3, 11), p(3, 12), "r").statement_changed);
        assert!(
            apply(BASE, p(3, 49), p(3, 51), "").statement_changed,
            ":= gone"
        );
        assert!(!apply(BASE, p(3, 52), p(3, 54), "by\n ").statement_changed);
    }

    #[test]
    fn verdicts_follow_the_declarations_diagnostics_against_the_base() {
        let base_goals = diagnostic(1, p(0, 20), p(0, 22), "unsolved goals\n⊢ True");
        let base = vec![base_goals.clone()];
        let applied = apply(BASE, p(4, 2), p(6, 12), "exact ⟨hq, hp⟩");
        let closed = judge(
            &base,
            &applied,
            std::slice::from_ref(&base_goals),
            &seen(),
            "A.lean",
        );
        assert_eq!(
            closed.verdict,
            Verdict::Closed,
            "the error elsewhere is the base's"
        );
        assert_eq!(closed.gate["new_errors_elsewhere"], json!([]));
        let two = "unsolved goals\ncase left\np q : Prop\n⊢ q\n\ncase right\np q : Prop\n⊢ p";
        let goals = diagnostic(1, p(3, 53), p(3, 55), two);
        let progressed = judge(
            &base,
            &applied,
            &[base_goals.clone(), goals.clone()],
            &seen(),
            "A",
        );
        assert_eq!(progressed.verdict, Verdict::Progressed);
        assert_eq!(progressed.goals.len(), 2);
        assert_eq!(progressed.goals[1]["userName"], "right");
        assert_eq!(progressed.diagnostics[0]["in_edit"], false);
        let one = std::slice::from_ref(&goals);
        let unchanged = judge(one, &applied, one, &seen(), "A");
        assert_eq!(
            (unchanged.verdict, unchanged.reason),
            (Verdict::Failed, Some("noProgress"))
        );
        let own = diagnostic(1, p(4, 2), p(4, 7), "type mismatch");
        let failed = judge(&base, &applied, &[base_goals.clone(), own], &seen(), "A");
        assert_eq!(failed.verdict, Verdict::Failed);
        assert_eq!(failed.diagnostics[0]["in_edit"], true);
        let later = diagnostic(1, p(6, 0), p(6, 3), "unknown constant");
        let elsewhere = judge(&base, &applied, &[base_goals, later], &seen(), "A");
        assert_eq!(elsewhere.reason, Some("newErrorElsewhere"));
        assert_eq!(
            elsewhere.gate["new_errors_elsewhere"][0]["message"],
            "unknown constant"
        );
        let sorry = diagnostic(2, p(3, 8), p(3, 9), "declaration uses `sorry`");
        let with_sorry = judge(&[], &applied, &[sorry], &seen(), "A");
        assert_eq!(with_sorry.verdict, Verdict::Progressed);
        assert_eq!(with_sorry.gate["sorry"], json!({"base": 0, "candidate": 1}));
    }

    #[test]
    fn a_declaration_closes_only_when_lean_s_axioms_rule_sorry_out() {
        let applied = apply(BASE, p(4, 2), p(6, 12), "exact ⟨hq, hp⟩");
        let hidden = Axioms::Answered {
            sorry: vec!["t".to_owned()],
        };
        let judged = judge(&[], &applied, &[], &hidden, "A");
        assert_eq!(
            (judged.verdict, judged.reason),
            (Verdict::Progressed, Some("usesSorry"))
        );
        assert_eq!(judged.gate["sorry"], json!({"base": 0, "candidate": 1}));
        let unanswered = Axioms::NotAnswered {
            name: "t".to_owned(),
            said: "no answer".to_owned(),
        };
        let judged = judge(&[], &applied, &[], &unanswered, "A");
        assert_eq!(
            (judged.verdict, judged.reason),
            (Verdict::Failed, Some("axiomsNotAnswered"))
        );
        assert!(judged.sorry_unconfirmed.is_some());
        let written = apply(BASE, p(4, 2), p(6, 12), "sorry");
        let judged = judge(&[], &written, &[], &seen(), "A");
        assert_eq!(judged.verdict, Verdict::Progressed, "a sorry of its own");
    }

    #[test]
    fn a_statement_changed_anywhere_keeps_a_candidate_from_closing_unless_it_allows_it() {
        // From `a`'s proof through `t`'s statement: `t` gone, a proof of `a` that Lean accepts.
        let applied = apply(BASE, p(1, 2), p(3, 54), "trivial");
        assert!(applied.statement_changed);
        let judged = judge(&[], &applied, &[], &seen(), "A");
        assert_eq!(
            (judged.verdict, judged.reason),
            (Verdict::Failed, Some("statementChanged"))
        );
        assert_eq!(
            judged.gate["statement_changes"],
            json!([{"change": "removed", "line": 3, "kind": "theorem", "name": "t"}])
        );
        let allowed = applied.allowing_statement_change(true);
        assert_eq!(
            judge(&[], &allowed, &[], &seen(), "A").verdict,
            Verdict::Closed
        );
        // The same reach, keeping `t` as it was: no change, closed.
        let kept = apply(BASE, p(1, 2), p(3, 0), "trivial\n\n");
        assert_eq!(kept.statement_changes, []);
        assert_eq!(
            judge(&[], &kept, &[], &seen(), "A").verdict,
            Verdict::Closed
        );
        // An axiom added after the edited proof.
        let axiom = apply(BASE, p(1, 6), p(1, 6), "\n\naxiom cheat : False");
        let judged = judge(&[], &axiom, &[], &seen(), "A");
        assert_eq!(judged.reason, Some("statementChanged"));
        assert_eq!(judged.gate["statement_changes"][0]["change"], "axiom_added");
    }

    #[test]
    fn base_errors_after_the_edit_move_with_it() {
        let applied = apply(BASE, p(4, 2), p(6, 12), "exact ⟨hq, hp⟩");
        let moved = diagnostic(1, p(8, 4), p(8, 9), "bad");
        let now = diagnostic(1, p(6, 4), p(6, 9), "bad");
        let judged = judge(&[moved], &applied, &[now], &seen(), "A");
        assert_eq!(judged.verdict, Verdict::Closed, "{judged:?}");
        assert_eq!(
            carried(&applied, p(6, 14)),
            p(4, 18),
            "the edit's last line"
        );
    }

    #[test]
    fn results_are_bounded_and_say_so() {
        let applied = apply(BASE, p(4, 2), p(4, 13), "skip");
        let many: Vec<Diagnostic> = (0..60)
            .map(|n| diagnostic(3, p(8, n), p(8, n + 1), &"x".repeat(2100)))
            .collect();
        let judged = judge(&[], &applied, &many, &seen(), "A");
        assert_eq!(judged.diagnostics.len(), MAX_DIAGNOSTICS);
        assert!(judged.truncated);
        let message = judged.diagnostics[0]["message"].as_str().unwrap();
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
    }
}
