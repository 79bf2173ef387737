//! Proof-state and edit answers: `$/lean/plainGoal` and `$/lean/plainTermGoal` from the tactic
//! blocks (README "Goals", reference §B), `textDocument/codeAction` and `codeAction/resolve`
//! from `code-action` directives (§D), and keyword-only semantic tokens.

use crate::analysis::Analysis;
use crate::directives::Directive;
use crate::goals::{self, Goal};
use crate::lexer;
use serde_json::{Value, json};

pub fn plain_goal(doc: &Analysis, offset: usize) -> Value {
    let Some(b) = doc.block_at(offset) else {
        return Value::Null;
    };
    let col = doc.text.pos(offset).character;
    match b.goals_at(offset, col, doc.text.as_str().len()) {
        Some(g) => goals::plain_goal_json(g),
        None => Value::Null,
    }
}

fn term_goal(g: &Goal) -> String {
    Goal {
        case: None,
        ..g.clone()
    }
    .render()
}

/// Inside `exact t`: the goal before it, over `t`; in a term-mode body: the declaration's
/// statement, over the body.
pub fn plain_term_goal(doc: &Analysis, offset: usize) -> Value {
    if let Some(b) = doc.block_at(offset) {
        let col = doc.text.pos(offset).character;
        let eof = doc.text.as_str().len();
        return match b.node_at(offset, col, eof).map(|i| &b.nodes[i]) {
            Some(n) => match (n.term, n.before.first()) {
                (Some((x, y)), Some(g)) if x <= offset && offset <= y => {
                    json!({"goal": term_goal(g), "range": doc.text.range(x, y)})
                }
                _ => Value::Null,
            },
            None => Value::Null,
        };
    }
    let Some(d) = doc.outline.decl_at(offset) else {
        return Value::Null;
    };
    let (Some(assign), Some(ty)) = (d.assign, d.ty.as_deref()) else {
        return Value::Null;
    };
    let cmd = doc.outline.decl_command(d);
    let body = lexer::skip_ws(doc.code(), assign, cmd.end);
    if offset < body || offset > cmd.end {
        return Value::Null;
    }
    let g = goals::initial_goal(&d.binders, ty);
    json!({"goal": term_goal(&g), "range": doc.text.range(body, cmd.end)})
}

/// The `code-action` directives one provider run offers, in order (an action's
/// `providerResultIndex` is its index here): Lean runs the providers on the one command whose
/// snapshot is the first with `endPos ≥ range.end` (SPEC §D), so those of that command (its
/// span runs to the next command's start) whose target line lies in the requested lines.
fn offered<'a>(doc: &'a Analysis, params: &Value) -> Vec<&'a Directive> {
    let range = params.get("range").and_then(crate::text::range_from_json);
    let Some((start, end)) = range else {
        return Vec::new();
    };
    let at = doc.text.offset(end);
    let Some(command) = doc.outline.commands.iter().find(|c| c.span_end >= at) else {
        return Vec::new();
    };
    doc.directives
        .iter()
        .filter(|d| d.name == "code-action")
        .filter(|d| start.line <= d.target && d.target <= end.line)
        .filter(|d| {
            let (a, _) = doc.directive_span(d);
            command.start <= a && a < command.span_end.max(command.start + 1)
        })
        .collect()
}

/// A directive's edit: its span replaced by its new text, versioned (SPEC §D "Edit shape").
fn edit_of(doc: &Analysis, uri: &str, version: i64, d: &Directive) -> Value {
    let (a, b) = doc.directive_span(d);
    json!({"documentChanges": [{
        "textDocument": {"uri": uri, "version": version},
        "edits": [{"range": doc.text.range(a, b), "newText": d.str_arg(1).unwrap_or_default()}],
    }]})
}

/// The actions of the `code-action` directives whose target line lies in the requested range.
pub fn code_actions(doc: &Analysis, uri: &str, version: i64, params: &Value) -> Value {
    let mut out = Vec::new();
    for (index, d) in offered(doc, params).into_iter().enumerate() {
        let title = d.str_arg(0).unwrap_or("fake action");
        let mut action = json!({"title": title, "kind": "quickfix"});
        let lazy = d.has_flag("lazy");
        if !lazy {
            action["edit"] = edit_of(doc, uri, version, d);
        }
        if d.has_flag("preferred") {
            action["isPreferred"] = json!(true);
        }
        if lazy || d.has_flag("data") {
            action["data"] = json!({
                "params": params,
                "providerName": d.key_str("provider").unwrap_or("FakeLean.directiveCodeActionProvider"),
                "providerResultIndex": index,
            });
        }
        out.push(action);
    }
    Value::Array(out)
}

/// `codeAction/resolve`: re-runs the provider for `data.params` and returns the action at
/// `data.providerResultIndex` of that run, with its edit (SPEC §D).
pub fn resolve_code_action(
    doc: &Analysis,
    uri: &str,
    version: i64,
    action: &Value,
) -> Result<Value, String> {
    let data = action.get("data").ok_or("Expected a data field")?;
    let params = data.get("params").ok_or("Expected a data field")?;
    let index = data["providerResultIndex"].as_u64().unwrap_or(0) as usize;
    let fresh = code_actions(doc, uri, version, params);
    let mut fresh = fresh
        .as_array()
        .and_then(|a| a.get(index))
        .cloned()
        .ok_or("Can't resolve; nothing further to resolve")?;
    if fresh.get("edit").is_none() {
        // A lazy action: only resolution computes its edit.
        if let Some(d) = offered(doc, params).get(index) {
            fresh["edit"] = edit_of(doc, uri, version, d);
        }
    }
    Ok(fresh)
}

/// Lean's semantic token legend (2025 watchdog).
pub fn legend() -> Value {
    json!({
        "tokenTypes": [
            "keyword", "variable", "property", "function", "namespace", "type", "class",
            "enum", "interface", "struct", "typeParameter", "parameter", "enumMember",
            "event", "method", "macro", "modifier", "comment", "string", "number",
            "regexp", "operator", "decorator", "leanSorryLike"
        ],
        "tokenModifiers": [
            "declaration", "definition", "readonly", "static", "deprecated", "abstract",
            "async", "modification", "documentation", "defaultLibrary"
        ]
    })
}

const KEYWORDS: [&str; 24] = [
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
    "namespace",
    "section",
    "end",
    "open",
    "import",
    "where",
    "by",
    "fun",
    "have",
    "show",
    "let",
    "match",
    "with",
];

/// Keyword tokens only (type 0), delta-encoded, optionally limited to a line range.
pub fn semantic_tokens(doc: &Analysis, lines: Option<(u32, u32)>) -> Value {
    let code = doc.code();
    let mut data = Vec::new();
    let (mut last_line, mut last_col) = (0u32, 0u32);
    for (a, b) in lexer::idents(code, 0, code.len()) {
        if !KEYWORDS.contains(&&code[a..b]) {
            continue;
        }
        let p = doc.text.pos(a);
        if lines.is_some_and(|(x, y)| p.line < x || p.line > y) {
            continue;
        }
        let delta_col = if p.line == last_line {
            p.character - last_col
        } else {
            p.character
        };
        data.extend([p.line - last_line, delta_col, (b - a) as u32, 0, 0]);
        (last_line, last_col) = (p.line, p.character);
    }
    json!({"data": data})
}
