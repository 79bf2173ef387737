//! Speculative runs (`lean_run_at`, `lean_run_at_handle`, `lean_run_with`,
//! `lean_run_with_linear`, `lean_release`): tactic and command mode, the one-command rule,
//! handle chains and every handle error, twins that never touch the user's document or leak,
//! what a warm run costs Lean, concurrency, and the Lake behaviour that needs twins on disk.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, targets};
use crate::support::{call, request};

const BASIC: &str = "Fixture/Basic.lean";
/// `theorem and_swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by` is on line 22; its first
/// tactic, `constructor`, on line 23 at column 2.
const AND_SWAP_BODY: u64 = 23;

fn run_at(project: &Project, version: &Value, line: u64, character: u64, text: &str) -> Value {
    args(
        project,
        BASIC,
        json!({"version": version, "line": line, "character": character, "text": text}),
    )
}

/// How many twins Lean was asked to open.
fn twins_opened(lean: &Lean) -> usize {
    lean.trace()
        .iter()
        .filter(|t| t["method"] == "textDocument/didOpen")
        .filter(|t| t["uri"].as_str().is_some_and(crate::harness::is_twin_uri))
        .count()
}

fn run_with(project: &Project, handle: &Value, text: &str) -> Value {
    args(project, BASIC, json!({"handle": handle, "text": text}))
}

/// The messages Lean received about one document, as method names: the real file whose URI
/// ends with `path`, or its twins (`twin`).
fn received_for(lean: &Lean, path: &str, twin: bool) -> Vec<String> {
    lean.trace()
        .iter()
        .filter(|t| t["dir"] == "in")
        .filter(|t| {
            t["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with(path) && crate::harness::is_twin_uri(u) == twin)
        })
        .map(|t| t["method"].as_str().unwrap_or("response").to_owned())
        .collect()
}

#[test]
fn a_tactic_run_answers_the_goals_after_it_and_touches_nothing() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let synced = lean.ok(
        "lean_sync",
        args(&project, BASIC, json!({"diagnostic_scope": "all"})),
    );
    let version = synced["version"].clone();
    let ran = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    assert_eq!(ran["success"], true, "{ran}");
    assert_eq!(targets(&ran), ["q", "p"]);
    assert_eq!(
        ran["next_handle"],
        Value::Null,
        "lean_run_at keeps no state"
    );
    // The same position, in the indentation: the tactic that starts the line.
    let indented = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 0, "constructor"),
    );
    assert_eq!(targets(&indented), ["q", "p"]);
    let closed = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "exact ⟨hq, hp⟩"),
    );
    assert_eq!(closed["proof_state"], json!({"goals": []}), "{closed}");
    let failed = lean.ok(
        "lean_run_at",
        run_at(
            &project,
            &version,
            AND_SWAP_BODY,
            2,
            "exact hp -- fake: error \"type mismatch\"",
        ),
    );
    assert_eq!(failed["success"], false);
    assert_eq!(
        failed["messages"],
        json!([{"severity": "error", "text": "type mismatch"}])
    );
    assert_eq!(failed["proof_state"], Value::Null);
    // The user's document and file are as they were.
    let again = lean.ok(
        "lean_sync",
        args(&project, BASIC, json!({"diagnostic_scope": "all"})),
    );
    assert_eq!(again["version"], version);
    assert_eq!(again["diagnostics"], synced["diagnostics"]);
    assert_eq!(
        project.read(BASIC),
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/lean-project/Fixture/Basic.lean")
        )
        .unwrap()
    );
    let beside: Vec<_> = std::fs::read_dir(project.root().join("Fixture"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
        .collect();
    assert!(
        beside.is_empty(),
        "nothing is made among the sources: {beside:?}"
    );
    let twins = crate::harness::twin_files(&project);
    assert_eq!(twins.len(), 1, "{twins:?}");
    assert_eq!(
        twins[0].1, BASIC,
        "the twin is a link under .lake/beam/twins"
    );
    crate::harness::snapshot("run_at_tactic", lean.server.finish_clean());
}

#[test]
fn multi_line_runs_and_command_runs() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let block = lean.ok(
        "lean_run_at",
        run_at(
            &project,
            &version,
            AND_SWAP_BODY,
            2,
            "constructor\n· exact hq\n· exact hp",
        ),
    );
    assert_eq!(block["success"], true, "{block}");
    assert_eq!(block["proof_state"], json!({"goals": []}));
    // Between commands (the blank line after and_swap's proof): one command.
    let command = lean.ok(
        "lean_run_at",
        run_at(&project, &version, 26, 0, "#check and_swap"),
    );
    assert_eq!(command["success"], true, "{command}");
    assert_eq!(command["proof_state"], Value::Null);
    assert_eq!(command["messages"][0]["severity"], "information");
    assert!(
        command["messages"][0]["text"]
            .as_str()
            .unwrap()
            .contains("and_swap"),
        "{command}"
    );
    let two = lean.ok(
        "lean_run_at",
        run_at(&project, &version, 26, 0, "def a := 1\n\ndef b := 2"),
    );
    assert_eq!(two["success"], false);
    let message = two["messages"][0]["text"].as_str().unwrap();
    assert!(
        message.starts_with("runAtSupportsOneCommandOnly: "),
        "{message}"
    );
    let outside = lean.fails(
        "lean_run_at",
        run_at(&project, &version, 999, 0, "rfl"),
        "invalidParams",
    );
    assert!(
        outside["message"]
            .as_str()
            .unwrap()
            .contains("outside the document")
    );
    let stale = lean.fails(
        "lean_run_at",
        run_at(&project, &json!(99), AND_SWAP_BODY, 2, "rfl"),
        "contentModified",
    );
    assert_eq!(stale["data"]["reason"], "documentVersionMismatch");
    crate::harness::snapshot("run_at_command", lean.server.finish_clean());
}

