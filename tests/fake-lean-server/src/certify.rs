//! What a certifier asks Lean of a file: `#print axioms X` and `#check @X`, answered from what
//! the fake knows of the file's own declarations (README, "Axioms and elaborated types").
//!
//! Contract:
//! 1. `#print axioms X` (after any `… in` prefixes; X a declaration of the file, resolved as
//!    Lean resolves a name: under each enclosing namespace, innermost first, then at the root;
//!    `_root_.X` at the root) gives the information `'X' depends on axioms: [a, b]` (full name
//!    quoted, names sorted) or `'X' does not depend on any axioms`, on the command's keyword, as
//!    Lean's `Print.lean` words it; an unknown X gives the error `unknown constant 'X'`. The
//!    listed names are full names, or, in the newer Leans' form (`FAKE_LEAN_PRINT_AXIOMS=short`:
//!    `MessageData.ofConstName`) and without `pp.fullNames`, each name's shortest suffix that
//!    names it alone at the command. After a `print-axioms "TEXT"` directive the command prints
//!    TEXT instead: the file redefined it.
//! 2. A declaration's axioms are its own and those of every declaration of the file it names
//!    (an identifier that is that declaration's name or full name, or a projection of it:
//!    `h.elim`), transitively. Its own: `sorryAx` for a `sorry`/`admit` token or an error of its
//!    own (a tactic's, or an unconditional `error` directive: Lean admits what failed with a
//!    synthetic `sorry`); `Lean.ofReduceBool` for `native_decide`; `Classical.choice`,
//!    `propext`, `Quot.sound` for an identifier under `Classical.` or `by_contra`; itself for an
//!    `axiom`; and the words of a `-- fake: axioms a b` directive on one of its lines.
//! 3. `#check @X` (alone or after `set_option pp.all true in`) gives the information `X : T` on
//!    the command's keyword: T is the type of a `-- fake: type "T"` directive on one of the
//!    declaration's lines, else its binders as a `∀ binders, type` (just the type without
//!    binders), whitespace-normalised.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::analysis::Analysis;
use crate::decl::Decl;
use crate::lexer;
use crate::outline::Command;

/// The messages of command `c`, if it is `#print axioms X` or `#check @X` (see the contract).
pub fn messages(a: &Analysis, c: &Command, out: &mut Vec<(usize, Value)>) {
    let code = a.code();
    // After its `… in` prefixes (`set_option pp.all true in` prints nothing new here).
    let start = c.body;
    let text = code[start..c.end].trim_end();
    let (keyword, rest) = if let Some(rest) = text.strip_prefix("#print axioms") {
        ("#print", rest)
    } else if let Some(rest) = text.strip_prefix("#check @") {
        ("#check", rest)
    } else {
        return;
    };
    let name = rest.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return;
    }
    let kw = (start, start + keyword.len());
    if keyword == "#print"
        && let Some(said) = redefined(a, c)
    {
        out.push((c.start, a.diagnostic(3, kw, said)));
        return;
    }
    let Some(index) = find(a, c, name) else {
        out.push((
            c.start,
            a.diagnostic(1, kw, &format!("unknown constant '{name}'")),
        ));
        return;
    };
    let d = &a.outline.decls[index];
    let full = d.full_name.clone().unwrap_or_default();
    let message = match keyword {
        "#print" => {
            let axioms = axioms(a, index);
            match axioms.is_empty() {
                true => format!("'{full}' does not depend on any axioms"),
                false => {
                    let full_names = full_names(a, c);
                    let list: Vec<String> = axioms
                        .iter()
                        .map(|x| {
                            if full_names {
                                x.clone()
                            } else {
                                shortest(a, c, x)
                            }
                        })
                        .collect();
                    format!("'{full}' depends on axioms: [{}]", list.join(", "))
                }
            }
        }
        _ => format!("{full} : {}", elaborated_type(a, d)),
    };
    out.push((c.start, a.diagnostic(3, kw, &message)));
}

/// What `#print axioms` prints after a `print-axioms "TEXT"` directive before command `c`: the
/// file redefined the command (`macro_rules`, `elab_rules`, `@[macro …]`), which the fake cannot
/// run, so the directive says what it prints.
fn redefined<'a>(a: &'a Analysis, c: &Command) -> Option<&'a str> {
    let line = a.text.line_of(c.start) as u32;
    a.directives
        .iter()
        .rfind(|d| d.name == "print-axioms" && d.target < line)
        .and_then(|d| d.str_arg(0))
}

