//! Runtimes: created lazily and once under concurrent first use, shared by aliases, separate per
//! root, restarted on a Lake configuration change, evicted by a drop (even while busy), and ended
//! with the server on end of input (even in the middle of a message), a closed stdout, SIGTERM,
//! SIGINT or SIGKILL, leaving no process behind.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, request};

/// How many times Lean was started, over every workspace (from beam_stats).
fn starts(lean: &mut Lean) -> u64 {
    let stats = lean.ok("beam_stats", json!({}));
    stats["workspaces"]
        .as_object()
        .unwrap()
        .values()
        .map(|w| w["byBackend"]["lean"]["sessionStarts"].as_u64().unwrap())
        .sum()
}

fn sync_request(id: i64, project: &Project, path: &str) -> Value {
    request(
        id,
        "tools/call",
        call("lean_sync", args(project, path, json!({}))),
    )
}

fn gated(project: &Project, gate: &str) -> &'static str {
    project.write(
        "Fixture/Gated.lean",
        &format!("def slow : Nat := 1 -- fake: gate {gate}\n"),
    );
    "Fixture/Gated.lean"
}

#[test]
fn concurrent_first_uses_of_one_root_start_one_runtime() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    assert_eq!(lean.ok("beam_version", json!({}))["runtime_active"], false);
    lean.server
        .send(&sync_request(101, &project, "Fixture/Basic.lean"));
    lean.server
        .send(&sync_request(102, &project, "Fixture/Uses.lean"));
    for id in [101, 102] {
        let answer = lean.server.response(&json!(id));
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert_eq!(starts(&mut lean), 1, "one lake serve for one root");
    assert_eq!(lean.ok("beam_version", json!({}))["runtime_active"], true);
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn two_roots_get_two_runtimes_and_aliases_share_one() {
    let first = Project::fixture();
    let second = Project::fixture();
    let mut lean = Lean::start(&[&first, &second], &[], &[]);
    lean.server
        .send(&sync_request(101, &first, "Fixture/Basic.lean"));
    lean.server
        .send(&sync_request(102, &second, "Fixture/Basic.lean"));
    let roots: BTreeSet<String> = [101, 102]
        .iter()
        .map(|id| {
            let answer = lean.server.response(&json!(id));
            answer["result"]["structuredContent"]["workspace"]["root"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(roots.len(), 2);
    assert_eq!(starts(&mut lean), 2);
    let alias_dir = tempfile::tempdir().unwrap();
    let alias = alias_dir.path().join("alias");
    std::os::unix::fs::symlink(first.root(), &alias).unwrap();
    let through_alias = lean.ok(
        "lean_sync",
        json!({"workspace": {"root": alias}, "path": "Fixture/Basic.lean"}),
    );
    assert_eq!(
        through_alias["workspace"]["root"], "[root]",
        "results echo the canonical root (redacted)"
    );
    assert_eq!(
        starts(&mut lean),
        2,
        "the alias shares the first root's runtime"
    );
    lean.server.finish_clean();
    first.wait_no_processes();
    second.wait_no_processes();
}

#[test]
fn drop_evicts_the_runtime_and_is_idempotent() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert!(!project.processes().is_empty());
    let dropped = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    assert_eq!(dropped["dropped"], true);
    assert_eq!(dropped["invalidated_handles"], true);
    project.wait_no_processes();
    let again = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    assert_eq!(
        again,
        json!({"workspace": {"root": "[root]"}, "dropped": false, "invalidated_handles": false, "reason": "notFound"})
    );
    let vanished = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": {"root": "/vanished/project/../project"}}),
    );
    assert_eq!(vanished["workspace"]["root"], "/vanished/project");
    assert_eq!(vanished["reason"], "notFound");
    let recreated = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(
        recreated["version"], 1,
        "the same text keeps its version across runtimes"
    );
    project.write(
        "Fixture/Basic.lean",
        &format!("{}\n", project.read("Fixture/Basic.lean")),
    );
    lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    let changed = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(
        changed["version"], 2,
        "other text after a drop gets the next version, never one seen before"
    );
    crate::harness::snapshot("drop", lean.server.finish_clean());
    project.wait_no_processes();
}

#[test]
fn drop_of_a_root_that_vanished_still_ends_its_runtime() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let moved = project.root().with_extension("moved");
    std::fs::rename(project.root(), &moved).expect("move the project away");
    let dropped = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    assert_eq!(dropped["dropped"], true, "{dropped}");
    crate::harness::wait_no_processes_in(&moved);
    assert_eq!(lean.ok("beam_stats", json!({}))["workspaces"], json!({}));
    lean.server.finish_clean();
}

#[test]
fn drop_waits_for_a_busy_call_then_evicts() {
    if crate::harness::fake_only("drop_waits_for_a_busy_call_then_evicts") {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "busy");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("busy");
    lean.server.send(&request(
        102,
        "tools/call",
        call(
            "lean_drop_workspace",
            json!({"workspace": project.descriptor()}),
        ),
    ));
    lean.open_gate("busy");
    let seen = lean.server.until_response(&json!(102));
    let order: Vec<Value> = seen
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(
        order,
        [json!(101), json!(102)],
        "the fence drains the sync first"
    );
    let dropped = &seen.last().unwrap()["result"]["structuredContent"];
    assert_eq!(dropped["dropped"], true);
    project.wait_no_processes();
    lean.server.finish_clean();
}

#[test]
fn a_lake_configuration_change_restarts_lean_on_the_next_call() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let lakefile = project.read("lakefile.toml");
    project.write("lakefile.toml", &format!("{lakefile}\n# edited\n"));
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(
        synced["note"],
        "Lake configuration changed (lakefile.toml); the Lean server was restarted to load it"
    );
    assert_eq!(starts(&mut lean), 2);
    let unchanged = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert!(unchanged.get("note").is_none());
    if !crate::harness::fake_only("the replaced lake serve ends") {
        let started: Vec<u32> = lean
            .trace()
            .iter()
            .filter(|t| t["event"] == "start")
            .map(|t| t["pid"].as_u64().unwrap() as u32)
            .collect();
        assert_eq!(started.len(), 2);
        crate::harness::wait_gone_from(project.root(), started[0]);
    }
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn end_of_input_with_lean_work_in_flight_leaves_nothing_behind() {
    if crate::harness::fake_only("end_of_input_with_lean_work_in_flight_leaves_nothing_behind") {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "eof");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("eof");
    assert!(!project.processes().is_empty());
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(
        !finished.transcript.contains(r#"← {"id":101,"#),
        "cancelled by end of input"
    );
    project.wait_no_processes();
}

#[test]
fn sigterm_with_lean_work_in_flight_leaves_nothing_behind() {
    if crate::harness::fake_only("sigterm_with_lean_work_in_flight_leaves_nothing_behind") {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "term");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("term");
    let pid = lean.server.pid();
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    let finished = lean.server.finish_without_closing();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    project.wait_no_processes();
}

#[test]
fn input_that_ends_mid_message_with_lean_work_in_flight_leaves_nothing_behind() {
    if crate::harness::fake_only(
        "input_that_ends_mid_message_with_lean_work_in_flight_leaves_nothing_behind",
    ) {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "cut");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("cut");
    lean.server
        .write_bytes(br#"{"jsonrpc":"2.0","id":102,"method":"tools/call","para"#);
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    assert!(
        !finished.transcript.contains(r#"← {"id":101,"#),
        "cancelled by end of input"
    );
    // The unterminated last line is read as the message it is: JSON cut short.
    assert!(
        finished.transcript.contains(r#""code":-32700"#),
        "{}",
        finished.transcript
    );
    project.wait_no_processes();
}

#[test]
fn a_closed_stdout_with_lean_work_in_flight_leaves_nothing_behind() {
    if crate::harness::fake_only("a_closed_stdout_with_lean_work_in_flight_leaves_nothing_behind") {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "deaf");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("deaf");
    assert!(!project.processes().is_empty());
    lean.server.close_stdout();
    let finished = lean.server.finish_without_closing();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    project.wait_no_processes();
}

#[test]
fn beam_stats_shows_each_cached_workspace_without_starting_one() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    assert_eq!(
        lean.ok("beam_stats", json!({})),
        json!({"uptimeMs": 0, "workspaces": {}}),
        "no runtime, and asking starts none"
    );
    assert!(project.processes().is_empty());
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    lean.fails(
        "lean_hover",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": 7, "line": 0, "character": 0}),
        ),
        "contentModified",
    );
    let stats = lean.ok("beam_stats", json!({}));
    let workspace = &stats["workspaces"]["local:[root]"];
    assert_eq!(workspace["root"], "[root]");
    assert_eq!(workspace["sessions"]["lean"]["active"], true);
    assert_eq!(workspace["sessions"]["lean"]["epoch"], 1);
    assert_eq!(workspace["sessions"]["lean"]["openDocCount"], 1);
    let lean_stats = &workspace["byBackend"]["lean"];
    assert_eq!(lean_stats["sessionStarts"], 1);
    assert_eq!(lean_stats["requestCount"], 2);
    assert_eq!(lean_stats["successCount"], 1);
    assert_eq!(lean_stats["errorCount"], 1);
    assert_eq!(lean_stats["ops"]["sync"]["count"], 1);
    assert_eq!(lean_stats["ops"]["hover"]["errorCount"], 1);
    assert!(lean_stats["ops"]["sync"]["maxLatencyMs"].as_f64().unwrap() > 0.0);
    lean.server.finish_clean();
}

#[test]
fn sigint_with_lean_work_in_flight_drains_like_end_of_input() {
    if crate::harness::fake_only("sigint_with_lean_work_in_flight_drains_like_end_of_input") {
        return;
    }
    let project = Project::fixture();
    let path = gated(&project, "int");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&sync_request(101, &project, path));
    lean.gate_entered("int");
    // SAFETY: a signal to the child this test started.
    assert_eq!(
        unsafe { libc::kill(lean.server.pid() as libc::pid_t, libc::SIGINT) },
        0
    );
    let finished = lean.server.finish_without_closing();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    project.wait_no_processes();
}

#[test]
fn a_killed_server_leaves_no_lake_serve_behind() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert!(!project.processes().is_empty());
    // SAFETY: a signal to the child this test started; SIGKILL leaves it no last words.
    assert_eq!(
        unsafe { libc::kill(lean.server.pid() as libc::pid_t, libc::SIGKILL) },
        0
    );
    let finished = lean.server.finish_without_closing();
    assert_eq!(finished.status.code(), None, "killed by a signal");
    // lake serve dies with its parent (a parent-death signal); its workers then see their
    // input end.
    project.wait_no_processes();
}