#[test]
fn handles_chain_and_linear_runs_consume_them() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let first = lean.ok(
        "lean_run_at_handle",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    let h1 = first["next_handle"].clone();
    assert!(h1.is_object(), "{first}");
    let second = lean.ok("lean_run_with", run_with(&project, &h1, "· exact hq"));
    assert_eq!(targets(&second), ["p"]);
    let h2 = second["next_handle"].clone();
    let third = lean.ok("lean_run_with", run_with(&project, &h2, "· exact hp"));
    assert_eq!(third["proof_state"], json!({"goals": []}));
    // run_with kept its parent: h1 still works.
    let again = lean.ok("lean_run_with", run_with(&project, &h1, "· exact hq"));
    assert_eq!(targets(&again), ["p"]);
    // A linear run consumes its handle, on success...
    let linear = lean.ok(
        "lean_run_with_linear",
        run_with(&project, &h2, "· exact hp"),
    );
    assert_eq!(linear["success"], true);
    let consumed = lean.fails(
        "lean_run_with",
        run_with(&project, &h2, "· exact hp"),
        "invalidParams",
    );
    assert_eq!(consumed["data"]["reason"], "handleConsumed");
    // ... and on failure, which makes no new handle.
    let h3 = again["next_handle"].clone();
    let failed = lean.ok(
        "lean_run_with_linear",
        run_with(&project, &h3, "· exact hq -- fake: error \"type mismatch\""),
    );
    assert_eq!(failed["success"], false);
    assert_eq!(failed["next_handle"], Value::Null);
    let consumed = lean.fails(
        "lean_run_with_linear",
        run_with(&project, &h3, "· exact hp"),
        "invalidParams",
    );
    assert_eq!(consumed["data"]["reason"], "handleConsumed");
    // A release forgets a handle; releasing or using it again says so.
    let released = lean.ok("lean_release", args(&project, BASIC, json!({"handle": h1})));
    assert_eq!(released["result"], Value::Null);
    for tool in ["lean_release", "lean_run_with"] {
        let mut arguments = run_with(&project, &h1, "rfl");
        if tool == "lean_release" {
            arguments.as_object_mut().unwrap().remove("text");
        }
        let error = lean.fails(tool, arguments, "invalidParams");
        assert_eq!(error["data"]["reason"], "handleReleased");
    }
    crate::harness::snapshot("handles", lean.server.finish_clean());
}

