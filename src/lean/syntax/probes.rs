//! What text the host gives Lean of its own (a run's probe, a `lean_try_edit` candidate) writes:
//! a command that would end Lean's reading of the file, a `sorry`.
//!
//! Contract:
//! 1. [`terminal_commands`]: Lean stops reading a file at a terminal command
//!    (`Parser.isTerminalCommand`: `#exit`, an `import` after the header), so nothing after it is
//!    checked or reported. Found in the code of a text (never in a comment or a literal): every
//!    `#exit`, wherever it stands (inside a proof, Lean's parser recovers at it as a command;
//!    only a command-level `set_option … in #exit` is harmless, and refusing that too costs
//!    nothing), and every `import` keyword at or after the byte where the file's header ends
//!    (the caller knows where the text stands in its file; `header::header_end`).
//! 2. [`writes_sorry`]: whether the code of a text holds a `sorry` or `admit` token of its own.

use super::Found;
use super::lexer::Lexed;
use crate::lean::text::Position;

/// A terminal command found in a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminal {
    /// The command's keyword: `#exit` or `import`.
    pub command: &'static str,
    /// Where it is, in the text searched.
    pub at: Position,
}

/// The terminal commands of `text`, in order, where the file's header ends at byte
/// `header_end` of `text` (0: `text` lies after it; see the contract).
pub fn terminal_commands(text: &str, header_end: usize) -> Vec<Terminal> {
    let lexed = Lexed::new(text);
    let mut found = Vec::new();
    for &(start, end) in &lexed.words {
        let command = if lexed.is_keyword((start, end), "exit")
            && start > 0
            && lexed.chars[start - 1] == '#'
            && lexed.is_code(start - 1)
        {
            "#exit"
        } else if lexed.is_keyword((start, end), "import") {
            let byte: usize = lexed.chars[..start].iter().map(|c| c.len_utf8()).sum();
            if byte < header_end {
                continue;
            }
            "import"
        } else {
            continue;
        };
        let at = if command == "#exit" { start - 1 } else { start };
        found.push(Terminal {
            command,
            at: lexed.positions[at],
        });
    }
    found
}

/// Whether the code of `text` holds a `sorry` or `admit` token (see the contract).
pub fn writes_sorry(text: &str) -> bool {
    let lexed = Lexed::new(text);
    lexed.found.iter().any(|token| token.found == Found::Sorry)
        || lexed
            .words
            .iter()
            .any(|&word| lexed.is_keyword(word, "admit"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(text: &str, header_end: usize) -> Vec<(&'static str, u32, u32)> {
        terminal_commands(text, header_end)
            .into_iter()
            .map(|t| (t.command, t.at.line, t.at.character))
            .collect()
    }

    #[test]
    fn exit_anywhere_and_imports_after_the_header_are_terminal() {
        assert_eq!(commands("rfl\n#exit", 0), [("#exit", 1, 0)]);
        assert_eq!(commands("  exact h\n  #exit -- stop", 0), [("#exit", 1, 2)]);
        assert_eq!(
            commands("set_option pp.all true in #exit", 0),
            [("#exit", 0, 26)]
        );
        assert!(commands("-- #exit\n/- #exit -/ def s := \"#exit\"", 0).is_empty());
        assert!(commands("def exit := 1\n#check exit", 0).is_empty());
        let text = "import A\n\ndef x := 1\nimport B\n";
        assert_eq!(commands(text, 10), [("import", 3, 0)]);
        assert!(
            commands("import A\n", 9).is_empty(),
            "an import in the header is none"
        );
        assert_eq!(commands("import A\n", 0), [("import", 0, 0)], "after it");
    }

    #[test]
    fn sorry_and_admit_tokens_of_the_code() {
        assert!(writes_sorry("exact sorry"));
        assert!(writes_sorry("· admit"));
        assert!(!writes_sorry("exact sorry_lemma -- sorry"));
        assert!(!writes_sorry("exact Foo.admit \"sorry\""));
    }
}
