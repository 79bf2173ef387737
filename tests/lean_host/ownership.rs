//! One owner for what Lean has open: concurrent calls never see each other's work. Runs on one
//! file go side by side in twins of their own (a run takes the idle twin sharing the longest
//! prefix with its text), runs beyond `--max-twins` wait for one, a document a call uses is
//! never closed to make room, and calls that need no Lean start none. Each scenario is held in
//! place with the fake's gates and synchronised on what the server reports while a call waits
//! (a progress step saying so), never on time.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, is_twin_uri, replay_open, targets, twin_files};
use crate::support::{call, notification, request};

/// A theorem whose first tactic, `constructor`, is at 1:2.
fn swap(name: &str) -> String {
    format!(
        "theorem {name} (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n"
    )
}

/// Sends a `tools/call` with a progress token named after its id.
fn send(lean: &mut Lean, id: i64, tool: &str, arguments: Value) {
    let mut params = call(tool, arguments);
    params["_meta"] = json!({"progressToken": format!("p{id}")});
    lean.server.send(&request(id, "tools/call", params));
}

/// Waits until call `id` reports that it is waiting for something another call holds.
fn waits(lean: &mut Lean, id: i64) -> String {
    let token = format!("p{id}");
    let step = lean.server.wait_for(&format!("call {id} waiting"), |m| {
        m["method"] == "notifications/progress"
            && m["params"]["progressToken"] == token.as_str()
            && m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("waiting for"))
    });
    step["params"]["message"].as_str().unwrap().to_owned()
}

fn answer(lean: &mut Lean, id: i64) -> Value {
    let response = lean.server.response(&json!(id));
    assert_eq!(response["result"]["isError"], false, "{response}");
    response["result"]["structuredContent"].clone()
}

/// The most documents Lean had open at once, replaying what it received: `(real, twins)`.
pub fn peak_open(lean: &Lean) -> (usize, usize) {
    let mut peak = (0, 0);
    replay_open(&lean.trace(), |open| {
        let twins = open.iter().filter(|u| is_twin_uri(u)).count();
        peak = (peak.0.max(open.len() - twins), peak.1.max(twins));
    });
    peak
}

fn starts(lean: &Lean) -> usize {
    lean.trace()
        .iter()
        .filter(|t| t.get("event") == Some(&json!("start")))
        .count()
}

#[test]
fn overlapping_runs_on_one_file_get_their_own_verdicts_within_the_twin_bound() {
    if crate::harness::fake_only("overlapping runs held at the fake's gates") {
        return;
    }
    let project = Project::fixture();
    for (file, name) in [("A", "a_swap"), ("B", "b_swap"), ("C", "c_swap")] {
        project.write(&format!("Fixture/{file}.lean"), &swap(name));
    }
    let mut lean = Lean::start(&[&project], &["--max-twins", "2"], &[]);
    let run = |lean: &mut Lean, id: i64, file: &str, text: &str| {
        let path = format!("Fixture/{file}.lean");
        let version = lean.ok("lean_sync", args(&project, &path, json!({})))["version"].clone();
        let at = json!({"version": version, "line": 1, "character": 2, "text": text});
        send(lean, id, "lean_run_at", args(&project, &path, at));
    };
    run(&mut lean, 101, "A", "-- fake: gate a\nconstructor");
    run(&mut lean, 102, "B", "-- fake: gate b\nconstructor");
    lean.gate_entered("a");
    lean.gate_entered("b");
    // Both twins are leased: a run on a third file waits for one instead of opening a third.
    run(
        &mut lean,
        103,
        "C",
        "-- fake: gate c\nexact hp -- fake: error \"type mismatch\"",
    );
    let waiting = waits(&mut lean, 103);
    assert!(waiting.contains("twin"), "{waiting}");
    run(&mut lean, 104, "C", "exact ⟨hq, hp⟩");
    waits(&mut lean, 104);
    lean.open_gate("a");
    assert_eq!(targets(&answer(&mut lean, 101)), ["q", "p"]);
    lean.gate_entered("c");
    lean.open_gate("c");
    let failed = answer(&mut lean, 103);
    assert_eq!(failed["success"], false, "{failed}");
    assert_eq!(
        failed["messages"],
        json!([{"severity": "error", "text": "type mismatch"}])
    );
    let closed = answer(&mut lean, 104);
    assert_eq!(closed["success"], true, "{closed}");
    assert_eq!(closed["proof_state"], json!({"goals": []}));
    lean.open_gate("b");
    assert_eq!(targets(&answer(&mut lean, 102)), ["q", "p"]);
    let stats = lean.ok("beam_stats", json!({}));
    let session = &stats["workspaces"]["local:[root]"]["sessions"]["lean"];
    assert!(session["twinCount"].as_u64().unwrap() <= 2, "{stats}");
    assert_eq!(peak_open(&lean).1, 2, "Lean never had more than 2 twins");
    lean.finish_without_violations();
}

