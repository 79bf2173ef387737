//! The checker's answer over the environment (CONTRACT.md "Response"): the statement closure and
//! its hash, the axioms, the kernel replay, the module's declared theorems.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::env::{Constant, Env, components, printed};

/// The request (CONTRACT.md "Request").
pub struct Request {
    pub module: String,
    pub names: Vec<Vec<String>>,
    pub list_theorems: bool,
    pub replay_modules: BTreeSet<String>,
}

impl Request {
    pub fn parse(v: &Value) -> Result<Request, String> {
        if v["checker"] != 1 {
            return Err(format!(
                "request for checker protocol {}, this is protocol 1",
                v["checker"]
            ));
        }
        let strings = |v: &Value| -> Option<Vec<String>> {
            v.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        let module = v["module"].as_str().ok_or("no field module")?.to_owned();
        let names = v["names"]
            .as_array()
            .ok_or("no field names")?
            .iter()
            .map(strings)
            .collect::<Option<Vec<_>>>()
            .ok_or("names: expected an array of arrays of strings")?;
        let replay = strings(&v["replay_modules"]).ok_or("no field replay_modules")?;
        Ok(Request {
            module,
            names,
            list_theorems: v["list_theorems"].as_bool().unwrap_or(false),
            replay_modules: replay.into_iter().collect(),
        })
    }
}

/// The checker's answer over `env` (CONTRACT.md "Response").
pub fn answer(env: &Env, req: &Request, lean_version: &str) -> Value {
    // What earlier theorems of the request replayed is in the kernel's environment already.
    let mut replayed = BTreeSet::new();
    let replay_set = env.replay_set(&req.replay_modules);
    let theorems: Vec<Value> = req
        .names
        .iter()
        .map(|cs| theorem(env, req, &replay_set, cs, &mut replayed))
        .collect();
    let mut out = json!({
        "checker": 1,
        "lean_version": lean_version,
        "module": req.module,
        "theorems": theorems,
    });
    if req.list_theorems {
        let mut declared: Vec<&Constant> = env
            .consts
            .values()
            .filter(|c| c.kind == "theorem" && c.module == req.module)
            .filter(|c| !components(&c.name).iter().any(|p| p.starts_with('_')))
            .collect();
        declared.sort_by(|a, b| a.name.cmp(&b.name));
        let declared: Vec<Vec<String>> = declared
            .into_iter()
            .take(1000)
            .map(|c| components(&c.name))
            .collect();
        out["declared"] = json!(declared);
    }
    out
}

fn theorem(
    env: &Env,
    req: &Request,
    replay_set: &BTreeSet<String>,
    cs: &[String],
    replayed: &mut BTreeSet<String>,
) -> Value {
    let name = printed(cs);
    let Some(c) = env.consts.get(&name) else {
        return json!({"name": cs, "printed": name, "found": false});
    };
    let members = closure(env, c);
    let mut own: Vec<&str> = members
        .iter()
        .filter(|m| req.replay_modules.contains(&m.module))
        .map(|m| m.name.as_str())
        .collect();
    own.sort();
    own.truncate(200);
    json!({
        "name": cs, "printed": name, "found": true, "kind": c.kind, "module": c.module,
        "type": c.ty,
        "closure": {"hash": hash(c, &members), "count": members.len(), "own": own},
        "axioms": axioms(env, c),
        "replay": replay(env, replay_set, c, replayed),
    })
}

/// The statement closure: the constant by its type, then what that reaches (CONTRACT.md).
fn closure<'a>(env: &'a Env, root: &'a Constant) -> Vec<&'a Constant> {
    let mut seen = BTreeSet::from([root.name.as_str()]);
    let mut members = vec![root];
    let mut todo: Vec<&str> = root.type_refs.iter().map(String::as_str).collect();
    while let Some(n) = todo.pop() {
        if !seen.insert(n) {
            continue;
        }
        let Some(c) = env.consts.get(n) else { continue };
        members.push(c);
        todo.extend(c.type_refs.iter().map(String::as_str));
        match c.kind {
            "def" => todo.extend(c.value_refs.iter().map(String::as_str)),
            "inductive" => todo.extend(c.companions.iter().map(String::as_str)),
            _ => {}
        }
    }
    members
}

/// FNV-1a 64 twice (two seeds): the fake's stand-in for the checker's SHA-256, over each
/// member in name order (name, kind, type, a definition's value) and the statement's scope.
fn hash(root: &Constant, members: &[&Constant]) -> String {
    let mut sorted = members.to_vec();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut text = String::new();
    for m in sorted {
        text.push_str(&format!("member {}:{} {}\n", m.name.len(), m.name, m.kind));
        text.push_str(&format!("{}\n", m.ty));
        if let (Some(v), "def") = (&m.value, m.kind) {
            text.push_str(&format!("value {v}\n"));
        }
    }
    for s in &root.scope {
        text.push_str(&format!("scope {s}\n"));
    }
    let fnv = |seed: u64| {
        text.bytes().fold(0xcbf2_9ce4_8422_2325 ^ seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    };
    format!("{:016x}{:016x}", fnv(0), fnv(0x9e37_79b9_7f4a_7c15))
}

/// `Lean.collectAxioms`: every axiom reached through types and values, full names, sorted.
fn axioms(env: &Env, root: &Constant) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut found = BTreeSet::new();
    let mut todo = vec![root.name.as_str()];
    while let Some(n) = todo.pop() {
        if !seen.insert(n) {
            continue;
        }
        let Some(c) = env.consts.get(n) else { continue };
        if c.kind == "axiom" {
            found.insert(c.name.clone());
        }
        found.extend(c.own_axioms.iter().cloned());
        todo.extend(c.type_refs.iter().map(String::as_str));
        todo.extend(c.value_refs.iter().map(String::as_str));
        todo.extend(c.companions.iter().map(String::as_str));
    }
    found.into_iter().collect()
}

/// The kernel replay of the workspace constants `root` depends on, dependencies first.
/// Constants an earlier theorem of the request `replayed` are not replayed again; on success
/// this theorem's join them.
fn replay(
    env: &Env,
    replay_set: &BTreeSet<String>,
    root: &Constant,
    replayed: &mut BTreeSet<String>,
) -> Value {
    let mut order = Vec::new();
    let mut seen = replayed.clone();
    post_order(env, replay_set, &root.name, &mut seen, &mut order);
    let mut checked = 0;
    for c in order {
        if c.is_unsafe {
            continue;
        }
        let unsafe_ref = c
            .type_refs
            .iter()
            .chain(&c.value_refs)
            .find(|r| env.consts.get(*r).is_some_and(|u| u.is_unsafe));
        let error = match (unsafe_ref, c.unchecked) {
            // The kernel's `invalid declaration, it uses unsafe declaration` (`src/kernel`).
            (Some(u), _) => Some(format!(
                "(kernel) invalid declaration, it uses unsafe declaration '{u}'"
            )),
            (None, true) => Some(format!(
                "(kernel) declaration type mismatch, '{}' has type\n  {}\nbut it is expected to have type\n  (not what its value has)",
                c.name, c.ty
            )),
            (None, false) => None,
        };
        if let Some(error) = error {
            return json!({"ok": false, "constant": c.name, "error": error});
        }
        checked += 1;
    }
    *replayed = seen;
    json!({"ok": true, "checked": checked})
}

fn post_order<'a>(
    env: &'a Env,
    replay_set: &BTreeSet<String>,
    name: &str,
    seen: &mut BTreeSet<String>,
    order: &mut Vec<&'a Constant>,
) {
    if !seen.insert(name.to_owned()) {
        return;
    }
    let Some(c) = env.consts.get(name) else {
        return;
    };
    if !replay_set.contains(&c.module) {
        return;
    }
    let next: Vec<&String> = c
        .type_refs
        .iter()
        .chain(&c.value_refs)
        .chain(&c.companions)
        .collect();
    for n in next {
        post_order(env, replay_set, n, seen, order);
    }
    order.push(c);
}
