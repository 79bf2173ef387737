//! Where Lean commands start, read from the lexer: the one rule behind `lean_run_at`'s one
//! command (`speculation::probe`) and `lean_todo`'s code action chunks.
//!
//! Contract:
//! 1. A line *opens* with what its first column holds, unless it begins inside a comment or a
//!    literal begun on an earlier line, or is empty or indented: its opening is the first code
//!    (a literal included) after the comments that begin there, on the line where the last of
//!    them ends; a line with only comments opens none.
//! 2. [`command_starts`]: the first command starts at the text's first code, wherever it is;
//!    every later opening starts a command unless it continues the command before it (3) or is
//!    joined to it (4).
//! 3. Commands begin with a letter (their keyword, a modifier, a user command), `#` and a
//!    letter (`#eval`), or `@[` (attributes), so an opening with anything else continues the
//!    command before it: `|` alternatives and constructors, a closing `)`, `]`, `}` or `⟩`, a
//!    `:=`, a `·` bullet, a number, a literal, an operator. So do the words Lean files write at
//!    the first column inside a command (`CONTINUING`): `where`, `deriving` (but `deriving
//!    instance` is a command), `termination_by`, `decreasing_by`, `partial_fixpoint`, `with`,
//!    `then`, `else`, and `fun` and `by` starting a body written unindented.
//! 4. An opening is joined to the command before it when the code before it (comments skipped)
//!    ends with the keyword `in` (the scoping `set_option … in`, `open … in`, `variable … in`
//!    written on a line of their own) or with an attribute alone on its line (`@[…]`, after
//!    nothing but blank space and comments, over several lines if its brackets are): those
//!    belong to the command below them.
//! 5. [`command_lines`]: where `lean_todo` cuts a text into chunks, one per command: line 0,
//!    the lines of [`command_starts`], each moved up to the line of the doc comment (`/--`)
//!    just before its command (only blank space and comments between, and nothing but blank
//!    space before it on its line), and the lines where a module doc (`/-!`) begins so. Lean
//!    parses a `/--` or `/-!` as a token of the command it begins, but every other comment as
//!    the trailing whitespace of the command before it: so a plain comment line is no cut,
//!    however many there are.

use super::lexer::{Class, Lexed};

/// Words that continue, at the first column, the command before them (see the contract).
const CONTINUING: [&str; 11] = [
    "where",
    "deriving",
    "termination_by",
    "termination_by?",
    "decreasing_by",
    "partial_fixpoint",
    "with",
    "then",
    "else",
    "fun",
    "by",
];

/// The lines where commands start (see the contract), in order.
pub fn command_starts(text: &str) -> Vec<u32> {
    let lexed = Lexed::new(text);
    let starts = starts(&lexed, &inside_lines(&lexed));
    starts.into_iter().map(|(line, _)| line).collect()
}

/// The lines `lean_todo` cuts a text at (see the contract), in order.
pub fn command_lines(text: &str) -> Vec<u32> {
    lines_of(&Lexed::new(text))
}

/// [`command_lines`] of a text already lexed.
pub(super) fn lines_of(lexed: &Lexed) -> Vec<u32> {
    let inside = inside_lines(lexed);
    let line_of = |i: usize| lexed.positions[i].line;
    let alone = |i: usize| {
        let start = lexed.line_starts[line_of(i) as usize];
        (start..i).all(|j| lexed.chars[j].is_whitespace() && !is_comment(lexed.classes[j]))
    };
    let mut lines = vec![0];
    for (line, at) in starts(lexed, &inside) {
        let doc = documented_by(lexed, at).filter(|&doc| alone(doc));
        lines.push(doc.map_or(line, line_of));
    }
    let module_docs = lexed.spans.iter().map(|span| span.from);
    lines.extend(
        module_docs
            .filter(|&from| starts_with(lexed, from, "/-!") && alone(from))
            .map(line_of),
    );
    lines.sort_unstable();
    lines.dedup();
    lines
}

/// Each command's line and the index of its first token.
fn starts(lexed: &Lexed, inside: &[bool]) -> Vec<(u32, usize)> {
    let Some(first) = (0..lexed.chars.len()).find(|&i| is_token(lexed, i)) else {
        return Vec::new();
    };
    let openings = openings(lexed, inside);
    let mut starts = Vec::new();
    if !openings.iter().any(|&(_, at)| at == first) {
        starts.push((lexed.positions[first].line, first));
    }
    let brackets = Brackets::new(lexed);
    for (line, at) in openings {
        if at == first || !(continues(lexed, at) || joined(lexed, &brackets, at)) {
            starts.push((line, at));
        }
    }
    starts
}

/// The start of the doc comment (`/--`) that begins the command whose first token is at `at`:
/// the comment just before it, past blank space and other comments.
fn documented_by(lexed: &Lexed, at: usize) -> Option<usize> {
    let mut before = at;
    // Spans come in the order they end: those ending by `at` are a prefix of them.
    let ended = lexed.spans.partition_point(|span| span.to <= at);
    for span in lexed.spans[..ended].iter().rev() {
        let blank = (span.to..before).all(|i| lexed.chars[i].is_whitespace());
        if span.to > before || !blank || !is_comment(lexed.classes[span.from]) {
            return None;
        }
        if starts_with(lexed, span.from, "/--") {
            return Some(span.from);
        }
        before = span.from;
    }
    None
}

/// Whether the characters at `at` spell `prefix`.
fn starts_with(lexed: &Lexed, at: usize, prefix: &str) -> bool {
    prefix
        .chars()
        .enumerate()
        .all(|(k, c)| lexed.chars.get(at + k) == Some(&c))
}

