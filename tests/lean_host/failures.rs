//! Every way a Lean call can fail, each with its structured error, and the server serving on:
//! bad roots (nothing started), a missing or broken `lake`, a Lean that never answers, a
//! watchdog that exits, a worker that crashes, a hung request that is cancelled.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{notification, request};

#[test]
fn bad_roots_are_invalid_input_and_start_nothing() {
    let project = Project::fixture();
    let plain = tempfile::tempdir().unwrap();
    let file = project.root().join("lakefile.toml");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server
        .replace(&plain.path().display().to_string(), "[plain]");
    for (root, words) in [
        (json!("relative/dir"), "must be an absolute path"),
        (json!("/no/such/project"), "does not resolve"),
        (json!(file), "is not a directory"),
        (json!(plain.path()), "is not a Lean/Lake project"),
    ] {
        let error = lean.fails(
            "lean_sync",
            json!({"workspace": {"root": root}, "path": "Fixture/Basic.lean"}),
            "invalidInput",
        );
        assert!(
            error["message"].as_str().unwrap().contains(words),
            "{error}"
        );
        assert_eq!(error["data"]["path"], "/workspace/root");
    }
    let version = lean.ok("beam_version", json!({}));
    assert_eq!(version["runtime_active"], false, "no runtime was created");
    assert!(project.processes().is_empty());
    let missing = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Missing.lean", json!({})),
        "invalidParams",
    );
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("Fixture/Missing.lean")
    );
    let not_lean = lean.fails(
        "lean_sync",
        args(&project, "lakefile.toml", json!({})),
        "invalidParams",
    );
    assert!(
        not_lean["message"]
            .as_str()
            .unwrap()
            .contains("not a Lean source file")
    );
    crate::harness::snapshot("bad_roots", lean.server.finish_clean());
}

#[test]
fn a_missing_lake_says_how_to_install_lean() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &["--lake", "/no/such/lake"], &[]);
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Basic.lean", json!({})),
        "runtimeSetup",
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("/no/such/lake does not exist"),
        "{message}"
    );
    assert!(message.contains("elan"), "{message}");
    assert_eq!(error["data"]["reason"], "lakeNotFound", "{error}");
    lean.server.finish_clean();
}

#[test]
fn a_lake_that_exits_at_once_is_reported_with_its_stderr() {
    if crate::harness::fake_only("a_lake_that_exits_at_once_is_reported_with_its_stderr") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[
            ("FAKE_LAKE_EXIT", "1"),
            ("FAKE_LAKE_STDERR", "error: lakefile.toml: bad key"),
        ],
    );
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Basic.lean", json!({})),
        "runtimeSetup",
    );
    assert!(
        error["data"]["stderrTail"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("bad key")),
        "{error}"
    );
    assert_eq!(error["data"]["reason"], "handshakeExited", "{error}");
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn a_lean_that_never_answers_the_handshake_times_out() {
    if crate::harness::fake_only("a_lean_that_never_answers_the_handshake_times_out") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &["--lean-timeout-ms", "300"],
        &[("FAKE_LEAN_NO_INIT", "1")],
    );
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Basic.lean", json!({})),
        "runtimeSetup",
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("did not answer initialize"),
        "{error}"
    );
    assert_eq!(error["data"]["reason"], "handshakeTimeout", "{error}");
    project.wait_no_processes();
    lean.server.finish_clean();
}

#[test]
fn a_watchdog_exit_fails_the_call_and_the_next_call_restarts_lean() {
    if crate::harness::fake_only("a_watchdog_exit_fails_the_call_and_the_next_call_restarts_lean") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[(
            "FAKE_LEAN_WATCHDOG_EXIT",
            "textDocument/hover:simulated failure",
        )],
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
    let tail: Vec<&str> = error["data"]["stderrTail"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tail.iter().any(|l| l.contains("Watchdog error")), "{error}");
    // The crashed server took everything it had started with it, before any next call.
    project.wait_no_processes();
    let restarted = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert!(
        restarted["note"].as_str().unwrap().contains("had exited"),
        "{restarted}"
    );
    let stats = lean.ok("beam_stats", json!({}));
    let key = "local:[root]";
    assert_eq!(
        stats["workspaces"][key]["byBackend"]["lean"]["sessionRestarts"],
        1
    );
    assert_eq!(
        stats["workspaces"][key]["byBackend"]["lean"]["workerExitedCount"],
        1
    );
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn workers_a_dead_watchdog_leaves_behind_are_ended_by_the_host() {
    if crate::harness::fake_only("workers_a_dead_watchdog_leaves_behind_are_ended_by_the_host") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[
            ("FAKE_LEAN_STUBBORN_WORKERS", "1"),
            ("FAKE_LEAN_WATCHDOG_EXIT", "textDocument/hover"),
        ],
    );
    lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
    let version = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})))["version"]
        .as_i64()
        .unwrap();
    lean.fails(
        "lean_hover",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"version": version, "line": 7, "character": 5}),
        ),
        "serverExited",
    );
    // Workers lead their own process groups and ignore EOF: only the host can end them.
    project.wait_no_processes();
    lean.server.finish_clean();
}

