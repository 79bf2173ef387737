//! Result shapes: the key sets and JSON types of Lean's answers per method, derived from the
//! interactive-test transcripts (`../shared/lean-transcripts`, read with the runner convention
//! its README describes), and a check that a JSON value conforms to a shape. The derived
//! catalog is checked in as `shapes.json`; the tests compare the fake's answers with it and
//! re-derive it from the transcripts when they are present.
//!
//! A shape is `"null"`, `"boolean"`, `"number"`, `"string"`, `{"array": shape|null}` (`null`:
//! only empty arrays seen), `{"object": {key: shape}}` (exactly these keys) or
//! `{"anyOf": [shape…]}`; objects with different key sets stay separate alternatives.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Null,
    Bool,
    Number,
    Str,
    Array(Option<Box<Shape>>),
    Object(BTreeMap<String, Shape>),
    AnyOf(Vec<Shape>),
}

impl Shape {
    pub fn of(v: &Value) -> Shape {
        match v {
            Value::Null => Shape::Null,
            Value::Bool(_) => Shape::Bool,
            Value::Number(_) => Shape::Number,
            Value::String(_) => Shape::Str,
            Value::Array(a) => {
                Shape::Array(a.iter().map(Shape::of).reduce(Shape::merge).map(Box::new))
            }
            Value::Object(o) => {
                Shape::Object(o.iter().map(|(k, v)| (k.clone(), Shape::of(v))).collect())
            }
        }
    }

    fn same_kind(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Object(a), Shape::Object(b)) => a.keys().eq(b.keys()),
            (Shape::Array(_), Shape::Array(_)) => true,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// The least shape covering both.
    pub fn merge(self, other: Shape) -> Shape {
        let mut variants = self.into_variants();
        for o in other.into_variants() {
            match variants.iter().position(|v| v.same_kind(&o)) {
                Some(i) => {
                    let v = variants.remove(i);
                    variants.insert(i, v.merge_same(o));
                }
                None => variants.push(o),
            }
        }
        if variants.len() == 1 {
            variants.pop().expect("one variant")
        } else {
            variants.sort_by_key(|v| v.to_json().to_string());
            Shape::AnyOf(variants)
        }
    }

    fn into_variants(self) -> Vec<Shape> {
        match self {
            Shape::AnyOf(v) => v,
            s => vec![s],
        }
    }

