//! The rules against what real Lean sent: every publish of a document's first version in Lean's
//! own interactive-test expectations (`../shared/lean-transcripts`, the files beside each
//! `X.lean`), checked against that file's text. Skipped, and saying so, where the transcripts
//! are not present (`LEAN_TRANSCRIPTS_DIR` names them elsewhere).

use std::path::{Path, PathBuf};

use lean_contract::Checker;
use serde_json::{Value, json};

fn transcripts() -> PathBuf {
    match std::env::var_os("LEAN_TRANSCRIPTS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/lean-transcripts"),
    }
}

/// Every JSON value of an expectation file (they are concatenated, pretty-printed).
fn values(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .collect()
}

/// The violations in the version-1 publishes of `expected`, the output for `lean`.
fn check(lean: &Path, expected: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(lean).unwrap();
    let mut checker = Checker::new();
    let caps = json!({"lean": {"incrementalDiagnosticSupport": true}});
    checker.client(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                           "params": {"capabilities": caps}}));
    checker.server(&json!({"jsonrpc": "2.0", "id": 0, "result": {}}));
    checker.client(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    checker.server(&json!({"jsonrpc": "2.0", "id": "register_lean_watcher",
                           "method": "client/registerCapability", "params": {}}));
    let mut opened = Vec::new();
    let mut publishes = 0;
    let mut found = Vec::new();
    for value in values(expected) {
        let params = value.get("params").unwrap_or(&value);
        let (Some(uri), Some(1), Some(_)) = (
            params.get("uri").and_then(Value::as_str),
            params.get("version").and_then(Value::as_i64),
            params.get("diagnostics"),
        ) else {
            continue;
        };
        if !opened.iter().any(|u| u == uri) {
            opened.push(uri.to_owned());
            checker.client(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "lean", "version": 1,
                                            "text": text}}}));
        }
        publishes += 1;
        let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                             "params": params});
        found.extend(checker.server(&publish).iter().map(ToString::to_string));
    }
    (publishes, found)
}

#[test]
fn lean_s_own_publishes_keep_every_rule() {
    let dir = transcripts();
    if !dir.is_dir() {
        println!("skipped: {} not present", dir.display());
        return;
    }
    let mut publishes = 0;
    let mut found = Vec::new();
    for topic in std::fs::read_dir(&dir).unwrap().flatten() {
        for file in std::fs::read_dir(topic.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let lean = file.path();
            if lean.extension().is_none_or(|e| e != "lean") {
                continue;
            }
            let name = lean.file_name().unwrap().to_string_lossy().into_owned();
            for suffix in [".out.expected", ".expected.out", ".content_diag.json"] {
                let expected = lean.with_file_name(format!("{name}{suffix}"));
                if expected.is_file() {
                    let (n, f) = check(&lean, &expected);
                    publishes += n;
                    found.extend(f.into_iter().map(|v| format!("{name}: {v}")));
                }
            }
        }
    }
    println!("{publishes} publishes of Lean's checked");
    assert!(publishes > 0, "no publish found under {}", dir.display());
    assert_eq!(found, Vec::<String>::new());
}