/// Each opening line (see the contract) and the index of its opening.
fn openings(lexed: &Lexed, inside: &[bool]) -> Vec<(u32, usize)> {
    let mut openings = Vec::new();
    for (line, &start) in lexed.line_starts.iter().enumerate() {
        if inside[line] || lexed.chars.get(start).is_none_or(|c| c.is_whitespace()) {
            continue;
        }
        let mut at = start;
        while at < lexed.chars.len() {
            let c = lexed.chars[at];
            if is_token(lexed, at) {
                openings.push((line as u32, at));
                break;
            }
            // Past a newline that no comment holds, the line has ended with no code.
            if c == '\n' && !is_comment(lexed.classes[at]) {
                break;
            }
            at += 1;
        }
    }
    openings
}

/// Whether the opening at `at` continues the command before it (see the contract, 3).
fn continues(lexed: &Lexed, at: usize) -> bool {
    let next = lexed.chars.get(at + 1).copied();
    match lexed.chars[at] {
        _ if lexed.classes[at] == Class::Literal => true,
        '#' => !next.is_some_and(char::is_alphabetic),
        '@' => next != Some('['),
        c if c.is_alphabetic() && c != 'λ' => {
            let Ok(k) = lexed.words.binary_search_by_key(&at, |w| w.0) else {
                return false;
            };
            let word: String = lexed.chars[lexed.words[k].0..lexed.words[k].1]
                .iter()
                .collect();
            let instance = lexed
                .words
                .get(k + 1)
                .is_some_and(|&w| lexed.is_keyword(w, "instance"));
            CONTINUING.contains(&word.as_str()) && !(word == "deriving" && instance)
        }
        _ => true,
    }
}

/// Whether the opening at `at` is joined to the command before it (see the contract, 4).
fn joined(lexed: &Lexed, brackets: &Brackets, at: usize) -> bool {
    let Some(last) = (0..at).rev().find(|&i| is_token(lexed, i)) else {
        return false;
    };
    if lexed.classes[last] != Class::Code {
        return false;
    }
    if let Ok(k) = lexed.words.binary_search_by_key(&(last + 1), |w| w.1) {
        return lexed.is_keyword(lexed.words[k], "in");
    }
    let Some(open) = brackets.opening(last).filter(|&open| open > 0) else {
        return false;
    };
    let at_sign = open - 1;
    let line_start = lexed.line_starts[lexed.positions[at_sign].line as usize];
    lexed.chars[at_sign] == '@'
        && lexed.classes[at_sign] == Class::Code
        && (line_start..at_sign).all(|i| !is_token(lexed, i))
}

/// The code's square brackets, each `]` with the `[` it closes.
struct Brackets(Vec<(usize, usize)>);

impl Brackets {
    fn new(lexed: &Lexed) -> Brackets {
        let (mut open, mut pairs) = (Vec::new(), Vec::new());
        for (i, &c) in lexed.chars.iter().enumerate() {
            match c {
                _ if lexed.classes[i] != Class::Code => {}
                '[' => open.push(i),
                ']' => pairs.extend(open.pop().map(|from| (i, from))),
                _ => {}
            }
        }
        Brackets(pairs)
    }

    /// The `[` that the `]` at `close` closes.
    fn opening(&self, close: usize) -> Option<usize> {
        let k = self.0.binary_search_by_key(&close, |p| p.0).ok()?;
        Some(self.0[k].1)
    }
}

/// Whether character `i` is part of a token: code or a literal, not blank space or a comment.
fn is_token(lexed: &Lexed, i: usize) -> bool {
    !is_comment(lexed.classes[i]) && !lexed.chars[i].is_whitespace()
}

fn is_comment(class: Class) -> bool {
    matches!(class, Class::BlockComment | Class::LineComment)
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
        assert_eq!(command_lines(text), [0, 1, 3, 6, 9]);
        assert_eq!(command_lines(""), [0]);
        assert_eq!(command_lines("def a := 1\n"), [0]);
    }

    #[test]
    fn continued_and_joined_lines_are_no_chunk_lines() {
        let text = "inductive T\n| a\n| b\nderiving Repr\n\n@[simp]\ntheorem t : True := trivial\n-- note\nset_option x 1 in\nexample := 1";
        assert_eq!(command_lines(text), [0, 5, 8]);
        assert_eq!(command_starts(text), [0, 5, 8]);
    }

    #[test]
    fn comments_cut_nothing_but_doc_comments_begin_their_command() {
        let comments = "-- c\n".repeat(500);
        let text = format!("def a := 1\n{comments}/- b -/\ndef b := 2\n{comments}");
        assert_eq!(command_lines(&text), [0, 502]);
        let text = "def a := 1\n-- c\n/-- A doc. -/\n-- c\n@[simp]\ntheorem t : True := \
                    trivial\n/-! Module doc. -/\n  /-- indented -/ def b := 2\ndef c := 1 /-- d -/\n";
        assert_eq!(command_lines(text), [0, 2, 6, 8]);
        assert_eq!(command_starts(text), [0, 4, 8]);
        assert_eq!(
            command_lines("/-- doc -/\ntheorem t : True := trivial\n"),
            [0]
        );
    }

    #[test]
    fn a_line_opens_with_the_code_after_its_comments() {
        let text =
            "def a := 1\n/- a -/ /- b\n-/ def b := 2\n-- c\n  def c := 3\n/- d -/\ndef d := 4";
        assert_eq!(command_starts(text), [0, 1, 6]);
        assert_eq!(command_starts("-- only\n/- comments -/\n"), [0u32; 0]);
        assert_eq!(
            command_starts("\n  #check 1\n"),
            [1],
            "the first command, indented"
        );
    }
}
