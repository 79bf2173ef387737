//! What a certifier asks Lean: the file's text with commands appended (`#check @Name`,
//! `#print axioms Name`), run in a twin, and what Lean answered at each appended line.
//!
//! Contract:
//! 1. The twin's text is the file's text, a newline if it has none at its end, then one
//!    command a line. It runs as `lean_try_edit`'s candidates do (`speculation::run::in_twin`:
//!    the strict barrier for that exact text; `twinSetupFailed` for a header Lean could not
//!    process), and nothing else is asked of Lean.
//! 2. A theorem's type is asked as `set_option pp.all true in #check @_root_.Name`: Lean's
//!    default printing hides instances, coercions and universe levels, so a changed `local
//!    instance` or notation before the theorem would print the same type; with `pp.all` it
//!    does not. Its axioms are asked as `#print axioms _root_.Name`. Names are asked from the
//!    root because the commands run at the end of the file, where a namespace the file left
//!    open would otherwise resolve `Name` to a shadow declared inside it first (Lean's
//!    `resolveGlobalName` tries each enclosing namespace before the root).
//! 3. An appended command's answer is what Lean published on its line: an error (the name is
//!    unknown there), else its information's text. `#check @Name`'s type is the text after the
//!    first ` : ` (Lean prints `Name : type`, or `@Name : type`); `#print axioms Name`'s axioms
//!    are the names between the brackets of `'Name' depends on axioms: [a, b]` (none for
//!    `does not depend on any axioms`).

use std::path::Path;

use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::session::Pin;
use crate::lean::session::diagnostics::Diagnostic;
use crate::lean::session::mirror::Document;
use crate::lean::speculation::probe::TwinText;
use crate::lean::speculation::run::in_twin;
use crate::lean::text::Position;
use crate::lean::workspace::runtime::Runtime;

/// What Lean answered at one appended line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// An error: the message.
    Error(String),
    /// Information: the message.
    Said(String),
    /// Nothing.
    Silent,
}

/// Runs `base` with `commands` appended in a twin; Lean's answer to each command, in order.
pub async fn ask(
    runtime: &Runtime,
    real: &Pin,
    file: &Path,
    base: &str,
    commands: &[String],
    caller: &Caller<'_>,
) -> Result<Vec<Answer>, HostError> {
    let mut text = base.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let first = text.matches('\n').count() as u32;
    for command in commands {
        text.push_str(command);
        text.push('\n');
    }
    let at = Position::new(first, 0);
    let twin = TwinText {
        end: Position::new(first + commands.len() as u32, 0),
        text,
        start: at,
        declaration: at,
    };
    let (ran, _lease) = in_twin(runtime, real, file, &twin, caller).await?;
    Ok((0..commands.len() as u32)
        .map(|k| answer(&ran, first + k))
        .collect())
}

fn answer(ran: &Document, line: u32) -> Answer {
    let here: Vec<&Diagnostic> = ran
        .diagnostics
        .iter()
        .filter(|d| d.start().is_some_and(|at| at.line == line))
        .collect();
    if let Some(error) = here.iter().find(|d| d.severity == Some(1)) {
        return Answer::Error(error.message.clone());
    }
    match here.iter().find(|d| d.severity == Some(3)) {
        Some(info) => Answer::Said(info.message.clone()),
        None => Answer::Silent,
    }
}

/// The command that asks Lean for `name`'s elaborated type (see the contract).
pub fn check_command(name: &str) -> String {
    format!("set_option pp.all true in #check @_root_.{name}")
}

/// The command that asks Lean for the axioms `name` depends on (see the contract).
pub fn axioms_command(name: &str) -> String {
    format!("#print axioms _root_.{name}")
}

/// The type in `#check @Name`'s answer (see the contract).
pub fn checked_type(said: &str) -> Option<String> {
    said.split_once(" : ")
        .map(|(_, ty)| ty.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The axioms in `#print axioms Name`'s answer (see the contract).
pub fn axioms(said: &str) -> Option<Vec<String>> {
    if said.contains("does not depend on any axioms") {
        return Some(Vec::new());
    }
    let (_, list) = said.split_once("depends on axioms: [")?;
    let list = list.rsplit_once(']')?.0;
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_lean_prints_them() {
        assert_eq!(
            checked_type("@N.t : ∀ (n : Nat),\n  n = n").as_deref(),
            Some("∀ (n : Nat), n = n")
        );
        let said = "'t' depends on axioms: [propext,\n Classical.choice, Quot.sound]";
        assert_eq!(
            axioms(said).unwrap(),
            ["propext", "Classical.choice", "Quot.sound"]
        );
        assert_eq!(axioms("'t' does not depend on any axioms"), Some(vec![]));
        assert_eq!(axioms("nonsense"), None);
    }
}
