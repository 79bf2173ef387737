//! Hover, signature help, definitions (both forms Lean uses), references, symbols and goals:
//! Lean's answers at checked positions of checked versions, one request each.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};

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
