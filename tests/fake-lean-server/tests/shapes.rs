//! The fake's answers against the catalog of Lean's result shapes (`shapes.json`), and the
//! catalog against the transcripts it was derived from.

mod support;

use fake_lean::shapes::{self, Shape};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{Client, Opts};

fn catalog_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shapes.json")
}

fn catalog() -> Value {
    serde_json::from_str(&std::fs::read_to_string(catalog_path()).unwrap()).unwrap()
}

fn transcripts() -> PathBuf {
    match std::env::var_os("LEAN_TRANSCRIPTS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/lean-transcripts"),
    }
}

#[test]
fn catalog_matches_the_transcripts() {
    let dir = transcripts();
    if !dir.is_dir() {
        println!("skipped: ../shared/lean-transcripts not present");
        return;
    }
    let derived = shapes::derive(&dir).unwrap();
    if std::env::var_os("UPDATE_SHAPES").is_some() {
        let text = serde_json::to_string_pretty(&derived).unwrap() + "\n";
        std::fs::write(catalog_path(), text).unwrap();
    }
    assert_eq!(
        derived,
        catalog(),
        "shapes.json is stale: rerun with UPDATE_SHAPES=1"
    );
    assert_eq!(derived["derivedFrom"].as_array().unwrap().len(), 29);
}

fn shape(method: &str) -> Shape {
    shapes::lookup(&catalog(), method).unwrap_or_else(|| panic!("{method} not in the catalog"))
}

fn conforms(method: &str, v: &Value) {
    // `null` hover and term-goal answers are documented (reference §1.7, §1.8) but appear in
    // no transcript.
    if v.is_null() && matches!(method, "textDocument/hover" | "$/lean/plainTermGoal") {
        return;
    }
    if let Err(e) = shape(method).check(v) {
        panic!("{method} answer does not match Lean's shape: {e}\nanswer: {v}");
    }
}

#[test]
fn fake_answers_conform_to_the_catalog() {
    let mut c = Client::start(
        support::Project::new(),
        Opts::default()
            .env("FAKE_LEAN_INCREMENTAL", "1")
            .env("FAKE_LEAN_SETUP_LINES", "✔ [1/1] Built Fixture.Basic"),
    );
    // As Lean's own test runner, whose output the catalog was derived from, declares them.
    c.handshake(json!({"lean": {"silentDiagnosticSupport": true,
                                "incrementalDiagnosticSupport": true}}));
    let basic = c.open("Fixture/Basic.lean");
    let uses = c.open("Fixture/Uses.lean");
    let broken = c.open("Fixture/TypeError.lean");
    let holes = c.open("Fixture/Holes.lean");
    let mut publishes = Vec::new();
    for u in [&basic, &uses, &broken, &holes] {
        publishes.extend(
            c.sync(u, 1)
                .into_iter()
                .filter(|m| m["method"] == "textDocument/publishDiagnostics"),
        );
    }
    let at = Client::at;
    let mut answers: Vec<(&str, Value)> = vec![
        ("textDocument/hover", c.call("textDocument/hover", at(&basic, 7, 5))),
        ("textDocument/hover", c.call("textDocument/hover", at(&uses, 8, 34))),
        ("textDocument/hover", c.call("textDocument/hover", at(&basic, 8, 0))),
        ("textDocument/definition", c.call("textDocument/definition", at(&basic, 16, 36))),
        ("textDocument/definition", c.call("textDocument/definition", at(&uses, 8, 34))),
        ("textDocument/definition", c.call("textDocument/definition", at(&basic, 8, 0))),
        ("textDocument/declaration", c.call("textDocument/declaration", at(&basic, 16, 36))),
        ("textDocument/typeDefinition", c.call("textDocument/typeDefinition", at(&uses, 14, 5))),
        ("textDocument/documentSymbol", c.call("textDocument/documentSymbol", json!({"textDocument": {"uri": basic}}))),
        ("workspace/symbol", c.call("workspace/symbol", json!({"query": "double"}))),
        ("$/lean/plainGoal", c.call("$/lean/plainGoal", at(&basic, 23, 3))),
        ("$/lean/plainGoal", c.call("$/lean/plainGoal", at(&basic, 24, 6))),
        ("$/lean/plainGoal", c.call("$/lean/plainGoal", at(&basic, 7, 0))),
        ("$/lean/plainTermGoal", c.call("$/lean/plainTermGoal", at(&basic, 24, 11))),
        ("$/lean/plainTermGoal", c.call("$/lean/plainTermGoal", at(&basic, 4, 0))),
        ("textDocument/semanticTokens/full", c.call("textDocument/semanticTokens/full", json!({"textDocument": {"uri": basic}}))),
        ("textDocument/inlayHint", c.call("textDocument/inlayHint", json!({"textDocument": {"uri": basic}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}}))),
    ];
    let refs = json!({"textDocument": {"uri": basic}, "position": {"line": 7, "character": 5}, "context": {"includeDeclaration": true}});
    answers.push((
        "textDocument/references",
        c.call("textDocument/references", refs),
    ));
    // Signature help and completion need an application and a prefix.
    let extra = c.project.uri("Fixture/Extra.lean");
    c.open_text(
        &extra,
        "import Fixture.Basic\nopen Fixture\n#check add 1 \n#check dou\n",
        1,
        None,
    );
    c.sync(&extra, 1);
    answers.push((
        "textDocument/signatureHelp",
        c.call("textDocument/signatureHelp", at(&extra, 2, 13)),
    ));
    answers.push((
        "textDocument/signatureHelp",
        c.call("textDocument/signatureHelp", at(&extra, 0, 0)),
    ));
    let completion = c.call("textDocument/completion", at(&extra, 3, 10));
    let item = completion["items"][0].clone();
    answers.push(("textDocument/completion", completion));
    answers.push((
        "completionItem/resolve",
        c.call("completionItem/resolve", item),
    ));
    // The transcript form of a code action: eager, with data.
    let ca = c.project.uri("Fixture/CodeAction.lean");
    c.open_text(&ca, "example : True := by\n  simp? -- fake: code-action \"Try this: simp only\" \"simp only\" on \"simp?\" data\n", 1, None);
    c.sync(&ca, 1);
    let params = json!({"textDocument": {"uri": ca}, "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 4}}, "context": {"diagnostics": []}});
    let actions = c.call("textDocument/codeAction", params);
    answers.push((
        "codeAction/resolve",
        c.call("codeAction/resolve", actions[0].clone()),
    ));
    answers.push(("textDocument/codeAction", actions));
    for (method, v) in &answers {
        conforms(method, v);
    }
    // Publishes: the elaboration ones conform as they are. Lake setup lines and the
    // stale-import sticky carry no `source` (reference Gaps 5–6), which Lean's test outputs
    // never show; they must conform otherwise.
    assert!(publishes.len() >= 6);
    for p in &publishes {
        let mut params = p["params"].clone();
        for d in params["diagnostics"].as_array_mut().unwrap() {
            if d.get("source").is_none() {
                assert!(
                    d["message"].as_str().unwrap().starts_with("✔ [1/1] Built"),
                    "{d}"
                );
                d["source"] = json!("Lean 4");
            }
        }
        conforms("textDocument/publishDiagnostics", &params);
    }
    let kinds: Vec<bool> = publishes
        .iter()
        .flat_map(|p| p["params"]["diagnostics"].as_array().unwrap().clone())
        .map(|d| d.get("leanTags").is_some())
        .collect();
    assert!(kinds.contains(&true) && kinds.contains(&false));
}
