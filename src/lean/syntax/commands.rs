//! Where Lean commands start, read from the lexer.
//!
//! Contract:
//! 1. [`command_lines`]: the lines where a command may start, as Lean files are written: line
//!    0, and every line whose first column holds code or a comment's start (not a line inside a
//!    comment or string begun earlier, and not an indented one).

use super::lexer::Lexed;

/// The lines a command may start at (see the contract), in order.
pub fn command_lines(text: &str) -> Vec<u32> {
    let lexed = Lexed::new(text);
    let inside = inside_lines(&lexed);
    let mut lines = vec![0];
    for (line, &start) in lexed.line_starts.iter().enumerate().skip(1) {
        let opens = lexed.chars.get(start).is_some_and(|c| !c.is_whitespace());
        if opens && !inside[line] {
            lines.push(line as u32);
        }
    }
    lines
}

/// For each line, whether it begins inside a comment or literal begun on an earlier line.
fn inside_lines(lexed: &Lexed) -> Vec<bool> {
    let mut inside = vec![false; lexed.line_starts.len()];
    for span in &lexed.spans {
        let (a, b) = (lexed.positions[span.from], lexed.positions[span.to]);
        // A span ending at a line's first column leaves that line outside it.
        let through = if b.character > 0 {
            b.line
        } else {
            b.line.saturating_sub(1)
        };
        for line in a.line + 1..=through {
            inside[line as usize] = true;
        }
    }
    inside
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_start_at_the_first_column_outside_comments_and_strings() {
        let text = "\n/-! header\nnot code -/\ntheorem t : True := by\n  trivial\n-- note\ndef s := \"a\nb\" \n  |>.length\nexample := 1";
        assert_eq!(command_lines(text), [0, 1, 3, 5, 6, 9]);
        assert_eq!(command_lines(""), [0]);
        assert_eq!(command_lines("def a := 1\n"), [0]);
    }
}
