//! What a command declares, read from the lexer: its keyword, its name as written, and its full
//! name in the scopes the commands before it opened.
//!
//! Contract:
//! 1. [`command_word`]: a command's first word past its attributes (`@[…]`), modifiers
//!    (`private`, `protected`, `noncomputable`, …) and scoping prefixes (`set_option`, `open`,
//!    `attribute`, `variable`, `include` or `omit` up to the keyword `in`). [`declared`]: a
//!    declaration's first word is its keyword (`def`, `theorem`, `lemma`, `abbrev`, `instance`,
//!    `example`, `opaque`, `axiom`, `structure`, `class`, `inductive`, `coinductive`; `class
//!    inductive` and `class abbrev` are `class`es); any other command declares nothing.
//! 2. Its name follows the keyword after blank space (after an `instance`'s `(priority := …)`):
//!    identifier parts and `«…»` parts joined by `.`, as written. An `example`, an anonymous
//!    `instance` and a keyword followed by anything else have none.
//! 3. [`Scopes`]: `namespace N` opens the namespace `N`; `section` (named or not, after
//!    modifiers and attributes, as `noncomputable section`) and `mutual` open a scope that names
//!    nothing; `end` closes the innermost scope open. A declaration's full name is the open
//!    namespaces' names, then its own; a name written `_root_.N` is `N`, from the root.

use super::lexer::{Class, Lexed, is_ident_rest, is_ident_start};

/// Keywords that introduce a declaration.
pub const KEYWORDS: [&str; 12] = [
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

/// Commands that scope the command after them when they end in `in`.
const PREFIXES: [&str; 6] = [
    "set_option",
    "open",
    "attribute",
    "variable",
    "include",
    "omit",
];

/// Words that may stand before a declaration's keyword (or `section`).
pub const MODIFIERS: [&str; 9] = [
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

/// What a command declares (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// Its keyword.
    pub kind: &'static str,
    /// Its name as written, if it has one.
    pub name: Option<Written>,
}

/// A name as written, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Its text.
    pub text: String,
    /// The index of its first character.
    pub from: usize,
    /// Just past its last character.
    pub to: usize,
}

/// The word of the command of characters `[from, to)` that says what it is: past its
/// attributes, modifiers and scoping prefixes, a declaration's keyword, or the first word of
/// another command (see the contract).
pub fn command_word(lexed: &Lexed, from: usize, to: usize) -> Option<(usize, usize)> {
    let mut words = outside_brackets(lexed, from, to).filter(|&w| !is_modifier(lexed, w));
    loop {
        let word = words.next()?;
        let prefix = PREFIXES.iter().any(|p| lexed.is_keyword(word, p));
        if !(prefix && words.any(|w| lexed.is_keyword(w, "in"))) {
            return Some(word);
        }
    }
}

/// What the command of characters `[from, to)` declares, if it declares (see the contract).
pub fn declared(lexed: &Lexed, from: usize, to: usize) -> Option<Declaration> {
    let word = command_word(lexed, from, to)?;
    let &kind = KEYWORDS.iter().find(|&&k| lexed.is_keyword(word, k))?;
    let mut after = word.1;
    if kind == "class" {
        let next = lexed
            .words
            .get(lexed.words.partition_point(|w| w.0 < after));
        let next = next.filter(|&&w| {
            (lexed.is_keyword(w, "inductive") || lexed.is_keyword(w, "abbrev"))
                && lexed.chars[after..w.0].iter().all(|c| c.is_whitespace())
        });
        after = next.map_or(after, |w| w.1);
    }
    let mut at = skip_blank(lexed, after, to);
    if kind == "instance" && lexed.chars.get(at) == Some(&'(') {
        at = skip_blank(lexed, closing(lexed, at, to), to);
    }
    Some(Declaration {
        kind,
        name: name_at(lexed, at, to),
    })
}

/// The first word of the command `[from, to)` past its attributes and modifiers, if it has one.
pub fn first_word(lexed: &Lexed, from: usize, to: usize) -> Option<(usize, usize)> {
    outside_brackets(lexed, from, to).find(|&w| !is_modifier(lexed, w))
}

/// The scopes open at a command (see the contract).
#[derive(Debug, Clone, Default)]
pub struct Scopes(Vec<Option<String>>);

impl Scopes {
    /// Opens or closes what the command `[from, to)` opens or closes.
    pub fn enter(&mut self, lexed: &Lexed, from: usize, to: usize) {
        let Some(first) = first_word(lexed, from, to) else {
            return;
        };
        if lexed.is_keyword(first, "namespace") {
            let next = lexed.words.partition_point(|w| w.0 < first.1);
            let name = lexed.words.get(next).filter(|w| w.1 <= to);
            self.0
                .push(name.map(|&(a, b)| lexed.chars[a..b].iter().collect()));
        } else if lexed.is_keyword(first, "section") || lexed.is_keyword(first, "mutual") {
            self.0.push(None);
        } else if lexed.is_keyword(first, "end") {
            self.0.pop();
        }
    }

    /// The full name of a declaration named `written` here.
    pub fn full(&self, written: &str) -> String {
        if let Some(rooted) = written.strip_prefix("_root_.") {
            return rooted.to_owned();
        }
        let mut parts: Vec<&str> = self.0.iter().flatten().map(String::as_str).collect();
        parts.push(written);
        parts.join(".")
    }
}

