//! The oracle's reference answers: what one call returns alone, on a fresh server and a fresh
//! project whose file holds the text, at version 1; memoised for the whole test process.
//!
//! Contract: [`normalise`] is how every answer is compared: machine paths are already
//! placeholders (see `driver`), every `version` is checked to be the document version the
//! answer is about and replaced, a save's `source_hash` is checked to be the FNV-1a 64 of the
//! exact text and replaced, a `receipt` is checked to name the version and the SHA-256 of the
//! exact text and replaced, `document_progress` is reduced to whether it is done, `workspace`,
//! `note` and `lean_update`'s `changed` are dropped, and a `next_handle` object becomes a
//! marker (a `null` one stays `null`). A handle chain is replayed: `lean_run_at_handle` with the
//! chain's first text, `lean_run_with` with each next one, then the call itself on the last
//! handle. Answers are computed for the first file and renamed for the others (their texts
//! differ only in the namespace, which is in every name, path and module).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

use super::driver::Driver;
use super::era::Era;
use super::project::{project, scratch};
use super::run::Chain;
use super::texts::{self, ANCHORS, FILES, Text};

/// FNV-1a 64 of `text`'s UTF-8 bytes, as `lean_save` names the text it checked.
pub fn source_hash(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// One answer, about `version` of `text`, as the oracle compares it; `wrong` gets what
/// names another version or text.
pub fn normalise(
    tool: &str,
    answer: &Value,
    version: i64,
    text: &str,
    wrong: &mut Vec<String>,
) -> Value {
    if let Some(error) = answer.get("error") {
        return json!({ "rpcError": error });
    }
    let result = &answer["result"];
    let mut content = result["structuredContent"].clone();
    if let Some(object) = content.as_object_mut() {
        object.remove("workspace");
        object.remove("note");
        if tool == "lean_update" {
            object.remove("changed");
        }
        if let Some(hash) = object.get_mut("source_hash") {
            if *hash != source_hash(text) {
                wrong.push(format!("source_hash {hash} is not the text's"));
            }
            *hash = json!("[source_hash]");
        }
    }
    walk(&mut content, version, text, wrong);
    let kind = if result["isError"] == true {
        "error"
    } else {
        "result"
    };
    json!({ kind: content })
}

/// The SHA-256 of `text` in lowercase hex, as receipts name the text Lean checked.
pub fn text_sha256(text: &str) -> String {
    crate::harness::sha256_hex(text.as_bytes())
}

fn walk(value: &mut Value, version: i64, text: &str, wrong: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, field) in object.iter_mut() {
                match key.as_str() {
                    "version" if field.is_i64() => {
                        if field.as_i64() != Some(version) {
                            wrong.push(format!("version {field}"));
                        }
                        *field = json!("[version]");
                    }
                    "document_progress" if field.is_object() => {
                        *field = field["done"].clone();
                    }
                    "next_handle" if field.is_object() => *field = json!("[handle]"),
                    // What Lean said of the text depends on what ran before (another call's
                    // barrier): the receipt is checked to name the text, then set aside.
                    "receipt" if field.is_object() => {
                        if field["version"].as_i64() != Some(version) {
                            wrong.push(format!("receipt version {}", field["version"]));
                        }
                        if field["text_sha256"] != text_sha256(text) {
                            wrong.push(format!("receipt text_sha256 {}", field["text_sha256"]));
                        }
                        *field = json!("[receipt]");
                    }
                    _ => walk(field, version, text, wrong),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, version, text, wrong)),
        _ => {}
    }
}

/// A call to answer alone.
pub struct Query<'a> {
    pub tool: &'a str,
    pub file: usize,
    /// Its arguments besides workspace, path, version and handle.
    pub key: &'a Value,
    /// The chain a handle tool continues or releases.
    pub chain: Option<&'a Chain>,
    pub text: Text,
}

