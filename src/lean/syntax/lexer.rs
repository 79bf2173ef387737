//! The lexer under `syntax`: a Lean text read once into what is code and what is not, the
//! `sorry`s and holes of the code found on the way.
//!
//! Contract:
//! 1. Not code: line comments (`--` to the end of the line), block comments (`/-` … `-/`,
//!    nested, doc comments included; an unclosed one runs to the end), string literals (`"…"`
//!    with `\` escapes, over lines; an unclosed one runs to the end), raw strings (`r"…"`,
//!    `r#"…"#`), character literals (`'a'`, `'\n'`, `'"'`; a `'` after an identifier character
//!    is part of the identifier, as in `h'`), name literals (`` `sorry ``, ``` ``Foo.sorry ```)
//!    and `«…»` quoted identifiers. In an interpolated string (`s!"…"`, `m!"…"`, `f!"…"`: a `"`
//!    right after `!`) the `{…}` parts are code again.
//! 2. Every character has a [`Class`]: code, a literal's, a block comment's or a line
//!    comment's. Comments and literals are also kept whole as [`Span`]s (a string with its
//!    interpolations), in the order they end.
//! 3. Identifiers are read whole, with Lean's identifier characters (letters, digits, `_`, `'`,
//!    `!`, `?`, subscripts) and `.` between parts, so `sorry` is found only as a token of its own:
//!    not in `sorry_lemma`, `Foo.sorry` or `x.sorry`. The identifiers of the code are kept as
//!    words, in text order.
//! 4. A hole is `?` followed by an identifier (`?_`, or a named `?x`), where the `?` does not
//!    end an identifier (as in `exact?`).
//! 5. Each character has its LSP position (UTF-16 columns), and so does the text's end.

use super::{Found, Token};
use crate::lean::text::Position;

/// What a character is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Code.
    Code,
    /// A string, character or name literal, or a `«…»` identifier.
    Literal,
    /// A block comment.
    BlockComment,
    /// A line comment.
    LineComment,
}

/// A comment or a literal, as `[from, to)` character indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Its first character.
    pub from: usize,
    /// Just past its last character.
    pub to: usize,
}

/// A text as the lexer read it (see the contract).
pub struct Lexed {
    /// The text's characters.
    pub chars: Vec<char>,
    /// The position of each character, and one past the last.
    pub positions: Vec<Position>,
    /// The class of each character.
    pub classes: Vec<Class>,
    /// The index of each line's first character (or of the text's end, for an empty last line).
    pub line_starts: Vec<usize>,
    /// Comments and literals, whole.
    pub spans: Vec<Span>,
    /// Identifiers of the code, as `[from, to)` character indices.
    pub words: Vec<(usize, usize)>,
    /// The `sorry`s and holes of the code.
    pub found: Vec<Token>,
    at: usize,
}

impl Lexed {
    /// Reads `text`.
    pub fn new(text: &str) -> Lexed {
        let chars: Vec<char> = text.chars().collect();
        let mut positions = Vec::with_capacity(chars.len() + 1);
        let mut line_starts = vec![0];
        let (mut line, mut character) = (0u32, 0u32);
        for (i, &c) in chars.iter().enumerate() {
            positions.push(Position::new(line, character));
            if c == '\n' {
                line += 1;
                character = 0;
                line_starts.push(i + 1);
            } else {
                character += c.len_utf16() as u32;
            }
        }
        positions.push(Position::new(line, character));
        let mut lexed = Lexed {
            classes: vec![Class::Code; chars.len()],
            chars,
            positions,
            line_starts,
            spans: Vec::new(),
            words: Vec::new(),
            found: Vec::new(),
            at: 0,
        };
        lexed.code(false);
        lexed
    }

    /// Whether `word` (one of `words`) is `keyword` (not a field, as `by` in `x.by`).
    pub fn is_keyword(&self, (from, to): (usize, usize), keyword: &str) -> bool {
        self.chars[from..to].iter().copied().eq(keyword.chars())
            && (from == 0 || self.chars[from - 1] != '.')
    }