#[test]
fn every_wrong_handle_gets_its_own_error() {
    let project = Project::fixture();
    let other = Project::fixture();
    let mut lean = Lean::start(&[&project, &other], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let made = lean.ok(
        "lean_run_at_handle",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    let handle = made["next_handle"].clone();
    let mut check = |arguments: Value, code: &str, reason: &str| {
        let error = lean.fails("lean_run_with", arguments, code);
        assert_eq!(error["data"]["reason"], reason, "{error}");
    };
    let token = handle["handle"].as_str().unwrap();
    let forged = json!({"handle": format!("{}x", token)});
    check(
        run_with(&project, &forged, "rfl"),
        "invalidParams",
        "handleForged",
    );
    check(
        run_with(&project, &json!({"anything": 1}), "rfl"),
        "invalidParams",
        "handleForged",
    );
    let mut elsewhere = run_with(&other, &handle, "rfl");
    elsewhere["path"] = json!(BASIC);
    check(elsewhere, "invalidParams", "handleForeignWorkspace");
    let mut other_file = run_with(&project, &handle, "rfl");
    other_file["path"] = json!("Fixture/Uses.lean");
    check(other_file, "invalidParams", "handleForeignDocument");
    // The file changed on disk: the handle's state no longer exists.
    let text = project.read(BASIC);
    project.write(BASIC, &format!("{text}\n-- edited\n"));
    check(
        run_with(&project, &handle, "rfl"),
        "contentModified",
        "handleStale",
    );
    project.write(BASIC, &text);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let fresh = lean.ok(
        "lean_run_at_handle",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    )["next_handle"]
        .clone();
    // A drop ends the runtime the handle belongs to; the next one is another.
    lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    let error = lean.fails(
        "lean_run_with",
        run_with(&project, &fresh, "rfl"),
        "contentModified",
    );
    assert_eq!(error["data"]["reason"], "handleSessionEnded", "{error}");
    lean.server.finish_clean();
    // Another process never accepts this one's handles.
    let mut second = Lean::start(&[&project], &[], &[]);
    second.ok("lean_sync", args(&project, BASIC, json!({})));
    let error = second.fails(
        "lean_run_with",
        run_with(&project, &fresh, "rfl"),
        "invalidParams",
    );
    assert_eq!(error["data"]["reason"], "handleForeignProcess");
    second.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn runs_at_one_position_ask_lean_for_its_proof_mode_once_per_version() {
    if crate::harness::fake_only(
        "runs_at_one_position_ask_lean_for_its_proof_mode_once_per_version",
    ) {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let goal_queries = |lean: &Lean| {
        received_for(lean, BASIC, false)
            .iter()
            .filter(|m| *m == "$/lean/plainGoal")
            .count()
    };
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    for text in ["constructor", "exact ⟨hq, hp⟩", "skip"] {
        lean.ok(
            "lean_run_at",
            run_at(&project, &version, AND_SWAP_BODY, 2, text),
        );
    }
    assert_eq!(
        goal_queries(&lean),
        1,
        "one question per version and position"
    );
    // Another position is another question.
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY + 1, 2, "skip"),
    );
    assert_eq!(goal_queries(&lean), 2);
    // A new version of the file is asked again.
    let text = std::fs::read_to_string(project.root().join(BASIC)).unwrap();
    project.write(BASIC, &format!("{text}\n-- edited\n"));
    let edited = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    assert_ne!(edited, version);
    lean.ok(
        "lean_run_at",
        run_at(&project, &edited, AND_SWAP_BODY, 2, "constructor"),
    );
    assert_eq!(goal_queries(&lean), 3);
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn a_proof_mode_outlives_a_version_bump_of_the_same_text() {
    if crate::harness::fake_only("a_proof_mode_outlives_a_version_bump_of_the_same_text") {
        return;
    }
    // One twin for the workspace: a run in Uses closes Basic's twin, and Basic is reported to
    // Lean's reference index again (an empty didChange: a new LSP version, the same text).
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &["--max-twins", "1"], &[]);
    let goal_queries = |lean: &Lean| {
        received_for(lean, BASIC, false)
            .iter()
            .filter(|m| *m == "$/lean/plainGoal")
            .count()
    };
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let uses = "Fixture/Uses.lean";
    let uses_version = lean.ok("lean_sync", args(&project, uses, json!({})))["version"].clone();
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    let mut in_uses = run_at(&project, &uses_version, 11, 2, "omega");
    in_uses["path"] = json!(uses);
    lean.ok("lean_run_at", in_uses);
    let changes = received_for(&lean, BASIC, false)
        .iter()
        .filter(|m| *m == "textDocument/didChange")
        .count();
    assert_eq!(changes, 1, "Basic re-reported once its twin closed");
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "skip"),
    );
    assert_eq!(goal_queries(&lean), 1, "the same text: no second question");
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn a_warm_run_sends_lean_one_did_change_and_no_did_open() {
    if crate::harness::fake_only("a_warm_run_sends_lean_one_did_change_and_no_did_open") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    let cold = received_for(&lean, BASIC, true);
    assert_eq!(
        cold.iter().filter(|m| *m == "textDocument/didOpen").count(),
        1
    );
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "exact ⟨hq, hp⟩"),
    );
    let warm = &received_for(&lean, BASIC, true)[cold.len()..];
    let count = |m: &str| warm.iter().filter(|w| *w == m).count();
    assert_eq!(count("textDocument/didOpen"), 0, "{warm:?}");
    assert_eq!(count("textDocument/didChange"), 1, "{warm:?}");
    assert!(
        received_for(&lean, BASIC, false)
            .iter()
            .all(|m| m != "textDocument/didChange"),
        "the user's document is never edited"
    );
    // Closing the file closes its twin: no hidden worker is left behind.
    lean.ok("lean_close", args(&project, BASIC, json!({})));
    lean.wait_received("the twin's didClose", |t| {
        t["method"] == "textDocument/didClose"
            && t["uri"].as_str().is_some_and(crate::harness::is_twin_uri)
    });
    lean.server.finish_clean();
}