/// A worker that crashes once, as the fake's `directive` says, is revived with a version-bumped
/// `didChange` (one), and the sync answers at the caller's unchanged version.
fn a_crashing_worker_is_revived(scenario: &str, directive: &str) {
    if crate::harness::fake_only(scenario) {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/Crashy.lean",
        &format!("def one : Nat := 1 -- fake: {directive}\n\ndef two : Nat := 2\n"),
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let synced = lean.ok(
        "lean_sync",
        args(&project, "Fixture/Crashy.lean", json!({})),
    );
    assert_eq!(
        synced["version"], 1,
        "a revival does not change the caller's version"
    );
    assert_eq!(synced["readiness"]["save_ready"], true);
    let changes: Vec<Value> = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .collect();
    assert_eq!(changes.len(), 1, "one revival: {changes:?}");
    assert_eq!(changes[0]["version"], crate::harness::FIRST_LSP_VERSION + 1);
    lean.server.finish_clean();
}

#[test]
fn a_crashed_worker_is_revived_with_a_new_version() {
    a_crashing_worker_is_revived(
        "a_crashed_worker_is_revived_with_a_new_version",
        "crash once",
    );
}

#[test]
fn a_hung_request_is_cancelled_in_lean_and_a_later_call_works() {
    if crate::harness::fake_only("a_hung_request_is_cancelled_in_lean_and_a_later_call_works") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[("FAKE_LEAN_HANG", "textDocument/hover")],
    );
    let version = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})))["version"]
        .as_i64()
        .unwrap();
    let hover = request(
        99,
        "tools/call",
        json!({"name": "lean_hover", "arguments": args(&project, "Fixture/Basic.lean",
            json!({"version": version, "line": 7, "character": 5}))}),
    );
    lean.server.send(&hover);
    let asked = lean.wait_received("the hover", |t| t["method"] == "textDocument/hover");
    lean.server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 99, "reason": "taking too long"}),
    ));
    lean.wait_received("the cancellation", |t| {
        t["method"] == "$/cancelRequest" && t["cancel_id"] == asked["id"]
    });
    lean.server
        .note("Lean received $/cancelRequest for the hover");
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(synced["version"], version);
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0));
    assert!(
        !finished.transcript.contains(r#"← {"id":99,"#),
        "the cancelled call answers nothing"
    );
    crate::harness::snapshot("hung_cancelled", finished.transcript);
}

#[test]
fn a_worker_that_exits_with_code_1_is_revived_too() {
    a_crashing_worker_is_revived(
        "a_worker_that_exits_with_code_1_is_revived_too",
        "crash exit1 once",
    );
}

