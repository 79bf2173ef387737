//! The last lines of some output, bounded: what error reports quote of Lean's stderr and of
//! Lake's build log.
//!
//! Contract: a [`Tail`] keeps at most its `lines` most recent lines, oldest first; a line longer
//! than its `line_bytes` is cut there (at a character boundary) and marked with ` …`. Memory is
//! bounded by `lines × (line_bytes + 4)`, whatever the output.

use std::collections::VecDeque;

/// The last lines of an output (see the contract).
#[derive(Debug, Clone)]
pub struct Tail {
    kept: VecDeque<String>,
    lines: usize,
    line_bytes: usize,
}

impl Tail {
    /// An empty tail of at most `lines` lines of at most `line_bytes` bytes each.
    pub fn new(lines: usize, line_bytes: usize) -> Tail {
        Tail {
            kept: VecDeque::with_capacity(lines.min(64)),
            lines,
            line_bytes,
        }
    }

    /// Takes in one line, cut to fit (see the contract).
    pub fn push(&mut self, line: &str) {
        if self.lines == 0 {
            return;
        }
        let mut kept = cut(line, self.line_bytes).to_owned();
        if kept.len() < line.len() {
            kept.push_str(" …");
        }
        if self.kept.len() == self.lines {
            self.kept.pop_front();
        }
        self.kept.push_back(kept);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.kept.iter().cloned().collect()
    }
}

/// `text` cut to at most `bytes` bytes, at a character boundary.
pub fn cut(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_and_cuts_long_ones_at_a_character() {
        let mut tail = Tail::new(3, 4);
        for line in ["one", "two", "three", "four"] {
            tail.push(line);
        }
        assert_eq!(tail.lines(), ["two", "thre …", "four"]);
        let mut wide = Tail::new(1, 5);
        wide.push("ééé");
        assert_eq!(
            wide.lines(),
            ["éé …"],
            "cut before a character, never inside it"
        );
        assert_eq!(cut("abc", 9), "abc");
    }
}