#[test]
fn a_document_a_call_uses_is_never_closed_to_make_room() {
    if crate::harness::fake_only("syncs held at the fake's gates") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/A.lean",
        &format!("-- fake: gate a\n{}", swap("a_swap")),
    );
    project.write("Fixture/B.lean", &swap("b_swap"));
    let mut lean = Lean::start(&[&project], &["--max-documents", "1"], &[]);
    let sync = |file: &str| args(&project, &format!("Fixture/{file}.lean"), json!({}));
    send(&mut lean, 201, "lean_sync", sync("A"));
    lean.gate_entered("a");
    send(&mut lean, 202, "lean_sync", sync("B"));
    let waiting = waits(&mut lean, 202);
    assert!(waiting.contains("--max-documents"), "{waiting}");
    send(&mut lean, 203, "lean_sync", sync("A"));
    send(&mut lean, 204, "lean_sync", sync("B"));
    waits(&mut lean, 204);
    lean.open_gate("a");
    for id in [201, 202, 203, 204] {
        let synced = answer(&mut lean, id);
        assert_eq!(synced["version"], 1, "{synced}");
        assert_eq!(synced["diagnostics"]["counts"]["error"], 0, "{synced}");
    }
    assert_eq!(peak_open(&lean).0, 1, "Lean never had two documents open");
    lean.finish_without_violations();
}

#[test]
fn a_request_in_flight_keeps_its_document_open() {
    if crate::harness::fake_only("a hover held at the fake's gate") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/A.lean",
        "def one : Nat := 1\n-- fake: gate a\ndef two : Nat := 2\n",
    );
    project.write("Fixture/B.lean", &swap("b_swap"));
    let mut lean = Lean::start(&[&project], &["--max-documents", "1"], &[]);
    let a = "Fixture/A.lean";
    let version = lean.ok("lean_update", args(&project, a, json!({})))["version"].clone();
    // Lean answers a position past the gate only once elaboration gets there.
    let at = json!({"version": version, "line": 2, "character": 4});
    send(&mut lean, 301, "lean_hover", args(&project, a, at));
    lean.gate_entered("a");
    send(
        &mut lean,
        302,
        "lean_sync",
        args(&project, "Fixture/B.lean", json!({})),
    );
    waits(&mut lean, 302);
    lean.open_gate("a");
    let hover = answer(&mut lean, 301);
    assert!(hover.to_string().contains("two"), "{hover}");
    assert_eq!(answer(&mut lean, 302)["version"], 1);
    lean.finish_without_violations();
}

#[test]
fn a_release_needs_no_lean_even_for_a_deleted_file() {
    if crate::harness::fake_only("counting lake serve starts") {
        return;
    }
    let project = Project::fixture();
    let basic = "Fixture/Basic.lean";
    project.write("Fixture/A.lean", &swap("a_swap"));
    let mut lean = Lean::start(&[&project], &[], &[]);
    let handle = |lean: &mut Lean, path: &str, line: u64| {
        let version = lean.ok("lean_sync", args(&project, path, json!({})))["version"].clone();
        let at = json!({"version": version, "line": line, "character": 2, "text": "constructor"});
        lean.ok("lean_run_at_handle", args(&project, path, at))["next_handle"].clone()
    };
    let kept = handle(&mut lean, basic, 23);
    let gone = handle(&mut lean, "Fixture/A.lean", 1);
    lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    project.wait_no_processes();
    let released = lean.ok(
        "lean_release",
        args(&project, basic, json!({"handle": kept})),
    );
    assert_eq!(released["result"], Value::Null);
    std::fs::remove_file(project.root().join("Fixture/A.lean")).unwrap();
    let released = lean.ok(
        "lean_release",
        args(&project, "Fixture/A.lean", json!({"handle": gone})),
    );
    assert_eq!(released["result"], Value::Null);
    let closed = lean.ok("lean_close", args(&project, basic, json!({})));
    assert_eq!(closed["closed"], true);
    assert_eq!(starts(&lean), 1, "releasing and closing start no Lean");
    assert!(project.processes().is_empty());
    let version = lean.ok("beam_version", json!({}));
    assert_eq!(version["runtime_active"], false);
    lean.finish_without_violations();
}

