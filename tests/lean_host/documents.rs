//! `lean_update`, `lean_sync`, `lean_refresh`, `lean_close`: versions owned by the server, the
//! diagnostics barrier, counts, readiness, items, and what each costs Lean.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, request};

#[test]
fn sync_of_a_clean_file_is_save_ready() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(synced["version"], 1);
    assert_eq!(synced["diagnostics"]["counts"]["total"], 0);
    assert_eq!(synced["readiness"]["save_ready"], true);
    assert_eq!(synced["document_progress"]["done"], true);
    assert_eq!(
        synced["workspace"]["root"], "[root]",
        "the canonical root, redacted"
    );
    assert!(synced["diagnostics"].get("items").is_none());
    assert!(lean.violations().is_empty(), "{:?}", lean.violations());
    crate::harness::snapshot("sync_clean", lean.server.finish_clean());
    project.wait_no_processes();
}

#[test]
fn sync_counts_every_diagnostic_and_returns_items_on_request() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let synced = lean.ok(
        "lean_sync",
        args(
            &project,
            "Fixture/Holes.lean",
            json!({"diagnostic_scope": "all", "diagnostics_in_result": true}),
        ),
    );
    let counts = &synced["diagnostics"]["counts"];
    assert!(counts["error"].as_u64().unwrap() >= 1, "{synced}");
    assert!(counts["warning"].as_u64().unwrap() >= 1, "{synced}");
    let items = synced["diagnostics"]["items"].as_array().unwrap();
    assert_eq!(items.len() as u64, counts["total"].as_u64().unwrap());
    assert!(items.iter().all(|i| i["path"] == "Fixture/Holes.lean"));
    assert_eq!(synced["readiness"]["save_ready"], false);
    assert_eq!(synced["readiness"]["reason"], "documentErrors");
    // The default scope keeps errors only in the items, but the counts stay complete.
    let errors_only = lean.ok(
        "lean_sync",
        args(
            &project,
            "Fixture/Holes.lean",
            json!({"diagnostics_in_result": true}),
        ),
    );
    let items = errors_only["diagnostics"]["items"].as_array().unwrap();
    assert!(
        items.iter().all(|i| i["severity"] == "error"),
        "{errors_only}"
    );
    assert_eq!(errors_only["diagnostics"]["counts"], *counts);
    crate::harness::snapshot("sync_items", lean.server.finish_clean());
}

/// `--diagnostics-in-result --diagnostic-scope all` (what `config` writes for clients that do not
/// show the model log notifications) make a bare `lean_sync` return every diagnostic, and the
/// listing advertise those defaults; an argument given still wins.
#[test]
fn the_command_line_changes_the_defaults_of_diagnostics_in_results() {
    let project = Project::fixture();
    let flags = ["--diagnostics-in-result", "--diagnostic-scope", "all"];
    let mut lean = Lean::start(&[&project], &flags, &[]);
    let listed = lean.server.ask(request(90, "tools/list", json!({})));
    let sync = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "lean_sync")
        .unwrap();
    let properties = &sync["inputSchema"]["properties"];
    assert_eq!(properties["diagnostics_in_result"]["default"], true);
    assert_eq!(properties["diagnostic_scope"]["default"], "all");
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Holes.lean", json!({})));
    let counts = &synced["diagnostics"]["counts"];
    let items = synced["diagnostics"]["items"].as_array().unwrap();
    assert_eq!(items.len() as u64, counts["total"].as_u64().unwrap());
    assert!(items.iter().any(|i| i["severity"] == "warning"), "{synced}");
    let errors_only = lean.ok(
        "lean_sync",
        args(
            &project,
            "Fixture/Holes.lean",
            json!({"diagnostic_scope": "errors"}),
        ),
    );
    let items = errors_only["diagnostics"]["items"].as_array().unwrap();
    assert!(
        items.iter().all(|i| i["severity"] == "error"),
        "{errors_only}"
    );
    lean.server.finish_clean();
}

