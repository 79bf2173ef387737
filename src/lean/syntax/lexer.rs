//! The `sorry`s and holes a Lean document's *code* contains, found by a lexer over its text, so
//! a `sorry` in a comment, a string or a name literal is never reported.
//!
//! Contract:
//! 1. Skipped as not code: line comments (`--` to the end of the line), block comments (`/-`
//!    … `-/`, nested, doc comments included; an unclosed one runs to the end), string literals
//!    (`"…"` with `\` escapes, over lines; an unclosed one runs to the end), raw strings
//!    (`r"…"`, `r#"…"#`), character literals (`'a'`, `'\n'`, `'"'`; a `'` after an identifier
//!    character is part of the identifier, as in `h'`), name literals (`` `sorry ``,
//!    ``` ``Foo.sorry ```) and `«…»` quoted identifiers. In an interpolated string (`s!"…"`,
//!    `m!"…"`, `f!"…"`: a `"` right after `!`) the `{…}` parts are code again.
//! 2. Identifiers are read whole, with Lean's identifier characters (letters, digits, `_`, `'`,
//!    `!`, `?`, subscripts) and `.` between parts, so `sorry` is found only as a token of its own:
//!    not in `sorry_lemma`, `Foo.sorry` or `x.sorry`.
//! 3. A hole is `?` followed by an identifier (`?_`, or a named `?x`), where the `?` does not
//!    end an identifier (as in `exact?`).
//! 4. Each find carries its LSP range (UTF-16 columns), in text order.
//! 5. [`command_lines`]: the lines where a command may start, as Lean files are written: line 0,
//!    and every line whose first column holds code or a comment's start (not a line inside a
//!    comment or string begun earlier, and not an indented one).
//! 6. [`first_tactic`]: where the code's first tactic begins: the first code after the first
//!    `by` token (comments and blank space skipped).

use crate::lean::text::Position;

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
    let mut lexer = Lexer::new(text);
    lexer.code(false);
    lexer.found
}

/// Where the first tactic of `text`'s code begins (see the contract), if it has one.
pub fn first_tactic(text: &str) -> Option<Position> {
    let mut lexer = Lexer::new(text);
    lexer.code(false);
    let &(_, by_end) = lexer.words.iter().find(|&&(from, to)| {
        lexer.chars[from..to] == ['b', 'y'] && (from == 0 || lexer.chars[from - 1] != '.')
    })?;
    let mut at = by_end;
    while at < lexer.chars.len() {
        if let Some(&(_, to)) = lexer.skipped.iter().find(|&&(from, _)| from == at) {
            at = to;
        } else if lexer.chars[at].is_whitespace() {
            at += 1;
        } else {
            return Some(lexer.positions[at]);
        }
    }
    None
}

/// The lines a command may start at (see the contract), in order.
pub fn command_lines(text: &str) -> Vec<u32> {
    let mut lexer = Lexer::new(text);
    lexer.code(false);
    let last = lexer.positions.last().map_or(0, |p| p.line);
    let mut inside = vec![false; last as usize + 1];
    for &(from, to) in &lexer.skipped {
        let (a, b) = (lexer.positions[from], lexer.positions[to]);
        let through = if b.character > 0 {
            b.line
        } else {
            b.line.saturating_sub(1)
        };
        for line in a.line + 1..=through {
            inside[line as usize] = true;
        }
    }
    let mut lines = vec![0];
    let starts = lexer
        .chars
        .iter()
        .enumerate()
        .filter(|&(i, &c)| i > 0 && lexer.chars[i - 1] == '\n' && !c.is_whitespace());
    for (i, _) in starts {
        let line = lexer.positions[i].line;
        if !inside[line as usize] {
            lines.push(line);
        }
    }
    lines
}

/// Lean's identifier characters after the first.
fn is_ident_rest(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '\'' | '!' | '?')
}

/// Characters an identifier may start with.
fn is_ident_start(c: char) -> bool {
    (c.is_alphabetic() || c == '_') && c != 'λ'
}

struct Lexer {
    chars: Vec<char>,
    /// The position of each character, and one past the last.
    positions: Vec<Position>,
    at: usize,
    found: Vec<Token>,
    /// What is not code: comments and literals, as `[from, to)` character indices.
    skipped: Vec<(usize, usize)>,
    /// Identifiers of the code, as `[from, to)` character indices.
    words: Vec<(usize, usize)>,
}

impl Lexer {
    fn new(text: &str) -> Lexer {
        let chars: Vec<char> = text.chars().collect();
        let mut positions = Vec::with_capacity(chars.len() + 1);
        let (mut line, mut character) = (0u32, 0u32);
        for &c in &chars {
            positions.push(Position::new(line, character));
            if c == '\n' {
                line += 1;
                character = 0;
            } else {
                character += c.len_utf16() as u32;
            }
        }
        positions.push(Position::new(line, character));
        Lexer {
            chars,
            positions,
            at: 0,
            found: Vec::new(),
            skipped: Vec::new(),
            words: Vec::new(),
        }
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
                    let after_dot = self.previous() == Some('.');
                    let from = self.at;
                    self.identifier();
                    self.words.push((from, self.at));
                    let word: String = self.chars[from..self.at].iter().collect();
                    if word == "sorry" && !after_dot {
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
        match c {
            '-' if self.peek(1) == Some('-') => self.line_comment(),
            '/' if self.peek(1) == Some('-') => self.block_comment(),
            '"' => {
                let interpolated = self.previous() == Some('!');
                self.at += 1;
                self.string(interpolated);
            }
            'r' if self.raw_string_start().is_some() => self.raw_string(),
            '\'' if self.char_literal_len().is_some() => {
                self.at += self.char_literal_len().unwrap_or(1);
            }
            '`' => self.name_literal(),
            '«' => self.quoted_ident(),
            _ => return false,
        }
        self.at = self.at.min(self.chars.len());
        self.skipped.push((from, self.at));
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
        while let Some(c) = self.peek(0) {
            self.at += 1;
            match c {
                '"' => return,
                '\\' => self.at += 1,
                '{' if interpolated => self.code(true),
                _ => {}
            }
        }
        self.at = self.at.min(self.chars.len());
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
    fn commands_start_at_the_first_column_outside_comments_and_strings() {
        let text = "\n/-! header\nnot code -/\ntheorem t : True := by\n  trivial\n-- note\ndef s := \"a\nb\" \n  |>.length\nexample := 1";
        assert_eq!(command_lines(text), [0, 1, 3, 5, 6, 9]);
        assert_eq!(command_lines(""), [0]);
        assert_eq!(command_lines("def a := 1\n"), [0]);
    }

    #[test]
    fn columns_are_utf16() {
        assert_eq!(finds("def 𝓝 := sorry"), [("sorry", 0, 10, 15)]);
        assert_eq!(finds("⟨?_, ?_⟩"), [("hole", 0, 1, 3), ("hole", 0, 5, 7)]);
    }
}