#[test]
fn a_cancelled_save_still_tells_lean_of_the_artifacts_it_rewrote() {
    if crate::harness::fake_only("a save held after its build wrote the artifacts") {
        return;
    }
    let project = Project::fixture();
    let basic = "Fixture/Basic.lean";
    let text = project.read(basic);
    project.write(basic, &format!("-- fake: build-gate-after built\n{text}"));
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
    send(
        &mut lean,
        401,
        "lean_save",
        args(&project, basic, json!({})),
    );
    lean.gate_entered("built");
    lean.server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 401, "reason": "the agent moved on"}),
    ));
    // The artifacts on disk changed: Lean must hear of it, cancelled or not.
    lean.wait_received("the rewritten Basic.ilean", |t| {
        t["method"] == "workspace/didChangeWatchedFiles"
            && t.to_string().contains("Fixture/Basic.ilean")
    });
    lean.open_gate("built");
    let saved = lean.ok("lean_save", args(&project, basic, json!({})));
    assert_eq!(saved["module"], "Fixture.Basic");
    lean.finish_without_violations();
}

#[test]
fn a_lake_configuration_change_supersedes_work_in_flight_with_a_typed_error() {
    if crate::harness::fake_only("a sync held at the fake's gate") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/A.lean",
        &format!("-- fake: gate a\n{}", swap("a_swap")),
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    send(
        &mut lean,
        501,
        "lean_sync",
        args(&project, "Fixture/A.lean", json!({})),
    );
    lean.gate_entered("a");
    let lakefile = project.read("lakefile.toml");
    project.write("lakefile.toml", &format!("{lakefile}\n# a new option\n"));
    let restarted = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let note = restarted["note"].as_str().unwrap_or_default();
    assert!(note.contains("lakefile.toml"), "{restarted}");
    let response = lean.server.response(&json!(501));
    let error = &response["result"]["structuredContent"];
    assert_eq!(error["code"], "contentModified", "{response}");
    assert_eq!(error["data"]["reason"], "lakeConfigurationChanged");
    assert_eq!(error["data"]["changed"], json!(["lakefile.toml"]));
    lean.finish_without_violations();
}

#[test]
fn a_failed_start_takes_no_place_of_a_healthy_workspace() {
    if crate::harness::fake_only("a start failed with the fake's faults") {
        return;
    }
    let healthy = Project::fixture();
    let broken = Project::fixture();
    let third = Project::fixture();
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("fault-spent");
    std::fs::write(&marker, b"").unwrap();
    let marker = marker.display().to_string();
    let env = [
        ("FAKE_LEAN_FAULTS_ONCE", marker.as_str()),
        ("FAKE_LAKE_EXIT", "1"),
    ];
    let mut lean = Lean::start(
        &[&healthy, &broken, &third],
        &["--max-workspaces", "2"],
        &env,
    );
    let basic = "Fixture/Basic.lean";
    lean.ok("lean_sync", args(&healthy, basic, json!({})));
    std::fs::remove_file(&marker).unwrap();
    lean.fails("lean_sync", args(&broken, basic, json!({})), "runtimeSetup");
    lean.ok("lean_sync", args(&third, basic, json!({})));
    let stats = lean.ok("beam_stats", json!({}));
    let first = &stats["workspaces"]["local:[root]"];
    assert_eq!(first["sessions"]["lean"]["active"], true, "{stats}");
    assert_eq!(first["byBackend"]["lean"]["budgetShutdowns"], 0, "{stats}");
    lean.finish_without_violations();
}

