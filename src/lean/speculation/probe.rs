//! The text of a speculative run, and what its result keeps of Lean's answer. Pure: no Lean,
//! no I/O.
//!
//! Contract:
//! 1. A twin's text is the real text before the anchor, byte for byte (so Lean reuses every
//!    snapshot before it), then the probe steps, then a newline (and in tactic mode the block's
//!    indentation, where the goals after the probe are asked for); nothing of the real text
//!    after the anchor (the run sees the state at the anchor, nothing later).
//! 2. In a proof (tactic mode) the steps form one tactic block at the anchor: a step's later
//!    lines keep their relative indentation under the block's column; after code on the
//!    anchor's line the first step follows a `;` (or a space after `by`). Between commands
//!    (command mode) each step starts on a line of its own.
//! 3. Command mode runs one command: text in which `syntax` finds more than one command start
//!    (a later line opening at the first column with code that neither continues the command
//!    before it nor is joined to it by an `… in` or `@[…]` line) is refused before Lean is
//!    asked.
//! 4. The run's messages are the twin's diagnostics that start at or after the probe's first
//!    character, and those on the declaration that encloses the probe (tactic mode), which the
//!    probe causes: `declaration uses 'sorry'` on its name, an earlier tactic's error that stops
//!    the block before the probe, a linter's warning. Only the `unsolved goals` error of a block
//!    the probe is cut off in (its range encloses the probe) is not the probe's: the goals it
//!    leaves are the proof state (and the run leaves its declaration unfinished). Messages on
//!    earlier commands are the prefix's. Information messages that are `[class]` traces go to
//!    `traces`; any of the probe's messages saying the declaration uses `sorry`, in any of
//!    Lean's wordings (`sorry`, ``sorry `«M:l:c»` `` under `pp.sorrySource`, `sorryAx …` under
//!    `pp.all`), makes `uses_sorry` true — which says only that: its absence proves nothing
//!    (`axioms`).
//! 5. What a run touches, for `#print axioms` ([`touched`]): in tactic mode the declaration that
//!    encloses the probe, in command mode what the probe's command declares (nothing, for a
//!    command that declares nothing).
//! 6. A probe that writes a terminal command (`#exit`, an `import` after the header:
//!    `syntax::terminal_commands`) is refused before Lean is asked ([`refuse_terminal`]): Lean
//!    would stop reading the twin there, and nothing after it would be checked. So is a probe at
//!    a position after the file's own `#exit` (`afterTerminalCommand`): Lean would never reach
//!    it. (The text before the position is looked at only when it holds `#exit` at all.)

use serde_json::{Value, json};

use crate::lean::error::HostError;
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::syntax::{
    Declared, command_starts, declarations_in, header_end, terminal_commands,
};
use crate::lean::text::{Position, position_at};

/// The message of a refused multi-command text starts with this.
pub const ONE_COMMAND_ONLY: &str = "runAtSupportsOneCommandOnly";

/// A twin's text, and where the probe lies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwinText {
    /// The whole text.
    pub text: String,
    /// The probe's first character.
    pub start: Position,
    /// Where to ask for the goals after the probe (tactic mode): the end of the text, which is
    /// the probe's trailing whitespace, at the block's column.
    pub end: Position,
    /// Where the declaration that encloses the probe starts (tactic mode); `start` in command
    /// mode, where the probe is a command of its own.
    pub declaration: Position,
}