#[test]
fn runs_on_one_document_queue_and_runs_on_two_run_together() {
    if crate::harness::fake_only("runs_on_one_document_queue_and_runs_on_two_run_together") {
        return;
    }
    let project = Project::fixture();
    let other = "Fixture/Other.lean";
    project.write(
        other,
        "theorem other_swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let other_version = lean.ok("lean_sync", args(&project, other, json!({})))["version"].clone();
    let probe = |id: i64, path: &str, version: &Value, line: u64, text: &str| {
        request(
            id,
            "tools/call",
            call(
                "lean_run_at",
                args(
                    &project,
                    path,
                    json!({"version": version, "line": line, "character": 2, "text": text}),
                ),
            ),
        )
    };
    // Two files at once: both runs reach their gates together.
    lean.server.send(&probe(
        101,
        BASIC,
        &version,
        AND_SWAP_BODY,
        "constructor -- fake: gate basic",
    ));
    lean.server.send(&probe(
        102,
        other,
        &other_version,
        1,
        "constructor -- fake: gate other",
    ));
    lean.gate_entered("basic");
    lean.gate_entered("other");
    // A second run on the first file waits for a twin: both the bound allows are in use.
    lean.server.send(&probe(
        103,
        BASIC,
        &version,
        AND_SWAP_BODY,
        "exact ⟨hq, hp⟩",
    ));
    lean.open_gate("other");
    let answer = lean.server.response(&json!(102));
    assert_eq!(targets(&answer["result"]["structuredContent"]), ["q", "p"]);
    lean.open_gate("basic");
    let first = lean.server.response(&json!(101));
    assert_eq!(
        targets(&first["result"]["structuredContent"]),
        ["q", "p"],
        "{first}"
    );
    let third = lean.server.response(&json!(103));
    assert_eq!(
        third["result"]["structuredContent"]["proof_state"],
        json!({"goals": []}),
        "{third}"
    );
    lean.server.finish_clean();
}

/// A Lake that cannot set up a file missing from disk (mid-2025: `realPath` fails), in either
/// way a worker words that failure (`lean-language-server.md` Part 3): a twin is a link on disk
/// to the real file, so Lake sets it up, first time, and runs are judged on what Lean checked: a
/// failing tactic fails, a good one gives its goals.
fn twins_run_where_lake_cannot_set_up_a_missing_file(setup_text: &str) {
    let project = Project::fixture();
    let env = [
        ("FAKE_LEAN_TWIN", "fail"),
        ("FAKE_LEAN_SETUP_TEXT", setup_text),
    ];
    let mut lean = Lean::start(&[&project], &[], &env);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let failing = "exact hp -- fake: error \"type mismatch\"";
    let failed = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, failing),
    );
    assert_eq!(failed["success"], false, "{failed}");
    assert_eq!(failed["messages"][0]["text"], "type mismatch", "{failed}");
    let ran = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    assert_eq!(ran["success"], true, "{ran}");
    assert_eq!(targets(&ran), ["q", "p"]);
    assert_eq!(crate::harness::twin_files(&project).len(), 1, "on disk");
    assert_eq!(twins_opened(&lean), 1, "one twin, set up the first time");
    lean.finish_without_violations();
}