#[test]
fn a_worker_that_crashes_under_a_pending_hover_is_revived_and_the_hover_answered() {
    if crate::harness::fake_only(
        "a_worker_that_crashes_under_a_pending_hover_is_revived_and_the_hover_answered",
    ) {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Crashy.lean";
    project.write(
        path,
        "def one : Nat := 1 -- fake: gate before\ndef two : Nat := 2 -- fake: crash once\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let version = lean.ok("lean_update", args(&project, path, json!({})))["version"].clone();
    lean.gate_entered("before");
    let hover = request(
        101,
        "tools/call",
        json!({"name": "lean_hover", "arguments": args(&project, path,
            json!({"version": version, "line": 1, "character": 4}))}),
    );
    lean.server.send(&hover);
    lean.wait_received("the hover", |t| t["method"] == "textDocument/hover");
    // The worker dies when it reaches line 1, with the hover waiting for that line.
    lean.open_gate("before");
    let answer = lean.server.response(&json!(101));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let hovers = lean
        .received()
        .iter()
        .filter(|m| *m == "textDocument/hover")
        .count();
    assert_eq!(hovers, 2, "asked again after the revival");
    let revivals: Vec<Value> = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .collect();
    assert_eq!(revivals.len(), 1, "{revivals:?}");
    lean.server.finish_clean();
}

#[test]
fn dropping_a_workspace_whose_lean_is_still_starting_ends_the_start() {
    if crate::harness::fake_only("dropping_a_workspace_whose_lean_is_still_starting_ends_the_start")
    {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_NO_INIT", "1")]);
    lean.server.send(&request(
        101,
        "tools/call",
        json!({"name": "lean_sync", "arguments": args(&project, "Fixture/Basic.lean", json!({}))}),
    ));
    lean.wait_received("initialize", |t| t["method"] == "initialize");
    // The caller gives up; the start goes on without it, and hangs.
    lean.server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 101, "reason": "giving up"}),
    ));
    let dropped = lean.ok(
        "lean_drop_workspace",
        json!({"workspace": project.descriptor()}),
    );
    assert_eq!(dropped["dropped"], true, "{dropped}");
    project.wait_no_processes();
    assert_eq!(lean.ok("beam_version", json!({}))["runtime_active"], false);
    lean.server.finish_clean();
}

#[test]
fn lake_can_be_named_by_the_environment_or_a_relative_path() {
    let project = Project::fixture();
    let lake = crate::harness::lake();
    let mut by_env = Lean::start(
        &[&project],
        &[],
        &[("LEAN_BEAM_LAKE", lake.to_str().unwrap())],
    );
    by_env.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    by_env.server.finish_clean();
    project.wait_no_processes();
    // Relative to where the server was started, not to the workspace lake serve runs in.
    let cwd = std::env::current_dir().unwrap();
    let Ok(relative) = lake.strip_prefix(&cwd) else {
        println!(
            "SKIPPED relative --lake: {} is not under {}",
            lake.display(),
            cwd.display()
        );
        return;
    };
    let relative = relative.to_str().unwrap();
    let mut by_path = Lean::start(&[&project], &["--lake", relative], &[]);
    by_path.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    by_path.server.finish_clean();
    project.wait_no_processes();
}

/// A file whose header Lake cannot set up, in one of the two orders Lean reports it: its error
/// explains the fatal progress, so the host never takes it for a crash and never revives it.
fn a_broken_header_is_not_revived(order: &str) {
    if crate::harness::fake_only("a broken header in each report order") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/Broken.lean",
        "-- fake: setup-fail \"no such package\"\nimport Missing\n\ndef one : Nat := 1\n",
    );
    let env = [("FAKE_LEAN_DIAG_ORDER", order)];
    let mut lean = Lean::start(&[&project], &[], &env);
    let path = "Fixture/Broken.lean";
    for _ in 0..2 {
        let synced = lean.ok("lean_sync", args(&project, path, json!({})));
        assert_eq!(synced["diagnostics"]["counts"]["error"], 1, "{synced}");
        assert_eq!(synced["readiness"]["save_ready"], false);
    }
    let changes = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .count();
    assert_eq!(changes, 0, "a header error is no crash: nothing to revive");
    lean.finish_without_violations();
}

#[test]
fn a_broken_header_reported_error_first_is_not_revived() {
    a_broken_header_is_not_revived("diagnostics-first");
}

#[test]
fn a_broken_header_reported_fatal_progress_first_is_not_revived() {
    a_broken_header_is_not_revived("progress-first");
}