/// Builds the twin text for `steps` run at byte `anchor` of `real` (see the contract).
pub fn twin_text(real: &str, anchor: usize, steps: &[String], tactic: bool) -> TwinText {
    let prefix = &real[..anchor];
    let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
    let before = &prefix[line_start..];
    let blank_before = before.trim().is_empty();
    let after_by = ends_with_by(before);
    let indent = if blank_before {
        before.to_owned()
    } else if tactic && after_by {
        // `by` then the probe: the block starts where the probe does.
        " ".repeat(before.trim_end().chars().count() + 1)
    } else if tactic {
        " ".repeat(block_column(before))
    } else {
        String::new()
    };
    let mut text = String::from(prefix);
    if !blank_before {
        if tactic && after_by {
            text.truncate(text.trim_end().len());
        }
        text.push_str(match (tactic, after_by) {
            (true, true) => " ",
            (true, false) => "; ",
            (false, _) => "\n",
        });
    }
    let start = position_at(&text, text.len());
    for (n, step) in steps.iter().enumerate() {
        if n > 0 {
            text.push('\n');
            if tactic {
                text.push_str(&indent);
            }
        }
        for (i, line) in step.trim_end().split('\n').enumerate() {
            if i > 0 {
                text.push('\n');
                if tactic && !line.trim().is_empty() {
                    text.push_str(&indent);
                }
            }
            text.push_str(line.trim_end_matches('\r'));
        }
    }
    text.truncate(text.trim_end().len());
    text.push('\n');
    if tactic {
        // Goals are asked for in the probe's trailing whitespace at the block's column: after
        // a bullet or a nested block that is the state after it, not inside its last branch.
        text.push_str(&indent);
    }
    let end = position_at(&text, text.len());
    let declaration = match command_starts(prefix).last() {
        Some(&line) if tactic => Position::new(line, 0),
        _ => start,
    };
    TwinText {
        text,
        start,
        end,
        declaration,
    }
}

/// The column a tactic block on this line (before the anchor) starts at: after its last `by`,
/// else at its indentation.
fn block_column(before: &str) -> usize {
    let words: Vec<(usize, &str)> = before
        .match_indices(|c: char| !c.is_whitespace())
        .map(|(i, _)| i)
        .map(|i| (i, &before[i..]))
        .collect();
    let by = words.iter().rev().find(|(i, rest)| {
        rest.starts_with("by")
            && rest[2..].chars().next().is_none_or(char::is_whitespace)
            && (*i == 0 || before[..*i].ends_with(char::is_whitespace))
    });
    match by {
        Some((i, _)) => {
            let after = &before[i + 2..];
            let skipped = after.len() - after.trim_start().len();
            (before[..i + 2 + skipped]).chars().count()
        }
        None => before.len() - before.trim_start().len(),
    }
}

fn ends_with_by(before: &str) -> bool {
    let trimmed = before.trim_end();
    trimmed
        .strip_suffix("by")
        .is_some_and(|head| head.is_empty() || head.ends_with(char::is_whitespace))
}

/// The declarations a run in `twin` touches (see the contract).
pub fn touched(twin: &TwinText, tactic: bool) -> Vec<Declared> {
    let from = if tactic { twin.declaration } else { twin.start };
    declarations_in(&twin.text, from, position_at(&twin.text, twin.text.len()))
}

/// Refuses `probe`, run at byte `anchor` of `real`, when it writes a terminal command (see the
/// contract).
pub fn refuse_terminal(real: &str, anchor: usize, probe: &str) -> Result<(), HostError> {
    let prefix = &real[..anchor];
    refuse_after_exit(prefix)?;
    // An import is terminal after the header; whether the probe's own imports extend it is read
    // from the whole text only when it writes one at all.
    let mut found = terminal_commands(probe, 0);
    if found.iter().any(|t| t.command == "import") {
        let header = header_end(&format!("{prefix}\n{probe}")).saturating_sub(prefix.len() + 1);
        found = terminal_commands(probe, header);
    }
    match found.first() {
        Some(t) => Err(HostError::terminal_command(
            t.command,
            t.at.line,
            t.at.character,
        )),
        None => Ok(()),
    }
}

/// Refuses a position after the file's own `#exit`: `prefix` is the file's text before it (see
/// the contract).
pub fn refuse_after_exit(prefix: &str) -> Result<(), HostError> {
    if !prefix.contains("#exit") {
        return Ok(());
    }
    let exit = terminal_commands(prefix, prefix.len())
        .into_iter()
        .find(|t| t.command == "#exit");
    match exit {
        Some(t) => Err(HostError::after_terminal_command(t.command, t.at.line)),
        None => Ok(()),
    }
}

/// In command mode, the line numbers (0-based, in `text`) of every command after the first, as
/// `syntax` finds command starts, if there are any: the text is then refused (see the contract).
pub fn extra_commands(text: &str) -> Vec<u32> {
    command_starts(text).into_iter().skip(1).collect()
}

