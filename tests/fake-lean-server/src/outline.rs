//! The command structure of a Lean file, by the README's "Declarations" rules: a command starts
//! at a line whose code begins in column 0 (lines starting with `|`, `where`, `deriving` or a
//! closing bracket continue the previous one, and attribute-only lines join the next); it ends
//! at its last code character. Commands are classified as `import`, `namespace`, `section`,
//! `end`, `open`, `#check`, declarations (`def theorem lemma abbrev instance structure inductive
//! class example axiom opaque`, after optional `@[…]` and modifiers; parsed in `decl.rs`) or
//! other. Each command records the namespaces and `open`s in effect. Named namespaces and
//! sections become the kind-3 nodes of the `documentSymbol` tree, named declarations (and
//! anonymous instances, named by their header text) its kind-6 leaves.

pub use crate::decl::{Decl, normalize_ws, qualify};
use crate::decl::{members, parse_decl};
use crate::lexer::{self, Lexed, ident_from, match_bracket};
use crate::scoped::{Prefix, prefixes};
use crate::text::Text;

pub const DECL_KEYWORDS: [&str; 11] = [
    "def",
    "theorem",
    "lemma",
    "abbrev",
    "instance",
    "structure",
    "inductive",
    "class",
    "example",
    "axiom",
    "opaque",
];

pub(crate) const MODIFIERS: [&str; 9] = [
    "private",
    "protected",
    "noncomputable",
    "partial",
    "unsafe",
    "nonrec",
    "scoped",
    "local",
    "public",
];

#[derive(Clone, Debug, PartialEq)]
pub enum CmdKind {
    Import(String),
    Scope,
    End,
    Open,
    Decl(usize),
    /// `#check ident`, with the identifier's span.
    Check(usize, usize),
    /// `set_option NAME VALUE`, without `in`: it holds to the end of the file (the fake does
    /// not scope it to a section).
    SetOption(String, String),
    /// `#exit`: terminal (Lean stops the file there) unless it is scoped by an `… in` prefix.
    Exit {
        terminal: bool,
    },
    Other,
}

#[derive(Clone, Debug)]
pub struct Command {
    /// First code byte.
    pub start: usize,
    /// Just past the last code byte.
    pub end: usize,
    /// Where the next command starts (or the text length).
    pub span_end: usize,
    /// Where the command proper begins, after its `… in` prefixes (`scoped.rs`).
    pub body: usize,
    /// Its `… in` prefixes.
    pub prefix: Prefix,
    /// Namespace components in effect.
    pub ns: Vec<String>,
    /// Namespaces opened with `open`.
    pub opens: Vec<String>,
    pub kind: CmdKind,
}

/// A `documentSymbol` node: byte ranges of the whole construct and of its name.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub kind: u32,
    pub range: (usize, usize),
    pub selection: (usize, usize),
    pub children: Option<Vec<Symbol>>,
}

#[derive(Clone, Debug, Default)]
pub struct Outline {
    pub commands: Vec<Command>,
    pub decls: Vec<Decl>,
    pub symbols: Vec<Symbol>,
    /// The header's imports: `import` commands before any other (an `import` later is no
    /// import, as Lean's `Module.header` ends at the first other command).
    pub imports: Vec<String>,
}

impl Outline {
    /// The command whose span holds byte `offset`.
    pub fn command_at(&self, offset: usize) -> Option<&Command> {
        self.commands
            .iter()
            .rev()
            .find(|c| c.start <= offset && offset < c.span_end.max(c.start + 1))
    }

    /// The declaration whose command holds byte `offset`.
    pub fn decl_at(&self, offset: usize) -> Option<&Decl> {
        let cmd = self.command_at(offset)?;
        match cmd.kind {
            CmdKind::Decl(i) => Some(&self.decls[i]),
            _ => None,
        }
    }

    pub fn decl_command(&self, d: &Decl) -> &Command {
        &self.commands[d.cmd]
    }
}

struct OpenScope {
    name: Option<String>,
    kw_start: usize,
    selection: (usize, usize),
    pushed: usize,
    opens_len: usize,
    children: Vec<Symbol>,
}