#[test]
fn a_linear_handle_is_spent_once_however_many_runs_race_for_it() {
    let project = Project::fixture();
    let basic = "Fixture/Basic.lean";
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"].clone();
    for round in 0..10 {
        let at = json!({"version": version, "line": 23, "character": 2, "text": "constructor"});
        let made = lean.ok("lean_run_at_handle", args(&project, basic, at));
        let handle = made["next_handle"].clone();
        let ids = [600 + 2 * round, 601 + 2 * round];
        for id in ids {
            let linear = json!({"handle": handle, "text": "· exact hq"});
            send(
                &mut lean,
                id,
                "lean_run_with_linear",
                args(&project, basic, linear),
            );
        }
        let mut spent = 0;
        for id in ids {
            let response = lean.server.response(&json!(id));
            let result = &response["result"]["structuredContent"];
            if response["result"]["isError"] == true {
                assert_eq!(result["data"]["reason"], "handleConsumed", "{response}");
            } else {
                assert_eq!(result["success"], true, "{response}");
                spent += 1;
            }
        }
        assert_eq!(spent, 1, "one of two racing linear runs spends the handle");
    }
    lean.server.finish_clean();
}

#[test]
fn dropping_a_workspace_whose_lean_never_finishes_starting_answers_at_once() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_NO_INIT", "1")]);
    send(
        &mut lean,
        701,
        "lean_sync",
        args(&project, "Fixture/Basic.lean", json!({})),
    );
    let dropped = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    assert_eq!(dropped["dropped"], true, "{dropped}");
    let response = lean.server.response(&json!(701));
    let error = &response["result"]["structuredContent"];
    assert_eq!(error["code"], "runtimeSetup", "{response}");
    project.wait_no_processes();
    lean.server.finish_clean();
}

#[test]
fn cancelled_runs_leave_no_twin_open_or_on_disk() {
    if crate::harness::fake_only("runs held and cancelled at the fake's gates") {
        return;
    }
    let project = Project::fixture();
    for (file, name) in [("A", "a_swap"), ("B", "b_swap"), ("C", "c_swap")] {
        project.write(&format!("Fixture/{file}.lean"), &swap(name));
    }
    // A Lake that cannot set up a file that is not on disk: twins are written under .lake.
    let env = [("FAKE_LEAN_TWIN", "fail")];
    let mut lean = Lean::start(&[&project], &["--max-twins", "1"], &env);
    let run = |lean: &mut Lean, id: i64, file: &str, text: &str| {
        let path = format!("Fixture/{file}.lean");
        let version = lean.ok("lean_sync", args(&project, &path, json!({})))["version"].clone();
        let at = json!({"version": version, "line": 1, "character": 2, "text": text});
        send(lean, id, "lean_run_at", args(&project, &path, at));
    };
    let cancel = |lean: &mut Lean, id: i64| {
        lean.server.send(&notification(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "the agent moved on"}),
        ));
    };
    run(&mut lean, 801, "A", "-- fake: gate a\nconstructor");
    lean.gate_entered("a");
    // Cancelled while it waits for the one twin place: it never had a twin.
    run(&mut lean, 802, "B", "constructor");
    waits(&mut lean, 802);
    cancel(&mut lean, 802);
    run(&mut lean, 803, "C", "-- fake: gate c\nconstructor");
    waits(&mut lean, 803);
    lean.open_gate("a");
    assert_eq!(targets(&answer(&mut lean, 801)), ["q", "p"]);
    // Cancelled while Lean elaborates its twin: the twin stays, open and in the set.
    lean.gate_entered("c");
    cancel(&mut lean, 803);
    lean.open_gate("c");
    let stats = lean.ok("beam_stats", json!({}));
    let session = &stats["workspaces"]["local:[root]"]["sessions"]["lean"];
    assert_eq!(session["twinCount"], 1, "{stats}");
    let files: Vec<String> = twin_files(&project).into_iter().map(|f| f.1).collect();
    assert_eq!(files, ["Fixture/C.lean"], "only the open twin is on disk");
    assert_eq!(peak_open(&lean).1, 1, "Lean never had two twins");
    // Closing the file closes its twin and removes its file.
    lean.ok("lean_close", args(&project, "Fixture/C.lean", json!({})));
    assert_eq!(twin_files(&project), Vec::new());
    let stats = lean.ok("beam_stats", json!({}));
    assert_eq!(
        stats["workspaces"]["local:[root]"]["sessions"]["lean"]["twinCount"],
        0
    );
    lean.finish_without_violations();
}

