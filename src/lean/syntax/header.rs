//! A file's header: the modules it imports directly, and where it stands.
//!
//! Contract: [`imports`] reads the header the way Lean's `Module.header` is written — an
//! optional `module` and `prelude`, then `import` commands, each with its modifiers (`public`,
//! `private`, `meta`, `all`, `runtime`) before the module name — through the one lexer (so
//! comments anywhere in it are skipped), and stops at the first code that is not part of it. It
//! names each module once, in order. [`span`] is where the header stands: from its first token
//! (where Lean's `Elab.processHeader` logs a failure to import, `header.getPos?`) to the end of
//! its last, `None` for a file without one; [`header_end`] the byte just past it (0 without
//! one): an `import` from there on is no header's. Only the start of a long text is lexed: the header
//! is its first code, so a prefix is read, longer only while the header runs to its end. A name
//! that starts with a `«…»` part is not read (the lexer takes it for a literal): the header ends
//! there.

use super::lexer::Lexed;
use crate::lean::text::{Position, offset_of};

/// Words that may stand in a header besides the module names.
const HEADER_WORDS: [&str; 7] = [
    "module", "prelude", "public", "private", "meta", "all", "runtime",
];

/// How much of a text is lexed first (see the contract).
const PREFIX: usize = 4096;

/// The modules `text` imports directly, in order, each once (see the contract).
pub fn imports(text: &str) -> Vec<String> {
    header(text).modules
}

/// Where the header of `text` stands, from its first token to the end of its last (see the
/// contract).
pub fn span(text: &str) -> Option<(Position, Position)> {
    header(text).span
}

/// The byte just past the header of `text`, 0 when it has none (see the contract).
pub fn header_end(text: &str) -> usize {
    span(text).map_or(0, |(_, end)| offset_of(text, end))
}

/// A header as read.
struct Header {
    /// The modules, in order, each once.
    modules: Vec<String>,
    /// From the first token to the end of the last.
    span: Option<(Position, Position)>,
    /// Whether the header ended inside the text read.
    ended: bool,
}

fn header(text: &str) -> Header {
    let mut prefix = PREFIX;
    loop {
        let cut = cut_at_line(text, prefix);
        let header = read(&text[..cut]);
        if header.ended || cut == text.len() {
            return header;
        }
        prefix = prefix.saturating_mul(4);
    }
}

/// The end of the first line that ends at or after `bytes` (the whole text if none does).
fn cut_at_line(text: &str, bytes: usize) -> usize {
    if bytes >= text.len() {
        return text.len();
    }
    text[bytes..]
        .find('\n')
        .map_or(text.len(), |at| bytes + at + 1)
}

/// The header of `text`, and whether it ended inside it.
fn read(text: &str) -> Header {
    let lexed = Lexed::new(text);
    let mut words = lexed.words.iter().peekable();
    let mut modules: Vec<String> = Vec::new();
    let mut span: Option<(usize, usize)> = None;
    let mut after_import = false;
    let mut at = 0;
    let done = |modules, span: Option<(usize, usize)>, ended| Header {
        modules,
        span: span.map(|(from, to)| (lexed.positions[from], lexed.positions[to])),
        ended,
    };
    loop {
        while at < lexed.chars.len() && !lexed.is_code(at) {
            at += 1;
        }
        if at == lexed.chars.len() {
            return done(modules, span, false);
        }
        while words.peek().is_some_and(|&&(from, _)| from < at) {
            words.next();
        }
        let Some(&&(from, to)) = words.peek().filter(|&&&(from, _)| from == at) else {
            // Code that is no word (`:=`, a bracket): the header is over.
            return done(modules, span, true);
        };
        let word: String = lexed.chars[from..to].iter().collect();
        if word == "import" {
            after_import = true;
        } else if HEADER_WORDS.contains(&word.as_str()) {
            // A modifier, before or after `import` (Lean reads these words so there).
        } else if after_import {
            if !modules.contains(&word) {
                modules.push(word);
            }
            after_import = false;
        } else {
            return done(modules, span, true);
        }
        span = Some((span.map_or(from, |(first, _)| first), to));
        at = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_ends_past_its_last_token() {
        let text = "-- c\nimport A\n\ntheorem t : True := trivial\n";
        assert_eq!(header_end(text), text.find("\n\ntheorem").unwrap());
        assert_eq!(header_end("import A\n"), 8, "all header");
        assert_eq!(header_end("def x := 1"), 0);
    }

    #[test]
    fn the_header_names_its_imports_in_order() {
        let text = "/- A file. -/\nmodule -- new style\n\nprelude\npublic import Fixture.Basic\n\
                    import all Fixture.Uses -- comment\nmeta import Lean.Elab\n\
                    import Init\nimport Fixture.Basic\n\ndef x := 1\nimport Not.This\n";
        assert_eq!(
            imports(text),
            ["Fixture.Basic", "Fixture.Uses", "Lean.Elab", "Init"]
        );
    }

    #[test]
    fn the_header_stands_from_its_first_token_to_the_end_of_its_last() {
        let text = "/- A file. -/\n-- more\n  import Fixture.Basik -- c\nimport A\n\ndef x := 1\n";
        assert_eq!(span(text), Some((Position::new(2, 2), Position::new(3, 8))));
        assert_eq!(span("def x := 1\n"), None);
        assert_eq!(span(""), None);
    }

    #[test]
    fn no_header_no_imports() {
        assert!(imports("def x := 1\n").is_empty());
        assert!(imports("").is_empty());
        assert!(imports("-- import A\n/- import B -/\ntheorem t : True := trivial\n").is_empty());
    }

    #[test]
    fn a_long_header_is_read_whole() {
        let mut text = String::from("/-\n");
        text.push_str(&"a comment line longer than nothing\n".repeat(400));
        text.push_str("-/\nimport A.B\nimport C\n\ndef x := 1\n");
        assert_eq!(imports(&text), ["A.B", "C"]);
        let many: String = (0..600).map(|n| format!("import M{n}\n")).collect();
        assert_eq!(imports(&many).len(), 600);
    }
}
