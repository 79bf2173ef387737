//! What makes a file or a theorem fail certification, each failure `{reason, message, range}`.
//!
//! Contract:
//! 1. The pre-filter, from the project lexer (never in a comment or a string), refuses quickly
//!    and is never a reason to certify: `forbiddenDeclaration` for each `axiom`,
//!    `implemented_by`, `extern` or `unsafe` token (a new axiom, or code the kernel never
//!    checks standing in for a definition); `forbiddenOption` for a `set_option` of an option
//!    that switches a check off as written (`debug.skipKernelTC`, `debug.byAsSorry`). What it
//!    misses (a quoted option name, such a declaration in an import) the checker's answer
//!    catches.
//! 2. A theorem is judged from the checker's answer alone ([`judge`]), against its lock entry:
//!    `theoremMissing` when the built module's environment has no constant of its exact full
//!    name, or it is declared by another module (an import); `notATheorem` when it is not a
//!    theorem; `statementChanged` when its statement closure's hash differs from the locked
//!    one; of its axioms (full names), `sorryAx` is `usesSorry`, `Lean.ofReduceBool` and
//!    `Lean.trustCompiler` (what `native_decide` adds) are `nativeDecide`, any other outside
//!    [`PERMITTED`] is `axiomsNotAllowed`; a kernel replay that refused a constant is
//!    `replayFailed` (the kernel's words, bounded).
//! 3. A range is the LSP range of what failed; `null` when the failure has no place in the file
//!    (a theorem that is gone, one Lean names in a way the lexer does not find).

use serde_json::{Value, json};

use super::runner::Theorem;
use crate::lean::syntax::code_words;
use crate::lean::tail::cut;
use crate::lean::text::Position;

/// The axioms a certified theorem may depend on, by full name.
pub const PERMITTED: [&str; 3] = ["propext", "Classical.choice", "Quot.sound"];

/// The axioms `native_decide` adds.
const NATIVE: [&str; 2] = ["Lean.ofReduceBool", "Lean.trustCompiler"];

/// Tokens that declare what the kernel does not check.
const FORBIDDEN_TOKENS: [&str; 4] = ["axiom", "implemented_by", "extern", "unsafe"];

/// Options that switch a check off.
const FORBIDDEN_OPTIONS: [&str; 2] = ["debug.skipKernelTC", "debug.byAsSorry"];

/// How much of the kernel's words a `replayFailed` quotes.
const KERNEL_WORDS: usize = 2048;

/// A range in a file.
pub type Range = (Position, Position);

/// A failure.
pub fn failure(reason: &str, message: String, range: Option<Range>) -> Value {
    let range = range.map(|(start, end)| json!({"start": start.to_json(), "end": end.to_json()}));
    json!({"reason": reason, "message": message, "range": range})
}

/// The pre-filter's failures of `text` (see the contract, 1).
pub fn forbidden(text: &str) -> Vec<Value> {
    let words = code_words(text);
    let mut out = Vec::new();
    for (k, word) in words.iter().enumerate() {
        let at = Some((word.start, word.end));
        if FORBIDDEN_TOKENS.contains(&word.text.as_str()) {
            let message = format!("`{}` is not allowed in a certified file", word.text);
            out.push(failure("forbiddenDeclaration", message, at));
        }
        if word.text == "set_option"
            && let Some(option) = words.get(k + 1)
            && FORBIDDEN_OPTIONS.contains(&option.text.as_str())
        {
            let message = format!("`set_option {}` switches a check off", option.text);
            out.push(failure(
                "forbiddenOption",
                message,
                Some((word.start, option.end)),
            ));
        }
    }
    out
}

/// What a theorem is judged against: its lock entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// Its full name as Lean prints it.
    pub name: String,
    /// Its components.
    pub components: Vec<String>,
    /// Its statement closure's hash.
    pub closure_hash: String,
}

