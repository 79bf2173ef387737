//! Declarations: the header of a `def`/`theorem`/… command split, at bracket depth 0, into
//! name, binders (up to the type colon), type (up to `:=`, `where` or a line-initial `|`) and
//! body (`:= by …` marks a tactic body); the full name from the enclosing namespaces; the
//! `/-- … -/` doc comment right before it; and, for structures, classes and inductives, the
//! fields (`name : T` lines after `where`, with binder `(self : S)`) and constructors
//! (`| name …` lines) as declarations of their own (README "Declarations").

use crate::lexer::{self, Lexed, ident_from, match_bracket};
use crate::outline::MODIFIERS;
use crate::text::Text;

#[derive(Clone, Debug)]
pub struct Decl {
    pub keyword: String,
    pub kw_start: usize,
    pub cmd: usize,
    pub name: Option<String>,
    pub full_name: Option<String>,
    pub name_span: Option<(usize, usize)>,
    /// Binder text between the name and the type colon, whitespace-normalised.
    pub binders: String,
    /// Type text, whitespace-normalised.
    pub ty: Option<String>,
    /// Byte offset just past `:=`.
    pub assign: Option<usize>,
    /// Byte offset of the `by` that starts a tactic body.
    pub by_at: Option<usize>,
    /// Index of the structure or inductive this field or constructor belongs to.
    pub parent: Option<usize>,
    /// Text of the `/-- … -/` doc comment right before the command.
    pub doc: Option<String>,
}

impl Decl {
    /// `Full.Name binders : type`, the first line of a hover.
    pub fn signature(&self) -> String {
        let mut s = self.full_name.clone().unwrap_or_default();
        if !self.binders.is_empty() {
            s.push(' ');
            s.push_str(&self.binders);
        }
        if let Some(ty) = &self.ty {
            s.push_str(" : ");
            s.push_str(ty);
        }
        s
    }

    pub fn is_proof(&self) -> bool {
        matches!(self.keyword.as_str(), "theorem" | "lemma" | "example")
    }
}

