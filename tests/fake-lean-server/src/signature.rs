//! `textDocument/signatureHelp` (README "Signature help"). Left of the cursor on its line, the
//! nearest word naming a declared function is the head of an application; the words between
//! it and the cursor are its arguments. The label is the type of the remaining arguments, as in
//! the transcripts (`(b : Nat) → Nat → Nat → Nat`): all binders when nothing is applied yet
//! (anonymous `_` shown as `x`), otherwise implicit and instance binders dropped and the applied
//! explicit ones consumed, then the type's arrows. `null` in a comment, without a head, or when
//! the application on the line already supplies every explicit argument.

use crate::analysis::Analysis;
use crate::goals::split_top;
use crate::lexer;
use crate::navigate::Index;
use serde_json::{Value, json};

/// The binder groups of a binder list, whitespace-normalised, `_` names shown as `x`.
pub fn binder_groups(binders: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in binders.chars() {
        match c {
            '(' | '[' | '{' | '⦃' => {
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
    out.into_iter()
        .map(|g| {
            let g = crate::outline::normalize_ws(&g);
            let open = &g[..g.chars().next().map_or(0, char::len_utf8)];
            match g[open.len()..].strip_prefix("_ ") {
                Some(rest) => format!("{open}x {rest}"),
                None => g,
            }
        })
        .collect()
}

/// Explicit binder names of the groups, in order.
fn explicit_names(groups: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        if !g.starts_with('(') {
            continue;
        }
        let inner = &g[1..g.len() - 1];
        let names = split_top(inner, ":").map_or(inner, |(n, _)| n);
        out.extend(names.split_whitespace().map(|n| (i, n.to_owned())));
    }
    out
}

fn arrows(ty: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = ty.trim();
    while let Some((a, b)) = split_top(rest, "→") {
        parts.push(a.trim().to_owned());
        rest = b.trim();
    }
    parts.push(rest.to_owned());
    parts
}

/// The label after `applied` explicit arguments; `None` when none remain.
pub fn label(binders: &str, ty: &str, applied: usize) -> Option<String> {
    let groups = binder_groups(binders);
    let explicit = explicit_names(&groups);
    let ty_parts = arrows(ty);
    let arity = explicit.len() + ty_parts.len() - 1;
    if applied >= arity {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    if applied == 0 {
        parts.extend(groups.iter().cloned());
    } else {
        for (gi, g) in groups.iter().enumerate() {
            let remaining: Vec<&str> = explicit
                .iter()
                .skip(applied)
                .filter(|(i, _)| *i == gi)
                .map(|(_, n)| n.as_str())
                .collect();
            if remaining.is_empty() || !g.starts_with('(') {
                continue;
            }
            let ty = split_top(&g[1..g.len() - 1], ":").map_or("", |(_, t)| t.trim());
            parts.push(format!("({} : {ty})", remaining.join(" ")));
        }
    }
    let skip_ty = applied.saturating_sub(explicit.len());
    parts.extend(ty_parts.into_iter().skip(skip_ty));
    Some(parts.join(" → "))
}

const STOPS: [&str; 9] = ["<|", "$", ":=", "by", "#check", "#eval", "=>", ",", "|>."];

pub fn signature_help(index: &Index, doc: &Analysis, offset: usize) -> Value {
    if doc
        .lexed
        .comments
        .iter()
        .any(|c| c.start <= offset && offset <= c.end)
    {
        return Value::Null;
    }
    let code = doc.code();
    let line = doc.text.line_of(offset);
    let (line_start, line_end) = (doc.text.line_start(line), doc.text.line_end(line));
    let before: Vec<(usize, &str)> = words(code, line_start, offset);
    for (applied, &(at, w)) in before.iter().rev().enumerate() {
        if STOPS.contains(&w) || w.ends_with('(') {
            return Value::Null;
        }
        let head = lexer::ident_at(code, at)
            .filter(|&(a, b)| a == at && b == at + w.len())
            .and_then(|_| index.resolve(doc, at, w));
        if let Some(f) = head {
            let d = f.decl();
            let ty = d.ty.clone().unwrap_or_else(|| "?".into());
            let after = words(code, offset, line_end)
                .into_iter()
                .take_while(|(_, w)| !STOPS.contains(w))
                .count();
            if label(&d.binders, &ty, applied + after).is_none() {
                return Value::Null;
            }
            return match label(&d.binders, &ty, applied) {
                Some(l) => json!({"signatures": [{"label": l}], "activeSignature": 0}),
                None => Value::Null,
            };
        }
    }
    Value::Null
}

fn words(code: &str, from: usize, to: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut i = from;
    for w in code[from..to].split(' ') {
        if !w.is_empty() {
            out.push((i, w));
        }
        i += w.len() + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_like_the_transcript() {
        let (b, t) = ("{_ : Type} (a b : Nat)", "Nat → Nat → Nat");
        assert_eq!(
            label(b, t, 0).unwrap(),
            "{x : Type} → (a b : Nat) → Nat → Nat → Nat"
        );
        assert_eq!(label(b, t, 1).unwrap(), "(b : Nat) → Nat → Nat → Nat");
        assert_eq!(label(b, t, 2).unwrap(), "Nat → Nat → Nat");
        assert_eq!(label(b, t, 3).unwrap(), "Nat → Nat");
        assert_eq!(label(b, t, 4), None);
    }
}
