//! Goals and the tiny tactic rule set (README "Goals"). A goal is an optional `case` tag,
//! hypotheses and a target, rendered the way `$/lean/plainGoal` shows it (consecutive
//! hypotheses of equal type grouped as `a b : T`, then `⊢ target`). The initial goal of a
//! declaration comes from its binders and type; each tactic maps the goal list to the next one by
//! [`apply`]. Tactics outside the rule set leave the goals unchanged; the `goals` directive
//! overrides any step.

use crate::lexer;
use serde_json::{Value, json};

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Goal {
    pub case: Option<String>,
    pub hyps: Vec<(String, String)>,
    pub target: String,
}

impl Goal {
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(c) = &self.case {
            out.push_str(&format!("case {c}\n"));
        }
        let mut i = 0;
        while i < self.hyps.len() {
            let ty = &self.hyps[i].1;
            let mut names = vec![self.hyps[i].0.as_str()];
            let mut j = i + 1;
            while j < self.hyps.len() && &self.hyps[j].1 == ty {
                names.push(&self.hyps[j].0);
                j += 1;
            }
            out.push_str(&format!("{} : {ty}\n", names.join(" ")));
            i = j;
        }
        out.push_str(&format!("⊢ {}", self.target));
        out
    }

    /// Reads a rendered goal back (the inverse of [`Goal::render`]).
    pub fn parse(s: &str) -> Goal {
        let mut g = Goal::default();
        let mut target: Option<String> = None;
        for line in s.lines() {
            if let Some(t) = target.as_mut() {
                t.push('\n');
                t.push_str(line);
            } else if let Some(t) = line.strip_prefix("⊢ ") {
                target = Some(t.to_owned());
            } else if let Some(c) = line.strip_prefix("case ") {
                g.case = Some(c.trim().to_owned());
            } else if let Some((names, ty)) = line.split_once(" : ") {
                for n in names.split_whitespace() {
                    g.hyps.push((n.to_owned(), ty.to_owned()));
                }
            }
        }
        g.target = target.unwrap_or_default();
        g
    }

    fn with_target(&self, target: &str) -> Goal {
        Goal {
            target: target.trim().to_owned(),
            ..self.clone()
        }
    }

    fn with_case(mut self, case: &str) -> Goal {
        self.case = Some(case.to_owned());
        self
    }
}

/// The `$/lean/plainGoal` result for a goal list.
pub fn plain_goal_json(goals: &[Goal]) -> Value {
    if goals.is_empty() {
        return json!({"rendered": "no goals", "goals": []});
    }
    let rendered: Vec<String> = goals.iter().map(Goal::render).collect();
    let fenced: Vec<String> = rendered
        .iter()
        .map(|g| format!("```lean\n{g}\n```"))
        .collect();
    json!({"rendered": fenced.join("\n---\n"), "goals": rendered})
}

/// The message of the `unsolved goals` error.
pub fn unsolved_message(goals: &[Goal]) -> String {
    let parts: Vec<String> = goals.iter().map(Goal::render).collect();
    format!("unsolved goals\n{}", parts.join("\n\n"))
}

/// The hypotheses a binder list introduces: `(a b : T)`, `{α : Type}`, `[inst : C]`, `[C]`.
pub fn hyps_from_binders(binders: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for group in top_groups(binders) {
        let (open, inner) = (group.chars().next().unwrap_or('('), strip_brackets(&group));
        match split_top(inner, ":") {
            Some((names, ty)) => {
                for n in names.split_whitespace() {
                    let n = if n == "_" { "x✝" } else { n };
                    out.push((n.to_owned(), ty.trim().to_owned()));
                }
            }
            None if open == '[' => out.push(("inst✝".to_owned(), inner.trim().to_owned())),
            None => {
                for n in inner.split_whitespace() {
                    out.push((n.to_owned(), "Sort u_1".to_owned()));
                }
            }
        }
    }
    out
}

