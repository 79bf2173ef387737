//! Name-based answers (README "Navigation"): hover, definition/declaration/typeDefinition,
//! references, documentHighlight, workspace/symbol, documentSymbol and completion. A name at a
//! position is resolved the way Lean resolves it lexically: the enclosing namespaces from the
//! innermost out, then the `open`ed namespaces, against the declarations of an [`Index`]'s
//! sources: a worker's own document and the files on disk for a worker's answers, the
//! reference index (`references`) for the watchdog's.

use crate::analysis::Analysis;
use crate::config::DefinitionMode;
use crate::lexer;
use crate::outline::{self, Decl, Symbol};
use crate::project::{Found, Source};
use crate::text::Text;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Full name → the first declaration of that name, sources in order.
pub struct Index {
    names: HashMap<String, Found>,
    pub sources: Vec<Source>,
}

impl Index {
    pub fn new(sources: Vec<Source>) -> Index {
        let mut names = HashMap::new();
        for s in &sources {
            for (i, d) in s.analysis.outline.decls.iter().enumerate() {
                if let Some(n) = &d.full_name {
                    names.entry(n.clone()).or_insert_with(|| Found {
                        source: s.clone(),
                        decl: i,
                    });
                }
            }
        }
        Index { names, sources }
    }

    pub fn get(&self, full: &str) -> Option<&Found> {
        self.names.get(full)
    }

    /// Resolves `name` as written in `doc` at byte `offset`.
    pub fn resolve(&self, doc: &Analysis, offset: usize, name: &str) -> Option<&Found> {
        let (ns, opens) = match doc.outline.command_at(offset) {
            Some(c) => (c.ns.as_slice(), c.opens.as_slice()),
            None => (&[][..], &[][..]),
        };
        for i in (0..=ns.len()).rev() {
            if let Some(f) = self.get(&outline::qualify(&ns[..i], name)) {
                return Some(f);
            }
        }
        opens.iter().find_map(|o| self.get(&format!("{o}.{name}")))
    }

    /// The identifier at `offset` and what it names: the whole dotted token, else its prefixes
    /// down to the component under the cursor.
    pub fn resolve_at(&self, doc: &Analysis, offset: usize) -> Option<((usize, usize), &Found)> {
        let code = doc.code();
        let (a, b) = lexer::ident_at(code, offset)?;
        // A declaration's own name (fields and constructors live in their type's namespace).
        let site = doc
            .outline
            .decls
            .iter()
            .find(|d| d.name_span == Some((a, b)));
        if let Some(f) = site.and_then(|d| self.get(d.full_name.as_deref()?)) {
            return Some(((a, b), f));
        }
        let mut ends: Vec<usize> = code[a..b].match_indices('.').map(|(i, _)| a + i).collect();
        ends.push(b);
        for &end in ends.iter().rev() {
            if end < offset.min(b) && end != b {
                break;
            }
            if let Some(f) = self.resolve(doc, offset, &code[a..end]) {
                return Some(((a, end), f));
            }
        }
        None
    }
}

pub fn hover(index: &Index, doc: &Analysis, uri: &str, offset: usize) -> Value {
    let Some((span, found)) = index.resolve_at(doc, offset) else {
        return Value::Null;
    };
    let d = found.decl();
    let mut value = format!("```lean\n{}\n```", d.signature());
    if let Some(doc) = &d.doc {
        value.push_str(&format!("\n***\n{doc}"));
    }
    if !found.source.is_document(uri)
        && let Some(m) = &found.source.module
    {
        value.push_str(&format!("\n***\n*import {m}*"));
    }
    json!({
        "range": doc.text.range(span.0, span.1),
        "contents": {"kind": "markdown", "value": value},
    })
}

fn name_span(d: &Decl) -> (usize, usize) {
    d.name_span
        .unwrap_or((d.kw_start, d.kw_start + d.keyword.len()))
}

fn target_range(found: &Found) -> Value {
    let (a, b) = name_span(found.decl());
    found.source.analysis.text.range(a, b)
}

