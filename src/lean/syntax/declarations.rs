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
//! 3. [`declaration_named`] finds a declaration by name: the word after its keyword (`def`,
//!    `theorem`, `lemma`, `abbrev`, `instance`, `example`, `opaque`, `axiom`, `structure`,
//!    `class`, `inductive`), after attributes and modifiers, as written or with the namespaces
//!    around it (`namespace`/`section`/`end` commands; `_root_.` opts out). A name that two
//!    declarations answer to is ambiguous unless one of them has it as its full name. Its body
//!    range runs from the first code after `:=` or `where` (or from the `|`) to just past the
//!    command's last code. A declaration's keyword may follow `… in` prefixes (`set_option … in`,
//!    `open … in`, `#guard_msgs … in`), and `mutual … end` is a scope that adds no namespace.
//! 4. [`declarations_in`]: the declarations whose commands meet a range, each with its full name,
//!    or none for one Lean names itself (an `example`, an `instance` without a name); commands
//!    that declare nothing are left out.

use super::commands::lines_of;
use super::lexer::{Class, Lexed};
use crate::lean::text::Position;

/// Keywords that introduce a named declaration.
const KEYWORDS: [&str; 12] = [
    "def",
    "theorem",
    "lemma",
    "abbrev",
    "instance",
    "example",
    "opaque",
    "axiom",
    "structure",
    "class",
    "inductive",
    "coinductive",
];

/// Words that may stand before a declaration's keyword.
const MODIFIERS: [&str; 9] = [
    "private",
    "protected",
    "public",
    "noncomputable",
    "partial",
    "unsafe",
    "nonrec",
    "scoped",
    "local",
];

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

/// A declaration among a text's commands (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// Its command.
    pub command: Command,
    /// Its full name; `None` when Lean names it itself (`example`, an `instance` without one).
    pub name: Option<String>,
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

/// The declaration `name` (see the contract).
pub fn declaration_named(text: &str, name: &str) -> Result<Named, NotFound> {
    let lexed = Lexed::new(text);
    let cuts = lines_of(&lexed);
    let mut found: Vec<(String, bool, Command)> = Vec::new();
    for (command, declares) in commands(&lexed, &cuts) {
        let Some(Some((written, full))) = declares else {
            continue;
        };
        let answers = full == name || written == name || full.ends_with(&format!(".{name}"));
        if answers {
            found.push((full.clone(), full == name, command));
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

/// The declarations whose commands meet `[from, to)` (see the contract), in order.
pub fn declarations_in(text: &str, from: Position, to: Position) -> Vec<Declared> {
    let lexed = Lexed::new(text);
    let cuts = lines_of(&lexed);
    commands(&lexed, &cuts)
        .into_iter()
        .filter(|(command, _)| command.start < to.max(from) && command.end > from)
        .filter_map(|(command, declares)| {
            Some(Declared {
                command,
                name: declares?.map(|(_, full)| full),
            })
        })
        .collect()
}

/// What a command declares: nothing; a declaration Lean names itself; or a name, as written and
/// in full.
type Declares = Option<Option<(String, String)>>;

/// Each command of the text, with what it declares (see the contract).
fn commands(lexed: &Lexed, cuts: &[u32]) -> Vec<(Command, Declares)> {
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut out = Vec::with_capacity(cuts.len());
    for k in 0..cuts.len() {
        let command = command(lexed, cuts, k, k);
        let words = words_between(lexed, command.start, command.code_end);
        match words.first().map(String::as_str) {
            Some("namespace") => scopes.push(words.get(1).cloned()),
            Some("section" | "mutual") => scopes.push(None),
            Some("end") => {
                scopes.pop();
            }
            _ => {}
        }
        let declares = declared_name(lexed, command).map(|written| {
            written.map(|written| {
                let full = match written.strip_prefix("_root_.") {
                    Some(rooted) => rooted.to_owned(),
                    None => {
                        let mut parts: Vec<&str> =
                            scopes.iter().flatten().map(String::as_str).collect();
                        parts.push(&written);
                        parts.join(".")
                    }
                };
                (written, full)
            })
        });
        out.push((command, declares));
    }
    out
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

/// The words of the code between two positions, in order.
fn words_between(lexed: &Lexed, from: Position, to: Position) -> Vec<String> {
    let (from, to) = (index_of(lexed, from), index_of(lexed, to));
    lexed
        .words
        .iter()
        .filter(|w| w.0 >= from && w.1 <= to)
        .map(|&(a, b)| lexed.chars[a..b].iter().collect())
        .collect()
}

/// The name a declaration command declares, as written: `None` when the command declares
/// nothing, `Some(None)` when Lean names the declaration itself (see the contract).
fn declared_name(lexed: &Lexed, command: Command) -> Option<Option<String>> {
    let (from, to) = (
        index_of(lexed, command.start),
        index_of(lexed, command.code_end),
    );
    let words: Vec<(usize, usize)> = lexed
        .words
        .iter()
        .copied()
        .filter(|w| w.0 >= from && w.1 <= to)
        .collect();
    let text = |w: (usize, usize)| lexed.chars[w.0..w.1].iter().collect::<String>();
    let mut depth = 0usize;
    let mut previous_end = from;
    let mut k = 0;
    while let Some(&word) = words.get(k) {
        k += 1;
        // Attributes (`@[simp, foo]`) are skipped by their brackets.
        for i in previous_end..word.0 {
            if lexed.classes[i] == Class::Code {
                match lexed.chars[i] {
                    '[' => depth += 1,
                    ']' => depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        previous_end = word.1;
        if depth > 0 {
            continue;
        }
        let word_text = text(word);
        if MODIFIERS.contains(&word_text.as_str()) {
            continue;
        }
        if !KEYWORDS.contains(&word_text.as_str()) {
            // An `… in` prefix (`set_option o v in`, `#guard_msgs (drop warning) in`) scopes
            // the command after it; any other word begins a command that declares nothing.
            let scoped = words[k..].iter().position(|&w| lexed.is_keyword(w, "in"))?;
            k += scoped + 1;
            previous_end = words[k - 1].1;
            continue;
        }
        if word_text == "example" {
            return Some(None);
        }
        let Some(next) = words.get(k) else {
            return Some(None);
        };
        let adjacent = (word.1..next.0).all(|i| lexed.chars[i].is_whitespace());
        return Some(adjacent.then(|| text(*next)));
    }
    None
}

/// The index of the character at `at` (the text's end for a position past it).
fn index_of(lexed: &Lexed, at: Position) -> usize {
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
    }
}
