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
//! 3. [`entries`]: every command of a text one by one, each with what it declares and its full
//!    name (`names`): the cuts of 1, and a command Lean would begin inside another, wherever it
//!    stands (indented in a `mutual` block, after a proof on the same line): a word Lean
//!    reserves for commands (a declaration's keyword, [`COMMAND_WORDS`], or `#` and a word but
//!    the tactics [`HASH_TACTICS`]), in code at bracket depth 0, after the command's own first
//!    word (`names::command_word`), with the attributes and modifiers just before it; but not
//!    `inductive` or `abbrev` after `class`, `instance` after `deriving`, nor `open` or
//!    `set_option` followed by `in` on their line (they scope a term or tactic).
//! 4. [`declaration_named`] finds a declaration by name among the [`entries`]: as written or
//!    with the namespaces around it. A name that two declarations answer to is ambiguous unless
//!    one of them has it as its full name. Its body range runs from the first code after `:=`
//!    or `where` (or from the `|`) to just past the command's last code.
//! 5. [`declarations_in`]: the declarations among the [`entries`] whose commands meet a range,
//!    each with its full name, or none for one Lean names itself (an `example`, an `instance`
//!    without a name); commands that declare nothing are left out.

use super::commands::lines_of;
use super::lexer::{Class, Lexed};
use super::names::{Declaration, KEYWORDS, MODIFIERS, Scopes, command_word, declared};
use crate::lean::text::Position;

/// Words Lean reserves for commands besides declarations' keywords (see the contract, 3).
const COMMAND_WORDS: [&str; 23] = [
    "namespace",
    "section",
    "end",
    "mutual",
    "universe",
    "variable",
    "open",
    "export",
    "set_option",
    "attribute",
    "notation",
    "infix",
    "infixl",
    "infixr",
    "prefix",
    "postfix",
    "macro",
    "macro_rules",
    "syntax",
    "elab",
    "elab_rules",
    "declare_syntax_cat",
    "initialize",
];

/// `#` words that are tactics too (Mathlib's), which change no statement either way.
const HASH_TACTICS: [&str; 3] = ["check", "find", "adaptation_note"];

/// One or more whole commands of a text (see the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    /// Its first character (column 0 of its first line, but for one that begins inside a line:
    /// [`entries`]).
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
    let cuts = lines_of(&lexed);
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
    pub declared: Option<Declaration>,
    /// The full name of what it declares, if that has a name.
    pub full: Option<String>,
}