#[test]
fn a_fatal_report_waits_for_its_explanation_before_it_counts_as_a_crash() {
    if crate::harness::fake_only("a broken header's explanation held at the fake's gate") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Broken.lean";
    project.write(
        path,
        "-- fake: setup-fail \"no such package\"\n-- fake: explain-gate explain\nimport Missing\n",
    );
    let env = [("FAKE_LEAN_DIAG_ORDER", "progress-first")];
    // A grace far longer than the test, so the explanation always arrives within it.
    let mut lean = Lean::start(&[&project], &["--crash-grace-ms", "600000"], &env);
    let id = lean.id();
    lean.server.send(&request(
        id,
        "tools/call",
        json!({"name": "lean_sync", "arguments": args(&project, path, json!({}))}),
    ));
    // Lean has said "fatal" and holds back why; meanwhile Lean keeps serving other files.
    lean.gate_entered("explain");
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    lean.open_gate("explain");
    let synced = lean.server.response(&json!(id));
    let synced = &synced["result"]["structuredContent"];
    assert_eq!(synced["diagnostics"]["counts"]["error"], 1, "{synced}");
    let revivals = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .count();
    assert_eq!(revivals, 0, "the fatal report was explained: no revival");
    lean.finish_without_violations();
}

/// A call that reads a file's unchanged text while Lean's fatal report about it is not yet
/// explained does not take it for a crash: the explanation (a header error) may still come, and
/// a revival would only set the broken header up again (found by the no-false-complete suite: a
/// `lean_try_edit` read a misspelt import's text between Lean's fatal progress and its error,
/// and revived it).
#[test]
fn reading_an_unchanged_text_before_the_fatal_report_is_explained_revives_nothing() {
    if crate::harness::fake_only("a broken header's explanation held at the fake's gate") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Broken.lean";
    project.write(
        path,
        "-- fake: setup-fail \"no such package\"\n-- fake: explain-gate explain\nimport Missing\n",
    );
    let env = [("FAKE_LEAN_DIAG_ORDER", "progress-first")];
    let mut lean = Lean::start(&[&project], &["--crash-grace-ms", "600000"], &env);
    lean.ok("lean_update", args(&project, path, json!({})));
    lean.gate_entered("explain");
    // Lean's output is one ordered stream: once another file's barrier is answered, the host
    // has read the fatal progress Lean sent before it.
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    lean.ok("lean_update", args(&project, path, json!({})));
    let id = lean.id();
    lean.server.send(&request(
        id,
        "tools/call",
        json!({"name": "lean_sync", "arguments": args(&project, path, json!({}))}),
    ));
    lean.wait_received("the sync's barrier", |t| {
        t["method"] == "textDocument/waitForDiagnostics"
            && t["uri"].as_str().is_some_and(|u| u.ends_with(path))
    });
    lean.open_gate("explain");
    let synced = lean.server.response(&json!(id));
    let synced = &synced["result"]["structuredContent"];
    assert_eq!(synced["receipt"]["state"], "setup_failed", "{synced}");
    let revivals = lean
        .trace()
        .into_iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
        .count();
    assert_eq!(revivals, 0, "the fatal report was explained: no revival");
    lean.finish_without_violations();
}

/// A worker that crashes on every elaboration of a file that also has an ordinary error: the
/// error does not hide the crash. The sync says it crashed (typed, Lean's stderr tail, where
/// checking stopped); the next call on the unchanged file fails the same way at once instead of
/// waiting in Lean's queue for a revival; and the text is not revived forever. The crash is
/// real Lean's too: `#eval` of a recursion without end overflows the worker's stack.
fn a_crash_after_an_ordinary_error(directive: &str, code: &str) {
    let project = Project::fixture();
    let path = "Fixture/Crashy.lean";
    project.write(
        path,
        &format!(
            "def one : Nat := x -- fake: error \"unknown identifier 'x'\"\n\n\
             partial def boom (n : Nat) : Nat := boom (n + 1) + 1\n\
             #eval boom 0 -- fake: {directive}\n"
        ),
    );
    // The Lean timeout is far longer than the test: a call waiting in Lean's queue would hang it.
    let mut lean = Lean::start(&[&project], &["--lean-timeout-ms", "600000"], &[]);
    let hover = json!({"version": 1, "line": 0, "character": 4});
    for (call, extra) in [
        ("lean_sync", json!({})),
        ("lean_sync", json!({})),
        ("lean_hover", hover),
    ] {
        let failed = lean.fails(call, args(&project, path, extra), code);
        assert_eq!(
            failed["data"]["reason"], "crashesOnEveryElaboration",
            "{failed}"
        );
        assert_eq!(
            failed["data"]["stoppedAt"],
            json!({"line": 3, "character": 0}),
            "{failed}"
        );
        let tail = failed["data"]["stderrTail"].to_string();
        assert!(
            tail.contains("Stack overflow") || tail.contains("uncaught exception"),
            "{failed}"
        );
    }
    if crate::harness::real_lake().is_none() {
        let revivals = lean
            .trace()
            .into_iter()
            .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
            .count();
        assert_eq!(revivals, 1, "revived once, then no more on this text");
    }
    // A new text is checked afresh.
    project.write(path, "def one : Nat := 1\n");
    let synced = lean.ok("lean_sync", args(&project, path, json!({})));
    assert_eq!(synced["readiness"]["save_ready"], true, "{synced}");
    lean.server.finish_clean();
}