/// The goal a declaration's proof starts from.
pub fn initial_goal(binders: &str, ty: &str) -> Goal {
    Goal {
        case: None,
        hyps: hyps_from_binders(binders),
        target: ty.trim().to_owned(),
    }
}

const CLOSERS: [&str; 28] = [
    "exact",
    "simp?",
    "simp_all?",
    "exacts",
    "exact?",
    "rfl",
    "simp",
    "simp_all",
    "simpa",
    "trivial",
    "decide",
    "omega",
    "assumption",
    "sorry",
    "admit",
    "linarith",
    "nlinarith",
    "norm_num",
    "contradiction",
    "tauto",
    "aesop",
    "exact_mod_cast",
    "ac_rfl",
    "positivity",
    "grind",
    "native_decide",
    "apply?",
    "infer_instance",
];

/// The goals after running `tactic` on `goals`, by the rule set; `Err` is a tactic error.
pub fn apply(tactic: &str, goals: &[Goal]) -> Result<Vec<Goal>, String> {
    let tactic = tactic.trim();
    if let Some((first, then)) = split_top(tactic, "<;>") {
        let after_first = apply(first, &goals[..goals.len().min(1)])?;
        let mut out = Vec::new();
        for g in &after_first {
            out.extend(apply(then, std::slice::from_ref(g))?);
        }
        out.extend(goals.iter().skip(1).cloned());
        return Ok(out);
    }
    let (name, rest) = match tactic.find(char::is_whitespace) {
        Some(i) => (&tactic[..i], tactic[i..].trim()),
        None => (tactic, ""),
    };
    if matches!(name, "skip" | "done" | "trace" | "set_option") {
        return Ok(goals.to_vec());
    }
    if name == "all_goals" || name == "any_goals" {
        let mut out = Vec::new();
        for g in goals {
            out.extend(apply(rest, std::slice::from_ref(g))?);
        }
        return Ok(out);
    }
    let Some(main) = goals.first() else {
        return Err("no goals to be proved".to_owned());
    };
    let others = &goals[1..];
    let with = |mut v: Vec<Goal>| {
        v.extend(others.iter().cloned());
        v
    };
    let at_hyp = split_top(rest, " at ").is_some() || rest.starts_with("at ");
    if CLOSERS.contains(&name) && !at_hyp {
        return Ok(others.to_vec());
    }
    Ok(match name {
        "intro" | "intros" => {
            let names: Vec<&str> = rest.split_whitespace().collect();
            let mut g = main.clone();
            if names.is_empty() {
                let count = if name == "intros" { usize::MAX } else { 1 };
                for _ in 0..count {
                    match intro_one(&g, None) {
                        Some(next) => g = next,
                        None => break,
                    }
                }
            } else {
                for n in names {
                    match intro_one(&g, Some(n)) {
                        Some(next) => g = next,
                        None => break,
                    }
                }
            }
            with(vec![g])
        }
        "constructor" => {
            let t = unparen(&main.target);
            if let Some((a, b)) = top_connective(t, "↔") {
                with(vec![
                    main.with_target(&format!("{a} → {b}")).with_case("mp"),
                    main.with_target(&format!("{b} → {a}")).with_case("mpr"),
                ])
            } else if let Some((a, b)) = top_connective(t, "∧") {
                with(vec![
                    main.with_target(a).with_case("left"),
                    main.with_target(b).with_case("right"),
                ])
            } else if t == "True" {
                others.to_vec()
            } else {
                goals.to_vec()
            }
        }
        "left" | "right" => match top_connective(unparen(&main.target), "∨") {
            Some((a, b)) => {
                let side = if name == "left" { a } else { b };
                with(vec![main.with_target(side).with_case("h")])
            }
            None => goals.to_vec(),
        },
        "exfalso" => with(vec![main.with_target("False")]),
        "show" => with(vec![main.with_target(rest)]),
        "have" | "haveI" => {
            let decl = rest.split(":=").next().unwrap_or_default();
            let (hname, ty) = match split_top(decl, ":") {
                Some((n, t)) if !n.trim().is_empty() => (n.trim(), t),
                Some((_, t)) => ("this", t),
                None => return Ok(goals.to_vec()),
            };
            let mut g = main.clone();
            g.hyps.push((hname.to_owned(), ty.trim().to_owned()));
            with(vec![g])
        }
        "apply" => {
            let hyp = main.hyps.iter().rev().find(|(n, _)| n == rest);
            match hyp {
                Some((_, ty)) if ty == &main.target => others.to_vec(),
                Some((_, ty)) => match top_connective(ty, "→") {
                    Some((a, b)) if b.trim() == main.target => with(vec![main.with_target(a)]),
                    _ => goals.to_vec(),
                },
                None => goals.to_vec(),
            }
        }
        _ => goals.to_vec(),
    })
}