#[test]
fn a_mid_era_lake_sets_up_the_linked_twin() {
    if crate::harness::fake_only("the mid-era worker's setup failure") {
        return;
    }
    twins_run_where_lake_cannot_set_up_a_missing_file("command");
}

#[test]
fn a_lake_failing_missing_files_in_lakes_own_words_sets_up_the_linked_twin() {
    if crate::harness::fake_only("the newer worker's setup failure") {
        return;
    }
    twins_run_where_lake_cannot_set_up_a_missing_file("bare");
}

/// A run never gives a verdict Lean did not give. A file whose own header fails is named as
/// such before any twin is made; a twin whose header fails (here a fault of the fake's Lake for
/// twins alone) is `twinSetupFailed` with Lean's words, never `success: true` for a probe Lean
/// never ran — in both ways a worker words a failed set-up.
#[test]
fn a_twin_whose_header_fails_gives_no_verdict_but_lean_s_words() {
    if crate::harness::fake_only("a twin whose header fails") {
        return;
    }
    // A header Lean can import: with `twins`, the real file itself sets up (Lean's own import of
    // a module that does not exist would fail it too).
    let body = "import Fixture.Basic\n\ntheorem t : True := by\n  trivial\n";
    for setup_text in ["command", "bare"] {
        for twins_only in [false, true] {
            let project = Project::fixture();
            let path = "Fixture/Broken.lean";
            let only = if twins_only { " twins" } else { "" };
            project.write(
                path,
                &format!("-- fake: setup-fail \"error: unknown package 'Missing'\"{only}\n{body}"),
            );
            let env = [("FAKE_LEAN_SETUP_TEXT", setup_text)];
            let mut lean = Lean::start(&[&project], &[], &env);
            let version =
                lean.ok("lean_update", args(&project, path, json!({})))["version"].clone();
            for text in ["exact nonsense", "trivial", "this is not Lean ⟨"] {
                let run = args(
                    &project,
                    path,
                    json!({"version": version, "line": 4, "character": 2, "text": text}),
                );
                let (code, reason) = if twins_only {
                    ("runtimeSetup", "twinSetupFailed")
                } else {
                    ("invalidParams", "headerFailed")
                };
                let failed = lean.fails("lean_run_at", run, code);
                assert_eq!(failed["data"]["reason"], reason, "{failed}");
                let said = failed["data"]["leanMessage"].as_str().unwrap();
                assert!(said.contains("unknown package 'Missing'"), "{failed}");
            }
            assert_eq!(twins_opened(&lean) > 0, twins_only, "{setup_text}");
            lean.finish_without_violations();
        }
    }
}

/// On every Lake era (the real-Lean lane runs this against the installed one, whatever Lake does
/// with a twin that is not on disk): text Lean rejects, a tactic or a command, is never a
/// success. The `-- fake:` comments give the fake Lean's error; Lean ignores them.
#[test]
fn text_lean_rejects_is_never_a_success_on_any_lake() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let tactic = "exact nonsense_xyz -- fake: error \"unknown identifier 'nonsense_xyz'\"";
    let command = "#check nonsense_xyz -- fake: error \"unknown identifier 'nonsense_xyz'\"";
    for (line, character, text) in [(AND_SWAP_BODY, 2, tactic), (26, 0, command)] {
        let ran = lean.ok(
            "lean_run_at",
            run_at(&project, &version, line, character, text),
        );
        assert_eq!(ran["success"], false, "{text}: {ran}");
        let said = ran["messages"].to_string();
        assert!(said.contains("nonsense_xyz"), "{text}: {ran}");
    }
    lean.server.finish_clean();
}