    /// Whether character `i` is code other than blank space.
    pub fn is_code(&self, i: usize) -> bool {
        self.classes[i] == Class::Code && !self.chars[i].is_whitespace()
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn previous(&self) -> Option<char> {
        self.at.checked_sub(1).map(|i| self.chars[i])
    }

    fn record(&mut self, found: Found, from: usize) {
        let (start, end) = (self.positions[from], self.positions[self.at]);
        self.found.push(Token { found, start, end });
    }

    /// Code, until the end, or (inside an interpolation) until its unmatched `}`, consumed.
    fn code(&mut self, interpolation: bool) {
        let mut braces = 0usize;
        while let Some(c) = self.peek(0) {
            if self.not_code(c) {
                continue;
            }
            match c {
                '?' if self.peek(1).is_some_and(is_ident_start) => {
                    let from = self.at;
                    self.at += 1;
                    self.identifier();
                    self.record(Found::Hole, from);
                }
                c if is_ident_start(c) => {
                    let from = self.at;
                    self.identifier();
                    self.words.push((from, self.at));
                    if self.is_keyword((from, self.at), "sorry") {
                        self.record(Found::Sorry, from);
                    }
                }
                c if c.is_ascii_digit() => {
                    // A number literal (`0x1f`, `2e10`): never an identifier.
                    while self.peek(0).is_some_and(is_ident_rest) {
                        self.at += 1;
                    }
                }
                '{' if interpolation => {
                    braces += 1;
                    self.at += 1;
                }
                '}' if interpolation => {
                    self.at += 1;
                    if braces == 0 {
                        return;
                    }
                    braces -= 1;
                }
                _ => self.at += 1,
            }
        }
    }

    /// Consumes the comment or literal starting here, if one does, and remembers its extent.
    fn not_code(&mut self, c: char) -> bool {
        let from = self.at;
        let class = match c {
            '-' if self.peek(1) == Some('-') => {
                self.line_comment();
                Class::LineComment
            }
            '/' if self.peek(1) == Some('-') => {
                self.block_comment();
                Class::BlockComment
            }
            '"' => {
                let interpolated = self.previous() == Some('!');
                self.at += 1;
                self.string(interpolated);
                // Classed piece by piece already: its interpolations are code.
                self.spans.push(Span { from, to: self.at });
                return true;
            }
            'r' if self.raw_string_start().is_some() => {
                self.raw_string();
                Class::Literal
            }
            '\'' if self.char_literal_len().is_some() => {
                self.at += self.char_literal_len().unwrap_or(1);
                Class::Literal
            }
            '`' => {
                self.name_literal();
                Class::Literal
            }
            '«' => {
                self.quoted_ident();
                Class::Literal
            }
            _ => return false,
        };
        self.at = self.at.min(self.chars.len());
        self.classes[from..self.at].fill(class);
        self.spans.push(Span { from, to: self.at });
        true
    }

    /// An identifier, its dotted parts and `«…»` parts included.
    fn identifier(&mut self) {
        loop {
            match self.peek(0) {
                Some('«') => self.quoted_ident(),
                Some(c) if is_ident_start(c) => {
                    while self.peek(0).is_some_and(is_ident_rest) {
                        self.at += 1;
                    }
                }
                _ => return,
            }
            let continues = self.peek(0) == Some('.')
                && self.peek(1).is_some_and(|c| is_ident_start(c) || c == '«');
            if !continues {
                return;
            }
            self.at += 1;
        }
    }

    fn line_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    fn block_comment(&mut self) {
        self.at += 2;
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            if c == '/' && self.peek(1) == Some('-') {
                depth += 1;
                self.at += 2;
            } else if c == '-' && self.peek(1) == Some('/') {
                self.at += 2;
                depth -= 1;
                if depth == 0 {
                    return;
                }
            } else {
                self.at += 1;
            }
        }
    }

    /// A string's body, after its opening `"`, through its closing `"`.
    fn string(&mut self, interpolated: bool) {
        let mut piece = self.at - 1;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '"' => break,
                '\\' => self.at += 1,
                '{' if interpolated => {
                    self.classes[piece..self.at].fill(Class::Literal);
                    self.code(true);
                    piece = self.at;
                }
                _ => {}
            }
        }
        self.at = self.at.min(self.chars.len());
        self.classes[piece..self.at].fill(Class::Literal);
    }

    /// The number of `#`s of a raw string starting here.
    fn raw_string_start(&self) -> Option<usize> {
        if self.previous().is_some_and(is_ident_rest) {
            return None;
        }
        let hashes = (1..).take_while(|&i| self.peek(i) == Some('#')).count();
        (self.peek(1 + hashes) == Some('"')).then_some(hashes)
    }

    fn raw_string(&mut self) {
        let hashes = self.raw_string_start().unwrap_or(0);
        self.at += 2 + hashes;
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == '"' && (0..hashes).all(|i| self.peek(i) == Some('#')) {
                self.at += hashes;
                return;
            }
        }
    }

    /// The length of a character literal starting here, if one does.
    fn char_literal_len(&self) -> Option<usize> {
        if self
            .previous()
            .is_some_and(|c| is_ident_rest(c) || c == '.')
        {
            return None;
        }
        match self.peek(1)? {
            '\\' => {
                // `'\n'`, `'\x41'`, `'\u{1F600}'`: the closing quote follows within the line.
                (3..=12)
                    .take_while(|&i| self.peek(i).is_some_and(|c| c != '\n'))
                    .find(|&i| self.peek(i) == Some('\''))
                    .map(|i| i + 1)
            }
            '\n' => None,
            _ => (self.peek(2) == Some('\'')).then_some(3),
        }
    }

    /// `` `name `` or ``` ``name ```: a name, not a use of it.
    fn name_literal(&mut self) {
        self.at += 1;
        if self.peek(0) == Some('`') {
            self.at += 1;
        }
        if self.peek(0).is_some_and(|c| is_ident_start(c) || c == '«') {
            self.identifier();
        }
    }

    fn quoted_ident(&mut self) {
        while let Some(c) = self.peek(0) {
            self.at += 1;
            if c == '»' {
                return;
            }
        }
    }
}