    fn merge_same(self, other: Shape) -> Shape {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => Shape::Array(match (a, b) {
                (Some(a), Some(b)) => Some(Box::new(a.merge(*b))),
                (a, b) => a.or(b),
            }),
            (Shape::Object(mut a), Shape::Object(b)) => {
                for (k, v) in b {
                    let merged = match a.remove(&k) {
                        Some(x) => x.merge(v),
                        None => v,
                    };
                    a.insert(k, merged);
                }
                Shape::Object(a)
            }
            (a, _) => a,
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Shape::Null => json!("null"),
            Shape::Bool => json!("boolean"),
            Shape::Number => json!("number"),
            Shape::Str => json!("string"),
            Shape::Array(i) => json!({"array": i.as_ref().map(|s| s.to_json())}),
            Shape::Object(o) => {
                let mut m = Map::new();
                for (k, v) in o {
                    m.insert(k.clone(), v.to_json());
                }
                json!({"object": m})
            }
            Shape::AnyOf(v) => json!({"anyOf": v.iter().map(Shape::to_json).collect::<Vec<_>>()}),
        }
    }

    pub fn from_json(v: &Value) -> Option<Shape> {
        Some(match v {
            Value::String(s) => match s.as_str() {
                "null" => Shape::Null,
                "boolean" => Shape::Bool,
                "number" => Shape::Number,
                "string" => Shape::Str,
                _ => return None,
            },
            Value::Object(o) if o.contains_key("array") => Shape::Array(match &o["array"] {
                Value::Null => None,
                s => Some(Box::new(Shape::from_json(s)?)),
            }),
            Value::Object(o) if o.contains_key("object") => Shape::Object(
                o["object"]
                    .as_object()?
                    .iter()
                    .map(|(k, v)| Some((k.clone(), Shape::from_json(v)?)))
                    .collect::<Option<_>>()?,
            ),
            Value::Object(o) if o.contains_key("anyOf") => Shape::AnyOf(
                o["anyOf"]
                    .as_array()?
                    .iter()
                    .map(Shape::from_json)
                    .collect::<Option<_>>()?,
            ),
            _ => return None,
        })
    }

    /// `Ok` when `v` has this shape; the error names the first mismatch by JSON path.
    pub fn check(&self, v: &Value) -> Result<(), String> {
        self.check_at(v, "$")
    }

    fn check_at(&self, v: &Value, path: &str) -> Result<(), String> {
        let fail = |what: &str| Err(format!("{path}: expected {what}, got {v}"));
        match (self, v) {
            (Shape::Null, Value::Null)
            | (Shape::Bool, Value::Bool(_))
            | (Shape::Number, Value::Number(_))
            | (Shape::Str, Value::String(_)) => Ok(()),
            (Shape::Array(items), Value::Array(a)) => {
                for (i, x) in a.iter().enumerate() {
                    match items {
                        Some(s) => s.check_at(x, &format!("{path}[{i}]"))?,
                        None => return fail("an empty array"),
                    }
                }
                Ok(())
            }
            (Shape::Object(keys), Value::Object(o)) => {
                if !keys
                    .keys()
                    .eq(o.keys().collect::<std::collections::BTreeSet<_>>())
                {
                    let want: Vec<&String> = keys.keys().collect();
                    return fail(&format!("exactly the keys {want:?}"));
                }
                for (k, s) in keys {
                    s.check_at(&o[k], &format!("{path}.{k}"))?;
                }
                Ok(())
            }
            (Shape::AnyOf(vs), _) => {
                let errs: Vec<String> = vs
                    .iter()
                    .filter_map(|s| s.check_at(v, path).err())
                    .collect();
                if errs.len() < vs.len() {
                    Ok(())
                } else {
                    Err(errs.join(" | "))
                }
            }
            (s, _) => fail(&s.to_json().to_string()),
        }
    }
}

/// The values and text lines of a runner output file, in order.
fn items(out: &str) -> Vec<Result<Value, String>> {
    let mut v = Vec::new();
    let mut rest = out;
    while !rest.trim().is_empty() {
        rest = rest.trim_start();
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        match stream.next() {
            Some(Ok(x)) => {
                v.push(Ok(x));
                rest = &rest[stream.byte_offset()..];
            }
            _ => {
                let end = rest.find('\n').unwrap_or(rest.len());
                v.push(Err(rest[..end].to_owned()));
                rest = &rest[end..];
            }
        }
    }
    v
}

/// The runner directives of a test file, in order: the method word of each `--^`/`--v` line.
fn directives(lean: &str) -> Vec<String> {
    lean.lines()
        .filter_map(|l| {
            let parts: Vec<&str> = l.split("--").collect();
            if parts.len() != 2 || !(parts[1].starts_with('^') || parts[1].starts_with('v')) {
                return None;
            }
            let d = parts[1][1..].trim();
            Some(d.split(':').next().unwrap_or(d).trim().to_owned())
        })
        .collect()
}

type Observations = BTreeMap<String, Shape>;

fn observe(obs: &mut Observations, method: &str, v: &Value) {
    let s = Shape::of(v);
    let merged = match obs.remove(method) {
        Some(old) => old.merge(s),
        None => s,
    };
    obs.insert(method.to_owned(), merged);
}

type Items = std::iter::Peekable<std::vec::IntoIter<Result<Value, String>>>;

/// The next JSON value, skipping text lines.
fn next_value(it: &mut Items) -> Result<Value, String> {
    if let Some(v) = it.by_ref().flatten().next() {
        return Ok(v);
    }
    Err("output ended early".to_owned())
}

