//! Declarations, read from the lexer: the command around an edit (what `lean_try_edit` judges),
//! where a declaration's statement ends and its body begins, and a declaration found by name.
//!
//! Contract:
//! 1. A command runs from one of `commands::command_lines`' cuts (its doc comment included) to
//!    the next cut, or the text's end. [`command_around`] is the run of commands from the one
//!    holding an edit's first character to the one holding its last (an empty edit: the one
//!    holding its position).
//! 2. A command's *body* begins at its first code, at bracket depth 0, that is `:=`, the keyword
//!    `where`, or a `|` opening a line of its own after the command's first line (a definition
//!    by pattern matching); its *statement* is everything before (the whole command when it has
//!    no body: a command that is not a definition is all statement).
//! 3. [`entries`]: every command of a text one by one: the cuts of 1, and within a `mutual`
//!    block written indented, each line whose first code is a declaration's keyword, modifier
//!    or attribute (`@[`); each with what it declares and its full name (`names`).
//! 4. [`declaration_named`] finds a declaration by name among the [`entries`]: as written or
//!    with the namespaces around it. A name that two declarations answer to is ambiguous unless
//!    one of them has it as its full name. Its body range runs from the first code after `:=`
//!    or `where` (or from the `|`) to just past the command's last code.

use super::commands::cuts;
use super::lexer::{Class, Lexed};
use super::names::{Declared, KEYWORDS, MODIFIERS, Scopes, declared, first_word};
use crate::lean::text::Position;

/// One or more whole commands of a text (see the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// Its first character (column 0 of its first line).
    pub start: Position,
    /// The next command's start, or the text's end.
    pub end: Position,
    /// Just past its last code (or literal) character; `start` when it has none.
    pub code_end: Position,
    /// Where its body begins, if it has one (see the contract).
    pub body: Option<Position>,
}

/// A declaration found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Its full name.
    pub name: String,
    /// Its command.
    pub command: Command,
    /// The range of its body, to be replaced.
    pub body: (Position, Position),
}

/// Why no declaration was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotFound {
    /// No declaration has that name.
    Missing,
    /// Several do: their full names.
    Ambiguous(Vec<String>),
    /// It has no body (`:=`, `where`, `|`) to replace.
    NoBody(String),
}

/// The commands from the one holding `from` to the one holding the character before `to` (see
/// the contract).
pub fn command_around(text: &str, from: Position, to: Position) -> Command {
    let lexed = Lexed::new(text);
    let cuts = cuts(&lexed);
    let last_char = if to > from {
        let at = index_of(&lexed, to);
        lexed.positions[at.saturating_sub(1)]
    } else {
        from
    };
    let first = cut_at(&cuts, from.line);
    let last = cut_at(&cuts, last_char.line.max(from.line));
    command(&lexed, &cuts, first, last)
}

/// One command of a text, with what it declares (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The command.
    pub command: Command,
    /// What it declares, if it declares.
    pub declared: Option<Declared>,
    /// The full name of what it declares, if that has a name.
    pub full: Option<String>,
}

/// Every command of `lexed` one by one (see the contract).
pub fn entries(lexed: &Lexed) -> Vec<Entry> {
    let cuts = entry_cuts(lexed);
    let mut scopes = Scopes::default();
    (0..cuts.len())
        .map(|k| {
            let command = command(lexed, &cuts, k, k);
            let (from, to) = (
                index_of(lexed, command.start),
                index_of(lexed, command.code_end),
            );
            scopes.enter(lexed, from, to);
            let declared = declared(lexed, from, to);
            let written = declared.as_ref().and_then(|d| d.name.as_ref());
            let full = written.map(|name| scopes.full(&name.text));
            Entry {
                command,
                declared,
                full,
            }
        })
        .collect()
}

/// The lines [`entries`] start on (see the contract).
fn entry_cuts(lexed: &Lexed) -> Vec<u32> {
    let cuts = cuts(lexed);
    let line_start = |line: u32| {
        let at = lexed.line_starts.get(line as usize).copied();
        at.unwrap_or(lexed.chars.len())
    };
    let mut all = Vec::with_capacity(cuts.len());
    for (k, &line) in cuts.iter().enumerate() {
        all.push(line);
        let next = cuts
            .get(k + 1)
            .copied()
            .unwrap_or(lexed.line_starts.len() as u32);
        let mutual = first_word(lexed, line_start(line), line_start(next))
            .is_some_and(|w| lexed.is_keyword(w, "mutual"));
        if mutual {
            all.extend(
                (line + 1..next).filter(|&inner| opens_declaration(lexed, line_start(inner))),
            );
        }
    }
    all
}