/// Lean's identifier characters after the first.
pub fn is_ident_rest(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '\'' | '!' | '?')
}

/// Characters an identifier may start with.
pub fn is_ident_start(c: char) -> bool {
    (c.is_alphabetic() || c == '_') && c != 'λ'
}

#[cfg(test)]
mod tests {
    use super::super::scan;
    use super::*;

    /// `(kind, line, start character, end character)` of every find.
    fn finds(text: &str) -> Vec<(&'static str, u32, u32, u32)> {
        scan(text)
            .into_iter()
            .map(|t| {
                let kind = match t.found {
                    Found::Sorry => "sorry",
                    Found::Hole => "hole",
                };
                assert_eq!(t.start.line, t.end.line);
                (kind, t.start.line, t.start.character, t.end.character)
            })
            .collect()
    }

    #[test]
    fn sorry_and_holes_in_code_are_found() {
        let text = "theorem t : p ∧ q := by\n  refine ⟨?_, ?h⟩\n  · sorry\n  exact (sorry)\n";
        assert_eq!(
            finds(text),
            [
                ("hole", 1, 10, 12),
                ("hole", 1, 14, 16),
                ("sorry", 2, 4, 9),
                ("sorry", 3, 9, 14),
            ]
        );
        assert_eq!(finds("def x : Nat := sorry"), [("sorry", 0, 15, 20)]);
        assert_eq!(finds("example := @sorry _"), [("sorry", 0, 12, 17)]);
    }

    #[test]
    fn comments_are_skipped_nested_and_doc_comments_included() {
        let text = "-- sorry ?_\n/- sorry /- ?_ -/ sorry -/ sorry\n/-- doc: sorry -/\n/-! sorry -/";
        assert_eq!(finds(text), [("sorry", 1, 27, 32)]);
        assert_eq!(finds("/- never closed\nsorry"), []);
        assert_eq!(finds("x -- trailing sorry\nsorry"), [("sorry", 1, 0, 5)]);
    }

    #[test]
    fn strings_chars_and_names_are_skipped() {
        assert_eq!(
            finds(r#"def s := "sorry ?_ \" sorry" ++ sorry"#),
            [("sorry", 0, 32, 37)]
        );
        assert_eq!(
            finds("def s := \"a\nsorry\nb\" sorry"),
            [("sorry", 2, 3, 8)]
        );
        assert_eq!(
            finds(r###"def s := r#"a "sorry" b"# sorry"###),
            [("sorry", 0, 26, 31)]
        );
        assert_eq!(finds("def c := '\"' sorry \"x\""), [("sorry", 0, 13, 18)]);
        assert_eq!(finds("def c := '\\'' sorry"), [("sorry", 0, 14, 19)]);
        assert_eq!(finds("def c := '\\u{1F600}' ?_"), [("hole", 0, 21, 23)]);
        assert_eq!(
            finds("#check `sorry ``Foo.sorry «sorry» sorry"),
            [("sorry", 0, 34, 39)]
        );
    }

    #[test]
    fn primes_belong_to_identifiers() {
        // `h'` is an identifier, so its `'` opens no character literal that would hide `sorry`.
        assert_eq!(finds("exact h' sorry 'x'"), [("sorry", 0, 9, 14)]);
        assert_eq!(finds("f x' y' sorry"), [("sorry", 0, 8, 13)]);
    }

    #[test]
    fn only_whole_tokens_count() {
        assert_eq!(finds("sorry_lemma Foo.sorry x.sorry sorry' sorryx"), []);
        assert_eq!(finds("exact? apply? simp? x?_ h?_"), []);
        assert_eq!(finds("(sorry)"), [("sorry", 0, 1, 6)]);
        assert_eq!(finds("?_x"), [("hole", 0, 0, 3)]);
        assert_eq!(finds("2sorry 0x1F sorry"), [("sorry", 0, 12, 17)]);
    }

    #[test]
    fn interpolations_are_code() {
        assert_eq!(
            finds("s!\"sorry {sorry} {f {a}} }\" sorry"),
            [("sorry", 0, 10, 15), ("sorry", 0, 28, 33)]
        );
        assert_eq!(
            finds("\"{sorry}\""),
            [],
            "a plain string has no interpolation"
        );
    }

    #[test]
    fn columns_are_utf16() {
        assert_eq!(finds("def 𝓝 := sorry"), [("sorry", 0, 10, 15)]);
        assert_eq!(finds("⟨?_, ?_⟩"), [("hole", 0, 1, 3), ("hole", 0, 5, 7)]);
    }
}