const VERSIONED: [&str; 4] = [
    "lean_hover",
    "lean_goals",
    "lean_run_at",
    "lean_run_at_handle",
];

fn cache() -> &'static Mutex<HashMap<String, Value>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Reference answers computed so far in this process (the cache's size).
pub fn runs() -> usize {
    cache().lock().unwrap_or_else(|p| p.into_inner()).len()
}

/// The normalised answer of `query` alone on a fresh project.
pub fn alone(query: &Query<'_>) -> Value {
    let replays = matches!(
        query.tool,
        "lean_run_with" | "lean_run_with_linear" | "lean_release"
    );
    let chain = query.chain.filter(|_| replays);
    let key = json!({
        "tool": query.tool,
        "arguments": query.key,
        "chain": chain.map(|c| json!({"anchor": c.anchor, "steps": c.steps})),
        "text": format!("{:?}", query.text.variant),
    })
    .to_string();
    let known = cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    let answer = known.unwrap_or_else(|| {
        let answer = run_alone(query, chain);
        cache()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, answer.clone());
        answer
    });
    let renamed = answer
        .to_string()
        .replace(&texts::namespace(0), &texts::namespace(query.file));
    serde_json::from_str(&renamed).expect("renaming keeps JSON")
}

fn run_alone(query: &Query<'_>, chain: Option<&Chain>) -> Value {
    let project = project();
    let text = texts::canonical(0, query.text);
    std::fs::write(project.root().join(FILES[0]), &text).expect("write the text");
    let scratch = scratch();
    let mut driver = Driver::start(
        &[project.root()],
        &[],
        Era::default_for_now(),
        scratch.path(),
    );
    let workspace = project.descriptor();
    let path = FILES[0];
    let mut arguments = json!({"workspace": workspace, "path": path});
    for (name, value) in query.key.as_object().expect("an object") {
        arguments[name] = value.clone();
    }
    let ask = |driver: &mut Driver, tool: &str, arguments: Value| -> Value {
        let call = driver.call(tool, arguments);
        assert!(driver.wait_answered(call), "{tool} alone never answered");
        driver.sent[call].answers[0].value.clone()
    };
    let answer = match chain {
        None => {
            if VERSIONED.contains(&query.tool) {
                arguments["version"] = json!(1);
            }
            ask(&mut driver, query.tool, arguments)
        }
        Some(chain) => {
            let anchor = &ANCHORS[chain.anchor];
            let first = json!({"workspace": workspace, "path": path, "version": 1,
                               "line": anchor.line, "character": anchor.character,
                               "text": chain.steps[0]});
            let mut last = ask(&mut driver, "lean_run_at_handle", first);
            // The call itself runs the chain's last text; a release runs none.
            let continued = if query.tool == "lean_release" {
                &chain.steps[1..]
            } else {
                &chain.steps[1..chain.steps.len() - 1]
            };
            for step in continued {
                let handle = &last["result"]["structuredContent"]["next_handle"];
                let next = json!({"workspace": workspace, "path": path, "handle": handle,
                                  "text": step});
                last = ask(&mut driver, "lean_run_with", next);
            }
            let handle = last["result"]["structuredContent"]["next_handle"].clone();
            if handle.is_object() {
                arguments["handle"] = handle;
                ask(&mut driver, query.tool, arguments)
            } else {
                json!({"replay": "the chain made no handle alone", "last": last})
            }
        }
    };
    driver.finish();
    let broken = crate::support::contract::fake_violations_in(scratch.path(), "");
    assert!(
        broken.is_empty(),
        "{} alone: Lean sent what Lean never sends:\n{}",
        query.tool,
        broken.join("\n")
    );
    if answer.get("replay").is_some() {
        return answer;
    }
    let mut wrong = Vec::new();
    let normal = normalise(query.tool, &answer, 1, &text, &mut wrong);
    assert!(
        wrong.is_empty(),
        "{} alone answered about another text: {wrong:?}: {answer}",
        query.tool
    );
    normal
}