#[test]
fn a_crash_after_an_ordinary_error_is_reported_as_a_crash() {
    a_crash_after_an_ordinary_error("crash", "workerCrashed");
}

#[test]
fn an_uncaught_exception_after_an_ordinary_error_is_reported_as_the_worker_exiting() {
    if crate::harness::fake_only("an uncaught exception after an ordinary error") {
        return;
    }
    a_crash_after_an_ordinary_error("crash exit1", "workerExited");
}

/// Hover and goals on a file whose header Lean could not process: Lean answers `null`, since it
/// checked nothing (its `cmdSnaps` are empty), and may answer before it publishes the header
/// error. An empty answer there is no answer: the call names the header failure, in Lean's words,
/// in both report orders.
fn nothing_is_answered_about_a_file_whose_header_failed(order: &str) {
    let project = Project::fixture();
    let path = "Fixture/Broken.lean";
    project.write(
        path,
        "-- fake: setup-fail \"error: unknown package 'Missing'\"\nimport Missing\n\n\
         theorem one : 1 = 1 := by\n  rfl\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_DIAG_ORDER", order)]);
    // Opened, not waited on: the questions may reach Lean before its header error is out.
    let opened = lean.ok("lean_update", args(&project, path, json!({})));
    let at = json!({"line": 4, "character": 2, "version": opened["version"]});
    for (tool, more) in [
        ("lean_hover", json!({})),
        ("lean_goals", json!({"mode": "before"})),
    ] {
        let mut arguments = at.clone();
        arguments
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        let failed = lean.fails(tool, args(&project, path, arguments), "invalidParams");
        assert_eq!(failed["data"]["reason"], "headerFailed", "{tool}: {failed}");
        assert_eq!(failed["data"]["path"], path, "{tool}: {failed}");
        assert!(
            failed["data"]["leanMessage"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        let message = failed["message"].as_str().unwrap();
        assert!(
            message.contains("header") && message.contains("lean_sync"),
            "{message}"
        );
    }
    lean.finish_without_violations();
}

#[test]
fn nothing_is_answered_about_a_file_whose_header_failed_error_first() {
    nothing_is_answered_about_a_file_whose_header_failed("diagnostics-first");
}

#[test]
fn nothing_is_answered_about_a_file_whose_header_failed_fatal_progress_first() {
    nothing_is_answered_about_a_file_whose_header_failed("progress-first");
}

/// One way a file's header fails, as Lean reports it (reference Part 4, "Header errors").
struct HeaderFailure {
    what: &'static str,
    /// The file's text (several lines: Lean cuts its error's `range` at the first).
    text: &'static str,
    env: &'static [(&'static str, &'static str)],
    /// The code and `data.reason` every call on the file fails with.
    code: &'static str,
    reason: &'static str,
    /// Lean's words, in `data.leanMessage`.
    words: &'static str,
}

const HEADER_FAILURES: [HeaderFailure; 5] = [
    HeaderFailure {
        what: "an import that does not build (new Lake)",
        text: "import Fixture.Broken\n\ntheorem fine : 1 = 1 := by\n  rfl\n",
        env: &[("FAKE_LAKE_SETUP_BUILD", "new")],
        code: "importBuildFailed",
        reason: "importBuildFailed",
        words: "Failed to build module dependencies.\n✖ [1/1] Building Fixture.Broken",
    },
    HeaderFailure {
        what: "a failed lake setup-file (mid-2025 worker's words)",
        text: "-- fake: setup-fail \"error: unknown package 'Missing'\"\nimport Missing\n\n\
               theorem fine : 1 = 1 := by\n  rfl\n",
        env: &[("FAKE_LEAN_SETUP_TEXT", "command")],
        code: "invalidParams",
        reason: "headerFailed",
        words: "Fixture/Header.lean -` failed:\n\nstderr:\nerror: unknown package 'Missing'",
    },
    HeaderFailure {
        what: "a failed lake setup-file (newer workers' words)",
        text: "-- fake: setup-fail \"error: unknown package 'Missing'\"\nimport Missing\n\n\
               theorem fine : 1 = 1 := by\n  rfl\n",
        env: &[("FAKE_LEAN_SETUP_TEXT", "bare")],
        code: "invalidParams",
        reason: "headerFailed",
        words: "error: unknown package 'Missing'",
    },
    HeaderFailure {
        what: "a misspelt import in a file that starts with a comment",
        text: "/-! A file. -/\n-- with a comment first\nimport Fixture.Basik\n\n\
               theorem fine : 1 = 1 := by\n  rfl\n",
        env: &[],
        code: "invalidParams",
        reason: "headerFailed",
        words: "object file './.lake/build/lib/lean/Fixture/Basik.olean' of module Fixture.Basik \
                does not exist",
    },
    HeaderFailure {
        what: "an import of an unknown prefix (older Lean's words)",
        text: "import Fixtur.Basic\n\ntheorem fine : 1 = 1 := by\n  rfl\n",
        env: &[("FAKE_LEAN_IMPORT_TEXT", "package")],
        code: "invalidParams",
        reason: "headerFailed",
        words: "unknown package 'Fixtur'",
    },
];

/// Every header failure, Lake's or Lean's own, in both report orders: typed, in Lean's words,
/// receipts `setup_failed`; never a crash and never a revival (no `didChange` reaches Lean).
#[test]
fn a_header_failure_is_typed_in_leans_words_and_never_a_crash() {
    if crate::harness::fake_only("header failures in each Lake and Lean era") {
        return;
    }
    let path = "Fixture/Header.lean";
    for failure in &HEADER_FAILURES {
        for order in ["diagnostics-first", "progress-first"] {
            let what = format!("{} ({order})", failure.what);
            let project = Project::fixture();
            project.write(
                "Fixture/Broken.lean",
                "def broken : Nat := oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"\n",
            );
            project.write(path, failure.text);
            let mut env = vec![("FAKE_LEAN_DIAG_ORDER", order)];
            env.extend_from_slice(failure.env);
            let mut lean = Lean::start(&[&project], &[], &env);
            let typed = |error: &Value| {
                assert_eq!(error["code"], failure.code, "{what}: {error}");
                assert_eq!(error["data"]["reason"], failure.reason, "{what}: {error}");
                let said = error["data"]["leanMessage"].as_str().unwrap_or_default();
                assert!(said.contains(failure.words), "{what}: {error}");
                assert_eq!(
                    error["data"]["receipt"]["state"], "setup_failed",
                    "{what}: {error}"
                );
            };
            let sync = args(&project, path, json!({"diagnostics_in_result": true}));
            if failure.code == "importBuildFailed" {
                typed(&lean.fails("lean_sync", sync, failure.code));
            } else {
                let synced = lean.ok("lean_sync", sync);
                assert_eq!(
                    synced["receipt"]["state"], "setup_failed",
                    "{what}: {synced}"
                );
                assert_eq!(
                    synced["readiness"]["reason"], "headerFailed",
                    "{what}: {synced}"
                );
                assert_eq!(
                    synced["diagnostics"]["counts"]["error"], 1,
                    "{what}: {synced}"
                );
                // Shown over its extent (`fullRange`), not its `range` cut at a line.
                let shown = &synced["diagnostics"]["items"][0]["range"];
                let lines = failure.text.lines().count();
                let extent = json!({"start": {"line": 0, "character": 0},
                                    "end": {"line": lines, "character": 0}});
                if failure.text.contains("setup-fail") {
                    assert_eq!(shown, &extent, "{what}: {synced}");
                }
            }
            let line = failure.text.lines().position(|l| l.starts_with("theorem"));
            let hover = json!({"version": 1, "line": line, "character": 8});
            typed(&lean.fails("lean_hover", args(&project, path, hover), failure.code));
            let changes = lean
                .trace()
                .into_iter()
                .filter(|t| t["dir"] == "in" && t["method"] == "textDocument/didChange")
                .count();
            assert_eq!(changes, 0, "{what}: a header failure is never revived");
            lean.finish_without_violations();
        }
    }
}
