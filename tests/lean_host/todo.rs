//! `lean_todo` and `lean_code_action_resolve`: every item kind, the kinds filter, both
//! suggestion levels, point and range queries with their overlap rules and order, `sorry` in
//! comments and strings ignored, stale versions, and code actions resolved (lazy ones gaining
//! their edit) without Beam writing anything, or refused before Lean hears of them.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_only, real_lake};

const TODO: &str = "Fixture/Todo.lean";

/// Valid Lean (bar the deliberate errors), with the fake's directives in comments. Lines:
/// 14 `· sorry` (tactic), 16 `sorry` (term), 19 `?_` (error), 21–23 an unfinished proof,
/// 13/26/29 code actions (eager without data, eager with data, lazy).
const TEXT: &str = r#"/-!
Todo items. Nothing counts in comments and strings: sorry, ?_ .
-/

namespace Todo

/- a block comment: sorry /- nested: ?_ -/ still sorry -/
def msg : String := "sorry ?_ \" sorry"

def quote : Char := 'x'

theorem two (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  · exact hp -- fake: code-action "Try this: assumption" "assumption"
  · sorry

def later : Nat := sorry -- a trailing comment: sorry

-- fake: error "don't know how to synthesize placeholder\ncontext:\n⊢ Nat" on "?_"
def hole : Nat := ?_

theorem unfinished (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  exact hp

example : True := by
  trivial -- fake: code-action "Try this: exact True.intro" "exact True.intro" data

example : 1 = 1 := by
  rfl -- fake: code-action "Use decide" "decide" lazy

end Todo
"#;

/// The project with the todo file, and a server synced on it; the version.
fn start() -> (Project, Lean, i64) {
    let project = Project::fixture();
    project.write(TODO, TEXT);
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, TODO, json!({})))["version"]
        .as_i64()
        .unwrap();
    (project, lean, version)
}

/// `lean_todo` arguments over `[from, to]` with `more`.
fn query(project: &Project, version: i64, from: (u64, u64), to: (u64, u64), more: Value) -> Value {
    let mut arguments = json!({
        "version": version,
        "start_line": from.0, "start_character": from.1,
        "end_line": to.0, "end_character": to.1,
    });
    arguments
        .as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    args(project, TODO, arguments)
}

fn items(result: &Value) -> &Vec<Value> {
    result["items"].as_array().expect("items")
}

