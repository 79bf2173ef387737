//! The files a text reads while Lean elaborates it: `include_str`.
//!
//! Contract: [`includes`] finds each `include_str` token of the code (never one in a comment or a
//! literal, nor a field `x.include_str`) and reads the path term after it the way Lean's
//! `elabIncludeStr` (`Lean/Elab/BuiltinTerm.lean`) evaluates it, where that needs no evaluation:
//! a string literal, or string literals joined by `/` (`System.FilePath`'s `/`), each with its
//! escapes. The path is as written: Lean joins it to the directory of the file (`srcDir / path`,
//! an absolute path replacing it). Any other term (a name, a computed path, a raw string) is an
//! include whose path is unknown ([`Include::path`] `None`). Each include also says where its path
//! term ends, in bytes: Lean may reuse what it read for a later text that agrees up to there.

use super::lexer::{Class, Lexed};

/// One `include_str` of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// The path as the text writes it, when it is literals alone.
    pub path: Option<String>,
    /// The byte offset just past the path term (past `include_str` when it is unknown).
    pub end: usize,
}

/// The token Lean's `include_str` syntax starts with (`Init/Notation.lean`).
const KEYWORD: &str = "include_str";

/// Every `include_str` of `text`'s code, in text order (see the contract).
pub fn includes(text: &str) -> Vec<Include> {
    if !text.contains(KEYWORD) {
        return Vec::new();
    }
    let lexed = Lexed::new(text);
    let bytes = byte_offsets(&lexed.chars);
    lexed
        .words
        .iter()
        .filter(|&&word| lexed.is_keyword(word, KEYWORD))
        .map(|&(_, to)| match literal_path(&lexed, to) {
            Some((path, end)) => Include {
                path: Some(path),
                end: bytes[end],
            },
            None => Include {
                path: None,
                end: bytes[to],
            },
        })
        .collect()
}

/// The byte offset of each character, and of the text's end.
fn byte_offsets(chars: &[char]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(chars.len() + 1);
    let mut at = 0;
    for c in chars {
        offsets.push(at);
        at += c.len_utf8();
    }
    offsets.push(at);
    offsets
}

/// The path of literals joined by `/` from character `at` on, and the character just past it.
fn literal_path(lexed: &Lexed, at: usize) -> Option<(String, usize)> {
    let mut path = String::new();
    let mut at = skip_blank(lexed, at);
    loop {
        let (part, end) = string_literal(lexed, at)?;
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(&part);
        let next = skip_blank(lexed, end);
        if lexed.chars.get(next) == Some(&'/') && lexed.classes[next] == Class::Code {
            at = skip_blank(lexed, next + 1);
        } else {
            return Some((path, end));
        }
    }
}

/// The first character from `at` that is neither blank space nor a comment.
fn skip_blank(lexed: &Lexed, mut at: usize) -> usize {
    while at < lexed.chars.len() {
        let blank = match lexed.classes[at] {
            Class::BlockComment | Class::LineComment => true,
            Class::Code => lexed.chars[at].is_whitespace(),
            Class::Literal => false,
        };
        if !blank {
            break;
        }
        at += 1;
    }
    at
}

/// The value of the plain string literal starting at `at` (`"…"`, no interpolation), and the
/// character just past it.
fn string_literal(lexed: &Lexed, at: usize) -> Option<(String, usize)> {
    let chars = &lexed.chars;
    if chars.get(at) != Some(&'"') || lexed.classes[at] != Class::Literal {
        return None;
    }
    if at > 0 && chars[at - 1] == '!' {
        return None;
    }
    let mut value = String::new();
    let mut i = at + 1;
    loop {
        match *chars.get(i)? {
            '"' => return Some((value, i + 1)),
            '\\' => {
                let (c, len) = escape(&chars[i + 1..])?;
                value.extend(c);
                i += 1 + len;
            }
            c => {
                value.push(c);
                i += 1;
            }
        }
    }
}

/// A string escape after its `\` (Lean's `quoteCore` set): the character (none for a line
/// continuation) and how many characters it took.
fn escape(rest: &[char]) -> Option<(Option<char>, usize)> {
    let hex = |digits: &[char]| {
        let text: String = digits.iter().collect();
        u32::from_str_radix(&text, 16).ok().and_then(char::from_u32)
    };
    Some(match *rest.first()? {
        'n' => (Some('\n'), 1),
        't' => (Some('\t'), 1),
        'r' => (Some('\r'), 1),
        '\\' => (Some('\\'), 1),
        '"' => (Some('"'), 1),
        '\'' => (Some('\''), 1),
        'x' => (Some(hex(rest.get(1..3)?)?), 3),
        'u' => (Some(hex(rest.get(1..5)?)?), 5),
        '\n' => {
            let blank = rest[1..].iter().take_while(|c| c.is_whitespace()).count();
            (None, 1 + blank)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<Option<String>> {
        includes(text).into_iter().map(|i| i.path).collect()
    }

    #[test]
    fn literal_paths_are_read_and_joined() {
        let text = "def a := include_str \"data/a.txt\"\n\
                    def b := include_str \"data\" / \"b.txt\"\n\
                    def c := include_str /- here -/ \"c\\u0041.txt\"\n";
        assert_eq!(
            paths(text),
            [
                Some("data/a.txt".to_owned()),
                Some("data/b.txt".to_owned()),
                Some("cA.txt".to_owned())
            ]
        );
        let first = &includes(text)[0];
        assert_eq!(&text[..first.end], "def a := include_str \"data/a.txt\"");
    }

    #[test]
    fn comments_literals_and_fields_are_no_includes() {
        let text = "-- include_str \"a\"\n/- include_str \"b\" -/\ndef s := \"include_str\"\n\
                    def t := x.include_str\n";
        assert!(includes(text).is_empty());
        assert!(includes("def x := 1\n").is_empty());
    }

    #[test]
    fn a_computed_path_is_unknown() {
        let text = "def p := \"a\"\ndef s := include_str p\ndef r := include_str r\"raw\"\n\
                    def i := include_str s!\"{p}\"\n";
        assert_eq!(paths(text), [None, None, None]);
        let found = includes(text);
        assert_eq!(
            &text[..found[0].end],
            "def p := \"a\"\ndef s := include_str"
        );
    }

    #[test]
    fn offsets_are_bytes() {
        let text = "-- ünïcödé\ndef s := include_str \"é.txt\"\n";
        let found = includes(text);
        assert_eq!(found[0].path.as_deref(), Some("é.txt"));
        assert!(text[..found[0].end].ends_with("\"é.txt\""));
    }
}