/// The words of the code of `[from, to)` outside brackets (attributes, binders), in order.
fn outside_brackets(
    lexed: &Lexed,
    from: usize,
    to: usize,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut depth = 0usize;
    let mut previous_end = from;
    let first = lexed.words.partition_point(|w| w.0 < from);
    lexed.words[first..]
        .iter()
        .copied()
        .take_while(move |w| w.1 <= to)
        .filter(move |&(start, end)| {
            for i in previous_end..start {
                if lexed.classes[i] == Class::Code {
                    match lexed.chars[i] {
                        '[' | '(' | '{' | '⟨' | '⦃' => depth += 1,
                        ']' | ')' | '}' | '⟩' | '⦄' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
            }
            previous_end = end;
            depth == 0
        })
}

fn is_modifier(lexed: &Lexed, word: (usize, usize)) -> bool {
    MODIFIERS.iter().any(|m| lexed.is_keyword(word, m))
}

/// Where the first character past blank space from `at` is (`to` at most).
fn skip_blank(lexed: &Lexed, at: usize, to: usize) -> usize {
    (at..to)
        .find(|&i| !lexed.chars[i].is_whitespace())
        .unwrap_or(to)
}

/// Just past the bracket that closes the one at `open`.
fn closing(lexed: &Lexed, open: usize, to: usize) -> usize {
    let mut depth = 0usize;
    for i in open..to {
        match lexed.chars[i] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    to
}

/// The name written at `at` (see the contract, 2).
fn name_at(lexed: &Lexed, at: usize, to: usize) -> Option<Written> {
    let chars = &lexed.chars[..to];
    let starts_part = |i: usize| chars.get(i).is_some_and(|&c| is_ident_start(c) || c == '«');
    if !starts_part(at) {
        return None;
    }
    let mut end = at;
    loop {
        if chars[end] == '«' {
            end += chars[end..].iter().position(|&c| c == '»')? + 1;
        } else {
            end += chars[end..]
                .iter()
                .take_while(|&&c| is_ident_rest(c))
                .count();
        }
        if chars.get(end) == Some(&'.') && starts_part(end + 1) {
            end += 1;
        } else {
            break;
        }
    }
    Some(Written {
        text: chars[at..end].iter().collect(),
        from: at,
        to: end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the whole of `text` declares: its keyword and name as written.
    fn of(text: &str) -> Option<(&'static str, Option<String>)> {
        let lexed = Lexed::new(text);
        let declared = declared(&lexed, 0, lexed.chars.len())?;
        Some((declared.kind, declared.name.map(|n| n.text)))
    }

    fn named(kind: &'static str, name: &str) -> Option<(&'static str, Option<String>)> {
        Some((kind, Some(name.to_owned())))
    }

    #[test]
    fn a_declaration_is_read_past_what_may_stand_before_it() {
        assert_eq!(of("theorem t : True := trivial"), named("theorem", "t"));
        let prefixed =
            "/-- d -/\n@[simp, to_additive (attr := simp)] private noncomputable def f := 1";
        assert_eq!(of(prefixed), named("def", "f"));
        let scoped = "set_option maxHeartbeats 400 in\nopen Nat in\nlemma l : True := trivial";
        assert_eq!(of(scoped), named("lemma", "l"));
        assert_eq!(of("class inductive C | a"), named("class", "C"));
        assert_eq!(
            of("instance (priority := low) inst : Inhabited Nat := ⟨0⟩"),
            named("instance", "inst")
        );
        assert_eq!(
            of("instance : Inhabited Nat := ⟨0⟩"),
            Some(("instance", None))
        );
        assert_eq!(of("example : True := trivial"), Some(("example", None)));
        assert_eq!(
            of("axiom «my ax».«b c».d : False"),
            named("axiom", "«my ax».«b c».d")
        );
        assert_eq!(of("theorem x.{u} : True := trivial"), named("theorem", "x"));
        assert_eq!(of("def h' (n : Nat) := n"), named("def", "h'"));
        let scoped = "set_option x 1 in\nprivate theorem t : True := trivial";
        assert_eq!(of(scoped), named("theorem", "t"));
        assert_eq!(of("theorem"), Some(("theorem", None)));
        for other in [
            "open Nat",
            "#eval for x in [1] do pure x",
            "set_option pp.all true",
            "attribute [simp] foo",
            "notation \"x\" => 1",
            "noncomputable section",
        ] {
            assert_eq!(of(other), None, "{other}");
        }
    }

    #[test]
    fn scopes_give_full_names() {
        let text = "namespace A.B\nnoncomputable section\nmutual\nend\nend\nnamespace C\n";
        let lexed = Lexed::new(text);
        let mut scopes = Scopes::default();
        let lines: Vec<usize> = lexed.line_starts.clone();
        let mut names = Vec::new();
        for pair in lines.windows(2) {
            scopes.enter(&lexed, pair[0], pair[1]);
            names.push(scopes.full("x"));
        }
        assert_eq!(
            names,
            ["A.B.x", "A.B.x", "A.B.x", "A.B.x", "A.B.x", "A.B.C.x"]
        );
        assert_eq!(scopes.full("_root_.y"), "y");
    }
}