/// Every command of `lexed` one by one (see the contract).
pub fn entries(lexed: &Lexed) -> Vec<Entry> {
    let mut scopes = Scopes::default();
    let bounds = entry_bounds(lexed);
    bounds
        .iter()
        .enumerate()
        .map(|(k, &from)| {
            let to = bounds.get(k + 1).copied().unwrap_or(lexed.chars.len());
            let command = command_between(lexed, from, to);
            let code_end = index_of(lexed, command.code_end);
            scopes.enter(lexed, from, code_end);
            let declared = declared(lexed, from, code_end);
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

/// Where [`entries`] start, as character indices (see the contract).
fn entry_bounds(lexed: &Lexed) -> Vec<usize> {
    let cuts = lines_of(lexed);
    let line_start = |line: u32| {
        let at = lexed.line_starts.get(line as usize).copied();
        at.unwrap_or(lexed.chars.len())
    };
    let mut bounds = Vec::with_capacity(cuts.len());
    for (k, &line) in cuts.iter().enumerate() {
        let from = line_start(line);
        let to = cuts
            .get(k + 1)
            .map_or(lexed.chars.len(), |&l| line_start(l));
        bounds.push(from);
        let mut own = command_word(lexed, from, to).map_or(to, |w| w.1);
        while let Some((start, word)) = inner_command(lexed, own, to) {
            bounds.push(start);
            own = word.1;
        }
    }
    bounds
}

/// The first command Lean would begin inside `[from, to)` (see the contract, 3): where it
/// starts, and its word.
fn inner_command(lexed: &Lexed, from: usize, to: usize) -> Option<(usize, (usize, usize))> {
    let first = lexed.words.partition_point(|w| w.0 < from);
    let mut depth = 0usize;
    let mut scanned = from;
    for (k, &word) in lexed.words.iter().enumerate().skip(first) {
        if word.1 > to {
            return None;
        }
        for i in scanned..word.0 {
            if lexed.classes[i] == Class::Code {
                match lexed.chars[i] {
                    '(' | '[' | '{' | '⟨' | '⦃' => depth += 1,
                    ')' | ']' | '}' | '⟩' | '⦄' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        scanned = word.0;
        // Reserved words are lowercase ASCII letters and `_`: most identifiers are not.
        let plain = lexed.chars[word.0..word.1]
            .iter()
            .all(|c| c.is_ascii_lowercase() || *c == '_');
        if depth > 0 || !plain {
            continue;
        }
        let hash = word.0 > 0
            && lexed.chars[word.0 - 1] == '#'
            && !HASH_TACTICS.iter().any(|t| lexed.is_keyword(word, t));
        let reserved = KEYWORDS
            .iter()
            .chain(&COMMAND_WORDS)
            .any(|c| lexed.is_keyword(word, c));
        if !(hash || reserved) || part_of_command(lexed, k) {
            continue;
        }
        let start = if hash { word.0 - 1 } else { word.0 };
        return Some((with_prefix(lexed, from, start), word));
    }
    None
}

/// Whether the reserved word `words[k]` belongs to the command around it (see the contract).
fn part_of_command(lexed: &Lexed, k: usize) -> bool {
    let word = lexed.words[k];
    let after = |previous: &str| {
        k > 0
            && lexed.is_keyword(lexed.words[k - 1], previous)
            && lexed.chars[lexed.words[k - 1].1..word.0]
                .iter()
                .all(|c| c.is_whitespace())
    };
    let line = lexed.positions[word.0].line;
    let scoping = || {
        lexed.words[k + 1..]
            .iter()
            .take_while(|w| lexed.positions[w.0].line == line)
            .any(|&w| lexed.is_keyword(w, "in"))
    };
    match () {
        _ if lexed.is_keyword(word, "inductive") || lexed.is_keyword(word, "abbrev") => {
            after("class")
        }
        _ if lexed.is_keyword(word, "instance") => after("deriving"),
        _ if lexed.is_keyword(word, "open") || lexed.is_keyword(word, "set_option") => scoping(),
        _ => false,
    }
}

/// Where a command whose word starts at `at` begins: before the modifiers and attributes just
/// before it (no earlier than `from`).
fn with_prefix(lexed: &Lexed, from: usize, at: usize) -> usize {
    let mut start = at;
    loop {
        let Some(last) = (from..start).rev().find(|&i| is_token(lexed, i)) else {
            return start;
        };
        let modifier = lexed
            .words
            .binary_search_by_key(&(last + 1), |w| w.1)
            .ok()
            .map(|k| lexed.words[k])
            .filter(|&w| MODIFIERS.iter().any(|m| lexed.is_keyword(w, m)));
        if let Some(word) = modifier {
            start = word.0;
            continue;
        }
        if lexed.chars[last] != ']' || lexed.classes[last] != Class::Code {
            return start;
        }
        let mut depth = 0usize;
        let open = (from..=last).rev().find(|&i| {
            match (lexed.classes[i], lexed.chars[i]) {
                (Class::Code, ']') => depth += 1,
                (Class::Code, '[') => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        match open.filter(|&i| i > from && lexed.chars[i - 1] == '@') {
            Some(i) => start = i - 1,
            None => return start,
        }
    }
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

/// A declaration a range meets (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// Its command.
    pub command: Command,
    /// Its full name; `None` when Lean names it itself (`example`, an `instance` without one).
    pub name: Option<String>,
}

/// The declarations whose commands meet `from..to` (see the contract).
pub fn declarations_in(text: &str, from: Position, to: Position) -> Vec<Declared> {
    let lexed = Lexed::new(text);
    entries(&lexed)
        .into_iter()
        .filter(|entry| entry.command.start < to.max(from) && entry.command.end > from)
        .filter(|entry| entry.declared.is_some())
        .map(|entry| Declared {
            command: entry.command,
            name: entry.full,
        })
        .collect()
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
fn command(lexed: &Lexed, cuts: &[u32], first: usize, last: usize) -> Command {
    let line_start = |line: u32| {
        let at = lexed.line_starts.get(line as usize).copied();
        at.unwrap_or(lexed.chars.len())
    };
    let to = cuts
        .get(last + 1)
        .map_or(lexed.chars.len(), |&l| line_start(l));
    command_between(lexed, line_start(cuts[first]), to)
}

/// The command of characters `[from, to)`, read.
fn command_between(lexed: &Lexed, from: usize, to: usize) -> Command {
    let start = lexed.positions[from];
    let code_end = (from..to)
        .rev()
        .find(|&i| is_token(lexed, i))
        .map_or(start, |i| lexed.positions[i + 1]);
    let body = body_start(lexed, from, index_of(lexed, code_end));
    Command {
        start,
        end: lexed.positions[to],
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
    fn the_declarations_a_range_meets_with_their_full_names() {
        let names = |text: &str, from: Position, to: Position| -> Vec<Option<String>> {
            declarations_in(text, from, to)
                .into_iter()
                .map(|d| d.name)
                .collect()
        };
        assert_eq!(
            names(TEXT, p(6, 2), p(6, 3)),
            [Some("Fixture.and_swap".to_owned())]
        );
        assert_eq!(
            names(TEXT, p(3, 0), p(6, 0)),
            [
                Some("Fixture.double".to_owned()),
                Some("Fixture.and_swap".to_owned())
            ]
        );
        assert_eq!(
            names(TEXT, p(0, 0), p(1, 0)),
            [] as [Option<String>; 0],
            "a namespace"
        );
        let scoped = "namespace N\nset_option warn.sorry false in\n#guard_msgs (drop warning) in\n\
                      theorem t : True := by\n  trivial\nexample : True := trivial\n\
                      instance : Inhabited Nat := ⟨0⟩\nmutual\ntheorem m : True := trivial\nend\n\
                      theorem after : True := trivial\nend N\n";
        assert_eq!(
            names(scoped, p(0, 0), p(99, 0)),
            [
                Some("N.t".to_owned()),
                None,
                None,
                Some("N.m".to_owned()),
                Some("N.after".to_owned())
            ]
        );
        assert_eq!(declaration_named(scoped, "t").unwrap().name, "N.t");
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
        let inline = "theorem a : True := trivial @[simp] theorem b : True := by\n  trivial\n";
        let b = declaration_named(inline, "b").unwrap();
        assert_eq!(
            (b.command.start, b.body),
            (p(0, 28), (p(0, 56), p(1, 9))),
            "a command Lean begins inside a line"
        );
        assert_eq!(
            declaration_named(inline, "a").unwrap().body,
            (p(0, 20), p(0, 27))
        );
    }
}