pub fn outline(text: &Text, lexed: &Lexed) -> Outline {
    let code = lexed.code.as_str();
    let mut out = Outline::default();
    let starts = command_starts(text, code);
    let mut ns: Vec<String> = Vec::new();
    let mut opens: Vec<String> = Vec::new();
    let mut scopes: Vec<OpenScope> = Vec::new();
    let mut top: Vec<Symbol> = Vec::new();
    // Lean's header (`Module.header`): `module`, `prelude`, then imports, before any command.
    let mut in_header = true;
    for (k, &start) in starts.iter().enumerate() {
        let span_end = starts.get(k + 1).copied().unwrap_or(code.len());
        let end = lexer::trim_end(code, start, span_end);
        let cmd_index = out.commands.len();
        let (prefix, body) = prefixes(code, start, end);
        let mut i = skip_modifiers(code, body, end);
        let kw_start = i;
        let kw_end = word_end(code, i, end);
        let kw = &code[kw_start..kw_end];
        i = lexer::skip_ws(code, kw_end, end);
        let next_ident = ident_from(code, i, end);
        let kind = match kw {
            "import" => {
                let m = next_ident.map(|(a, b)| code[a..b].to_owned());
                if let Some(m) = m.as_ref().filter(|_| in_header) {
                    out.imports.push(m.clone());
                }
                CmdKind::Import(m.unwrap_or_default())
            }
            "namespace" | "section" => {
                let name = next_ident.map(|(a, b)| code[a..b].to_owned());
                let pushed = if kw == "namespace" {
                    let parts: Vec<String> = name
                        .as_deref()
                        .unwrap_or_default()
                        .split('.')
                        .map(str::to_owned)
                        .collect();
                    let n = parts.len();
                    ns.extend(parts);
                    n
                } else {
                    0
                };
                scopes.push(OpenScope {
                    name,
                    kw_start,
                    selection: next_ident.unwrap_or((kw_start, kw_end)),
                    pushed,
                    opens_len: opens.len(),
                    children: Vec::new(),
                });
                CmdKind::Scope
            }
            // `mutual … end` (`Lean/Parser/Command.lean`: the `end` is the block's own, not
            // a scope's): an anonymous scope, so its `end` closes no namespace.
            "mutual" => {
                scopes.push(OpenScope {
                    name: None,
                    kw_start,
                    selection: (kw_start, kw_end),
                    pushed: 0,
                    opens_len: opens.len(),
                    children: Vec::new(),
                });
                CmdKind::Other
            }
            "end" => {
                if let Some(s) = scopes.pop() {
                    ns.truncate(ns.len() - s.pushed);
                    opens.truncate(s.opens_len);
                    let sink = scopes.last_mut().map_or(&mut top, |p| &mut p.children);
                    close_scope(s, end, sink);
                }
                CmdKind::End
            }
            "open" => {
                let mut j = i;
                while let Some((a, b)) = ident_from(code, j, end) {
                    let w = &code[a..b];
                    if w != "in" && w != "scoped" {
                        opens.push(w.to_owned());
                    }
                    j = lexer::skip_ws(code, b, end);
                }
                CmdKind::Open
            }
            "#check" => match next_ident {
                Some((a, b)) => CmdKind::Check(a, b),
                None => CmdKind::Other,
            },
            "#exit" => CmdKind::Exit {
                terminal: !prefix.any,
            },
            "set_option" => match next_ident {
                Some((a, b)) => {
                    let v = lexer::skip_ws(code, b, end);
                    CmdKind::SetOption(code[a..b].to_owned(), code[v..end].trim().to_owned())
                }
                None => CmdKind::Other,
            },
            kw if DECL_KEYWORDS.contains(&kw) => {
                let d = parse_decl(text, lexed, kw, kw_start, i, end, cmd_index, &ns);
                let index = out.decls.len();
                if let Some(sym) = decl_symbol(text, &d, start, end) {
                    scopes
                        .last_mut()
                        .map_or(&mut top, |p| &mut p.children)
                        .push(sym);
                }
                let members = members(code, &d, index, end);
                out.decls.push(d);
                out.decls.extend(members);
                CmdKind::Decl(index)
            }
            _ => CmdKind::Other,
        };
        in_header &= matches!(kind, CmdKind::Import(_)) || kw == "module" || kw == "prelude";
        out.commands.push(Command {
            start,
            end,
            span_end,
            body,
            prefix,
            ns: ns.clone(),
            opens: opens.clone(),
            kind,
        });
    }
    while let Some(s) = scopes.pop() {
        let sink = scopes.last_mut().map_or(&mut top, |p| &mut p.children);
        close_scope(s, code.len(), sink);
    }
    out.symbols = top;
    out
}

fn close_scope(s: OpenScope, end: usize, sink: &mut Vec<Symbol>) {
    match s.name {
        Some(name) => sink.push(Symbol {
            name,
            kind: 3,
            range: (s.kw_start, end),
            selection: s.selection,
            children: Some(s.children),
        }),
        // An anonymous section lends its children to the enclosing scope.
        None => sink.extend(s.children),
    }
}