/// `sorry` is no clean success: Lean's warning sits on the declaration's name, before the probe,
/// and belongs to the probe all the same.
#[test]
fn a_sorry_probe_says_the_proof_still_depends_on_sorry() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let ran = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "sorry"),
    );
    assert_eq!(ran["uses_sorry"], true, "{ran}");
    let texts: Vec<&str> = ran["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("declaration uses")),
        "{ran}"
    );
    let clean = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "exact ⟨hq, hp⟩"),
    );
    assert_eq!(clean["uses_sorry"], false, "{clean}");
    assert_eq!(clean["success"], true, "{clean}");
    lean.server.finish_clean();
}

#[test]
fn a_lake_that_cannot_set_up_a_missing_file_gets_twins_on_disk() {
    if crate::harness::fake_only("a_lake_that_cannot_set_up_a_missing_file_gets_twins_on_disk") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_TWIN", "fail")]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let ran = lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    assert_eq!(ran["success"], true, "{ran}");
    assert_eq!(targets(&ran), ["q", "p"]);
    let [(twin_path, real)] = &crate::harness::twin_files(&project)[..] else {
        panic!("one twin in the build directory");
    };
    assert_eq!(real, "Fixture/Basic.lean");
    let on_disk = project.root().join(twin_path);
    // Twins never show up among the workspace's symbols or references.
    let symbols = lean.ok(
        "lean_workspace_symbols",
        json!({"workspace": project.descriptor(), "query": "and_swap"}),
    );
    let shown = symbols.to_string();
    assert!(!shown.contains(".lake/beam"), "{shown}");
    assert_eq!(symbols["result"].as_array().unwrap().len(), 1, "{symbols}");
    let twin = lean.fails(
        "lean_hover",
        args(
            &project,
            twin_path,
            json!({"version": 1, "line": 0, "character": 0}),
        ),
        "invalidParams",
    );
    assert!(
        twin["message"].as_str().unwrap().contains("hidden twin"),
        "{twin}"
    );
    lean.ok("lean_close", args(&project, BASIC, json!({})));
    assert!(!on_disk.exists(), "closing the file removes its twin");
    lean.server.finish_clean();
}