/// Introduces one binder of the target: `A → B`, `¬A`, or `∀ x…, B`.
fn intro_one(g: &Goal, name: Option<&str>) -> Option<Goal> {
    let t = unparen(&g.target);
    let mut next = g.clone();
    if let Some(body) = t.strip_prefix('∀') {
        let (binders, rest) = split_top(body, ",")?;
        let mut vars = hyps_from_binders(&paren_plain_binders(binders));
        if vars.is_empty() {
            return None;
        }
        let (old, ty) = vars.remove(0);
        let new = match name {
            Some("_") | None => format!("{old}✝"),
            Some(n) => n.to_owned(),
        };
        let rest = rename(rest.trim(), &old, &new);
        next.hyps.push((new.clone(), ty));
        next.target = if vars.is_empty() {
            rest
        } else {
            let groups: Vec<String> = vars
                .iter()
                .map(|(n, ty)| format!("({} : {ty})", rename(n, &old, &new)))
                .collect();
            format!("∀ {}, {rest}", groups.join(" "))
        };
        return Some(next);
    }
    let new = match name {
        Some("_") | None => "a✝".to_owned(),
        Some(n) => n.to_owned(),
    };
    if let Some((a, b)) = top_connective(t, "→") {
        next.hyps.push((new, a.trim().to_owned()));
        next.target = b.trim().to_owned();
        return Some(next);
    }
    if let Some(a) = t.strip_prefix('¬') {
        next.hyps.push((new, unparen(a.trim()).to_owned()));
        next.target = "False".to_owned();
        return Some(next);
    }
    None
}

