//! Fault injection at every point of a Lean request, with the fake's fault modes: a frame cut
//! off by a crash, garbage and a length beyond any message, a frame that is not JSON, slow
//! elaboration cancelled, a handshake never finished, a `lake` that exits at once, a `lake` that
//! floods stderr. Each gives a structured error carrying Lean's stderr tail (or, cancelled,
//! nothing), ends the broken `lake` at once, and the next call recovers; no call waits forever
//! and no process is left in the project. (`failures` has the crash before the reply, the hung
//! request and the worker crashes.)

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{notification, peak_rss_kib, request};

/// The stderr tail of a failed call.
fn tail(error: &Value) -> Vec<String> {
    error["data"]["stderrTail"]
        .as_array()
        .unwrap_or_else(|| panic!("no stderrTail: {error}"))
        .iter()
        .map(|l| l.as_str().expect("a line").to_owned())
        .collect()
}

/// A hover on `Fixture/Basic.lean` that must fail with `code`; its structured error.
fn hover_fails(lean: &mut Lean, project: &Project, code: &str) -> Value {
    let version =
        lean.ok("lean_sync", args(project, "Fixture/Basic.lean", json!({})))["version"].clone();
    lean.fails(
        "lean_hover",
        args(
            project,
            "Fixture/Basic.lean",
            json!({"version": version, "line": 7, "character": 5}),
        ),
        code,
    )
}

/// The next call starts a fresh Lean and works.
fn next_call_restarts(lean: &mut Lean, project: &Project) {
    let synced = lean.ok("lean_sync", args(project, "Fixture/Basic.lean", json!({})));
    assert!(
        synced["note"]
            .as_str()
            .unwrap_or_default()
            .contains("had exited"),
        "{synced}"
    );
}

/// A scratch marker for `FAKE_LEAN_FAULTS_ONCE`.
fn once_marker() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a marker directory");
    let marker = dir.path().join("faulted").display().to_string();
    (dir, marker)
}

/// A hover answered with the fake's garbage of kind `garbage` fails with `serverExited`, whose
/// reason contains `reason`, and the stderr tail; that Lean is ended at once (a stream out of
/// step cannot be trusted, even when the fake would go on serving) and the next call starts a
/// fresh one. The error, for more checks.
fn a_broken_stream_ends_that_lean(scenario: &str, garbage: &str, reason: &str) -> Option<Value> {
    if crate::harness::fake_only(scenario) {
        return None;
    }
    let project = Project::fixture();
    let garbage = format!("{garbage}:textDocument/hover");
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_GARBAGE", &garbage)]);
    let error = hover_fails(&mut lean, &project, "serverExited");
    assert!(
        error["data"]["reason"].as_str().unwrap().contains(reason),
        "{error}"
    );
    tail(&error);
    project.wait_no_processes();
    next_call_restarts(&mut lean, &project);
    lean.server.finish_clean();
    project.wait_no_processes();
    Some(error)
}

#[test]
fn a_frame_cut_off_by_a_crash_fails_the_call_with_the_stderr_tail() {
    let Some(error) = a_broken_stream_ends_that_lean(
        "a_frame_cut_off_by_a_crash_fails_the_call_with_the_stderr_tail",
        "cut",
        "the stream ended inside a body",
    ) else {
        return;
    };
    assert!(
        tail(&error)
            .iter()
            .any(|l| l.contains("Stack overflow detected")),
        "{error}"
    );
}

#[test]
fn an_unreadable_header_ends_that_lean_at_once() {
    a_broken_stream_ends_that_lean(
        "an_unreadable_header_ends_that_lean_at_once",
        "header",
        "Content-Length is not a number",
    );
}

#[test]
fn a_length_beyond_any_message_is_refused_unread() {
    a_broken_stream_ends_that_lean(
        "a_length_beyond_any_message_is_refused_unread",
        "huge",
        "a body of 1099511627776 bytes (at most 268435456 are accepted)",
    );
}

#[test]
fn a_frame_that_is_not_json_is_skipped_and_its_call_times_out() {
    if crate::harness::fake_only("a_frame_that_is_not_json_is_skipped_and_its_call_times_out") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &["--lean-timeout-ms", "1000"],
        &[("FAKE_LEAN_GARBAGE", "json:textDocument/hover")],
    );
    // The garbage stood in for the hover's answer, which never comes: the Lean timeout ends it.
    let error = hover_fails(&mut lean, &project, "leanTimeout");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("textDocument/hover"),
        "{error}"
    );
    // The stream stayed in step: the same Lean answers the next hover.
    let version =
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})))["version"].clone();
    let hover = lean.ok(
        "lean_hover",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": version, "line": 7, "character": 5}),
        ),
    );
    assert!(hover.get("note").is_none(), "{hover}");
    let stats = lean.ok("beam_stats", json!({}));
    assert_eq!(
        stats["workspaces"]["local:[root]"]["byBackend"]["lean"]["sessionRestarts"], 0,
        "{stats}"
    );
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
    project.wait_no_processes();
}

