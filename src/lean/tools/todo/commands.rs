//! The ranges `lean_todo` asks Lean for code actions over. Lean runs its code action providers
//! on one command only, the first whose snapshot ends at or after the request's range end
//! (lean-stock-speculation.md §D), so a range over several commands is asked about one command
//! at a time.
//!
//! Contract:
//! 1. A point query is asked as it is: one request.
//! 2. Otherwise the document is cut into chunks at `syntax::command_lines`, one per command:
//!    the lines where a command starts, by the rule that also decides `lean_run_at`'s one
//!    command (so a command's continuation lines, and the command an `@[…]` or `… in` line
//!    scopes, share its chunk), a documented command's from its doc comment. Each chunk runs to
//!    the end of the line before the next one, and each chunk the query overlaps (half-open) is
//!    asked about over their intersection. A chunk's end is still inside its command (in its
//!    trailing whitespace, comments included, at worst), never at the next command's start, so
//!    Lean answers for the chunk's own command: one request per command, however many comment
//!    lines the text has.
//! 3. A command that does not start in the first column shares a chunk with the one before it,
//!    and Lean then offers only its actions for that chunk: the rule trades that rare case for
//!    one request per command instead of one per line.

use super::range::{Position, Range};
use crate::lean::syntax;

/// The ranges to ask Lean's code actions for, covering `query` in `text` (see the contract).
pub fn code_action_ranges(query: Range, text: &str) -> Vec<Range> {
    if query.is_empty() {
        return vec![query];
    }
    let widths: Vec<u32> = text
        .split('\n')
        .map(|line| line.trim_end_matches('\r').encode_utf16().count() as u32)
        .collect();
    let starts = syntax::command_lines(text);
    let mut ranges = Vec::new();
    for (k, &first) in starts.iter().enumerate() {
        let last = starts
            .get(k + 1)
            .map_or(widths.len() as u32 - 1, |&next| next - 1);
        let chunk_end = Position::new(last, widths[last as usize]);
        let start = query.start.max(Position::new(first, 0));
        let end = query.end.min(chunk_end);
        if start < end {
            ranges.push(Range::new(start, end));
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: (u32, u32), b: (u32, u32)) -> Range {
        Range::new(Position::new(a.0, a.1), Position::new(b.0, b.1))
    }

    const TEXT: &str =
        "theorem a : True := by\n  trivial\n\n-- note\ntheorem b : True := by\n  trivial\n";

    #[test]
    fn a_range_is_asked_about_one_command_at_a_time() {
        // The comment is the first command's trailing whitespace: no chunk of its own.
        assert_eq!(
            code_action_ranges(r((0, 0), (6, 0)), TEXT),
            [r((0, 0), (3, 7)), r((4, 0), (6, 0))]
        );
        assert_eq!(
            code_action_ranges(r((1, 2), (4, 3)), TEXT),
            [r((1, 2), (3, 7)), r((4, 0), (4, 3))]
        );
        // Ending where a command starts does not ask about it.
        assert_eq!(
            code_action_ranges(r((0, 5), (4, 0)), TEXT),
            [r((0, 5), (3, 7))]
        );
    }

    #[test]
    fn a_command_over_several_first_column_lines_is_one_chunk() {
        let text = "inductive T\n| a\nderiving Repr\n@[simp]\ntheorem b : True := trivial\n";
        assert_eq!(
            code_action_ranges(r((0, 0), (5, 0)), text),
            [r((0, 0), (2, 13)), r((3, 0), (5, 0))]
        );
    }

    #[test]
    fn a_point_is_asked_as_it_is() {
        assert_eq!(
            code_action_ranges(r((4, 3), (4, 3)), TEXT),
            [r((4, 3), (4, 3))]
        );
    }
}
