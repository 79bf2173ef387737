//! Lean's crash codes under Lean's names (reference `lean-language-server.md` §1.9, Part 3
//! "Crash codes"): a file's worker that exits with an uncaught exception is `workerExited`
//! (-32901), one that crashes any other way `workerCrashed` (-32902); the whole `lake serve`
//! exiting is `serverExited`, whatever a worker did.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};

/// A hover on a file whose worker dies the way `directive` says each time it is checked.
fn hover_on_a_file_that_always_dies(directive: &str, code: &str) -> Value {
    let project = Project::fixture();
    project.write(
        "Fixture/Dies.lean",
        &format!("def one : Nat := 1\n\ndef two : Nat := 2 -- fake: {directive}\n"),
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let hover = json!({"version": 1, "line": 2, "character": 4});
    let error = lean.fails(
        "lean_hover",
        args(&project, "Fixture/Dies.lean", hover),
        code,
    );
    lean.server.finish_clean();
    error
}

#[test]
fn a_worker_that_exits_with_an_exception_is_worker_exited() {
    if crate::harness::fake_only("a_worker_that_exits_with_an_exception_is_worker_exited") {
        return;
    }
    let error = hover_on_a_file_that_always_dies("crash exit1", "workerExited");
    assert_eq!(error["data"]["leanCode"], -32901, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("worker exited with an uncaught exception"),
        "{message}"
    );
    assert!(message.contains("data.stderrTail"), "{message}");
    assert!(!message.contains("lake serve"), "not the server: {message}");
}

#[test]
fn a_worker_that_crashes_otherwise_is_worker_crashed() {
    if crate::harness::fake_only("a_worker_that_crashes_otherwise_is_worker_crashed") {
        return;
    }
    let error = hover_on_a_file_that_always_dies("crash", "workerCrashed");
    assert_eq!(error["data"]["leanCode"], -32902, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("worker crashed"), "{message}");
    assert!(message.contains("stack overflow"), "{message}");
    let tail = error["data"]["stderrTail"].as_array().unwrap();
    assert!(
        tail.iter()
            .any(|l| l.as_str().unwrap().contains("Stack overflow detected")),
        "{error}"
    );
}

#[test]
fn a_lake_serve_that_exits_is_server_exited() {
    if crate::harness::fake_only("a_lake_serve_that_exits_is_server_exited") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[("FAKE_LEAN_WATCHDOG_EXIT", "textDocument/hover:gone")],
    );
    let version = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})))["version"]
        .as_i64()
        .unwrap();
    let error = lean.fails(
        "lean_hover",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": version, "line": 7, "character": 5}),
        ),
        "serverExited",
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("lake serve"), "{message}");
    assert!(message.contains("the next call restarts it"), "{message}");
    assert!(error["data"]["reason"].is_string(), "{error}");
    lean.server.finish_clean();
    project.wait_no_processes();
}