#[test]
fn slow_elaboration_is_cancellable_and_a_later_call_works() {
    if crate::harness::fake_only("slow_elaboration_is_cancellable_and_a_later_call_works") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Slow.lean";
    project.write(
        path,
        "def a : Nat := 1\n-- fake: slow 600000\ndef b : Nat := 2\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&request(
        50,
        "tools/call",
        json!({"name": "lean_sync", "arguments": args(&project, path, json!({}))}),
    ));
    let waiting = lean.wait_received("the diagnostics barrier", |t| {
        t["method"] == "textDocument/waitForDiagnostics"
    });
    lean.server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 50, "reason": "taking too long"}),
    ));
    lean.wait_received("the cancellation", |t| {
        t["method"] == "$/cancelRequest" && t["cancel_id"] == waiting["id"]
    });
    // The file is fixed; the next call elaborates the new text, superseding the slow version.
    project.write(path, "def a : Nat := 1\ndef b : Nat := 2\n");
    let synced = lean.ok("lean_sync", args(&project, path, json!({})));
    assert_eq!(synced["version"], 2, "{synced}");
    assert_eq!(synced["readiness"]["save_ready"], true, "{synced}");
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0));
    assert!(
        !finished.transcript.contains(r#"← {"id":50,"#),
        "the cancelled call answers nothing"
    );
    project.wait_no_processes();
}

/// A sync against a `lake serve` with a setup fault that applies once (`env`, with
/// `FAKE_LEAN_FAULTS_ONCE` added) fails with `runtimeSetup`, leaves no process, and the next
/// sync starts a healthy Lean and works. The error's stderr tail, for more checks.
fn a_transient_setup_fault_recovers(
    scenario: &str,
    flags: &[&str],
    env: &[(&str, &str)],
) -> Option<Vec<String>> {
    if crate::harness::fake_only(scenario) {
        return None;
    }
    let project = Project::fixture();
    let (_marker_dir, marker) = once_marker();
    let mut env = env.to_vec();
    env.push(("FAKE_LEAN_FAULTS_ONCE", &marker));
    let mut lean = Lean::start(&[&project], flags, &env);
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Basic.lean", json!({})),
        "runtimeSetup",
    );
    project.wait_no_processes();
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    lean.server.finish_clean();
    project.wait_no_processes();
    Some(tail(&error))
}

#[test]
fn a_handshake_never_finished_is_a_setup_error_and_the_next_call_recovers() {
    let Some(tail) = a_transient_setup_fault_recovers(
        "a_handshake_never_finished_is_a_setup_error_and_the_next_call_recovers",
        &["--lean-timeout-ms", "500"],
        &[
            ("FAKE_LEAN_NO_INIT", "1"),
            ("FAKE_LAKE_LOAD_LOG", "info: loading the workspace"),
        ],
    ) else {
        return;
    };
    assert!(
        tail.iter().any(|l| l.contains("loading the workspace")),
        "{tail:?}"
    );
}

#[test]
fn a_lake_that_exits_at_once_is_a_setup_error_and_the_next_call_recovers() {
    let Some(tail) = a_transient_setup_fault_recovers(
        "a_lake_that_exits_at_once_is_a_setup_error_and_the_next_call_recovers",
        &[],
        &[
            ("FAKE_LAKE_EXIT", "1"),
            (
                "FAKE_LAKE_STDERR",
                "error: could not acquire the build lock",
            ),
        ],
    ) else {
        return;
    };
    assert_eq!(tail, ["error: could not acquire the build lock"]);
}

#[test]
fn a_lake_that_floods_stderr_is_served_and_its_tail_stays_bounded() {
    if crate::harness::fake_only("a_lake_that_floods_stderr_is_served_and_its_tail_stays_bounded") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[
            ("FAKE_LAKE_STDERR_FLOOD", "4000000"),
            ("FAKE_LEAN_WATCHDOG_EXIT", "textDocument/hover:flooded"),
        ],
    );
    let error = hover_fails(&mut lean, &project, "serverExited");
    let lines = tail(&error);
    assert_eq!(lines.len(), 40, "the last 40 lines: {lines:?}");
    assert_eq!(lines.last().unwrap(), "Watchdog error: flooded");
    project.wait_no_processes();
    next_call_restarts(&mut lean, &project);
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn one_endless_stderr_line_is_cut_and_never_held_whole() {
    if crate::harness::fake_only("one_endless_stderr_line_is_cut_and_never_held_whole") {
        return;
    }
    let project = Project::fixture();
    let flood = 96 << 20;
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[
            ("FAKE_LAKE_STDERR_FLOOD", &format!("{flood}:line")),
            ("FAKE_LEAN_WATCHDOG_EXIT", "textDocument/hover:flooded"),
        ],
    );
    let error = hover_fails(&mut lean, &project, "serverExited");
    let lines = tail(&error);
    assert_eq!(
        lines.len(),
        2,
        "{:?}",
        lines.iter().map(String::len).collect::<Vec<_>>()
    );
    assert!(lines[0].starts_with("xxxx") && lines[0].ends_with(" …"));
    assert!(lines[0].len() <= 1024 + " …".len());
    assert_eq!(lines[1], "Watchdog error: flooded");
    // The line was cut as it arrived: the server never held the 96 MiB.
    let peak = peak_rss_kib(lean.server.pid());
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB");
    project.wait_no_processes();
    next_call_restarts(&mut lean, &project);
    lean.server.finish_clean();
    project.wait_no_processes();
}