#[test]
fn versions_follow_the_text_on_disk_and_stale_callers_are_told() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let first = lean.ok(
        "lean_update",
        args(&project, "Fixture/Basic.lean", json!({})),
    );
    assert_eq!(first["version"], 1);
    assert_eq!(first["changed"], true);
    let again = lean.ok(
        "lean_update",
        args(&project, "Fixture/Basic.lean", json!({})),
    );
    assert_eq!(
        (again["version"].clone(), again["changed"].clone()),
        (json!(1), json!(false))
    );
    let text = project.read("Fixture/Basic.lean");
    project.write("Fixture/Basic.lean", &format!("{text}\n-- edited\n"));
    let error = lean.fails(
        "lean_hover",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": 1, "line": 7, "character": 5}),
        ),
        "contentModified",
    );
    // The receipt names the text the call read, which its version no longer is.
    let receipt = error["data"]["receipt"].clone();
    assert_eq!(receipt["state"], "superseded", "{error}");
    assert_eq!(receipt["version"], 2, "{error}");
    let mut data = error["data"].clone();
    data.as_object_mut().unwrap().remove("receipt");
    assert_eq!(
        data,
        json!({
            "reason": "documentVersionMismatch",
            "expectedVersion": 1,
            "currentVersion": 2,
            "uri": "file://[root]/Fixture/Basic.lean",
            "path": "Fixture/Basic.lean"
        })
    );
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(synced["version"], 2);
    crate::harness::snapshot("versions", lean.server.finish_clean());
}

#[test]
fn an_unchanged_sync_sends_lean_only_its_barrier() {
    if crate::harness::fake_only("an_unchanged_sync_sends_lean_only_its_barrier") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let before = lean.received_after_handshake().len();
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    // Lean recorded the barrier before it answered it, so the trace is complete here.
    let after = lean.received();
    assert_eq!(
        after[before..],
        ["textDocument/waitForDiagnostics"],
        "an unchanged sync sends exactly one message"
    );
    lean.server.finish_clean();
}

#[test]
fn refresh_reopens_and_close_is_idempotent() {
    if crate::harness::fake_only("refresh_reopens_and_close_is_idempotent") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let refreshed = lean.ok(
        "lean_refresh",
        args(&project, "Fixture/Basic.lean", json!({})),
    );
    assert_eq!(
        refreshed["version"], 1,
        "a reopened document with the same text keeps its version"
    );
    assert_eq!(refreshed["readiness"]["save_ready"], true);
    for _ in 0..2 {
        let closed = lean.ok(
            "lean_close",
            args(&project, "Fixture/Basic.lean", json!({})),
        );
        assert_eq!(closed["closed"], true);
    }
    let received = lean.wait_received_count("refresh's and close's didClose", 2, |t| {
        t["method"] == "textDocument/didClose"
    });
    assert_eq!(
        received
            .iter()
            .filter(|m| *m == "textDocument/didClose")
            .count(),
        2,
        "refresh closed once, close once; the second close sent nothing: {received:?}"
    );
    assert_eq!(
        received
            .iter()
            .filter(|m| *m == "textDocument/didOpen")
            .count(),
        2
    );
    crate::harness::snapshot("refresh_close", lean.server.finish_clean());
}

#[test]
fn a_changed_dependency_makes_its_importer_stale_until_refreshed() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let text = project.read("Fixture/Basic.lean");
    project.write(
        "Fixture/Basic.lean",
        &format!("{text}\ndef extra : Nat := 0\n"),
    );
    // The saved change tells Lean that Uses' imports are out of date.
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Uses.lean", json!({})),
        "syncBarrierIncomplete",
    );
    assert_eq!(error["data"]["reason"], "staleImports");
    assert_eq!(
        error["data"]["recoveryPlan"][0],
        "lean_refresh Fixture/Uses.lean"
    );
    let refreshed = lean.ok(
        "lean_refresh",
        args(&project, "Fixture/Uses.lean", json!({})),
    );
    assert_eq!(refreshed["readiness"]["save_ready"], true);
    crate::harness::snapshot("stale_imports", lean.server.finish_clean());
}