/// `Location[]` or `LocationLink[]` for the declaration named at `offset` (`[]` if none).
/// `type_of` jumps to the declared type's head constant instead.
pub fn definition(
    index: &Index,
    doc: &Analysis,
    uri: &str,
    offset: usize,
    mode: DefinitionMode,
    counter: u64,
    type_of: bool,
) -> Value {
    let Some((span, found)) = index.resolve_at(doc, offset) else {
        return json!([]);
    };
    let found = if type_of {
        let d = found.decl();
        let Some(ty) = d.ty.as_deref() else {
            return json!([]);
        };
        let head = lexer::idents(ty, 0, ty.len()).into_iter().next();
        let Some(target) = head.and_then(|(a, b)| {
            let src = &found.source.analysis;
            index.resolve(src, d.kw_start, &ty[a..b])
        }) else {
            return json!([]);
        };
        target
    } else {
        found
    };
    let links = match mode {
        DefinitionMode::Links => true,
        DefinitionMode::Locations => false,
        DefinitionMode::Mixed => type_of || found.source.is_document(uri),
        DefinitionMode::Alternate => counter.is_multiple_of(2),
    };
    let target = target_range(found);
    if links {
        // The worker names its own document by the client's URI, another module by the URI
        // Lean builds for it (`documentUriFromModule`); the watchdog's index always the latter.
        let target_uri = if found.source.is_document(uri) {
            uri
        } else {
            &found.source.uri
        };
        json!([{
            "targetUri": target_uri,
            "targetRange": target,
            "targetSelectionRange": target,
            "originSelectionRange": doc.text.range(span.0, span.1),
        }])
    } else {
        json!([{"uri": found.source.uri, "range": target}])
    }
}

/// The watchdog's fast path (`findDefinitions`, `References.definitionOf?`): the declaration
/// the index has of what is named at `offset` of `text` (the text the index holds for the
/// request's module, which need not be the requesting document's).
pub fn indexed_definitions<'a>(
    index: &'a Index,
    text: &Analysis,
    offset: usize,
) -> Option<&'a Found> {
    index.resolve_at(text, offset).map(|(_, found)| found)
}

/// A declaration's `Location`: its name in the file of the module that declares it.
pub fn location(found: &Found) -> Value {
    json!({"uri": found.source.uri, "range": target_range(found)})
}

/// Every occurrence of the declaration named at `offset`, as `(source, span)`.
fn occurrences(
    index: &Index,
    doc: &Analysis,
    offset: usize,
    include_decl: bool,
) -> Vec<(Source, (usize, usize))> {
    let Some((_, found)) = index.resolve_at(doc, offset) else {
        return Vec::new();
    };
    let full = found.decl().full_name.clone();
    let decl_site = (found.source.uri.clone(), name_span(found.decl()));
    let mut out = Vec::new();
    for s in &index.sources {
        let code = s.analysis.code();
        let mut spans: Vec<(usize, usize)> = lexer::idents(code, 0, code.len())
            .into_iter()
            .filter(|&(a, b)| {
                index
                    .resolve(&s.analysis, a, &code[a..b])
                    .is_some_and(|f| f.decl().full_name == full)
            })
            .collect();
        if s.uri == decl_site.0 {
            spans.retain(|&sp| include_decl || sp != decl_site.1);
            if include_decl && !spans.contains(&decl_site.1) {
                spans.push(decl_site.1);
                spans.sort();
            }
        }
        out.extend(spans.into_iter().map(|sp| (s.clone(), sp)));
    }
    out
}

pub fn references(index: &Index, doc: &Analysis, offset: usize, include_decl: bool) -> Value {
    let locs: Vec<Value> = occurrences(index, doc, offset, include_decl)
        .into_iter()
        .map(|(s, (x, y))| json!({"uri": s.uri, "range": s.analysis.text.range(x, y)}))
        .collect();
    Value::Array(locs)
}

pub fn highlights(index: &Index, doc: &Analysis, uri: &str, offset: usize) -> Value {
    let hs: Vec<Value> = occurrences(index, doc, offset, true)
        .into_iter()
        .filter(|(s, _)| s.is_document(uri))
        .map(|(s, (x, y))| json!({"range": s.analysis.text.range(x, y), "kind": 1}))
        .collect();
    Value::Array(hs)
}

