//! What makes a file or a theorem fail certification, each failure `{reason, message, range}`.
//!
//! Contract:
//! 1. File-level, from the project lexer (never in a comment or a string): `forbidden_declaration`
//!    for each `axiom`, `implemented_by`, `extern` or `unsafe` token (a new axiom, or code the
//!    kernel never checks standing in for a definition); `forbidden_option` for a
//!    `set_option` of an option that switches a check off: `debug.skipKernelTC` (the kernel
//!    skips type checking) and `debug.byAsSorry` (every `by` block elaborates as `sorry`).
//!    Also `forbidden_declaration`: a file that could change what certification asks Lean
//!    (`#print axioms`, `#check`, appended in a twin and run in the file's own environment):
//!    either command written as data (`syntax::quoted_commands`: in a literal, or first in a
//!    syntax quotation, as a `macro_rules`, `syntax` or `elab` that redefines it writes it),
//!    or a `command_elab` attribute (an elaborator registered for a command). The comparator
//!    replays the exported terms in the kernel and needs no such rule; the certifier's own
//!    answer does.
//! 2. A theorem's axioms: `sorryAx` is `uses_sorry`; `Lean.ofReduceBool` and
//!    `Lean.trustCompiler` (what `native_decide` adds) are `native_decide`; any other axiom
//!    outside [`PERMITTED`] is `axiom_not_allowed`.
//! 3. A range is the LSP range of what failed; `null` when the failure has no place in the file
//!    (a theorem that is gone).

use serde_json::{Value, json};

use crate::lean::syntax::{code_words, quoted_commands};
use crate::lean::text::Position;

/// The axioms a certified theorem may depend on.
pub const PERMITTED: [&str; 3] = ["propext", "Classical.choice", "Quot.sound"];

/// The axioms `native_decide` adds.
const NATIVE: [&str; 2] = ["Lean.ofReduceBool", "Lean.trustCompiler"];

/// Tokens that declare what the kernel does not check, or an elaborator for a command.
const FORBIDDEN_TOKENS: [&str; 5] = [
    "axiom",
    "implemented_by",
    "extern",
    "unsafe",
    "command_elab",
];

/// The commands certification appends (see the contract).
const ASKED_COMMANDS: [&str; 2] = ["#print", "#check"];

/// Options that switch a check off.
const FORBIDDEN_OPTIONS: [&str; 2] = ["debug.skipKernelTC", "debug.byAsSorry"];

/// A failure.
pub fn failure(reason: &str, message: String, range: Option<(Position, Position)>) -> Value {
    let range = range.map(|(start, end)| json!({"start": start.to_json(), "end": end.to_json()}));
    json!({"reason": reason, "message": message, "range": range})
}

/// The file-level failures of `text`'s tokens (see the contract).
pub fn forbidden(text: &str) -> Vec<Value> {
    let words = code_words(text);
    let mut out = Vec::new();
    for (k, word) in words.iter().enumerate() {
        let at = Some((word.start, word.end));
        if FORBIDDEN_TOKENS.contains(&word.text.as_str()) {
            let message = format!("`{}` is not allowed in a certified file", word.text);
            out.push(failure("forbidden_declaration", message, at));
        }
        if word.text == "set_option"
            && let Some(option) = words.get(k + 1)
            && FORBIDDEN_OPTIONS.contains(&option.text.as_str())
        {
            let message = format!("`set_option {}` switches a check off", option.text);
            out.push(failure(
                "forbidden_option",
                message,
                Some((word.start, option.end)),
            ));
        }
    }
    for word in quoted_commands(text, &ASKED_COMMANDS) {
        let message = format!(
            "`{}` is written as data here (syntax that may redefine it): certification asks \
             Lean with it, so a file that can change its answer cannot be certified",
            word.text
        );
        out.push(failure(
            "forbidden_declaration",
            message,
            Some((word.start, word.end)),
        ));
    }
    out.sort_by_key(|f| f["range"]["start"]["line"].as_u64());
    out
}

/// The failures of a theorem's `axioms` (see the contract).
pub fn axiom_failures(name: &str, axioms: &[String], at: (Position, Position)) -> Vec<Value> {
    let mut out = Vec::new();
    for axiom in axioms {
        let (reason, message) = if axiom == "sorryAx" {
            ("uses_sorry", format!("{name} depends on sorry (sorryAx)"))
        } else if NATIVE.contains(&axiom.as_str()) {
            (
                "native_decide",
                format!("{name} trusts the compiler ({axiom}, native_decide)"),
            )
        } else if PERMITTED.contains(&axiom.as_str()) {
            continue;
        } else {
            (
                "axiom_not_allowed",
                format!("{name} depends on the axiom {axiom}"),
            )
        };
        out.push(failure(reason, message, Some(at)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_tokens_are_code_only() {
        let text = "-- axiom\n@[implemented_by f] def g := 1\nset_option debug.skipKernelTC true\n\
                    def s := \"unsafe\"\nset_option pp.all true\n";
        let reasons: Vec<String> = forbidden(text)
            .iter()
            .map(|f| f["reason"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(reasons, ["forbidden_declaration", "forbidden_option"]);
    }

    #[test]
    fn a_file_that_can_redefine_the_asked_commands_is_forbidden() {
        let run = "#print axioms t
#check @t
";
        assert!(forbidden(run).is_empty());
        for redefines in [
            "macro_rules | `(#print axioms $x) => `(#eval 0)
",
            "elab \"#check\" : command => pure ()
",
            "@[command_elab Lean.Parser.Command.printAxioms] def f : CommandElab := fun _ => pure ()
",
        ] {
            let found = forbidden(redefines);
            assert!(!found.is_empty(), "{redefines}");
            assert!(found.iter().all(|f| f["reason"] == "forbidden_declaration"));
        }
    }
}