/// `x y : T` (without brackets) as `(x y : T)`, bracketed groups unchanged.
fn paren_plain_binders(b: &str) -> String {
    let b = b.trim();
    if b.starts_with(['(', '{', '[', '⦃']) {
        b.to_owned()
    } else if b.contains(':') {
        format!("({b})")
    } else {
        b.split_whitespace()
            .map(|n| format!("({n} : _)"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn rename(s: &str, old: &str, new: &str) -> String {
    if old == new {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut last = 0;
    for (a, b) in lexer::idents(s, 0, s.len()) {
        if &s[a..b] == old {
            out.push_str(&s[last..a]);
            out.push_str(new);
            last = b;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// Binary connectives by increasing binding strength; the split happens at the loosest one
/// present at depth 0 (`∀`/`∃`/`fun` prefixes bind loosest of all).
const PRECEDENCE: [&str; 4] = ["↔", "→", "∨", "∧"];

/// `(a, b)` when `op` is the outermost connective of `t`.
pub fn top_connective<'a>(t: &'a str, op: &str) -> Option<(&'a str, &'a str)> {
    let t = t.trim();
    if t.starts_with(['∀', '∃', 'λ']) || t.starts_with("fun ") {
        return None;
    }
    for p in PRECEDENCE {
        if let Some((a, b)) = split_top(t, p) {
            return (p == op).then_some((a.trim(), b.trim()));
        }
    }
    None
}

/// Splits at the first occurrence of `sep` at bracket depth 0.
pub fn split_top<'a>(s: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '⦃' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⦄' | '⟩' => depth -= 1,
            _ if depth == 0 && s[i..].starts_with(sep) => {
                // `:` must not be the start of `:=`.
                if sep == ":" && s[i..].starts_with(":=") {
                    continue;
                }
                return Some((&s[..i], &s[i + sep.len()..]));
            }
            _ => {}
        }
    }
    None
}

/// The top-level bracket groups of a binder list.
fn top_groups(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' | '[' | '{' | '⦃' => {
                if depth == 0 {
                    cur.clear();
                }
                depth += 1;
                cur.push(c);
            }
            ')' | ']' | '}' | '⦄' => {
                depth -= 1;
                cur.push(c);
                if depth == 0 {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ if depth > 0 => cur.push(c),
            _ => {}
        }
    }
    out
}

fn strip_brackets(g: &str) -> &str {
    let mut it = g.chars();
    let first = it.next().map_or(0, char::len_utf8);
    let last = it.next_back().map_or(0, char::len_utf8);
    &g[first..g.len() - last]
}

/// Removes parentheses wrapping the whole expression.
fn unparen(t: &str) -> &str {
    let t = t.trim();
    if t.starts_with('(') && t.ends_with(')') {
        let inner = &t[1..t.len() - 1];
        let mut depth = 0i32;
        for c in inner.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return t;
            }
        }
        return unparen(inner);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goal(s: &str) -> Goal {
        Goal::parse(s)
    }

    #[test]
    fn initial_and_render() {
        let g = initial_goal("(p q : Prop) (hp : p) (hq : q)", "p ∧ q");
        assert_eq!(g.render(), "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q");
        assert_eq!(Goal::parse(&g.render()), g);
        assert_eq!(
            initial_goal("{α : Type} [Inhabited α] (_ : α)", "True").render(),
            "α : Type\ninst✝ : Inhabited α\nx✝ : α\n⊢ True"
        );
    }

    #[test]
    fn rules() {
        let g = goal("p q : Prop\n⊢ p ∧ q");
        let split = apply("constructor", std::slice::from_ref(&g)).unwrap();
        assert_eq!(split[0].render(), "case left\np q : Prop\n⊢ p");
        assert_eq!(split[1].case.as_deref(), Some("right"));
        assert_eq!(apply("exact hp", &split).unwrap().len(), 1);
        let a = goal("⊢ ∀ a b : Nat, a = b");
        let one = apply("intro x", std::slice::from_ref(&a)).unwrap();
        assert_eq!(one[0].render(), "x : Nat\n⊢ ∀ (b : Nat), x = b");
        let two = apply("intro a b", &[a]).unwrap();
        assert_eq!(two[0].render(), "a b : Nat\n⊢ a = b");
        let imp = apply("intro h", &[goal("p : Prop\n⊢ p → p ∧ True")]).unwrap();
        assert_eq!(imp[0].render(), "p : Prop\nh : p\n⊢ p ∧ True");
        let iff = apply("constructor", &[goal("⊢ a ↔ b ∧ c")]).unwrap();
        assert_eq!(iff[0].render(), "case mp\n⊢ a → b ∧ c");
        assert_eq!(
            apply("rfl", &[]).unwrap_err(),
            "no goals to be proved".to_owned()
        );
        assert_eq!(apply("simp at h", &[goal("⊢ x")]).unwrap().len(), 1);
        assert_eq!(
            apply("constructor <;> simp", &[goal("⊢ a ∧ b")]).unwrap(),
            []
        );
    }

    #[test]
    fn plain_goal_shape() {
        assert_eq!(
            plain_goal_json(&[]),
            json!({"rendered": "no goals", "goals": []})
        );
        let v = plain_goal_json(&[goal("⊢ a"), goal("⊢ b")]);
        assert_eq!(v["rendered"], "```lean\n⊢ a\n```\n---\n```lean\n⊢ b\n```");
    }
}