pub fn workspace_symbols(index: &Index, query: &str) -> Value {
    if query.is_empty() {
        return json!([]);
    }
    let q = query.to_lowercase();
    let mut hits: Vec<(u8, String, Value)> = Vec::new();
    for s in &index.sources {
        for d in &s.analysis.outline.decls {
            let Some(name) = &d.full_name else { continue };
            let Some(score) = fuzzy(&q, &name.to_lowercase()) else {
                continue;
            };
            let (a, b) = name_span(d);
            let item = json!({
                "name": name,
                "kind": 14,
                "tags": [],
                "location": {"uri": s.uri, "range": s.analysis.text.range(a, b)},
            });
            hits.push((score, name.clone(), item));
        }
    }
    hits.sort_by(|x, y| (x.0, x.1.len(), &x.1).cmp(&(y.0, y.1.len(), &y.1)));
    hits.dedup_by(|x, y| x.1 == y.1);
    Value::Array(hits.into_iter().take(100).map(|h| h.2).collect())
}

/// 0 exact, 1 last component exact, 2 prefix of the last component, 3 substring,
/// 4 subsequence; `None` when the query's characters do not all occur in order.
fn fuzzy(q: &str, name: &str) -> Option<u8> {
    let last = name.rsplit('.').next().unwrap_or(name);
    if name == q {
        Some(0)
    } else if last == q {
        Some(1)
    } else if last.starts_with(q) {
        Some(2)
    } else if name.contains(q) {
        Some(3)
    } else {
        let mut it = name.chars();
        q.chars().all(|c| it.any(|n| n == c)).then_some(4)
    }
}

pub fn document_symbols(doc: &Analysis) -> Value {
    fn one(t: &Text, s: &Symbol) -> Value {
        let mut v = json!({
            "name": s.name,
            "kind": s.kind,
            "range": t.range(s.range.0, s.range.1),
            "selectionRange": t.range(s.selection.0, s.selection.1),
        });
        if let Some(c) = &s.children {
            v["children"] = Value::Array(c.iter().map(|c| one(t, c)).collect());
        }
        v
    }
    Value::Array(
        doc.outline
            .symbols
            .iter()
            .map(|s| one(&doc.text, s))
            .collect(),
    )
}

/// The type of a declaration as a pi type: `(a b : Nat) → Nat`.
pub fn pi_type(d: &Decl) -> String {
    let mut parts = crate::signature::binder_groups(&d.binders);
    parts.push(d.ty.clone().unwrap_or_else(|| "?".into()));
    parts.join(" → ")
}

fn completion_kind(d: &Decl) -> u32 {
    match d.keyword.as_str() {
        "field" => 5,
        "ctor" => 4,
        "structure" | "class" => 22,
        _ if !d.binders.is_empty() || d.ty.as_deref().is_some_and(|t| t.contains('→')) => 3,
        _ => 21,
    }
}

pub fn completion(index: &Index, doc: &Analysis, uri: &str, offset: usize) -> Value {
    let code = doc.code();
    let prefix = match lexer::ident_at(code, offset) {
        Some((a, b)) if b == offset || a < offset => &code[a..offset.min(b)],
        _ => "",
    };
    let (ns, opens) = match doc.outline.command_at(offset) {
        Some(c) => (c.ns.join("."), c.opens.clone()),
        None => (String::new(), Vec::new()),
    };
    let pos = doc.text.pos(offset);
    let mut items: Vec<(String, Value)> = Vec::new();
    for (full, f) in &index.names {
        let mut shown = vec![full.as_str()];
        for scope in std::iter::once(&ns).chain(opens.iter()) {
            if !scope.is_empty()
                && let Some(rest) = full
                    .strip_prefix(scope.as_str())
                    .and_then(|r| r.strip_prefix('.'))
            {
                shown.push(rest);
            }
        }
        let Some(label) = shown
            .into_iter()
            .filter(|s| s.starts_with(prefix))
            .min_by_key(|s| s.len())
        else {
            continue;
        };
        if prefix.is_empty() {
            continue;
        }
        items.push((
            label.to_owned(),
            json!({
                "label": label,
                "kind": completion_kind(f.decl()),
                "data": [uri, pos.line, pos.character, 0, format!("c{full}")],
            }),
        ));
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    json!({"items": items.into_iter().map(|i| i.1).collect::<Vec<_>>(), "isIncomplete": false})
}

pub fn completion_resolve(index: &Index, item: &Value) -> Value {
    let mut item = item.clone();
    let full = item["data"][4].as_str().and_then(|s| s.strip_prefix('c'));
    if let Some(f) = full.and_then(|n| index.get(n)) {
        item["detail"] = json!(pi_type(f.decl()));
    }
    item
}