/// Whether the line starting at character `start` begins with a declaration's keyword,
/// modifier or attribute.
fn opens_declaration(lexed: &Lexed, start: usize) -> bool {
    let Some(first) = (start..lexed.chars.len())
        .find(|&i| !lexed.chars[i].is_whitespace() || lexed.chars[i] == '\n')
    else {
        return false;
    };
    if lexed.classes[first] != Class::Code || lexed.chars[first] == '\n' {
        return false;
    }
    if lexed.chars[first] == '@' {
        return lexed.chars.get(first + 1) == Some(&'[');
    }
    let Ok(k) = lexed.words.binary_search_by_key(&first, |w| w.0) else {
        return false;
    };
    let word = lexed.words[k];
    KEYWORDS
        .iter()
        .chain(&MODIFIERS)
        .any(|keyword| lexed.is_keyword(word, keyword))
}

/// The declaration `name` (see the contract).
pub fn declaration_named(text: &str, name: &str) -> Result<Named, NotFound> {
    let lexed = Lexed::new(text);
    let mut found: Vec<(String, bool, Command)> = Vec::new();
    for entry in entries(&lexed) {
        let (Some(full), Some(declared)) = (entry.full, &entry.declared) else {
            continue;
        };
        let written = declared.name.as_ref().map_or("", |n| n.text.as_str());
        let answers = full == name || written == name || full.ends_with(&format!(".{name}"));
        if answers {
            found.push((full.clone(), full == name, entry.command));
        }
    }
    let chosen = match found.len() {
        0 => return Err(NotFound::Missing),
        1 => found.remove(0),
        _ => match found.iter().position(|(_, exact, _)| *exact) {
            Some(k) if found.iter().filter(|f| f.1).count() == 1 => found.remove(k),
            _ => {
                return Err(NotFound::Ambiguous(
                    found.into_iter().map(|f| f.0).collect(),
                ));
            }
        },
    };
    let (full, _, command) = chosen;
    let Some(body) = command.body else {
        return Err(NotFound::NoBody(full));
    };
    let at = index_of(&lexed, body);
    let skip = match lexed.chars[at] {
        ':' => 2,
        '|' => 0,
        _ => "where".len(),
    };
    let end = index_of(&lexed, command.code_end);
    let from = (at + skip..end)
        .find(|&i| is_token(&lexed, i))
        .unwrap_or(end);
    Ok(Named {
        name: full,
        command,
        body: (lexed.positions[from], command.code_end),
    })
}

/// The statement of `command` in `text` (see the contract).
pub fn statement<'t>(text: &'t str, command: &Command) -> &'t str {
    let offset = |p: Position| crate::lean::text::offset_of(text, p);
    let end = command.body.unwrap_or(command.code_end);
    &text[offset(command.start)..offset(end)]
}

/// The index of the cut holding `line`.
fn cut_at(cuts: &[u32], line: u32) -> usize {
    cuts.iter().rposition(|&cut| cut <= line).unwrap_or(0)
}

/// The commands from cut `first` to cut `last`, read.
pub(super) fn command(lexed: &Lexed, cuts: &[u32], first: usize, last: usize) -> Command {
    let line_start = |line: u32| {
        let at = lexed
            .line_starts
            .get(line as usize)
            .copied()
            .unwrap_or(lexed.chars.len());
        lexed.positions[at]
    };
    let start = line_start(cuts[first]);
    let end = cuts
        .get(last + 1)
        .map_or(lexed.positions[lexed.chars.len()], |&l| line_start(l));
    let (from, to) = (index_of(lexed, start), index_of(lexed, end));
    let code_end = (from..to)
        .rev()
        .find(|&i| is_token(lexed, i))
        .map_or(start, |i| lexed.positions[i + 1]);
    let body = body_start(lexed, from, index_of(lexed, code_end));
    Command {
        start,
        end,
        code_end,
        body,
    }
}

/// Where the body of the command `[from, to)` begins (see the contract).
fn body_start(lexed: &Lexed, from: usize, to: usize) -> Option<Position> {
    let first_line = lexed.positions.get(from)?.line;
    let mut depth = 0usize;
    for i in from..to {
        if lexed.classes[i] != Class::Code {
            continue;
        }
        match lexed.chars[i] {
            '(' | '[' | '{' | '⟨' | '⦃' => depth += 1,
            ')' | ']' | '}' | '⟩' | '⦄' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            ':' if lexed.chars.get(i + 1) == Some(&'=') => return Some(lexed.positions[i]),
            '|' if lexed.positions[i].line > first_line && opens_line(lexed, i) => {
                return Some(lexed.positions[i]);
            }
            'w' if word_at(lexed, i) == Some("where") => return Some(lexed.positions[i]),
            _ => {}
        }
    }
    None
}

/// Whether character `i` is the first token on its line.
fn opens_line(lexed: &Lexed, i: usize) -> bool {
    let line_start = lexed.line_starts[lexed.positions[i].line as usize];
    (line_start..i).all(|j| !is_token(lexed, j))
}

