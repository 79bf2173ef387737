//! What this Lean offers is read from its `initialize` result: a tool whose request Lean's
//! capabilities do not offer is refused by name (`invalidParams`, `leanLacksFeature`) without
//! Lean being asked; the fake plays the 2025 watchdog (no `signatureHelpProvider`) and a Lean
//! without any other optional provider (`FAKE_LEAN_CAPABILITIES`).

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};

fn at(version: i64, line: u64, character: u64) -> Value {
    json!({"version": version, "line": line, "character": character})
}

/// `error` refuses `method` for lack of `capability`, naming both.
fn lacks(error: &Value, method: &str, capability: &str) {
    assert_eq!(error["data"]["reason"], "leanLacksFeature", "{error}");
    assert_eq!(error["data"]["method"], method, "{error}");
    assert_eq!(error["data"]["capability"], capability, "{error}");
    assert_eq!(
        error["data"]["serverInfo"]["name"], "Lean 4 Server",
        "{error}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(capability), "{message}");
    assert!(message.contains("Lean 4 Server 0.3.0"), "{message}");
}

#[test]
fn signature_help_on_the_2025_watchdog_is_refused_without_asking_lean() {
    if crate::harness::fake_only(
        "signature_help_on_the_2025_watchdog_is_refused_without_asking_lean",
    ) {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_CAPABILITIES", "2025")]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"]
        .as_i64()
        .unwrap();
    let error = lean.fails(
        "lean_signature_help",
        args(&project, basic, at(version, 16, 36)),
        "invalidParams",
    );
    lacks(
        &error,
        "textDocument/signatureHelp",
        "signatureHelpProvider",
    );
    assert!(
        error["message"].as_str().unwrap().contains("lean_hover"),
        "{error}"
    );
    // What this Lean has still works, and what it lacks was never asked.
    let hover = lean.ok("lean_hover", args(&project, basic, at(version, 16, 36)));
    assert!(hover["contents"]["value"].is_string(), "{hover}");
    assert!(
        !lean
            .received()
            .iter()
            .any(|m| m == "textDocument/signatureHelp"),
        "{:?}",
        lean.received()
    );
    lean.finish_without_violations();
}

#[test]
fn every_optional_feature_a_lean_lacks_is_refused_by_name() {
    if crate::harness::fake_only("every_optional_feature_a_lean_lacks_is_refused_by_name") {
        return;
    }
    let project = Project::fixture();
    let dropped = "-hoverProvider,-definitionProvider,-referencesProvider,\
                   -documentSymbolProvider,-workspaceSymbolProvider,-codeActionProvider";
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_CAPABILITIES", dropped)]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"]
        .as_i64()
        .unwrap();
    for (tool, method, capability) in [
        ("lean_hover", "textDocument/hover", "hoverProvider"),
        (
            "lean_definition",
            "textDocument/definition",
            "definitionProvider",
        ),
        (
            "lean_references",
            "textDocument/references",
            "referencesProvider",
        ),
    ] {
        let error = lean.fails(
            tool,
            args(&project, basic, at(version, 7, 5)),
            "invalidParams",
        );
        lacks(&error, method, capability);
    }
    let symbols = lean.fails(
        "lean_document_symbols",
        args(&project, basic, json!({"version": version})),
        "invalidParams",
    );
    lacks(
        &symbols,
        "textDocument/documentSymbol",
        "documentSymbolProvider",
    );
    let workspace = lean.fails(
        "lean_workspace_symbols",
        json!({"workspace": project.descriptor(), "query": "double"}),
        "invalidParams",
    );
    lacks(&workspace, "workspace/symbol", "workspaceSymbolProvider");
    let todo = json!({"version": version, "start_line": 0, "start_character": 0,
                      "end_line": 30, "end_character": 0, "kinds": ["code_action"]});
    let actions = lean.fails("lean_todo", args(&project, basic, todo), "invalidParams");
    lacks(&actions, "textDocument/codeAction", "codeActionProvider");
    let root = std::fs::canonicalize(project.root()).unwrap();
    let action = json!({"title": "t", "data": {"params": {"textDocument": {
        "uri": format!("file://{}/{basic}", root.display())}}}});
    let resolve = lean.fails(
        "lean_code_action_resolve",
        args(
            &project,
            basic,
            json!({"version": version, "code_action": action}),
        ),
        "invalidParams",
    );
    lacks(
        &resolve,
        "codeAction/resolve",
        "codeActionProvider.resolveProvider",
    );
    let asked = lean.received();
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/documentSymbol",
        "workspace/symbol",
        "textDocument/codeAction",
        "codeAction/resolve",
    ] {
        assert!(!asked.iter().any(|m| m == method), "{method} was asked");
    }
    lean.finish_without_violations();
}