/// Whether `#print axioms` at command `c` prints full names: always in the Leans before
/// `MessageData.ofConstName` (`FAKE_LEAN_PRINT_AXIOMS=full`, the default), else only under
/// `pp.fullNames` (set in the command's prefixes or by a `set_option` before it).
fn full_names(a: &Analysis, c: &Command) -> bool {
    let short = std::env::var("FAKE_LEAN_PRINT_AXIOMS").is_ok_and(|v| v == "short");
    let k = a
        .outline
        .commands
        .iter()
        .position(|x| x.start == c.start)
        .unwrap_or(0);
    !short || a.option("pp.fullNames", k, &[]) == Some("true")
}

/// The shortest suffix of `name` that names it alone where command `c` stands, as
/// `MessageData.ofConstName` prints a constant (`unresolveNameGlobal`), else `_root_.name`.
fn shortest(a: &Analysis, c: &Command, name: &str) -> String {
    let components: Vec<&str> = name.split('.').collect();
    (0..components.len())
        .rev()
        .map(|k| components[k..].join("."))
        .find(|suffix| {
            let meanings = resolve(a, c, suffix);
            meanings.len() == 1 && meanings.contains(name)
        })
        .unwrap_or_else(|| format!("_root_.{name}"))
}

/// What `suffix` names at command `c`, as `ResolveName.resolveGlobalName` finds it among the
/// file's declarations and the axioms the fake knows: under the innermost enclosing namespace
/// that has it, else at the root and under each `open`.
fn resolve(a: &Analysis, c: &Command, suffix: &str) -> BTreeSet<String> {
    let known = |n: &str| {
        BUILTIN_AXIOMS.contains(&n)
            || a.outline
                .decls
                .iter()
                .any(|d| d.full_name.as_deref() == Some(n))
    };
    let parts: Vec<&str> = c.ns.iter().flat_map(|n| n.split('.')).collect();
    let scoped = (1..=parts.len())
        .rev()
        .map(|n| format!("{}.{suffix}", parts[..n].join(".")))
        .find(|n| known(n));
    if let Some(scoped) = scoped {
        return BTreeSet::from([scoped]);
    }
    std::iter::once(suffix.to_owned())
        .chain(c.opens.iter().map(|o| format!("{o}.{suffix}")))
        .filter(|n| known(n))
        .collect()
}

/// The axioms the fake knows besides a file's own.
const BUILTIN_AXIOMS: [&str; 5] = [
    "sorryAx",
    "propext",
    "Classical.choice",
    "Quot.sound",
    "Lean.ofReduceBool",
];

/// Whether what follows a name in an identifier keeps it that name (`h` or `h.elim`, not `hx`).
fn dotted(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with('.')
}

/// The declaration `name` names from command `c`.
/// The declaration `name` means at command `c`, as Lean's `ResolveName.resolveGlobalName`
/// finds it: under each namespace enclosing the command, innermost first, then at the root;
/// `_root_.X` is X at the root alone.
fn find(a: &Analysis, c: &Command, name: &str) -> Option<usize> {
    let decls = &a.outline.decls;
    let named =
        |full: &str| (0..decls.len()).find(|&i| decls[i].full_name.as_deref() == Some(full));
    if let Some(root) = name.strip_prefix("_root_.") {
        return named(root);
    }
    let parts: Vec<&str> = c.ns.iter().flat_map(|n| n.split('.')).collect();
    (1..=parts.len())
        .rev()
        .find_map(|k| named(&format!("{}.{name}", parts[..k].join("."))))
        .or_else(|| named(name))
}

/// The lines of declaration `d`'s command.
fn lines(a: &Analysis, d: &Decl) -> std::ops::RangeInclusive<u32> {
    let cmd = a.outline.decl_command(d);
    a.text.line_of(cmd.start) as u32..=a.text.line_of(cmd.end.max(cmd.start)) as u32
}

/// Declaration `index`'s axioms, transitively (see the contract).
fn axioms(a: &Analysis, index: usize) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![index];
    let mut found = BTreeSet::new();
    while let Some(i) = todo.pop() {
        if !seen.insert(i) {
            continue;
        }
        let d = &a.outline.decls[i];
        found.extend(own(a, d));
        let cmd = a.outline.decl_command(d);
        let mut words: Vec<&str> = lexer::idents(a.code(), cmd.start, cmd.end)
            .into_iter()
            .map(|(x, y)| &a.code()[x..y])
            .collect();
        // The name it declares is no reference (to another declaration of that short name).
        if let Some(k) = words.iter().position(|w| Some(*w) == d.name.as_deref()) {
            words.remove(k);
        }
        let names: BTreeSet<&str> = words.into_iter().collect();
        for (j, other) in a.outline.decls.iter().enumerate() {
            let named = [&other.name, &other.full_name]
                .into_iter()
                .flatten()
                .any(|n| {
                    names
                        .iter()
                        .any(|w| w.strip_prefix(n.as_str()).is_some_and(dotted))
                });
            if j != i && other.parent.is_none() && named {
                todo.push(j);
            }
        }
    }
    found
}

