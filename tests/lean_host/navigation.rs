//! Hover, signature help, definitions (both forms Lean uses), references, symbols and goals:
//! Lean's answers at checked positions of checked versions, one request each.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, request};

const BASIC: &str = "Fixture/Basic.lean";

fn at(version: i64, line: u64, character: u64) -> Value {
    json!({"version": version, "line": line, "character": character})
}

#[test]
fn hover_signature_help_references_and_symbols() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"]
        .as_i64()
        .unwrap();
    // `add` in `def Point.sum (p : Point) : Nat := add p.x p.y`.
    let hover = lean.ok("lean_hover", args(&project, basic, at(version, 16, 36)));
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("Fixture.add"), "{hover}");
    let nothing = lean.ok("lean_hover", args(&project, basic, at(version, 3, 0)));
    assert_eq!(nothing["result"], Value::Null);
    // After `Fixture.add 1 `: one explicit argument is still to come.
    project.write(
        "Fixture/Partial.lean",
        "example : Nat → Nat := Fixture.add 1 \n",
    );
    let partial = "Fixture/Partial.lean";
    let partial_version = lean.ok("lean_sync", args(&project, partial, json!({})))["version"]
        .as_i64()
        .unwrap();
    let help = lean.ok(
        "lean_signature_help",
        args(&project, partial, at(partial_version, 0, 37)),
    );
    if crate::harness::real_lake().is_none() {
        assert!(help["signatures"][0]["label"].is_string(), "{help}");
    }
    // `double` at its declaration: every use, in both files.
    let with = lean.ok("lean_references", args(&project, basic, at(version, 7, 5)));
    let without = lean.ok(
        "lean_references",
        args(
            &project,
            basic,
            json!({"version": version, "line": 7, "character": 5, "include_declaration": false}),
        ),
    );
    let with = with["result"].as_array().unwrap().len();
    let without = without["result"].as_array().unwrap();
    assert_eq!(
        with,
        without.len() + 1,
        "the declaration itself is the difference"
    );
    assert!(without.iter().any(|l| l["path"] == "Fixture/Uses.lean"));
    let symbols = lean.ok(
        "lean_document_symbols",
        args(&project, basic, json!({"version": version})),
    );
    assert_eq!(symbols["result"][0]["name"], "Fixture");
    let found = lean.ok(
        "lean_workspace_symbols",
        json!({"workspace": project.descriptor(), "query": "double"}),
    );
    assert!(
        found["result"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "Fixture.double")
    );
    crate::harness::snapshot("navigation", lean.server.finish_clean());
}

#[test]
fn definitions_read_the_same_whichever_form_lean_answers_in() {
    if crate::harness::fake_only("definitions_read_the_same_whichever_form_lean_answers_in") {
        return;
    }
    let mut answers = Vec::new();
    for form in ["links", "locations"] {
        let project = Project::fixture();
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_DEFINITION", form)]);
        let version =
            lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})))["version"]
                .as_i64()
                .unwrap();
        // `double` in `def quadruple (n : Nat) : Nat := double (double n)`.
        let found = lean.ok(
            "lean_definition",
            args(&project, "Fixture/Uses.lean", at(version, 8, 34)),
        );
        let mut result = found["result"].clone();
        for location in result.as_array_mut().unwrap() {
            location["uri"] = json!("[uri]");
        }
        answers.push(result);
        lean.server.finish_clean();
    }
    assert_eq!(
        answers[0], answers[1],
        "LocationLink[] and Location[] read alike"
    );
    assert_eq!(answers[0][0]["path"], "Fixture/Basic.lean");
    assert_eq!(answers[0][0]["range"]["start"]["line"], 7);
}

#[test]
fn goals_before_and_after_a_tactic() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"]
        .as_i64()
        .unwrap();
    // `  intro h` in `theorem imp_self' (p : Prop) : p → p := by`.
    let mut goals_at = |mode: &str, character: u64| {
        let mut arguments = at(version, 28, character);
        arguments["mode"] = json!(mode);
        lean.ok("lean_goals", args(&project, basic, arguments))
    };
    let before = goals_at("before", 5);
    assert_eq!(before["goals"][0]["target"], "p → p");
    assert_eq!(before["position"], json!({"line": 28, "character": 2}));
    let after = goals_at("after", 3);
    assert_eq!(after["goals"][0]["target"], "p");
    assert_eq!(
        after["goals"][0]["hyps"],
        json!([{"names": ["p"], "type": "Prop"}, {"names": ["h"], "type": "p"}])
    );
    let mut outside = at(version, 7, 5);
    outside["mode"] = json!("after");
    let error = lean.fails(
        "lean_goals",
        args(&project, basic, outside),
        "invalidParams",
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no proof goals"),
        "{error}"
    );
    let beyond = lean.fails(
        "lean_hover",
        args(&project, basic, at(version, 999, 0)),
        "invalidParams",
    );
    assert!(
        beyond["message"]
            .as_str()
            .unwrap()
            .contains("outside the document")
    );
    crate::harness::snapshot("goals", lean.server.finish_clean());
}

