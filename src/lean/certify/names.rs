//! Theorem names as Lean has them: a name written by a caller read into its components, the
//! full names it may stand for in a file, and components printed back.
//!
//! Contract:
//! 1. A written name is its components between `.`s, each `«…»`-quoted or plain; the quotes
//!    are removed (`«main»` is `main`: guillemets only quote). An empty component, or an
//!    unclosed `«`, is no name.
//! 2. The candidates for a written name in a file are the name as written, then the name under
//!    each namespace the file enters (`namespace A.B` inside `namespace C` enters `C.A.B`),
//!    without repeats. They are only candidates: Lean's environment decides which exist (the
//!    checker looks each up exactly), so a scope misread here costs a candidate, never a
//!    wrong theorem.
//! 3. Components are printed as `Name.toString` does for ordinary names: `.` between them, a
//!    component quoted with `«»` when it is not an identifier.

use crate::lean::syntax::code_words;

/// The components of `written` (see the contract, 1).
pub fn components(written: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut had_quote = false;
    for c in written.chars() {
        match c {
            '«' if !quoted => (quoted, had_quote) = (true, true),
            '»' if quoted => quoted = false,
            '.' if !quoted => {
                if current.is_empty() {
                    return None;
                }
                parts.push(std::mem::take(&mut current));
                had_quote = false;
            }
            c => current.push(c),
        }
    }
    if quoted || (current.is_empty() && !had_quote) {
        return None;
    }
    parts.push(current);
    Some(parts)
}

/// The namespaces `text` enters, in order of first entry (see the contract, 2).
pub fn namespaces(text: &str) -> Vec<Vec<String>> {
    let words = code_words(text);
    // Each open scope: the components it added to the namespace (0 for a section or `mutual`).
    let mut scopes: Vec<usize> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut entered: Vec<Vec<String>> = Vec::new();
    for (k, word) in words.iter().enumerate() {
        match word.text.as_str() {
            "namespace" => {
                let next = words.get(k + 1).map(|w| w.text.as_str());
                let Some(added) = next.and_then(components) else {
                    continue;
                };
                scopes.push(added.len());
                current.extend(added);
                if !entered.contains(&current) {
                    entered.push(current.clone());
                }
            }
            "section" | "mutual" => scopes.push(0),
            "end" => {
                let popped = scopes.pop().unwrap_or(0);
                current.truncate(current.len().saturating_sub(popped));
            }
            _ => {}
        }
    }
    entered
}

/// The candidates for `written` in `text` (see the contract, 2); none when it is no name.
pub fn candidates(text: &str, written: &str) -> Vec<Vec<String>> {
    let Some(name) = components(written) else {
        return Vec::new();
    };
    let mut out = vec![name.clone()];
    for namespace in namespaces(text) {
        let full: Vec<String> = namespace.into_iter().chain(name.iter().cloned()).collect();
        if !out.contains(&full) {
            out.push(full);
        }
    }
    out
}

/// `components` as Lean prints them (see the contract, 3).
pub fn printed(components: &[String]) -> String {
    let plain = |c: &str| {
        let mut chars = c.chars();
        chars.next().is_some_and(|f| f.is_alphabetic() || f == '_')
            && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '\'' | '!' | '?'))
    };
    components
        .iter()
        .map(|c| {
            if plain(c) {
                c.clone()
            } else {
                format!("«{c}»")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&[&str]]) -> Vec<Vec<String>> {
        list.iter()
            .map(|n| n.iter().map(|c| (*c).to_owned()).collect())
            .collect()
    }

    #[test]
    fn guillemets_only_quote() {
        assert_eq!(components("«main»"), Some(vec!["main".to_owned()]));
        assert_eq!(
            components("N.«a b».c"),
            Some(vec!["N".into(), "a b".into(), "c".into()])
        );
        assert_eq!(components("N..c"), None);
        assert_eq!(components("«open"), None);
        assert_eq!(components(""), None);
        assert_eq!(printed(&names(&[&["N", "a b", "c"]])[0]), "N.«a b».c");
    }

    #[test]
    fn candidates_follow_the_namespaces_the_file_enters() {
        let text = "namespace A\nmutual\ntheorem x : True := trivial\nend\n\
                    theorem main : True := trivial\nnamespace B.C\nend B.C\nend A\n\
                    section\nnamespace D\nend D\nend\n";
        assert_eq!(namespaces(text), names(&[&["A"], &["A", "B", "C"], &["D"]]));
        assert_eq!(
            candidates(text, "main"),
            names(&[
                &["main"],
                &["A", "main"],
                &["A", "B", "C", "main"],
                &["D", "main"]
            ])
        );
    }
}