/// The axioms declaration `d` uses itself (see the contract).
pub(crate) fn own(a: &Analysis, d: &Decl) -> Vec<String> {
    let code = a.code();
    let cmd = a.outline.decl_command(d);
    let has = |word| lexer::find_word(code, cmd.start, cmd.end, word).is_some();
    let mut found: Vec<String> = Vec::new();
    // An error leaves the declaration with a synthetic `sorry` (Lean's error recovery: the goals
    // left are admitted), which `collectAxioms` lists as any other.
    if has("sorry") || has("admit") || has_error(a, d) {
        found.push("sorryAx".into());
    }
    if has("native_decide") {
        found.push("Lean.ofReduceBool".into());
    }
    let classical = lexer::idents(code, cmd.start, cmd.end)
        .into_iter()
        .any(|(x, y)| code[x..y].starts_with("Classical.") || &code[x..y] == "by_contra");
    if classical {
        found.extend(["Classical.choice", "propext", "Quot.sound"].map(String::from));
    }
    if d.keyword == "axiom" {
        found.extend(d.full_name.clone());
    }
    let lines = lines(a, d);
    for directive in &a.directives {
        if directive.name == "axioms" && lines.contains(&directive.target) {
            found.extend(directive.flags.iter().cloned());
            found.extend(
                directive
                    .positional
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from)),
            );
        }
    }
    found
}

/// Whether declaration `d` reports an error: a tactic's, or an unconditional `error` directive
/// on one of its lines.
fn has_error(a: &Analysis, d: &Decl) -> bool {
    let index = a.outline.decls.iter().position(|x| std::ptr::eq(x, d));
    let tactic = a
        .blocks
        .iter()
        .any(|(i, b)| Some(*i) == index && !b.errors.is_empty());
    let lines = lines(a, d);
    tactic
        || a.directives
            .iter()
            .any(|x| x.name == "error" && x.key("when").is_none() && lines.contains(&x.target))
}

/// What `#check @X` prints after `X : ` (see the contract).
pub(crate) fn elaborated_type(a: &Analysis, d: &Decl) -> String {
    let lines = lines(a, d);
    let stated = a
        .directives
        .iter()
        .filter(|x| x.name == "type" && lines.contains(&x.target))
        .find_map(|x| x.str_arg(0));
    if let Some(stated) = stated {
        return crate::decl::normalize_ws(stated);
    }
    let ty = d.ty.clone().unwrap_or_default();
    match d.binders.is_empty() {
        true => ty,
        false => format!("∀ {}, {ty}", d.binders),
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::Analysis;
    use crate::text::Text;

    fn infos(text: &str) -> Vec<String> {
        let a = Analysis::new(Text::new(text));
        a.steps
            .iter()
            .flat_map(|s| s.messages.iter())
            .filter(|m| m["severity"] != 2)
            .map(|m| m["message"].as_str().unwrap_or_default().to_owned())
            .filter(|m| !m.starts_with("Goals"))
            .collect()
    }

    #[test]
    fn axioms_follow_names_and_types_print_binders() {
        let text = "axiom cheat : False\n\
                    theorem helper : 1 = 1 := sorry\n\
                    namespace N\n\
                    theorem t (n : Nat) : n = n := by\n  have := helper\n  exact (cheat.elim)\n\
                    end N\n\
                    theorem c : True := by\n  by_contra h\n  native_decide\n\
                    #print axioms N.t\n#print axioms c\n#print axioms nope\nset_option pp.all true in #check @N.t\n";
        assert_eq!(
            infos(text),
            [
                "'N.t' depends on axioms: [cheat, sorryAx]",
                "'c' depends on axioms: [Classical.choice, Lean.ofReduceBool, Quot.sound, propext]",
                "unknown constant 'nope'",
                "N.t : ∀ (n : Nat), n = n",
            ]
        );
    }

    #[test]
    fn directives_state_axioms_and_types() {
        let text = "-- fake: axioms Foo.bar\n-- fake: type \"1 = 2\"\ntheorem t : 1 = 1 := rfl\n\
                    theorem u : 1 = 1 := rfl\n#print axioms t\n#print axioms u\n#check @t\n";
        assert_eq!(
            infos(text),
            [
                "'t' depends on axioms: [Foo.bar]",
                "'u' does not depend on any axioms",
                "t : 1 = 2",
            ]
        );
    }
}