/// Syncs `Basic.lean`, then runs a probe that declares `probe_only` where `structure Point
/// where` (line 12) starts: its twin is `Basic.lean` up to line 12, then the probe, so later
/// declarations and uses are not in it. The version synced.
fn probe_only(lean: &mut Lean, project: &Project) -> i64 {
    let version = lean.ok("lean_sync", args(project, BASIC, json!({})))["version"]
        .as_i64()
        .unwrap();
    let arguments = json!({"version": version, "line": 12, "character": 0,
                           "text": "theorem probe_only : True := trivial"});
    let ran = lean.ok("lean_run_at", args(project, BASIC, arguments));
    assert_eq!(ran["success"], true, "{ran}");
    version
}

/// What Lean's index answers about `Basic.lean` (`version`) is its real text's, not the probe's.
fn answers_from_the_real_text(lean: &mut Lean, project: &Project, version: i64) {
    assert_eq!(
        workspace_symbols(lean, project, "probe_only"),
        Vec::<Value>::new()
    );
    let point = workspace_symbols(lean, project, "Point.sum");
    assert_eq!(point.len(), 1, "{point:?}");
    // `double` at its declaration: its uses after the probe's line are in the real text only.
    let references = lean.ok("lean_references", args(project, BASIC, at(version, 7, 5)));
    assert_eq!(
        lines_in(&references, BASIC),
        [7, 18, 19, 34],
        "{references}"
    );
}

fn workspace_symbols(lean: &mut Lean, project: &Project, query: &str) -> Vec<Value> {
    let found = lean.ok(
        "lean_workspace_symbols",
        json!({"workspace": project.descriptor(), "query": query}),
    );
    found["result"].as_array().unwrap().clone()
}

/// Locations in `path` of a `lean_references` or `lean_definition` result.
fn lines_in(result: &Value, path: &str) -> Vec<u64> {
    let in_path = result["result"].as_array().unwrap().iter();
    let in_path = in_path.filter(|l| l["path"] == path);
    in_path
        .map(|l| l["range"]["start"]["line"].as_u64().unwrap())
        .collect()
}

/// The watchdog eras of the reference index's module lookup (fake README "The reference
/// index"): a document's module fixed when it opens (newer), or read from its path each time
/// (older).
const REFERENCE_ERAS: [&str; 2] = ["open", "path"];

#[test]
fn navigation_never_answers_from_a_probes_text() {
    for era in REFERENCE_ERAS {
        navigation_never_answers_from_a_probes_text_in(era);
    }
}

fn navigation_never_answers_from_a_probes_text_in(era: &str) {
    let project = Project::fixture();
    // The watchdog's definition fast path answers whenever its index has the name.
    let env = [
        ("FAKE_LEAN_DEFINITION", "locations"),
        ("FAKE_LEAN_REFS", era),
    ];
    let mut lean = Lean::start(&[&project], &[], &env);
    let version = probe_only(&mut lean, &project);
    // Lean's index names the twin by its real path: only the host keeps its text out.
    answers_from_the_real_text(&mut lean, &project, version);
    // `Point` in `structure Point where`, where the probe stands in the twin.
    let definition = lean.ok(
        "lean_definition",
        args(&project, BASIC, at(version, 12, 11)),
    );
    assert_eq!(
        definition["result"][0]["range"],
        json!({"start": {"line": 12, "character": 10}, "end": {"line": 12, "character": 15}}),
        "{definition}"
    );
    lean.finish_without_violations();
}

#[test]
fn the_real_files_entry_answers_after_its_twin_closes() {
    for era in REFERENCE_ERAS {
        the_real_files_entry_answers_after_its_twin_closes_in(era);
    }
}

fn the_real_files_entry_answers_after_its_twin_closes_in(era: &str) {
    let project = Project::fixture();
    // Nothing is built, so no `.ilean` answers for a module whose live entry is gone; one twin
    // at a time, so a run on another file closes `Basic.lean`'s.
    let env = [("FAKE_LEAN_ILEANS", "built"), ("FAKE_LEAN_REFS", era)];
    let mut lean = Lean::start(&[&project], &["--max-twins", "1"], &env);
    let version = probe_only(&mut lean, &project);
    let uses = "Fixture/Uses.lean";
    let uses_version = lean.ok("lean_sync", args(&project, uses, json!({})))["version"].clone();
    let arguments = json!({"version": uses_version, "line": 8, "character": 0,
                           "text": "theorem elsewhere : True := trivial"});
    let ran = lean.ok("lean_run_at", args(&project, uses, arguments));
    assert_eq!(ran["success"], true, "{ran}");
    let closes: Vec<Value> = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didClose")
        .collect();
    assert_eq!(closes.len(), 1, "Basic.lean's twin was closed: {closes:?}");
    // Basic.lean's own entry answers again.
    answers_from_the_real_text(&mut lean, &project, version);
    lean.finish_without_violations();
}