/// The message that refuses a multi-command text.
pub fn one_command_message(extra: &[u32]) -> String {
    let lines: Vec<String> = extra.iter().map(|l| (l + 1).to_string()).collect();
    format!(
        "{ONE_COMMAND_ONLY}: a run takes one command, and this text starts another on line {} \
         of the text; run them one at a time, continuing with lean_run_at_handle and \
         lean_run_with",
        lines.join(", ")
    )
}

/// What a run's result keeps of the twin's diagnostics (see the contract).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// None of the probe's messages is an error.
    pub success: bool,
    /// The probe's messages, as Lean ordered them.
    pub messages: Vec<Value>,
    /// The probe's `[class]` traces.
    pub traces: Vec<String>,
    /// One of the probe's messages says the declaration uses `sorry`.
    pub uses_sorry: bool,
    /// The probe was cut off in a block with goals left: its declaration is unfinished.
    pub cut_off: bool,
}

/// The run's result fields from the twin's diagnostics (see the contract).
pub fn outcome(diagnostics: &[Diagnostic], twin: &TwinText) -> Outcome {
    let mut outcome = Outcome {
        success: true,
        ..Outcome::default()
    };
    for diagnostic in diagnostics {
        let at = |pointer: &str| {
            let line = diagnostic.raw.pointer(&format!("{pointer}/line"));
            let character = diagnostic.raw.pointer(&format!("{pointer}/character"));
            match (
                line.and_then(Value::as_u64),
                character.and_then(Value::as_u64),
            ) {
                (Some(line), Some(character)) => Some(Position::new(line as u32, character as u32)),
                _ => None,
            }
        };
        let Some(from) = at("/range/start") else {
            continue;
        };
        if from < twin.declaration {
            continue;
        }
        let error = diagnostic.severity == Some(1);
        if from < twin.start && error && diagnostic.message.starts_with("unsolved goals") {
            let to = at("/fullRange/end").or_else(|| at("/range/end"));
            if to.is_none_or(|to| to >= twin.start) {
                outcome.cut_off = true;
                continue;
            }
        }
        let severity = match diagnostic.severity {
            Some(1) => "error",
            Some(2) => "warning",
            _ => "information",
        };
        outcome.success &= !error;
        if is_sorry_warning(&diagnostic.message) {
            outcome.uses_sorry = true;
        }
        if severity == "information" && is_trace(&diagnostic.message) {
            outcome.traces.push(diagnostic.message.clone());
        } else {
            outcome
                .messages
                .push(json!({"severity": severity, "text": diagnostic.message}));
        }
    }
    outcome
}

/// Lean's ``declaration uses 'sorry'`` (quoted `'sorry'` in older Leans, `` `sorry` `` in newer),
/// also as `pp.sorrySource` (``sorry `«M:l:c»` ``) and `pp.all` (`` `sorryAx …` ``) word it.
pub(super) fn is_sorry_warning(message: &str) -> bool {
    message
        .strip_prefix("declaration uses ")
        .is_some_and(|rest| {
            let term = rest.trim_start_matches(['\'', '`']);
            term.strip_prefix("sorry").is_some_and(|after| {
                after.is_empty() || after.starts_with(['\'', '`', ' ']) || after.starts_with("Ax")
            })
        })
}

