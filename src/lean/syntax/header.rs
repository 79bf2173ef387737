//! A file's header: the modules it imports directly.
//!
//! Contract: [`imports`] reads the header the way Lean's `Module.header` is written — an
//! optional `module` and `prelude`, then `import` commands, each with its modifiers (`public`,
//! `private`, `meta`, `all`, `runtime`) before the module name — through the one lexer (so
//! comments anywhere in it are skipped), and stops at the first code that is not part of it. It
//! names each module once, in order. Only the start of a long text is lexed: the header is its
//! first code, so a prefix is read, longer only while the header runs to its end. A name that
//! starts with a `«…»` part is not read (the lexer takes it for a literal): the header ends
//! there.

use super::lexer::Lexed;

/// Words that may stand in a header besides the module names.
const HEADER_WORDS: [&str; 7] = [
    "module", "prelude", "public", "private", "meta", "all", "runtime",
];

/// How much of a text is lexed first (see the contract).
const PREFIX: usize = 4096;

/// The modules `text` imports directly, in order, each once (see the contract).
pub fn imports(text: &str) -> Vec<String> {
    let mut prefix = PREFIX;
    loop {
        let cut = cut_at_line(text, prefix);
        let (modules, ended) = read(&text[..cut]);
        if ended || cut == text.len() {
            return modules;
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

/// The modules of the header of `text`, and whether the header ended inside it.
fn read(text: &str) -> (Vec<String>, bool) {
    let lexed = Lexed::new(text);
    let mut words = lexed.words.iter().peekable();
    let mut modules: Vec<String> = Vec::new();
    let mut after_import = false;
    let mut at = 0;
    loop {
        while at < lexed.chars.len() && !lexed.is_code(at) {
            at += 1;
        }
        if at == lexed.chars.len() {
            return (modules, false);
        }
        while words.peek().is_some_and(|&&(from, _)| from < at) {
            words.next();
        }
        let Some(&&(from, to)) = words.peek().filter(|&&&(from, _)| from == at) else {
            // Code that is no word (`:=`, a bracket): the header is over.
            return (modules, true);
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
            return (modules, true);
        }
        at = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