/// `(kind, start line, start character)` of each item.
fn summary(result: &Value) -> Vec<(String, u64, u64)> {
    items(result)
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap().to_owned(),
                i["range"]["start"]["line"].as_u64().unwrap(),
                i["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn of_kind<'a>(result: &'a Value, kind: &str) -> Vec<&'a Value> {
    items(result).iter().filter(|i| i["kind"] == kind).collect()
}

fn position(p: &Value) -> (u64, u64) {
    (
        p["line"].as_u64().unwrap(),
        p["character"].as_u64().unwrap(),
    )
}

/// Items are ordered by start, then end, then kind in the schema's order.
fn assert_ordered(result: &Value) {
    let rank = |kind: &Value| {
        [
            "sorry",
            "hole",
            "diagnostic",
            "code_action",
            "incomplete_proof",
        ]
        .iter()
        .position(|k| kind == k)
        .expect("a known kind")
    };
    let keys: Vec<_> = items(result)
        .iter()
        .map(|i| {
            (
                position(&i["range"]["start"]),
                position(&i["range"]["end"]),
                rank(&i["kind"]),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "{result}");
}

#[test]
fn every_kind_over_the_whole_file() {
    let (project, mut lean, version) = start();
    let all = lean.ok(
        "lean_todo",
        query(&project, version, (0, 0), (32, 0), json!({})),
    );
    assert_eq!(all["version"], version);
    assert_eq!(
        all["range"],
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 32, "character": 0}})
    );
    assert_ordered(&all);
    // Only code counts: nothing from the comments or the strings.
    assert!(
        summary(&all).iter().all(|(_, line, _)| *line >= 11),
        "{all}"
    );
    let sorries: Vec<_> = of_kind(&all, "sorry")
        .iter()
        .map(|i| position(&i["range"]["start"]))
        .collect();
    assert_eq!(sorries, [(14, 4), (16, 19)]);
    let holes = of_kind(&all, "hole");
    assert_eq!(holes.len(), 1);
    assert_eq!(
        holes[0]["range"],
        json!({"start": {"line": 19, "character": 18}, "end": {"line": 19, "character": 20}})
    );
    assert_eq!(holes[0]["message"], "term hole");
    assert_eq!(holes[0]["run_at_position"], holes[0]["range"]["start"]);
    let errors = of_kind(&all, "diagnostic")
        .into_iter()
        .filter(|d| d["severity"] == 1)
        .count();
    assert!(errors >= 2, "the hole's and the unfinished proof's: {all}");
    // The unfinished proof: over the whole proof, continued at its end, with its goal left.
    let incomplete = of_kind(&all, "incomplete_proof");
    assert_eq!(incomplete.len(), 1, "{all}");
    let incomplete = incomplete[0];
    assert_eq!(incomplete["range"]["start"]["line"], 21);
    assert_eq!(incomplete["run_at_position"], incomplete["range"]["end"]);
    assert_eq!(incomplete["run_at_text"], "exact ?_");
    assert_eq!(incomplete["severity"], 1);
    let goal = &incomplete["proof_state"]["goals"][0];
    assert_eq!(goal["target"], "q", "{incomplete}");
    // suggest (basic by default): the goals at each sorry and hole.
    let tactic_sorry = of_kind(&all, "sorry")[0];
    assert_eq!(tactic_sorry["message"], "syntactic sorry");
    assert_eq!(
        tactic_sorry["run_at_position"],
        json!({"line": 14, "character": 4})
    );
    assert_eq!(tactic_sorry["run_at_text"], "exact ?_");
    assert_eq!(tactic_sorry["proof_state"]["goals"][0]["target"], "q");
    let term_sorry = of_kind(&all, "sorry")[1];
    assert!(
        term_sorry.get("run_at_text").is_none(),
        "a term: {term_sorry}"
    );
    assert_eq!(term_sorry["proof_state"]["goals"][0]["target"], "Nat");
    assert_eq!(holes[0]["proof_state"]["goals"][0]["target"], "Nat");
    if real_lake().is_none() {
        let titles: Vec<_> = of_kind(&all, "code_action")
            .iter()
            .map(|a| a["message"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            titles,
            [
                "Try this: assumption",
                "Try this: exact True.intro",
                "Use decide"
            ]
        );
        let eager = of_kind(&all, "code_action")[1];
        assert_eq!(
            eager["range"],
            json!({"start": {"line": 26, "character": 2}, "end": {"line": 26, "character": 9}})
        );
        assert_eq!(
            eager["code_action"]["edit"]["documentChanges"][0]["textDocument"]["version"],
            version
        );
    }
    crate::harness::snapshot("todo_all", lean.finish_without_violations());
}

#[test]
fn kinds_filter_and_suggestion_levels() {
    let (project, mut lean, version) = start();
    let whole = |more: Value| query(&project, version, (0, 0), (32, 0), more);
    let all = lean.ok("lean_todo", whole(json!({})));
    let empty_kinds = lean.ok("lean_todo", whole(json!({"kinds": []})));
    assert_eq!(all, empty_kinds, "[] means every kind");
    let some = lean.ok(
        "lean_todo",
        whole(json!({"kinds": ["incomplete_proof", "hole"]})),
    );
    let kinds: Vec<_> = summary(&some).into_iter().map(|s| s.0).collect();
    assert_eq!(kinds, ["hole", "incomplete_proof"]);
    let diagnostics = lean.ok("lean_todo", whole(json!({"kinds": ["diagnostic"]})));
    assert!(
        items(&diagnostics)
            .iter()
            .all(|i| i["kind"] == "diagnostic" && i["diagnostic"]["message"] == i["message"])
    );
    assert_eq!(items(&diagnostics).len(), of_kind(&all, "diagnostic").len());
    // `none`: no probe text and no goals asked of Lean; an incomplete proof keeps the goals its
    // message lists.
    let plain = lean.ok("lean_todo", whole(json!({"suggest": "none"})));
    assert_eq!(summary(&plain), summary(&all));
    for item in items(&plain) {
        assert!(item.get("run_at_text").is_none(), "{item}");
        let from_message = item["kind"] == "incomplete_proof";
        assert_eq!(item.get("proof_state").is_some(), from_message, "{item}");
    }
    let basic = lean.ok("lean_todo", whole(json!({"suggest": "basic"})));
    assert_eq!(basic, all, "basic is the default");
    lean.finish_without_violations();
}

#[test]
fn text_kinds_without_suggestions_cost_lean_nothing() {
    if fake_only("text_kinds_without_suggestions_cost_lean_nothing") {
        return;
    }
    let (project, mut lean, version) = start();
    let before = lean.received_after_handshake().len();
    let found = lean.ok(
        "lean_todo",
        query(
            &project,
            version,
            (0, 0),
            (32, 0),
            json!({"kinds": ["sorry", "hole"], "suggest": "none"}),
        ),
    );
    assert_eq!(summary(&found).len(), 3);
    assert_eq!(lean.received().len(), before, "{:?}", lean.received());
    // With diagnostics wanted: the barrier (one waitForDiagnostics for an unchanged file).
    lean.ok(
        "lean_todo",
        query(
            &project,
            version,
            (0, 0),
            (32, 0),
            json!({"kinds": ["diagnostic"], "suggest": "none"}),
        ),
    );
    assert_eq!(
        lean.received()[before..],
        ["textDocument/waitForDiagnostics"]
    );
    lean.finish_without_violations();
}

#[test]
fn point_and_range_queries_follow_the_overlap_rules() {
    let (project, mut lean, version) = start();
    let mut ask = |from: (u64, u64), to: (u64, u64)| {
        let result = lean.ok(
            "lean_todo",
            query(
                &project,
                version,
                from,
                to,
                json!({"kinds": ["sorry", "diagnostic", "incomplete_proof"], "suggest": "none"}),
            ),
        );
        assert_ordered(&result);
        summary(&result)
    };
    let sorry = |line, character| ("sorry".to_owned(), line, character);
    // A point query is closed: at the token's start, inside it and at its end.
    assert_eq!(ask((14, 4), (14, 4)), [sorry(14, 4)]);
    assert_eq!(ask((14, 6), (14, 6)), [sorry(14, 4)]);
    assert_eq!(ask((14, 9), (14, 9)), [sorry(14, 4)]);
    assert_eq!(ask((15, 0), (15, 0)), []);
    assert_eq!(ask((14, 3), (14, 3)), []);
    // A range is half-open: touching an end is not overlapping.
    assert_eq!(ask((14, 0), (14, 4)), []);
    assert_eq!(ask((14, 9), (15, 0)), []);
    assert_eq!(ask((14, 8), (14, 9)), [sorry(14, 4)]);
    assert_eq!(ask((14, 0), (15, 0)), [sorry(14, 4)]);
    // Inside the unfinished proof: the incomplete proof spans it, and so does the error, over
    // its extent (`fullRange`: Lean cuts its `range` at the line of `by`).
    let inside = ask((23, 3), (23, 3));
    let kinds: Vec<_> = inside.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(kinds, ["diagnostic", "incomplete_proof"]);
    let whole_proof = ask((21, 0), (24, 0));
    let kinds: Vec<_> = whole_proof.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(kinds, ["diagnostic", "incomplete_proof"], "{whole_proof:?}");
    lean.finish_without_violations();
}

#[test]
fn stale_versions_and_bad_ranges_are_refused() {
    let (project, mut lean, version) = start();
    let whole = query(&project, version, (0, 0), (32, 0), json!({}));
    project.write(TODO, &TEXT.replace("def later", "def later'"));
    let stale = lean.fails("lean_todo", whole.clone(), "contentModified");
    assert_eq!(stale["data"]["reason"], "documentVersionMismatch");
    assert_eq!(stale["data"]["expectedVersion"], version);
    assert_eq!(stale["data"]["currentVersion"], version + 1);
    let current = version + 1;
    let backwards = lean.fails(
        "lean_todo",
        query(&project, current, (14, 9), (14, 4), json!({})),
        "invalidParams",
    );
    assert!(
        backwards["message"]
            .as_str()
            .unwrap()
            .contains("after it ends"),
        "{backwards}"
    );
    let outside = lean.fails(
        "lean_todo",
        query(&project, current, (0, 0), (99, 0), json!({})),
        "invalidParams",
    );
    assert!(
        outside["message"]
            .as_str()
            .unwrap()
            .contains("outside the document")
    );
    let kinds = lean.call(
        "lean_todo",
        query(
            &project,
            current,
            (0, 0),
            (1, 0),
            json!({"kinds": ["todo"]}),
        ),
    );
    assert_eq!(kinds["result"]["structuredContent"]["code"], "invalidInput");
    crate::harness::snapshot("todo_refused", lean.finish_without_violations());
}

/// A payload the client was shown (machine paths redacted as `[root]`) as the server sent it, so
/// it can go back unchanged.
fn as_sent(project: &Project, shown: &Value) -> Value {
    let text = shown
        .to_string()
        .replace("[root]", &project.root().display().to_string());
    serde_json::from_str(&text).expect("JSON")
}

/// The code action items of a point query at `line`, `character`.
fn actions_at(
    lean: &mut Lean,
    project: &Project,
    version: i64,
    line: u64,
    character: u64,
) -> Vec<Value> {
    let result = lean.ok(
        "lean_todo",
        query(
            project,
            version,
            (line, character),
            (line, character),
            json!({"kinds": ["code_action"]}),
        ),
    );
    items(&result).clone()
}

#[test]
fn a_code_action_resolve_round_trip_writes_nothing() {
    if fake_only("a_code_action_resolve_round_trip_writes_nothing") {
        return;
    }
    let (project, mut lean, version) = start();
    let on_disk = project.read(TODO);
    let lazy = actions_at(&mut lean, &project, version, 29, 2);
    assert_eq!(lazy.len(), 1, "{lazy:?}");
    assert_eq!(lazy[0]["message"], "Use decide");
    let action = as_sent(&project, &lazy[0]["code_action"]);
    assert!(action.get("edit").is_none() && action.get("data").is_some());
    let resolved = lean.ok(
        "lean_code_action_resolve",
        args(
            &project,
            TODO,
            json!({"version": version, "code_action": action}),
        ),
    );
    assert_eq!(resolved["version"], version);
    let resolved_action = &resolved["code_action"];
    assert_eq!(resolved_action["title"], "Use decide");
    assert_eq!(resolved_action["data"], lazy[0]["code_action"]["data"]);
    let change = &resolved_action["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["version"], version);
    assert!(
        change["textDocument"]["uri"]
            .as_str()
            .unwrap()
            .ends_with(TODO)
    );
    assert_eq!(
        change["edits"],
        json!([{"newText": "decide", "range": {"start": {"line": 29, "character": 2},
                                               "end": {"line": 29, "character": 5}}}])
    );
    // An eager action that carries data resolves to itself.
    let eager = actions_at(&mut lean, &project, version, 26, 2);
    let again = lean.ok(
        "lean_code_action_resolve",
        args(
            &project,
            TODO,
            json!({"version": version, "code_action": as_sent(&project, &eager[0]["code_action"])}),
        ),
    );
    assert_eq!(again["code_action"], eager[0]["code_action"]);
    // Beam applied nothing: the file and its version are as they were.
    assert_eq!(project.read(TODO), on_disk);
    let synced = lean.ok("lean_sync", args(&project, TODO, json!({})));
    assert_eq!(synced["version"], version);
    crate::harness::snapshot("code_action_resolve", lean.finish_without_violations());
}

#[test]
fn resolve_refuses_actions_without_data_or_for_another_file_before_lean_hears_of_them() {
    if fake_only(
        "resolve_refuses_actions_without_data_or_for_another_file_before_lean_hears_of_them",
    ) {
        return;
    }
    let (project, mut lean, version) = start();
    // Eager without data: complete as returned.
    let plain = actions_at(&mut lean, &project, version, 13, 4);
    assert_eq!(plain[0]["message"], "Try this: assumption");
    let plain = as_sent(&project, &plain[0]["code_action"]);
    assert!(plain.get("data").is_none() && plain.get("edit").is_some());
    let lazy = as_sent(
        &project,
        &actions_at(&mut lean, &project, version, 29, 2)[0]["code_action"],
    );
    let basic_version =
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})))["version"].clone();
    let sent = lean.received_after_handshake().len();
    let refused = lean.fails(
        "lean_code_action_resolve",
        args(
            &project,
            TODO,
            json!({"version": version, "code_action": plain}),
        ),
        "invalidParams",
    );
    assert_eq!(refused["data"]["reason"], "codeActionWithoutData");
    let mut stripped = lazy.clone();
    stripped.as_object_mut().unwrap().remove("data");
    lean.fails(
        "lean_code_action_resolve",
        args(
            &project,
            TODO,
            json!({"version": version, "code_action": stripped}),
        ),
        "invalidParams",
    );
    let foreign = lean.fails(
        "lean_code_action_resolve",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": basic_version, "code_action": lazy}),
        ),
        "invalidParams",
    );
    assert_eq!(foreign["data"]["reason"], "codeActionForAnotherFile");
    assert_eq!(
        lean.received().len(),
        sent,
        "Lean heard nothing: {:?}",
        &lean.received()[sent..]
    );
    // A stale version: refused after the file is read, before the resolve is sent.
    project.write(TODO, &TEXT.replace("def later", "def later'"));
    let stale = lean.fails(
        "lean_code_action_resolve",
        args(
            &project,
            TODO,
            json!({"version": version, "code_action": lazy}),
        ),
        "contentModified",
    );
    assert_eq!(stale["data"]["reason"], "documentVersionMismatch");
    assert!(
        !lean.received().iter().any(|m| m == "codeAction/resolve"),
        "{:?}",
        lean.received()
    );
    crate::harness::snapshot("code_action_refused", lean.finish_without_violations());
}