/// `[Meta.synthInstance] …`: a trace class in brackets, then the trace.
fn is_trace(message: &str) -> bool {
    message
        .strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(class, _)| {
            !class.is_empty()
                && class.split('.').all(|part| {
                    !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::text::offset_of;

    fn steps(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|s| (*s).to_owned()).collect()
    }

    const PROOF: &str =
        "theorem t (p : Prop) (h : p) : p := by\n  intro\n  exact h\n\ndef after := 1\n";

    #[test]
    fn a_tactic_probe_replaces_what_follows_the_anchor() {
        let anchor = offset_of(PROOF, Position::new(2, 2));
        let twin = twin_text(PROOF, anchor, &steps(&["exact h"]), true);
        assert_eq!(
            twin.text,
            "theorem t (p : Prop) (h : p) : p := by\n  intro\n  exact h\n  "
        );
        assert_eq!(
            (twin.start, twin.end),
            (Position::new(2, 2), Position::new(3, 2))
        );
        assert!(
            twin.text.starts_with(&PROOF[..anchor]),
            "the prefix is byte-identical"
        );
    }

    #[test]
    fn later_lines_and_later_steps_stay_in_the_block() {
        let anchor = offset_of(PROOF, Position::new(1, 2));
        let twin = twin_text(
            PROOF,
            anchor,
            &steps(&["constructor\n  · exact h", "rfl"]),
            true,
        );
        assert_eq!(
            twin.text,
            "theorem t (p : Prop) (h : p) : p := by\n  constructor\n    · exact h\n  rfl\n  "
        );
        assert_eq!(twin.end, Position::new(4, 2));
    }

    #[test]
    fn after_code_on_the_line_the_probe_follows_a_separator() {
        let line = "example : True := by trivial";
        let at_end = twin_text(line, line.len(), &steps(&["done", "skip"]), true);
        assert_eq!(
            at_end.text,
            "example : True := by trivial; done\n                     skip\n                     "
        );
        let after_by = twin_text("example : True := by", 20, &steps(&["trivial"]), true);
        assert_eq!(
            after_by.text,
            "example : True := by trivial\n                     "
        );
        let command = twin_text("def a := 1", 10, &steps(&["#check a"]), false);
        assert_eq!(command.text, "def a := 1\n#check a\n");
        assert_eq!(command.start, Position::new(1, 0));
    }

    #[test]
    fn a_run_touches_its_declaration_or_what_its_command_declares() {
        let anchor = offset_of(PROOF, Position::new(2, 2));
        let tactic = twin_text(PROOF, anchor, &steps(&["exact h"]), true);
        let names = |twin: &TwinText, tactic: bool| -> Vec<Option<String>> {
            touched(twin, tactic).into_iter().map(|d| d.name).collect()
        };
        assert_eq!(names(&tactic, true), [Some("t".to_owned())]);
        let real = "namespace N\ndef a := 1\n";
        let command = twin_text(
            real,
            real.len(),
            &steps(&["theorem u : True := trivial"]),
            false,
        );
        assert_eq!(names(&command, false), [Some("N.u".to_owned())]);
        let check = twin_text(real, real.len(), &steps(&["#check a"]), false);
        assert!(names(&check, false).is_empty());
        let example = twin_text(
            real,
            real.len(),
            &steps(&["example : True := trivial"]),
            false,
        );
        assert_eq!(names(&example, false), [None]);
    }

    #[test]
    fn terminal_commands_are_refused() {
        let refused = |real: &str, probe: &str| {
            refuse_terminal(real, real.len(), probe).map_err(|e| e.data.unwrap()["command"].clone())
        };
        assert_eq!(
            refused(PROOF, "rfl\n#exit"),
            Err(serde_json::json!("#exit"))
        );
        assert_eq!(
            refused(PROOF, "import Foo"),
            Err(serde_json::json!("import"))
        );
        assert_eq!(refused("", "import Foo"), Ok(()), "a header of its own");
        assert_eq!(
            refused("import A\n", "import B"),
            Ok(()),
            "the header goes on"
        );
        assert_eq!(refused(PROOF, "exact h -- #exit"), Ok(()));
        let after = "theorem a : True := trivial\n#exit\n";
        let error = refuse_terminal(after, after.len(), "#check a").unwrap_err();
        assert_eq!(error.data.unwrap()["reason"], "afterTerminalCommand");
    }

    #[test]
    fn one_command_only() {
        assert!(extra_commands("def a := 1").is_empty());
        assert!(extra_commands("@[simp]\ntheorem a : True := by\n  trivial").is_empty());
        assert!(
            extra_commands("inductive T\n| a\n| b\nderiving Repr\n-- note\n/- x\ny -/").is_empty()
        );
        assert_eq!(extra_commands("def a := 1\n\n#eval a\n#check a"), [2, 3]);
        assert!(one_command_message(&[2]).starts_with("runAtSupportsOneCommandOnly: "));
    }

    #[test]
    fn scoping_lines_attributes_and_doc_comments_join_the_command_below() {
        let one = [
            "set_option maxHeartbeats 400000 in\ntheorem t : True := by\n  trivial",
            "open Nat in\ndef x := succ 1",
            "variable (n : Nat) in\n-- why\nset_option linter.all true in\n@[simp]\ntheorem t : n = n := rfl",
            "/-- Doc. -/\ndef f := 1",
            "/-- Doc,\nover lines. -/\n@[simp, norm_cast]\ndef f := 1",
            "@[simp,\n  norm_cast]\ntheorem t : True := trivial",
            "/-- info: 2 -/\n#guard_msgs in\n#eval 1 + 1",
        ];
        for text in one {
            let extra = extra_commands(text);
            assert!(extra.is_empty(), "{text:?} starts another on {extra:?}");
        }
        assert_eq!(extra_commands("def a := 1\n/-- Doc. -/ def b := 2"), [1]);
        assert_eq!(extra_commands("def a := [1]\ndef b := 2"), [1]);
    }

    #[test]
    fn only_code_in_the_first_column_starts_a_command() {
        let one = [
            "def s := \"a\ndef b := 2\"",
            "def f :=\n-- note\n  g x",
            "/- a\ndef b := 2 -/\ndef c := 3",
            "#eval [1,\n2]",
            "def f : Nat → Nat\n| 0 => 0\n| n + 1 => f n\ntermination_by n => n\ndecreasing_by\n  omega",
            "def f := g\nwhere\n  g := 1",
            "theorem t : p := by\n· simp\n· exact h",
        ];
        for text in one {
            let extra = extra_commands(text);
            assert!(extra.is_empty(), "{text:?} starts another on {extra:?}");
        }
        assert_eq!(
            extra_commands("def a := 1\ntheorem b : True := trivial"),
            [1]
        );
        assert_eq!(
            extra_commands("inductive T\n| a\nderiving instance Repr for T"),
            [2]
        );
        assert_eq!(
            extra_commands("  def a := 1\ndef b := 2"),
            [1],
            "the first command is indented"
        );
    }

    #[test]
    fn the_probe_owns_its_messages_and_those_on_its_declaration() {
        let diagnostic = |from: (u32, u32), to: (u32, u32), text: &str, severity: u64| {
            let position =
                |(line, character): (u32, u32)| json!({"line": line, "character": character});
            Diagnostic::new(json!({"severity": severity, "message": text,
                "range": {"start": position(from), "end": position((from.0, from.1 + 1))},
                "fullRange": {"start": position(from), "end": position(to)}}))
        };
        let real = "def e := bad\ntheorem t (p : Prop) (h : p) : p := by\n  skip\n  exact h\n";
        let anchor = offset_of(real, Position::new(3, 2));
        let twin = twin_text(real, anchor, &steps(&["sorry"]), true);
        assert_eq!(twin.declaration, Position::new(1, 0));
        let diagnostics = [
            diagnostic((0, 9), (0, 12), "unknown identifier 'bad'", 1),
            diagnostic((1, 8), (1, 9), "declaration uses `sorry`", 2),
            diagnostic((1, 35), (4, 0), "unsolved goals\n⊢ p", 1),
            diagnostic((3, 2), (3, 7), "[Meta.synthInstance] ✅️ Nat", 3),
            diagnostic((3, 2), (3, 7), "Try this: simp", 3),
        ];
        let outcome = outcome(&diagnostics, &twin);
        assert!(
            outcome.success,
            "the cut-off block's goals are the proof state"
        );
        assert!(outcome.uses_sorry);
        assert_eq!(outcome.traces, ["[Meta.synthInstance] ✅️ Nat"]);
        assert_eq!(
            outcome.messages,
            [
                json!({"severity": "warning", "text": "declaration uses `sorry`"}),
                json!({"severity": "information", "text": "Try this: simp"})
            ],
            "an earlier command's error is the prefix's"
        );
        let earlier = diagnostic((2, 2), (2, 6), "tactic 'skip' failed", 1);
        assert!(
            !super::outcome(&[earlier], &twin).success,
            "an earlier tactic's error stops the block before the probe"
        );
        let own = diagnostic((3, 2), (3, 7), "type mismatch", 1);
        assert!(!super::outcome(&[own], &twin).success);
        assert!(is_sorry_warning("declaration uses 'sorry'"));
        assert!(is_sorry_warning("declaration uses `sorry `«A:3:2»`"));
        assert!(is_sorry_warning(
            "declaration uses `sorryAx (p) Bool.false`"
        ));
        assert!(!is_sorry_warning("declaration uses `sorry_lemma`"));
        assert!(!is_sorry_warning("declaration uses `sorrySource`"));
    }
}
