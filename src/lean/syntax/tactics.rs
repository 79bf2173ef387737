//! Tactic boundaries on a line, for `lean_goals`: where the tactic around a position starts or
//! ends, read from the lexer's view of the line, so a `;` in a comment or a literal (one begun
//! on an earlier line included) is no boundary.
//!
//! Contract:
//! 1. A line's view is its code, each character with its UTF-16 column: a line comment ends
//!    it, a block comment reads as blank space, a literal's characters as opaque ones (neither
//!    blank nor separators), and a `\r` before the newline is dropped.
//! 2. Before: the tactic starts after the last `;` (the one of `<;>` too) or `by` token before
//!    the position (else at the line's start), past blank space and a leading `·` or `.` bullet
//!    (and the `>` of a `<;>`). A position in the indentation means the tactic that follows it.
//! 3. After: the tactic ends at the next `;` or `<;>` from the position (else at the end of the
//!    line's code), blank space before it left out; the column asked is just past its last
//!    character.
//! 4. A line with no code answers the position's own column.

use super::lexer::{Class, Lexed};
use crate::lean::text::Position;

/// One character of a line's view.
struct Unit {
    /// The character, or a stand-in: `' '` in a block comment, `'x'` in a literal.
    shown: char,
    /// Its UTF-16 column.
    column: u32,
    /// The column just past it.
    end: u32,
}

/// The position to ask Lean at for the tactic around `at` in `text`: its first character
/// (`before`) or just past its last (see the contract).
///
/// Only the text through the position's line is lexed: the lexer reads left to right, so what
/// follows the line changes nothing on it, and a call on a long file pays for its prefix only.
pub fn tactic_column(text: &str, at: Position, before: bool) -> Position {
    let through_line = text
        .match_indices('\n')
        .nth(at.line as usize)
        .map_or(text, |(end, _)| &text[..=end]);
    column_in(&Lexed::new(through_line), at, before)
}

fn column_in(lexed: &Lexed, at: Position, before: bool) -> Position {
    let (first, code) = line_view(lexed, at.line);
    let character = at.character;
    // The index of the unit at the UTF-16 column `character`.
    let here = code.iter().take_while(|u| u.column < character).count();
    let column = if before {
        let after_separator = (0..here).filter(|&i| code[i].shown == ';').map(|i| i + 1);
        let after_by = lexed
            .words
            .iter()
            .filter(|&&word| {
                word.0 >= first && word.1 - first <= here && lexed.is_keyword(word, "by")
            })
            .map(|word| word.1 - first);
        let mut i = after_separator.chain(after_by).max().unwrap_or(0);
        let bullet = |i: usize| {
            matches!(code[i].shown, '·' | '>')
                || (code[i].shown == '.'
                    && code.get(i + 1).is_some_and(|u| u.shown.is_whitespace()))
        };
        while i < code.len() && (code[i].shown.is_whitespace() || bullet(i)) {
            i += 1;
        }
        // A position in the indentation still means the tactic that follows it.
        code.get(i.min(code.len().saturating_sub(1)))
            .map_or(character, |u| u.column)
    } else {
        let separator = |i: usize| {
            code[i].shown == ';'
                || (code[i].shown == '<' && code.get(i + 1).is_some_and(|u| u.shown == ';'))
        };
        let mut end = (here..code.len())
            .find(|&i| separator(i))
            .unwrap_or(code.len());
        while end > 0 && code[end - 1].shown.is_whitespace() {
            end -= 1;
        }
        // Just past the tactic's last character: still "after" it (its trailing position).
        end.checked_sub(1).map_or(character, |last| code[last].end)
    };
    Position::new(at.line, column)
}

/// The view of line `line` (see the contract), and the index of its first character.
fn line_view(lexed: &Lexed, line: u32) -> (usize, Vec<Unit>) {
    let first = lexed.line_starts.get(line as usize).copied();
    let first = first.unwrap_or(lexed.chars.len());
    let mut units = Vec::new();
    for i in first..lexed.chars.len() {
        let shown = match (lexed.chars[i], lexed.classes[i]) {
            ('\n', _) | (_, Class::LineComment) => break,
            (c, Class::Code) => c,
            (_, Class::Literal) => 'x',
            (_, Class::BlockComment) => ' ',
        };
        let (column, end) = (lexed.positions[i], lexed.positions[i + 1]);
        units.push(Unit {
            shown,
            column: column.character,
            end: end.character,
        });
    }
    while units.last().is_some_and(|u| u.shown == '\r') {
        units.pop();
    }
    (first, units)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column asked at for the tactic around `character` of a one-line text.
    fn on_line(line: &str, character: u32, before: bool) -> u32 {
        tactic_column(line, Position::new(0, character), before).character
    }

    #[test]
    fn the_text_past_the_line_changes_nothing() {
        let text = "theorem t : p ∧ q := by\n  constructor <;> /- a; b -/ simp; rfl\n  · exact \"x;y\" -- z; w\n  /- open\n  rfl; rfl\n";
        for (line, chars) in text.split('\n').enumerate() {
            for character in 0..=chars.encode_utf16().count() as u32 + 1 {
                let at = Position::new(line as u32, character);
                for before in [true, false] {
                    assert_eq!(
                        tactic_column(text, at, before),
                        column_in(&Lexed::new(text), at, before),
                        "{at:?} {before}"
                    );
                }
            }
        }
    }

    #[test]
    fn before_asks_at_the_tactics_first_character() {
        assert_eq!(on_line("  intro a", 5, true), 2);
        assert_eq!(on_line("  intro a; apply a", 14, true), 11);
        assert_eq!(on_line("example : p := by exact h", 21, true), 18);
        assert_eq!(on_line("  · simp", 6, true), 4);
        assert_eq!(on_line("  simp [\"a;b\"] -- x; y", 4, true), 2);
        assert_eq!(on_line("  . simp", 6, true), 4, "an ASCII bullet");
        assert_eq!(on_line("  /- a; b -/ simp", 14, true), 13);
    }

    #[test]
    fn after_asks_at_the_tactics_end() {
        assert_eq!(on_line("  intro a", 2, false), 9);
        assert_eq!(on_line("  intro a; apply a", 3, false), 9);
        assert_eq!(on_line("  rfl  -- done", 2, false), 5);
        assert_eq!(on_line("  exact f₁", 2, false), 10);
        assert_eq!(on_line("  simp /- x; y -/", 2, false), 6);
        assert_eq!(on_line("  simp /- x; y", 2, false), 6, "a comment going on");
        assert_eq!(on_line("  simp /- x -/ <;> rfl", 2, false), 6);
        assert_eq!(on_line("  exact 𝓝 x; rfl", 2, false), 12, "UTF-16 columns");
        assert_eq!(on_line("  exact 𝓝 x; rfl", 15, true), 14);
    }

    #[test]
    fn a_line_is_read_in_its_texts_context() {
        let comment = "theorem t : p := by\n  /- a\n  b; c -/ simp; rfl\n";
        assert_eq!(
            tactic_column(comment, Position::new(2, 12), true),
            Position::new(2, 10),
            "the `;` is in a comment begun on the line before"
        );
        let string = "theorem t : p := by\n  exact f \"a\n  b;c\" x; rfl\n";
        assert_eq!(
            tactic_column(string, Position::new(2, 1), false),
            Position::new(2, 8),
            "the first `;` is in a string begun on the line before"
        );
        assert_eq!(
            on_line("  simp [f ';']; rfl", 2, false),
            14,
            "a character literal"
        );
    }
}