/// Walks one test's directives over its output, recording each result under its method.
fn walk(lean: &str, out: &str, obs: &mut Observations) -> Result<(), String> {
    let mut it = items(out).into_iter().peekable();
    for d in directives(lean) {
        let method = match d.as_str() {
            "sync" | "waitFor" | "waitForILeans" | "insert" | "delete" | "change" => continue,
            "collectDiagnostics" => {
                while matches!(it.peek(), Some(Err(_))) {
                    it.next();
                }
                if let Some(Ok(v)) = it.peek()
                    && v.get("diagnostics").is_some()
                {
                    let v = next_value(&mut it)?;
                    observe(obs, "textDocument/publishDiagnostics", &v);
                }
                continue;
            }
            "codeAction" => "textDocument/codeAction",
            "completion" => "textDocument/completion",
            "references" => "textDocument/references",
            "symbols" => "workspace/symbol",
            "inlayHints" => "textDocument/inlayHint",
            m if m.contains('/') => m,
            other => return Err(format!("unknown directive {other}")),
        };
        let params = next_value(&mut it)?;
        if !params.is_object() {
            return Err(format!("{method}: expected params, got {params}"));
        }
        let result = next_value(&mut it)?;
        observe(obs, method, &result);
        let resolve = match method {
            "textDocument/codeAction" => Some(("codeAction/resolve", result.clone())),
            "textDocument/completion" => Some(("completionItem/resolve", result["items"].clone())),
            _ => None,
        };
        if let Some((rmethod, Value::Array(list))) = resolve {
            // One "Resolution of …:" line and value per item with data (some runner
            // versions print none for completions).
            for _ in list.iter().filter(|x| x.get("data").is_some()) {
                match it.peek() {
                    Some(Err(line)) if line.starts_with("Resolution of") => it.next(),
                    _ => break,
                };
                let r = next_value(&mut it)?;
                observe(obs, rmethod, &r);
            }
        }
    }
    Ok(())
}

/// Derives the catalog from a transcript directory.
pub fn derive(dir: &Path) -> Result<Value, String> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    let mut obs = Observations::new();
    let mut used = Vec::new();
    for lean in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "lean"))
    {
        let out = ["out.expected", "expected.out"]
            .iter()
            .map(|s| lean.with_extension(format!("lean.{s}")))
            .find(|p| p.exists());
        let Some(out) = out else { continue };
        let read =
            |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
        walk(&read(lean)?, &read(&out)?, &mut obs)
            .map_err(|e| format!("{}: {e}", lean.display()))?;
        used.push(rel(dir, &out));
    }
    for f in files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".content_diag.json"))
    {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(f).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
        observe(&mut obs, "textDocument/publishDiagnostics", &v["params"]);
        used.push(rel(dir, f));
    }
    let mut methods = Map::new();
    for (m, s) in &obs {
        methods.insert(m.clone(), s.to_json());
    }
    Ok(json!({
        "about": "Result shapes per method (publishDiagnostics: its params), derived by src/shapes.rs from the Lean interactive-test transcripts listed under derivedFrom. Regenerate with UPDATE_SHAPES=1 cargo test -p lean-beam-fake-lean --test shapes.",
        "derivedFrom": used,
        "methods": methods,
    }))
}

fn rel(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir)
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The shape of `method` in a catalog.
pub fn lookup(catalog: &Value, method: &str) -> Option<Shape> {
    Shape::from_json(catalog["methods"].get(method)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_key_sets_apart() {
        let a = Shape::of(&json!([{"uri": "u", "range": 1}]));
        let b = Shape::of(&json!([{"targetUri": "u", "targetRange": 1}]));
        let both = a.merge(b).merge(Shape::of(&json!([])));
        assert!(both.check(&json!([{"uri": "x", "range": 2}])).is_ok());
        assert!(both.check(&json!([{"uri": "x"}])).is_err());
        assert_eq!(Shape::from_json(&both.to_json()), Some(both));
    }

    #[test]
    fn items_and_directives() {
        let v = items("{\"a\": 1}\nResolution of x:\n[1,\n 2]\nnull\n");
        assert_eq!(v.len(), 4);
        assert_eq!(v[1], Err("Resolution of x:".into()));
        assert_eq!(v[3], Ok(Value::Null));
        assert_eq!(
            directives("x\n  --^ textDocument/hover\n--v symbols: Q\n#check f -- comment\n"),
            ["textDocument/hover", "symbols"]
        );
    }
}
