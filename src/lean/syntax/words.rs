//! A text's code as a certifier reads it: its identifiers with their ranges, and a statement's
//! code with comments dropped and blank space collapsed.
//!
//! Contract:
//! 1. [`code_words`]: every identifier of the code (never one in a comment or a literal), in
//!    text order, with its range.
//! 2. [`normalized`]: the text's code and literals, each comment a single space, every run of
//!    blank space one space, trimmed: two statements that differ only in layout or comments
//!    normalize alike.

use super::lexer::{Class, Lexed};
use crate::lean::text::Position;

/// One identifier of the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// As written.
    pub text: String,
    /// Its first character.
    pub start: Position,
    /// Just past its last character.
    pub end: Position,
}

/// The identifiers of `text`'s code (see the contract).
pub fn code_words(text: &str) -> Vec<Word> {
    let lexed = Lexed::new(text);
    lexed
        .words
        .iter()
        .map(|&(from, to)| Word {
            text: lexed.chars[from..to].iter().collect(),
            start: lexed.positions[from],
            end: lexed.positions[to],
        })
        .collect()
}

/// `text`'s code, normalized (see the contract).
pub fn normalized(text: &str) -> String {
    let lexed = Lexed::new(text);
    normalized_range(&lexed, 0, lexed.chars.len())
}

/// The characters `[from, to)` of a text already read, normalized as [`normalized`] does.
pub(super) fn normalized_range(lexed: &Lexed, from: usize, to: usize) -> String {
    let mut out = String::with_capacity(to.saturating_sub(from));
    let mut blank = false;
    for (i, &c) in lexed.chars.iter().enumerate().take(to).skip(from) {
        let literal = lexed.classes[i] == Class::Literal;
        if !literal && (!lexed.is_code(i)) {
            blank = true;
            continue;
        }
        if blank && !out.is_empty() {
            out.push(' ');
        }
        blank = false;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_layout_do_not_count() {
        let a = "/-- doc -/\ntheorem t (n : Nat) :\n    n = n -- why\n";
        let b = "theorem t  (n : Nat) : /- x -/ n = n";
        assert_eq!(normalized(a), normalized(b));
        assert_eq!(normalized(b), "theorem t (n : Nat) : n = n");
        assert_ne!(
            normalized("def s := \"a  b\""),
            normalized("def s := \"a b\"")
        );
        let words: Vec<String> = code_words("-- axiom\naxiom a : \"sorry\"")
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(words, ["axiom", "a"]);
    }
}