#[test]
fn a_workspace_whose_start_failed_starts_again_within_the_workspace_bound() {
    if crate::harness::fake_only("a start failed with the fake's faults") {
        return;
    }
    let healthy = Project::fixture();
    let broken = Project::fixture();
    healthy.write(
        "Fixture/A.lean",
        &format!("-- fake: gate a\n{}", swap("a_swap")),
    );
    let scratch = tempfile::tempdir().unwrap();
    let marker = scratch.path().join("fault-spent");
    std::fs::write(&marker, b"").unwrap();
    let marker = marker.display().to_string();
    let env = [
        ("FAKE_LEAN_FAULTS_ONCE", marker.as_str()),
        ("FAKE_LAKE_EXIT", "1"),
    ];
    let mut lean = Lean::start(&[&healthy, &broken], &["--max-workspaces", "1"], &env);
    let basic = "Fixture/Basic.lean";
    // The healthy workspace is busy while the other one's start fails.
    send(
        &mut lean,
        1001,
        "lean_sync",
        args(&healthy, "Fixture/A.lean", json!({})),
    );
    lean.gate_entered("a");
    std::fs::remove_file(&marker).unwrap();
    lean.fails("lean_sync", args(&broken, basic, json!({})), "runtimeSetup");
    lean.open_gate("a");
    answer(&mut lean, 1001);
    // Now idle, it makes room for the retried start.
    lean.ok("lean_sync", args(&broken, basic, json!({})));
    healthy.wait_no_processes();
    let stats = lean.ok("beam_stats", json!({}));
    let first = &stats["workspaces"]["local:[root]"];
    assert_eq!(first["sessions"]["lean"]["active"], false, "{stats}");
    assert_eq!(first["byBackend"]["lean"]["budgetShutdowns"], 1, "{stats}");
    lean.finish_without_violations();
}

#[test]
fn an_answer_about_a_text_another_call_replaced_is_refused() {
    if crate::harness::fake_only("a hover held at the fake's gate while the file changes") {
        return;
    }
    let project = Project::fixture();
    let a = "Fixture/A.lean";
    project.write(
        a,
        "def one : Nat := 1\n-- fake: gate a\ndef two : Nat := 2\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_update", args(&project, a, json!({})))["version"].clone();
    let at = json!({"version": version, "line": 2, "character": 4});
    send(&mut lean, 1101, "lean_hover", args(&project, a, at));
    lean.gate_entered("a");
    // Another call gives Lean a new text while the hover waits: Lean will answer for it.
    project.write(
        a,
        "def one : Nat := 1\n-- fake: gate a\ndef deux : Nat := 2\n",
    );
    let changed = lean.ok("lean_update", args(&project, a, json!({})));
    assert_eq!(changed["version"], 2);
    lean.open_gate("a");
    let response = lean.server.response(&json!(1101));
    let error = &response["result"]["structuredContent"];
    assert_eq!(error["code"], "contentModified", "{response}");
    assert_eq!(error["data"]["reason"], "documentVersionMismatch");
    assert_eq!(error["data"]["currentVersion"], 2);
    lean.finish_without_violations();
}

/// The twin URIs Lean was sent `method` for, in order.
fn twin_uris(lean: &Lean, method: &str) -> Vec<String> {
    lean.trace()
        .iter()
        .filter(|t| t["dir"] == "in" && t["method"] == method)
        .filter_map(|t| t["uri"].as_str().map(str::to_owned))
        .filter(|u| is_twin_uri(u))
        .collect()
}

