//! Asking Lean what declarations depend on, in the same twin text as the probe or candidate:
//! `sorry` is known from axioms, not from warnings (DESIGN.md). Lean's warning is absent under
//! `warn.sorry false`, reworded by `pp.sorrySource` and `pp.all`, deleted by `#guard_msgs (drop
//! …)`, and never given for a declaration that only uses a lemma proved by `sorry`; only
//! `Lean.collectAxioms`, which `#print axioms` prints, sees through them all. Pure: no Lean, no
//! I/O.
//!
//! Contract:
//! 1. [`ask`] appends to a twin's text, after everything the probe or candidate put there (so it
//!    changes none of their messages, nor any position before it), one line per declaration the
//!    run or edit touched: `set_option pp.fullNames true in #print axioms _root_.<full name>`
//!    (full names from the root, as newer Leans shorten them otherwise: reference Part 4). A
//!    declaration Lean names itself (an `example`) cannot be asked about: nothing is appended
//!    for it, and the answer is [`Axioms::NotAskable`].
//! 2. [`Asked::take_answers`] takes each question's answer out of the twin's diagnostics: those
//!    that start on its line at or after its `#print` (Lean reports at the command's keyword).
//!    Everything else stays the text's own, even on a question's line (a probe that did not end
//!    before the question reports its error there).
//! 3. An answer is in the expected shape when it is exactly one information, `'N' depends on
//!    axioms: [a, b, …]` or `'N' does not depend on any axioms`, N the name asked (or Lean's
//!    private form of it, `_private.….0.N`). Anything else is [`Axioms::NotAnswered`] with what
//!    Lean said: nothing (the file stopped at `#exit`, or the question became part of an
//!    unfinished command), an error (`unknown constant`; `#print axioms` refused in a `module`),
//!    another text (the file redefined the command). A verdict never rests on such an answer.
//! 4. The answers say a declaration uses `sorry` when its axioms list `sorryAx` (a leading
//!    `_root_.` stripped).

use std::fmt::Write as _;

use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::syntax::Declared;

/// What Lean calls the axiom behind every `sorry`.
const SORRY_AXIOM: &str = "sorryAx";

/// What each question says before the name.
const QUESTION: &str = "set_option pp.fullNames true in #print axioms _root_.";

/// Where `#print` stands in a question line.
const PRINT_COLUMN: u32 = "set_option pp.fullNames true in ".len() as u32;

/// The questions appended to one twin text (see the contract).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Asked {
    /// Each name asked, and the line its question is on.
    questions: Vec<(String, u32)>,
    /// Why a declaration touched could not be asked about, if one could not.
    unaskable: Option<String>,
}

/// What Lean's answers say (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Axioms {
    /// Every question was answered in the expected shape: the names whose axioms list
    /// `sorryAx` (none when nothing was asked).
    Answered { sorry: Vec<String> },
    /// A declaration touched has no name to ask about.
    NotAskable(String),
    /// A question was not answered in the expected shape: which, and what Lean said.
    NotAnswered { name: String, said: String },
}

impl Axioms {
    /// The typed reason a verdict cannot be confirmed free of `sorry`, and a message saying why,
    /// when it cannot.
    pub fn unconfirmed(&self) -> Option<(&'static str, String)> {
        match self {
            Axioms::Answered { .. } => None,
            Axioms::NotAskable(why) => Some(("axiomsNotAskable", why.clone())),
            Axioms::NotAnswered { name, said } => Some((
                "axiomsNotAnswered",
                format!(
                    "Lean's answer to `#print axioms {name}` is not the one #print axioms gives \
                     ({said}): the file may stop before it (#exit) or redefine the command, so \
                     nothing rules out that {name} depends on sorry"
                ),
            )),
        }
    }

    /// Lean's answers list `sorryAx`.
    pub fn uses_sorry(&self) -> bool {
        matches!(self, Axioms::Answered { sorry } if !sorry.is_empty())
    }
}

