//! One Lean lexer for the whole host: what of a Lean text is code (`lexer`), and what the host
//! reads from it — `sorry`s and holes (`lean_todo`), where commands start (`commands`: the one
//! command of `lean_run_at`, `lean_todo`'s code action chunks), the tactic around a position
//! (`tactics`, for `lean_goals`), a text's first tactic (the self-check), and declarations: the
//! command around an edit, its statement and body, a declaration by name (`declarations`, for
//! `lean_try_edit`), what each declares and its full name (`names`), the declarations a range
//! meets with their full names (for `#print axioms`); what a text states and what an edit
//! changes of it (`statements`, `lean_try_edit`'s gate); a text's identifiers and a statement
//! normalized (`words`, for `lean_lock` and `lean_certify`); the files a text reads with
//! `include_str` (`includes`, for receipts); what a probe or candidate writes of its own:
//! terminal commands, `sorry` (`probes`).
//!
//! Contract:
//! 1. Everything here reads a text through the one lexer, so no two tools disagree about what
//!    is a comment, a string or code. Positions are `text::Position`s: zero-based lines, UTF-16
//!    columns.
//! 2. [`scan`]: every `sorry` and hole of the code (see `lexer`), each with its range, in text
//!    order.
//! 3. [`first_tactic`]: where the code's first tactic begins: the first code after the first
//!    `by` token (comments and blank space skipped).

mod commands;
mod declarations;
mod header;
mod includes;
mod lexer;
mod names;
mod probes;
mod statements;
mod tactics;
mod words;

use crate::lean::text::Position;
pub use commands::{command_lines, command_starts};
pub use declarations::{
    Command, Declared, NotFound, command_around, declaration_named, declarations_in, statement,
};
pub use header::{header_end, imports, span as header_span};
pub use includes::includes;
use lexer::Lexed;
pub use probes::{terminal_commands, writes_sorry};
pub use statements::{Change, statement_changes};
pub use tactics::tactic_column;
pub use words::{code_words, normalized};

/// What was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A `sorry` term or tactic.
    Sorry,
    /// A synthetic hole: `?_` or `?name`.
    Hole,
}

/// One find, with its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub found: Found,
    /// Its first character.
    pub start: Position,
    /// Just past its last character.
    pub end: Position,
}

/// Every `sorry` and hole in the code of `text`, in text order.
pub fn scan(text: &str) -> Vec<Token> {
    Lexed::new(text).found
}

/// Where the first tactic of `text`'s code begins (see the contract), if it has one.
pub fn first_tactic(text: &str) -> Option<Position> {
    let lexed = Lexed::new(text);
    let &(_, by_end) = lexed
        .words
        .iter()
        .find(|&&word| lexed.is_keyword(word, "by"))?;
    (by_end..lexed.chars.len())
        .find(|&i| lexed.is_code(i))
        .map(|i| lexed.positions[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tactic_follows_the_first_by_of_the_code() {
        let text = "-- by the way\n/- by -/ def s := \"by\"\ntheorem t : p := by -- go\n  /- c -/\n  exact h\n";
        assert_eq!(first_tactic(text), Some(Position::new(4, 2)));
        assert_eq!(
            first_tactic("theorem t : p := by exact h"),
            Some(Position::new(0, 20))
        );
        assert_eq!(first_tactic("def f := x.by\ndef g := 1"), None);
        assert_eq!(first_tactic("theorem t : p := by"), None);
    }
}