#[test]
fn a_sync_overtaken_by_a_newer_text_reports_that_text_complete() {
    if crate::harness::fake_only("a_sync_overtaken_by_a_newer_text_reports_that_text_complete") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Moving.lean";
    project.write(path, "def a : Nat := 1 -- fake: gate first\n");
    let mut lean = Lean::start(&[&project], &[], &[]);
    let sync = |id: i64| {
        request(
            id,
            "tools/call",
            call("lean_sync", args(&project, path, json!({}))),
        )
    };
    let barrier = |t: &Value, version: i64| {
        t["method"] == "textDocument/waitForDiagnostics" && t["version"] == version
    };
    lean.server.send(&sync(101));
    lean.gate_entered("first");
    let first = crate::harness::FIRST_LSP_VERSION;
    lean.wait_received("the first barrier", |t| barrier(t, first));
    project.write(
        path,
        "def a : Nat := 1 -- fake: error \"second text\"\ndef b : Nat := 2 -- fake: gate second\n",
    );
    lean.server.send(&sync(102));
    lean.gate_entered("second");
    // Lean answers the first barrier as soon as the newer version supersedes it; the first
    // sync must still not report the second text before Lean has finished it.
    lean.open_gate("second");
    for id in [101, 102] {
        let answer = lean.server.response(&json!(id));
        let synced = &answer["result"]["structuredContent"];
        assert_eq!(synced["version"], 2, "{answer}");
        assert_eq!(synced["document_progress"]["done"], true, "{answer}");
        assert_eq!(synced["diagnostics"]["counts"]["error"], 1, "{answer}");
    }
    let second_barriers = lean
        .trace()
        .iter()
        .filter(|t| t["dir"] == "in" && barrier(t, first + 1))
        .count();
    assert_eq!(
        second_barriers, 2,
        "the overtaken sync waits for the newer version too"
    );
    lean.server.finish_clean();
}

#[test]
fn every_documented_lean_behaviour_gives_the_same_sync() {
    if crate::harness::fake_only("every_documented_lean_behaviour_gives_the_same_sync") {
        return;
    }
    let path = "Fixture/Mixed.lean";
    let text = "def a : Nat := 1 -- fake: error \"bad a\"\n\
                def b : Nat := 2 -- fake: warning \"odd b\"\n\
                def c : Nat := 3 -- fake: slow 20\n\
                def d : Nat := 4 -- fake: error \"bad d\"\n";
    // The reference allows each of these; the host must not care which Lean it drives.
    let behaviours: [&[(&str, &str)]; 6] = [
        &[],
        &[("FAKE_LEAN_DIAG_ORDER", "diagnostics-first")],
        &[("FAKE_LEAN_DIAG_ORDER", "progress-first")],
        &[("FAKE_LEAN_REFRESH", "0")],
        &[("FAKE_LEAN_INCREMENTAL", "0"), ("FAKE_LEAN_REFRESH", "0")],
        &[("FAKE_LEAN_CLOSE_CLEAR", "started")],
    ];
    for env in behaviours {
        let project = Project::fixture();
        project.write(path, text);
        let mut lean = Lean::start(&[&project], &[], env);
        let synced = lean.ok(
            "lean_sync",
            args(
                &project,
                path,
                json!({"diagnostic_scope": "all", "diagnostics_in_result": true}),
            ),
        );
        let counts = &synced["diagnostics"]["counts"];
        assert_eq!(
            (&counts["error"], &counts["warning"], &counts["total"]),
            (&json!(2), &json!(1), &json!(3)),
            "{env:?}: {synced}"
        );
        let messages: Vec<&str> = synced["diagnostics"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["message"].as_str().unwrap())
            .collect();
        assert_eq!(messages, ["bad a", "odd b", "bad d"], "{env:?}");
        assert_eq!(synced["document_progress"]["done"], true, "{env:?}");
        // An unchanged text is answered from the same complete state.
        let again = lean.ok("lean_sync", args(&project, path, json!({})));
        assert_eq!(again["diagnostics"]["counts"], *counts, "{env:?}");
        lean.finish_without_violations();
    }
}

#[test]
fn a_deleted_file_can_still_be_closed_and_its_refresh_says_why_it_cannot_reopen() {
    let project = Project::fixture();
    let path = "Fixture/Doomed.lean";
    project.write(path, "def doomed : Nat := 1\n");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, path, json!({})));
    std::fs::remove_file(project.root().join(path)).unwrap();
    let error = lean.fails(
        "lean_refresh",
        args(&project, path, json!({})),
        "invalidParams",
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Fixture/Doomed.lean"),
        "{error}"
    );
    let closed = lean.ok("lean_close", args(&project, path, json!({})));
    assert_eq!(closed["closed"], true);
    if !crate::harness::fake_only("a deleted file's didClose") {
        lean.wait_received("the deleted file's didClose", |t| {
            t["method"] == "textDocument/didClose"
                && t["uri"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("Doomed.lean"))
        });
    }
    lean.server.finish_clean();
}