#[test]
fn twins_beyond_the_budget_are_closed_least_recently_used_first() {
    if crate::harness::fake_only("twins_beyond_the_budget_are_closed_least_recently_used_first") {
        return;
    }
    let project = Project::fixture();
    let other = "Fixture/Other.lean";
    project.write(
        other,
        "theorem other_swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n",
    );
    let mut lean = Lean::start(&[&project], &["--max-twins", "1"], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    lean.ok(
        "lean_run_at",
        run_at(&project, &version, AND_SWAP_BODY, 2, "constructor"),
    );
    let other_version = lean.ok("lean_sync", args(&project, other, json!({})))["version"].clone();
    let ran = lean.ok(
        "lean_run_at",
        args(
            &project,
            other,
            json!({"version": other_version, "line": 1, "character": 2, "text": "constructor"}),
        ),
    );
    assert_eq!(targets(&ran), ["q", "p"]);
    lean.wait_received("the first twin's didClose", |t| {
        t["method"] == "textDocument/didClose"
            && t["uri"]
                .as_str()
                .is_some_and(|u| crate::harness::is_twin_uri(u) && u.ends_with(BASIC))
    });
    let stats = lean.ok("beam_stats", json!({}));
    assert_eq!(
        stats["workspaces"]["local:[root]"]["sessions"]["lean"]["twinCount"], 1,
        "{stats}"
    );
    lean.server.finish_clean();
}

/// A probe sees the options Lake gives the real module: here its library's `autoImplicit :=
/// false`, which a twin set up as a file outside every library would not get (new Lake gives it
/// the root package's options, old Lake none), so `y` would be bound automatically and the probe
/// would succeed where the same text in the file fails. On every Lake era; the real-Lean lane runs
/// it against the installed one (the `-- fake:` comment is the fake's error; Lean ignores it).
#[test]
fn a_probe_sees_the_options_of_the_real_module_on_any_lake() {
    let eras: &[&[(&str, &str)]] = if crate::harness::real_lake().is_some() {
        &[&[]]
    } else {
        &[
            &[],
            &[("FAKE_LAKE_EXTERNAL_OPTIONS", "none")],
            &[
                ("FAKE_LEAN_TWIN", "fail"),
                ("FAKE_LEAN_SETUP_TEXT", "command"),
            ],
        ]
    };
    let probe = "theorem probe_y : y = y := rfl -- fake: error \"unknown identifier 'y'\" on \"y\" when \"autoImplicit=false\"";
    for env in eras {
        let project = Project::fixture();
        project.write(
            "lakefile.toml",
            "name = \"fixture\"\nversion = \"0.1.0\"\ndefaultTargets = [\"Fixture\"]\n\n\
             [[lean_lib]]\nname = \"Fixture\"\nleanOptions = {autoImplicit = false}\n",
        );
        let path = "Fixture/Implicit.lean";
        project.write(
            path,
            "theorem base : 1 = 1 := rfl\n\ntheorem later : True := by\n  trivial\n",
        );
        let mut lean = Lean::start(&[&project], &[], env);
        let version = lean.ok("lean_sync", args(&project, path, json!({})))["version"].clone();
        let ran = lean.ok(
            "lean_run_at",
            args(
                &project,
                path,
                json!({"version": version, "line": 2, "character": 0, "text": probe}),
            ),
        );
        assert_eq!(ran["success"], false, "{env:?}: {ran}");
        assert!(
            ran["messages"]
                .to_string()
                .contains("unknown identifier 'y'"),
            "{env:?}: {ran}"
        );
        // The same text in the file fails the same way.
        project.write(path, &format!("theorem base : 1 = 1 := rfl\n\n{probe}\n"));
        let synced = lean.ok("lean_sync", args(&project, path, json!({})));
        assert_eq!(
            synced["diagnostics"]["counts"]["error"], 1,
            "{env:?}: {synced}"
        );
        lean.finish_without_violations();
    }
}

#[test]
fn a_probe_asked_again_sends_lean_nothing_until_something_changes() {
    if crate::harness::fake_only("counting the messages Lean received") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let probe = run_at(&project, &version, AND_SWAP_BODY, 2, "constructor");
    let first = lean.ok("lean_run_at", probe.clone());
    let handle = lean.ok("lean_run_at_handle", probe.clone());
    let continued = lean.ok(
        "lean_run_with",
        run_with(&project, &handle["next_handle"], "· exact hq"),
    );
    let before = lean.received().len();
    // The same probes again, directly and through handles: answered from what Lean said.
    let again = lean.ok("lean_run_at", probe.clone());
    let handle_again = lean.ok("lean_run_at_handle", probe.clone());
    let continued_again = lean.ok(
        "lean_run_with",
        run_with(&project, &handle_again["next_handle"], "· exact hq"),
    );
    assert_eq!(
        lean.received()[before..],
        [] as [String; 0],
        "a repeated probe costs Lean nothing"
    );
    assert_eq!(again, first);
    assert_eq!(targets(&handle_again), ["q", "p"]);
    assert_eq!(continued_again, {
        let mut same = continued.clone();
        same["next_handle"] = continued_again["next_handle"].clone();
        same
    });
    // Another file Lean is told of may be an import: asked again.
    project.write("Fixture/Other.lean", "def other := 1\n");
    lean.ok("lean_sync", args(&project, "Fixture/Other.lean", json!({})));
    let before = lean.received().len();
    assert_eq!(lean.ok("lean_run_at", probe.clone()), first);
    let asked = &lean.received()[before..];
    assert!(
        asked.iter().any(|m| m == "textDocument/waitForDiagnostics"),
        "{asked:?}"
    );
    // A new runtime is asked again.
    lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    let version = lean.ok("lean_sync", args(&project, BASIC, json!({})))["version"].clone();
    let before = lean.received().len();
    let probe = run_at(&project, &version, AND_SWAP_BODY, 2, "constructor");
    assert_eq!(lean.ok("lean_run_at", probe), first);
    assert!(lean.received().len() > before, "a restart forgets verdicts");
    lean.finish_without_violations();
}

/// How many texts Lean was given for twins (opens and changes): a revival of a crashed twin
/// would be one more than the runs that gave it text.
fn twin_texts_given(lean: &Lean) -> usize {
    lean.trace()
        .iter()
        .filter(|t| t["dir"] == "in")
        .filter(|t| {
            t["method"] == "textDocument/didOpen" || t["method"] == "textDocument/didChange"
        })
        .filter(|t| t["uri"].as_str().is_some_and(crate::harness::is_twin_uri))
        .count()
}

/// A twin Lake cannot set up, in a file of several lines (Lean cuts its error's `range` at the
/// first line): `twinSetupFailed` with Lean's words and a `setup_failed` receipt, in either way a
/// worker words it; never a crash, never a revival.
#[test]
fn a_twin_that_cannot_be_set_up_is_typed_and_never_revived() {
    if crate::harness::fake_only("a twin whose set-up fails") {
        return;
    }
    let body = "-- fake: setup-fail \"error: no twins here\" twins\nimport Fixture.Basic\n\n\
                theorem t : True := by\n  trivial\n";
    for (setup_text, words) in [("command", "setup-file"), ("bare", "error: no twins here")] {
        let project = Project::fixture();
        let path = "Fixture/Twinless.lean";
        project.write(path, body);
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_SETUP_TEXT", setup_text)]);
        let version = lean.ok("lean_sync", args(&project, path, json!({})))["version"].clone();
        let texts = ["exact trivial", "trivial"];
        for text in texts {
            let run = json!({"version": version, "line": 4, "character": 2, "text": text});
            let failed = lean.fails("lean_run_at", args(&project, path, run), "runtimeSetup");
            assert_eq!(failed["data"]["reason"], "twinSetupFailed", "{failed}");
            let said = failed["data"]["leanMessage"].as_str().unwrap();
            assert!(
                said.contains(words) && said.contains("no twins here"),
                "{failed}"
            );
            assert_eq!(
                failed["data"]["receipt"]["state"], "setup_failed",
                "{failed}"
            );
            assert!(failed["data"].get("addedImports").is_none(), "{failed}");
        }
        assert_eq!(
            twin_texts_given(&lean),
            texts.len(),
            "{setup_text}: one text per run, no revival"
        );
        lean.finish_without_violations();
    }
}

/// Mid-2025 Lake sets a module up with the imports of its file on disk, whatever header the text
/// Lean has (reference Part 4, "Mid-era Lake"): a probe at the top of the file that adds an
/// import never built fails in the twin's header. That is said, naming the import and what to
/// do; never a crash and never a verdict. New Lake builds the twin's own header: the same probe
/// runs.
#[test]
fn a_probe_adding_an_import_mid_era_lake_does_not_build_says_so() {
    if crate::harness::fake_only("mid-era Lake's set-up from the file on disk") {
        return;
    }
    let path = "Fixture/Uses.lean";
    let probe = "import Fixture.TypeError";
    for mid in [true, false] {
        let project = Project::fixture();
        let env: &[(&str, &str)] = if mid {
            &[("FAKE_LAKE_SETUP_IMPORTS", "disk")]
        } else {
            &[]
        };
        let mut lean = Lean::start(&[&project], &[], env);
        let version = lean.ok("lean_sync", args(&project, path, json!({})))["version"].clone();
        let run = json!({"version": version, "line": 1, "character": 0, "text": probe});
        if !mid {
            let ran = lean.ok("lean_run_at", args(&project, path, run));
            assert_eq!(ran["success"], true, "{ran}");
            lean.finish_without_violations();
            continue;
        }
        let failed = lean.fails("lean_run_at", args(&project, path, run), "runtimeSetup");
        says_the_added_import_was_not_built(&failed);
        assert_eq!(
            failed["data"]["receipt"]["state"], "setup_failed",
            "{failed}"
        );
        assert_eq!(twin_texts_given(&lean), 1, "no revival");
        lean.finish_without_violations();
    }
}

/// `failed` says the run's twin could not be set up because its text imports
/// `Fixture.TypeError`, which the real file does not and mid-era Lake did not build: Lean's
/// words, the import, and what to do.
pub fn says_the_added_import_was_not_built(failed: &Value) {
    let data = &failed["data"];
    assert_eq!(data["reason"], "twinSetupFailed", "{failed}");
    assert_eq!(
        data["addedImports"],
        json!(["Fixture.TypeError"]),
        "{failed}"
    );
    let said = data["leanMessage"].as_str().unwrap();
    assert!(
        said.contains("of module Fixture.TypeError does not exist"),
        "{failed}"
    );
    let message = failed["message"].as_str().unwrap();
    for words in [
        "Fixture.TypeError",
        "file on disk",
        "lake build +Fixture.TypeError",
    ] {
        assert!(message.contains(words), "{words:?}: {message}");
    }
}