/// The word of the code that starts at `i`, if one does.
fn word_at(lexed: &Lexed, i: usize) -> Option<&'static str> {
    let k = lexed.words.binary_search_by_key(&i, |w| w.0).ok()?;
    lexed.is_keyword(lexed.words[k], "where").then_some("where")
}

/// The index of the character at `at` (the text's end for a position past it).
pub(super) fn index_of(lexed: &Lexed, at: Position) -> usize {
    lexed.positions.partition_point(|p| *p < at)
}

/// Whether character `i` is part of a token: code or a literal, not blank space or a comment.
fn is_token(lexed: &Lexed, i: usize) -> bool {
    matches!(lexed.classes[i], Class::Code | Class::Literal) && !lexed.chars[i].is_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "namespace Fixture\n\n/-- Doc. -/\ndef double (n : Nat := 1) : Nat := 2 * n -- c\n\n@[simp] private theorem and_swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n\nstructure Point where\n  x : Nat\n\ndef f : Nat → Nat\n  | 0 => 1\n  | n + 1 => n\n\nend Fixture\n\ntheorem and_swap : True := trivial\n";

    fn p(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn the_command_around_an_edit_and_its_statement() {
        let at = command_around(TEXT, p(6, 2), p(6, 13));
        assert_eq!((at.start, at.end), (p(5, 0), p(10, 0)));
        assert_eq!(at.code_end, p(8, 12));
        assert_eq!(at.body, Some(p(5, 72)));
        assert!(statement(TEXT, &at).ends_with("(hq : q) : q ∧ p "));
        let doc = command_around(TEXT, p(3, 4), p(3, 4));
        assert_eq!((doc.start, doc.end), (p(2, 0), p(5, 0)), "its doc comment");
        assert_eq!(doc.body, Some(p(3, 32)), "not the binder's default");
        let structure = command_around(TEXT, p(11, 2), p(11, 3));
        assert_eq!(statement(TEXT, &structure), "structure Point ");
        let matching = command_around(TEXT, p(14, 4), p(14, 5));
        assert_eq!(statement(TEXT, &matching), "def f : Nat → Nat\n  ");
        let two = command_around(TEXT, p(3, 0), p(6, 0));
        assert_eq!(
            (two.start, two.end),
            (p(2, 0), p(10, 0)),
            "an edit over two"
        );
        let whole_lines = command_around(TEXT, p(10, 0), p(13, 0));
        assert_eq!((whole_lines.start, whole_lines.end), (p(10, 0), p(13, 0)));
        let namespace = command_around(TEXT, p(0, 0), p(0, 1));
        assert_eq!(namespace.body, None);
        assert_eq!(statement(TEXT, &namespace), "namespace Fixture");
    }

    #[test]
    fn declarations_are_found_by_name_with_their_namespaces() {
        let swap = declaration_named(TEXT, "Fixture.and_swap").unwrap();
        assert_eq!(swap.command.start, p(5, 0));
        assert_eq!(swap.body, (p(5, 75), p(8, 12)));
        let root = declaration_named(TEXT, "and_swap").unwrap();
        assert_eq!(root.command.start, p(19, 0), "its full name");
        let two = "namespace A\ndef x := 1\nend A\nnamespace B\ndef x := 2\nend B\n";
        assert_eq!(
            declaration_named(two, "x"),
            Err(NotFound::Ambiguous(vec!["A.x".into(), "B.x".into()]))
        );
        assert_eq!(declaration_named(two, "B.x").unwrap().body.0, p(4, 9));
        assert_eq!(
            declaration_named(TEXT, "double").unwrap().body,
            (p(3, 35), p(3, 40))
        );
        assert_eq!(
            declaration_named(TEXT, "Point").unwrap().body,
            (p(11, 2), p(11, 9))
        );
        assert_eq!(
            declaration_named(TEXT, "f").unwrap().body,
            (p(14, 2), p(15, 14))
        );
        assert_eq!(declaration_named(TEXT, "Nope"), Err(NotFound::Missing));
        assert_eq!(
            declaration_named("axiom ax : False\n", "ax"),
            Err(NotFound::NoBody("ax".into()))
        );
        let scoped = "noncomputable section\nnamespace A\nend A\nend\nnamespace B\n\
                      set_option maxHeartbeats 1 in\ntheorem t : True := trivial\nend B\n";
        let t = declaration_named(scoped, "t").unwrap();
        assert_eq!((t.name.as_str(), t.command.start), ("B.t", p(5, 0)));
        let mutual = "mutual\n  def even : Nat → Bool\n    | 0 => true\n    | n + 1 => odd n\n  \
                      def odd : Nat → Bool\n    | 0 => false\n    | n + 1 => even n\nend\n";
        let odd = declaration_named(mutual, "odd").unwrap();
        assert_eq!(
            odd.body,
            (p(5, 4), p(6, 21)),
            "one of an indented mutual block"
        );
    }
}