/// Appends to `text` a question for each of `declared` (see the contract).
pub fn ask(text: &mut String, declared: &[Declared]) -> Asked {
    let mut asked = Asked::default();
    if declared.is_empty() {
        return asked;
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let mut line = text.matches('\n').count() as u32;
    for declaration in declared {
        let Some(name) = &declaration.name else {
            asked.unaskable.get_or_insert_with(|| {
                format!(
                    "the declaration at line {} has no name (an example, or an instance Lean \
                     names itself), so Lean cannot be asked what it depends on; give it a name \
                     (a theorem) to have it checked",
                    declaration.command.start.line + 1
                )
            });
            continue;
        };
        let _ = writeln!(text, "{QUESTION}{name}");
        asked.questions.push((name.clone(), line));
        line += 1;
    }
    asked
}

impl Asked {
    /// Takes each question's answer out of `diagnostics` and reads them (see the contract).
    pub fn take_answers(&self, diagnostics: &mut Vec<Diagnostic>) -> Axioms {
        if self.questions.is_empty() {
            return self.unanswerable(Vec::new());
        }
        let mut answers: Vec<Vec<Diagnostic>> = vec![Vec::new(); self.questions.len()];
        diagnostics.retain(|d| {
            let k = d.start().and_then(|at| {
                self.questions
                    .iter()
                    .position(|&(_, line)| at.line == line && at.character >= PRINT_COLUMN)
            });
            match k {
                Some(k) => {
                    answers[k].push(d.clone());
                    false
                }
                None => true,
            }
        });
        let mut sorry = Vec::new();
        for ((name, _), said) in self.questions.iter().zip(&answers) {
            match read(name, said) {
                Ok(axioms) => {
                    if axioms.iter().any(|a| a == SORRY_AXIOM) {
                        sorry.push(name.clone());
                    }
                }
                Err(said) => {
                    return Axioms::NotAnswered {
                        name: name.clone(),
                        said,
                    };
                }
            }
        }
        self.unanswerable(sorry)
    }

    /// `Answered` with `sorry`, unless a declaration could not be asked about.
    fn unanswerable(&self, sorry: Vec<String>) -> Axioms {
        match &self.unaskable {
            Some(why) => Axioms::NotAskable(why.clone()),
            None => Axioms::Answered { sorry },
        }
    }
}

/// The axioms in Lean's answer about `name`, or what Lean said instead (see the contract).
fn read(name: &str, said: &[Diagnostic]) -> Result<Vec<String>, String> {
    let [answer] = said else {
        return Err(match said {
            [] => "no answer".to_owned(),
            _ => format!("{} messages", said.len()),
        });
    };
    let text = answer.message.as_str();
    let other = || format!("{}: {text:?}", answer.severity_name());
    if answer.severity != Some(3) {
        return Err(other());
    }
    // The name is quoted as it is, `'` and all (`'t''` for `t'`): what follows it says where
    // the quotes end.
    const NONE: &str = "' does not depend on any axioms";
    const SOME: &str = "' depends on axioms: [";
    let quoted = text.strip_prefix('\'').ok_or_else(other)?;
    let (named, list) = match (quoted.rfind(NONE), quoted.find(SOME)) {
        (Some(at), _) if at + NONE.len() == quoted.len() => (&quoted[..at], None),
        (_, Some(at)) => (&quoted[..at], Some(&quoted[at + SOME.len()..])),
        _ => return Err(other()),
    };
    let private = named
        .strip_prefix("_private.")
        .and_then(|p| p.split_once(".0."))
        .is_some_and(|(_, n)| n == name);
    if named != name && !private {
        return Err(other());
    }
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    let list = list.strip_suffix(']').ok_or_else(other)?;
    Ok(list
        .split(',')
        .map(|a| a.trim().trim_start_matches("_root_.").to_owned())
        .filter(|a| !a.is_empty())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::syntax::Command;
    use crate::lean::text::Position;
    use serde_json::json;

    fn declared(name: Option<&str>) -> Declared {
        let at = Position::new(0, 0);
        Declared {
            command: Command {
                start: at,
                end: at,
                code_end: at,
                body: None,
            },
            name: name.map(str::to_owned),
        }
    }

    fn said(line: u32, character: u32, severity: u64, text: &str) -> Diagnostic {
        let at = json!({"line": line, "character": character});
        Diagnostic::new(json!({"severity": severity, "message": text,
            "range": {"start": at, "end": at}}))
    }

    #[test]
    fn questions_follow_the_text_one_a_line() {
        let mut text = "theorem t : True := by\n  trivial".to_owned();
        let asked = ask(&mut text, &[declared(Some("N.t")), declared(Some("u"))]);
        assert_eq!(
            text,
            "theorem t : True := by\n  trivial\n\
             set_option pp.fullNames true in #print axioms _root_.N.t\n\
             set_option pp.fullNames true in #print axioms _root_.u\n"
        );
        assert_eq!(
            asked.questions,
            [("N.t".to_owned(), 2), ("u".to_owned(), 3)]
        );
        let mut none = "x".to_owned();
        assert_eq!(ask(&mut none, &[]), Asked::default());
        assert_eq!(none, "x", "nothing touched, nothing asked");
    }

    #[test]
    fn answers_are_taken_out_and_read() {
        let mut text = String::new();
        let asked = ask(&mut text, &[declared(Some("N.t")), declared(Some("u"))]);
        let own = said(0, 0, 1, "unexpected token 'set_option'; expected term");
        let mut diagnostics = vec![
            own.clone(),
            said(
                0,
                32,
                3,
                "'N.t' depends on axioms: [propext,\n _root_.sorryAx]",
            ),
            said(1, 32, 3, "'u' does not depend on any axioms"),
        ];
        let axioms = asked.take_answers(&mut diagnostics);
        assert_eq!(
            axioms,
            Axioms::Answered {
                sorry: vec!["N.t".to_owned()]
            }
        );
        assert!(axioms.uses_sorry());
        assert_eq!(
            diagnostics,
            [own],
            "what stands before #print is the text's"
        );
        for (answers, what) in [
            (vec![said(0, 32, 3, "1 : Nat")], "another text"),
            (vec![said(0, 32, 1, "unknown constant 'N.t'")], "an error"),
            (vec![], "no answer"),
            (
                vec![said(0, 32, 3, "'M.t' does not depend on any axioms")],
                "another name",
            ),
        ] {
            let mut diagnostics = answers;
            diagnostics.push(said(1, 32, 3, "'u' does not depend on any axioms"));
            let axioms = asked.take_answers(&mut diagnostics);
            assert!(
                matches!(&axioms, Axioms::NotAnswered { name, .. } if name == "N.t"),
                "{what}: {axioms:?}"
            );
            assert_eq!(axioms.unconfirmed().unwrap().0, "axiomsNotAnswered");
        }
        let private = "'_private.Fixture.A.0.N.t' does not depend on any axioms";
        let primed = ask(&mut String::new(), &[declared(Some("t'"))]);
        let mut answer = vec![said(0, 32, 3, "'t'' depends on axioms: [sorryAx]")];
        assert!(
            primed.take_answers(&mut answer).uses_sorry(),
            "a name with a prime"
        );
        let mut diagnostics = vec![
            said(0, 32, 3, private),
            said(1, 32, 3, "'u' does not depend on any axioms"),
        ];
        assert_eq!(
            asked.take_answers(&mut diagnostics),
            Axioms::Answered { sorry: vec![] }
        );
    }

    #[test]
    fn a_declaration_without_a_name_cannot_be_asked_about() {
        let mut text = String::new();
        let asked = ask(&mut text, &[declared(None), declared(Some("u"))]);
        let mut diagnostics = vec![said(0, 32, 3, "'u' does not depend on any axioms")];
        let axioms = asked.take_answers(&mut diagnostics);
        assert!(matches!(axioms, Axioms::NotAskable(_)), "{axioms:?}");
        assert_eq!(axioms.unconfirmed().unwrap().0, "axiomsNotAskable");
        assert!(diagnostics.is_empty());
    }
}