#[test]
fn a_file_closed_for_the_budget_takes_its_twins_with_it() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &["--max-documents", "1"], &[]);
    probe_only(&mut lean, &project);
    // Opening another file closes Basic.lean for the budget, and its twin with it.
    let uses = "Fixture/Uses.lean";
    let uses_version = lean.ok("lean_sync", args(&project, uses, json!({})))["version"]
        .as_i64()
        .unwrap();
    let closed: Vec<String> = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didClose")
        .filter_map(|t| t["uri"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(closed.len(), 2, "{closed:?}");
    assert_eq!(
        workspace_symbols(&mut lean, &project, "probe_only"),
        Vec::<Value>::new()
    );
    // `double` in `def quadruple (n : Nat) : Nat := double (double n)`: Basic.lean answers
    // from the disk (the fake's stand-in for its `.ilean`).
    let references = lean.ok(
        "lean_references",
        args(&project, uses, at(uses_version, 8, 34)),
    );
    assert_eq!(
        lines_in(&references, BASIC),
        [7, 18, 19, 34],
        "{references}"
    );
    lean.finish_without_violations();
}

#[test]
fn a_twin_waits_until_lean_holds_its_real_files_entry() {
    let project = Project::fixture();
    let path = "Fixture/Gated.lean";
    project.write(
        path,
        "def a : Nat := 1\n\ndef b : Nat := 2 -- fake: gate g\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    // Straight to a run, no sync: Lean is still checking the file when the run starts, and its
    // twin, the file up to line 1, needs nothing past the gate.
    let arguments = json!({"version": 1, "line": 1, "character": 0,
                           "text": "theorem probe_only : True := trivial"});
    let id = lean.id();
    lean.server.send(&request(
        id,
        "tools/call",
        call("lean_run_at", args(&project, path, arguments)),
    ));
    lean.gate_entered("g");
    lean.open_gate("g");
    let answer = lean.server.response(&json!(id));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        workspace_symbols(&mut lean, &project, "probe_only"),
        Vec::<Value>::new()
    );
    // The twin was opened only after Lean answered the real file's barrier, which it does once
    // that file's references are in its index.
    let trace = lean.trace();
    let real = |t: &Value| {
        t["uri"]
            .as_str()
            .is_some_and(|u| u.ends_with(path) && !crate::harness::is_twin_uri(u))
    };
    let barrier = trace
        .iter()
        .find(|t| t["dir"] == "in" && t["method"] == "textDocument/waitForDiagnostics" && real(t))
        .map(|t| t["id"].clone())
        .expect("a barrier of the real file");
    let answered = trace
        .iter()
        .position(|t| t["dir"] == "out" && t["response"] == true && t["id"] == barrier)
        .expect("its answer");
    let twin_opened = trace
        .iter()
        .position(|t| {
            t["method"] == "textDocument/didOpen"
                && t["uri"].as_str().is_some_and(crate::harness::is_twin_uri)
        })
        .expect("the twin");
    assert!(answered < twin_opened, "{trace:?}");
    lean.finish_without_violations();
}

#[test]
fn a_twin_of_a_file_lean_cannot_report_is_closed_after_its_run() {
    let project = Project::fixture();
    let path = "Fixture/Crashing.lean";
    project.write(
        path,
        "def a : Nat := 1\n\ndef b : Nat := 2 -- fake: crash\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    // The file's worker crashes on every elaboration, so Lean never reports it; the probe's
    // twin, the file up to line 1, does not reach the crash. Whether Lean answers the run's
    // proof-mode question (`$/lean/plainGoal` at line 1 of the real file) before the worker
    // dies is a race in Lean as in the fake: when it does not, the run fails typed and no twin
    // is opened; when it does, the twin runs and is closed after.
    let arguments = json!({"version": 1, "line": 1, "character": 0,
                           "text": "theorem probe_only : True := trivial"});
    let ran = lean.call("lean_run_at", args(&project, path, arguments));
    let twin = |method: &str| {
        lean.trace().into_iter().any(|t| {
            t["method"] == method && t["uri"].as_str().is_some_and(crate::harness::is_twin_uri)
        })
    };
    let content = &ran["result"]["structuredContent"];
    if ran["result"]["isError"] == true {
        assert_eq!(content["code"], "workerCrashed", "{ran}");
        assert!(!twin("textDocument/didOpen"), "no twin without Lean's mode");
    } else {
        assert_eq!(content["success"], true, "{ran}");
        assert!(
            twin("textDocument/didClose"),
            "the twin was closed after its run"
        );
    }
    assert_eq!(
        workspace_symbols(&mut lean, &project, "probe_only"),
        Vec::<Value>::new()
    );
    lean.finish_without_violations();
}