/// Collapses whitespace runs (newlines included) to single spaces.
pub fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the header of a declaration ends, at bracket depth 0 from `from`: the type colon (if
/// any) and the terminator (`:=`, `where`, or a line-initial `|`), as byte offsets.
fn header_split(code: &str, from: usize, end: usize) -> (Option<usize>, Option<(usize, usize)>) {
    let mut depth = 0i32;
    let mut colon = None;
    let mut line_blank = false;
    for (k, c) in code[from..end].char_indices() {
        let at = from + k;
        match c {
            '(' | '[' | '{' | '⦃' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⦄' | '⟩' => depth -= 1,
            '\n' => {
                line_blank = true;
                continue;
            }
            _ if depth != 0 => {}
            ':' if code[at..].starts_with(":=") => return (colon, Some((at, at + 2))),
            ':' if colon.is_none() => colon = Some(at),
            '|' if line_blank => return (colon, Some((at, at))),
            'w' if lexer::word_at(code, at, "where") => return (colon, Some((at, at + 5))),
            _ => {}
        }
        if !c.is_whitespace() {
            line_blank = false;
        }
    }
    (colon, None)
}

#[allow(clippy::too_many_arguments)]
pub fn parse_decl(
    text: &Text,
    lexed: &Lexed,
    kw: &str,
    kw_start: usize,
    after_kw: usize,
    end: usize,
    cmd: usize,
    ns: &[String],
) -> Decl {
    let code = lexed.code.as_str();
    let mut i = after_kw;
    if kw == "instance" && code[i..end].starts_with('(') {
        i = lexer::skip_ws(code, match_bracket(code, i, end), end);
    }
    let name_span = match kw {
        "example" => None,
        _ => ident_from(code, i, end),
    };
    let name = name_span.map(|(a, b)| code[a..b].to_owned());
    let full_name = name.as_ref().map(|n| qualify(ns, n));
    let header_from = name_span.map_or(i, |(_, b)| b);
    let (colon, term) = header_split(code, header_from, end);
    let binders_end = colon.or(term.map(|t| t.0)).unwrap_or(end);
    let mut binders = normalize_ws(&text.as_str()[header_from..binders_end]);
    if let Some(x) = binders.find("extends") {
        binders.truncate(x);
        binders = binders.trim_end().to_owned();
    }
    let ty = colon.map(|c| {
        let ty_end = term.map_or(end, |t| t.0);
        normalize_ws(&text.as_str()[c + 1..ty_end])
    });
    let assign = term.filter(|t| code[t.0..].starts_with(":=")).map(|t| t.1);
    let by_at = assign.and_then(|a| {
        let b = lexer::skip_ws(code, a, end);
        lexer::word_at(code, b, "by").then_some(b)
    });
    let ty = match (kw, ty) {
        ("structure" | "inductive" | "class", None) => Some("Type".to_owned()),
        (_, ty) => ty,
    };
    Decl {
        keyword: kw.to_owned(),
        kw_start,
        cmd,
        name,
        full_name,
        name_span,
        binders,
        ty,
        assign,
        by_at,
        parent: None,
        doc: doc_comment(text, lexed, kw_start),
    }
}

/// Prefixes a declared name with the namespace (`_root_.x` opts out).
pub fn qualify(ns: &[String], name: &str) -> String {
    if let Some(n) = name.strip_prefix("_root_.") {
        return n.to_owned();
    }
    if ns.is_empty() {
        name.to_owned()
    } else {
        format!("{}.{}", ns.join("."), name)
    }
}

pub fn doc_comment(text: &Text, lexed: &Lexed, before: usize) -> Option<String> {
    let src = text.as_str();
    let c = lexed.comments.iter().rev().find(|c| c.end <= before)?;
    if !c.doc || !lexed.code[c.end..before].trim().is_empty() {
        return None;
    }
    // Only attributes or modifiers may sit between the doc comment and the keyword.
    let between = src[c.end..before].trim();
    if !between.is_empty() && !between.starts_with("@[") && !MODIFIERS.contains(&between) {
        return None;
    }
    Some(src[c.start + 3..c.end - 2].trim().to_owned())
}

/// Fields of a structure or class, constructors of an inductive.
pub fn members(code: &str, d: &Decl, parent: usize, end: usize) -> Vec<Decl> {
    let Some(full) = d.full_name.as_deref() else {
        return Vec::new();
    };
    let inductive = d.keyword == "inductive";
    if !matches!(d.keyword.as_str(), "structure" | "class" | "inductive") {
        return Vec::new();
    }
    let from = d.name_span.map_or(d.kw_start, |s| s.1);
    let body = match lexer::find_word(code, from, end, "where") {
        Some(w) => w + 5,
        None if inductive => from,
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut line_start = body;
    for line in code[body..end].split_inclusive('\n') {
        let a = line_start;
        line_start += line.len();
        let t = line.trim_start();
        let off = a + (line.len() - t.len());
        if inductive {
            if !t.starts_with('|') {
                continue;
            }
            let i = lexer::skip_ws(code, off + 1, end);
            let Some((na, nb)) = ident_from(code, i, end) else {
                continue;
            };
            let sig_end = a + line.trim_end().len();
            let (colon, _) = header_split(code, nb, sig_end);
            let binders_end = colon.unwrap_or(sig_end);
            out.push(member(
                d,
                parent,
                full,
                &code[na..nb],
                (na, nb),
                normalize_ws(&code[nb..binders_end]),
                Some(
                    colon
                        .map(|c| normalize_ws(&code[c + 1..sig_end]))
                        .unwrap_or_else(|| full.to_owned()),
                ),
            ));
        } else {
            if t.is_empty() || t.contains("::") || lexer::word_at(t, 0, "deriving") {
                continue;
            }
            let line_end = a + line.trim_end().len();
            let (colon, term) = header_split(code, off, line_end);
            let Some(colon) = colon else { continue };
            let names_part = &code[off..colon];
            let ty_end = term.map_or(line_end, |t| t.0);
            let ty = normalize_ws(&code[colon + 1..ty_end]);
            let mut j = off;
            while let Some((na, nb)) = ident_from(code, j, colon) {
                out.push(member(
                    d,
                    parent,
                    full,
                    &code[na..nb],
                    (na, nb),
                    format!("(self : {full})"),
                    Some(ty.clone()),
                ));
                j = lexer::skip_ws(code, nb, colon);
                if names_part.contains('(') {
                    break;
                }
            }
        }
    }
    out
}

fn member(
    d: &Decl,
    parent: usize,
    full: &str,
    name: &str,
    span: (usize, usize),
    binders: String,
    ty: Option<String>,
) -> Decl {
    Decl {
        keyword: if d.keyword == "inductive" {
            "ctor".into()
        } else {
            "field".into()
        },
        kw_start: span.0,
        cmd: d.cmd,
        name: Some(name.to_owned()),
        full_name: Some(format!("{full}.{name}")),
        name_span: Some(span),
        binders,
        ty,
        assign: None,
        by_at: None,
        parent: Some(parent),
        doc: None,
    }
}