fn command_starts(text: &Text, code: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut pending_attr: Option<usize> = None;
    for l in 0..text.line_count() {
        let a = text.line_start(l);
        let line = &code[a..text.line_end(l)];
        let Some(first) = line.chars().next() else {
            continue;
        };
        if first.is_whitespace() || line.trim().is_empty() {
            continue;
        }
        let continues = matches!(first, '|' | ')' | ']' | '}' | '⟩')
            || lexer::word_at(line, 0, "where")
            || lexer::word_at(line, 0, "deriving");
        if continues && !starts.is_empty() {
            continue;
        }
        let start = pending_attr.take().unwrap_or(a);
        let rest = skip_modifiers(code, a, a + line.len());
        let trimmed = line.trim_end();
        let scoping = trimmed.ends_with("in") && lexer::word_at(code, a + trimmed.len() - 2, "in");
        if rest == a + trimmed.len() || scoping {
            // Only attributes and modifiers on this line, or an `… in` prefix ending it: they
            // belong to the next command.
            pending_attr = Some(start);
            continue;
        }
        starts.push(start);
    }
    if let Some(a) = pending_attr {
        starts.push(a);
    }
    starts
}

fn skip_modifiers(code: &str, mut i: usize, end: usize) -> usize {
    loop {
        i = lexer::skip_ws(code, i, end);
        if code[i..end].starts_with("@[") {
            i = match_bracket(code, i + 1, end);
            continue;
        }
        if let Some(m) = MODIFIERS.iter().find(|m| lexer::word_at(code, i, m)) {
            i += m.len();
            continue;
        }
        return i;
    }
}

fn word_end(code: &str, i: usize, end: usize) -> usize {
    let mut j = i;
    while let Some(c) = code[j..end].chars().next() {
        if c.is_whitespace() {
            break;
        }
        j += c.len_utf8();
    }
    j
}

fn decl_symbol(text: &Text, d: &Decl, start: usize, end: usize) -> Option<Symbol> {
    let (name, selection) = match (&d.name, d.name_span) {
        (Some(n), Some(span)) => (n.clone(), span),
        _ if d.keyword == "instance" => {
            let to = d.assign.map_or(end, |a| a - 2);
            let name = text.as_str()[d.kw_start..to].to_owned();
            (name, (d.kw_start, to))
        }
        _ => return None,
    };
    Some(Symbol {
        name,
        kind: 6,
        range: (start, end),
        selection,
        children: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn parse(src: &str) -> (Text, Outline) {
        let t = Text::new(src);
        let o = outline(&t, &lex(src));
        (t, o)
    }

    #[test]
    fn scopes_and_anonymous_instances() {
        let src = "def one := 1\n\nnamespace Outer\n\ndef two := 2\n\nsection Inner\n\ndef three := 3\n\nend Inner\n\nend Outer\n\nnamespace Open\n\ninstance : Inhabited Nat := ⟨0⟩\n";
        let (t, o) = parse(src);
        let names: Vec<_> = o.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["one", "Outer", "Open"]);
        let outer = &o.symbols[1];
        // From the keyword to the end of `end Outer`.
        assert_eq!(t.pos(outer.range.0), crate::text::Pos::new(2, 0));
        assert_eq!(t.pos(outer.range.1), crate::text::Pos::new(12, 9));
        assert_eq!(outer.children.as_ref().unwrap()[1].name, "Inner");
        // An unclosed namespace runs to the end of the file.
        let open = &o.symbols[2];
        assert_eq!(t.pos(open.range.1), crate::text::Pos::new(17, 0));
        let inst = &open.children.as_ref().unwrap()[0];
        assert_eq!(inst.name, "instance : Inhabited Nat ");
        assert_eq!(inst.kind, 6);
    }

    #[test]
    fn declarations() {
        let (_, o) = parse(
            "namespace Fixture\n\n/-- Doubles. -/\ndef double (n : Nat) : Nat :=\n  2 * n\n\ntheorem t (p q : Prop) (hp : p) : p ∧ q := by\n  constructor\n\nstructure Point where\n  x : Nat\n  y : Nat\n\nend Fixture\n",
        );
        let d = &o.decls[0];
        assert_eq!(d.signature(), "Fixture.double (n : Nat) : Nat");
        assert_eq!(d.doc.as_deref(), Some("Doubles."));
        let t = &o.decls[1];
        assert_eq!(t.ty.as_deref(), Some("p ∧ q"));
        assert!(t.by_at.is_some());
        let names: Vec<_> = o.decls.iter().filter_map(|d| d.full_name.clone()).collect();
        assert_eq!(
            names,
            [
                "Fixture.double",
                "Fixture.t",
                "Fixture.Point",
                "Fixture.Point.x",
                "Fixture.Point.y"
            ]
        );
        assert_eq!(
            o.decls[3].signature(),
            "Fixture.Point.x (self : Fixture.Point) : Nat"
        );
    }
}