/// The failures of one theorem, from the checker's answer `found` about it in the built
/// `module` (see the contract, 2); `at` is its place in the file, when known.
pub fn judge(locked: &Locked, found: &Theorem, module: &str, at: Option<Range>) -> Vec<Value> {
    let name = &locked.name;
    let fail = |reason: &str, message: String| failure(reason, message, at);
    if !found.found {
        let message = format!("{module} declares no theorem named {name}");
        return vec![failure("theoremMissing", message, None)];
    }
    let declared_in = found.module.as_deref().unwrap_or_default();
    if declared_in != module {
        let message = format!("{name} is declared in {declared_in}, not in {module}");
        return vec![failure("theoremMissing", message, None)];
    }
    let kind = found.kind.as_deref().unwrap_or_default();
    if kind != "theorem" {
        let message = format!("{name} is now a {kind}, not a theorem");
        return vec![fail("notATheorem", message)];
    }
    let mut out = Vec::new();
    let hash = found.closure.as_ref().map(|c| c.hash.as_str());
    if hash != Some(locked.closure_hash.as_str()) {
        let message = format!(
            "{name}'s statement changed: its type, or a definition, instance or inductive it \
             names, is not what was locked (statement closure hash {} ≠ locked {})",
            hash.unwrap_or("none"),
            locked.closure_hash
        );
        out.push(fail("statementChanged", message));
    }
    let axioms = found.axioms.as_deref().unwrap_or_default();
    if axioms.iter().any(|a| a == "sorryAx") {
        out.push(fail(
            "usesSorry",
            format!("{name} depends on sorry (sorryAx)"),
        ));
    }
    let native: Vec<&String> = axioms
        .iter()
        .filter(|a| NATIVE.contains(&a.as_str()))
        .collect();
    if !native.is_empty() {
        let message = format!("{name} trusts the compiler ({native:?}, native_decide)");
        out.push(fail("nativeDecide", message));
    }
    let other: Vec<&String> = axioms
        .iter()
        .filter(|a| a.as_str() != "sorryAx" && !NATIVE.contains(&a.as_str()))
        .filter(|a| !PERMITTED.contains(&a.as_str()))
        .collect();
    if !other.is_empty() {
        let message =
            format!("{name} depends on axioms outside {PERMITTED:?} (full names): {other:?}");
        out.push(fail("axiomsNotAllowed", message));
    }
    if let Some(replay) = found.replay.as_ref().filter(|r| !r.ok) {
        let constant = replay.constant.as_deref().unwrap_or("a constant");
        let words = cut(replay.error.as_deref().unwrap_or_default(), KERNEL_WORDS);
        let message = format!("the kernel refused {constant}, which {name} depends on: {words}");
        out.push(fail("replayFailed", message));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::certify::runner::{Closure, Replay};

    #[test]
    fn forbidden_tokens_are_code_only() {
        let text = "-- axiom\n@[implemented_by f] def g := 1\nset_option debug.skipKernelTC true\n\
                    def s := \"unsafe\"\nset_option pp.all true\n";
        let reasons: Vec<String> = forbidden(text)
            .iter()
            .map(|f| f["reason"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(reasons, ["forbiddenDeclaration", "forbiddenOption"]);
    }

    fn honest() -> Theorem {
        Theorem {
            name: vec!["N".into(), "t".into()],
            printed: "N.t".into(),
            found: true,
            kind: Some("theorem".into()),
            module: Some("M".into()),
            ty: Some("True".into()),
            closure: Some(Closure {
                hash: "h".into(),
                count: 1,
                own: vec![],
            }),
            axioms: Some(vec!["propext".into(), "Classical.choice".into()]),
            replay: Some(Replay {
                ok: true,
                checked: Some(1),
                constant: None,
                error: None,
            }),
        }
    }

    fn reasons(found: &Theorem) -> Vec<String> {
        let locked = Locked {
            name: "N.t".into(),
            components: vec!["N".into(), "t".into()],
            closure_hash: "h".into(),
        };
        judge(&locked, found, "M", None)
            .iter()
            .map(|f| f["reason"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn each_fact_of_the_answer_has_its_own_reason() {
        assert!(reasons(&honest()).is_empty());
        let with = |change: &dyn Fn(&mut Theorem)| {
            let mut t = honest();
            change(&mut t);
            reasons(&t)
        };
        assert_eq!(with(&|t| t.found = false), ["theoremMissing"]);
        assert_eq!(with(&|t| t.module = Some("Imp".into())), ["theoremMissing"]);
        assert_eq!(with(&|t| t.kind = Some("def".into())), ["notATheorem"]);
        assert_eq!(
            with(&|t| t.closure.as_mut().unwrap().hash = "g".into()),
            ["statementChanged"]
        );
        assert_eq!(
            with(&|t| t.axioms = Some(vec!["sorryAx".into()])),
            ["usesSorry"]
        );
        assert_eq!(
            with(&|t| t.axioms = Some(vec!["Lean.ofReduceBool".into()])),
            ["nativeDecide"]
        );
        // Full names: an axiom `Foo.propext` is not `propext`.
        assert_eq!(
            with(&|t| t.axioms = Some(vec!["Foo.propext".into()])),
            ["axiomsNotAllowed"]
        );
        assert_eq!(
            with(&|t| t.replay.as_mut().unwrap().ok = false),
            ["replayFailed"]
        );
    }
}