#[test]
fn runs_on_one_file_go_side_by_side_in_twins_of_their_own() {
    if crate::harness::fake_only("runs on one file held at the fake's gates") {
        return;
    }
    let project = Project::fixture();
    let a = "Fixture/A.lean";
    project.write(a, &swap("a_swap"));
    let mut lean = Lean::start(&[&project], &["--max-twins", "3"], &[]);
    let version = lean.ok("lean_sync", args(&project, a, json!({})))["version"].clone();
    let run = |lean: &mut Lean, id: i64, text: &str| {
        let at = json!({"version": version, "line": 1, "character": 2, "text": text});
        send(lean, id, "lean_run_at", args(&project, a, at));
    };
    run(&mut lean, 1201, "constructor -- fake: gate one");
    run(&mut lean, 1202, "exact ⟨hq, hp⟩ -- fake: gate two");
    run(
        &mut lean,
        1203,
        "exact hp -- fake: gate three\n-- fake: error \"type mismatch\" on \"exact hp\"",
    );
    // Three runs on one file are in Lean at once, each in a twin of its own.
    for gate in ["one", "two", "three"] {
        lean.gate_entered(gate);
    }
    run(&mut lean, 1204, "constructor");
    let waiting = waits(&mut lean, 1204);
    assert!(waiting.contains("--max-twins 3"), "{waiting}");
    for gate in ["three", "two", "one"] {
        lean.open_gate(gate);
    }
    assert_eq!(targets(&answer(&mut lean, 1201)), ["q", "p"]);
    let closed = answer(&mut lean, 1202);
    assert_eq!(closed["proof_state"], json!({"goals": []}), "{closed}");
    let failed = answer(&mut lean, 1203);
    assert_eq!(failed["success"], false, "{failed}");
    assert_eq!(
        failed["messages"],
        json!([{"severity": "error", "text": "type mismatch"}])
    );
    assert_eq!(targets(&answer(&mut lean, 1204)), ["q", "p"]);
    let opened = twin_uris(&lean, "textDocument/didOpen");
    assert_eq!(opened.len(), 3, "{opened:?}");
    let files = twin_files(&project);
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files.iter().all(|(_, real)| real == a), "{files:?}");
    assert_eq!(peak_open(&lean).1, 3);
    // Closing the file closes every twin of it.
    lean.ok("lean_close", args(&project, a, json!({})));
    assert_eq!(twin_files(&project), Vec::new());
    lean.wait_received_count("the twins' didClose", 3, |t| {
        t["method"] == "textDocument/didClose" && t["uri"].as_str().is_some_and(is_twin_uri)
    });
    lean.finish_without_violations();
}

#[test]
fn a_run_takes_the_idle_twin_sharing_the_longest_prefix_with_its_text() {
    if crate::harness::fake_only("two twins of one file made at the fake's gates") {
        return;
    }
    let project = Project::fixture();
    let a = "Fixture/A.lean";
    project.write(a, &swap("a_swap"));
    let mut lean = Lean::start(&[&project], &["--max-twins", "2"], &[]);
    let version = lean.ok("lean_sync", args(&project, a, json!({})))["version"].clone();
    let at = |line: u64, text: &str| {
        args(
            &project,
            a,
            json!({"version": version, "line": line, "character": 2, "text": text}),
        )
    };
    // Two twins: one probing the first tactic, then (the first held) one the last bullet.
    send(
        &mut lean,
        1301,
        "lean_run_at",
        at(1, "constructor -- fake: gate first"),
    );
    lean.gate_entered("first");
    send(&mut lean, 1302, "lean_run_at", at(3, "exact hp"));
    answer(&mut lean, 1302);
    lean.open_gate("first");
    answer(&mut lean, 1301);
    let opened = twin_uris(&lean, "textDocument/didOpen");
    assert_eq!(opened.len(), 2, "{opened:?}");
    let last_twin = opened[1].clone();
    // Another probe of the last bullet shares its whole prefix with that twin's text.
    lean.ok("lean_run_at", at(3, "exact ⟨hq, hp⟩.2"));
    let changed = twin_uris(&lean, "textDocument/didChange");
    assert_eq!(changed, std::slice::from_ref(&last_twin), "{changed:?}");
    // And one sharing more with the first twin's probe (`constructor -- `) than with the real
    // text the second twin holds there (`constructor\n`), with the first.
    lean.ok("lean_run_at", at(1, "constructor -- again"));
    let changed = twin_uris(&lean, "textDocument/didChange");
    assert_eq!(changed.len(), 2);
    assert_eq!(changed[1], opened[0], "{changed:?}");
    lean.finish_without_violations();
}
