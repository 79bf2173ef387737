//! Fault modes (README "Faults"): worker crashes and restart-on-didChange (§1.9), watchdog
//! exit, hangs and cancellation (§1.8), slow elaboration and supersession, gates, garbage
//! frames, a server that never answers `initialize`, and `lake` failing or chattering on
//! stderr at startup (§1.10). Every wait ends on a message or an event.

mod support;

use serde_json::{Value, json};
use support::{Client, Opts, Project};

fn answered(c: &Client, id: &Value) -> bool {
    c.log
        .iter()
        .any(|m| m.get("id") == Some(id) && m.get("method").is_none())
}

/// A round trip through the watchdog: everything sent before it has been handled.
fn barrier(c: &mut Client) {
    let id = c.request("$/lean/waitForILeans", json!({}));
    c.result(&id);
}

fn fatal_progress(v: &Value) -> bool {
    v["method"] == "$/lean/fileProgress" && v["params"]["processing"][0]["kind"] == 2
}

#[test]
fn worker_crash_fails_pending_then_restarts_only_on_did_change() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Crash.lean");
    let text = "def a : Nat := 1\n-- fake: gate g\n-- fake: crash\ndef b : Nat := a\n";
    c.open_text(&uri, text, 1, None);
    c.project.await_gate("g");
    let pending = c.request("textDocument/hover", Client::at(&uri, 3, 15));
    barrier(&mut c);
    c.project.open_gate("g");
    let r = c.response(&pending);
    assert_eq!(r["error"]["code"], -32902);
    assert_eq!(
        r["error"]["message"],
        format!("Server process for {uri} crashed, likely due to a stack overflow or a bug.")
    );
    let fatal = c.wait_for("fatal progress", fatal_progress);
    assert_eq!(
        fatal["params"]["processing"][0]["range"],
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 4, "character": 0}})
    );
    let first_worker = c.worker_pids()[0];
    support::eventually("crashed worker gone", || {
        support::process_gone(first_worker)
    });
    // Worker stderr is a separate stream: no order against stdout.
    c.await_stderr(&format!("[{uri}] Stack overflow detected. Aborting."));
    // Requests in between are queued, not answered...
    let queued = c.request("textDocument/hover", Client::at(&uri, 3, 15));
    barrier(&mut c);
    assert!(!answered(&c, &queued));
    // ...and replayed after the didChange that restarts the worker.
    c.change_full(&uri, 2, &text.replace("-- fake: crash\n", "\n"));
    assert_eq!(
        c.result(&queued)["contents"]["value"],
        "```lean\na : Nat\n```"
    );
    c.sync(&uri, 2);
    assert_eq!(c.worker_pids().len(), 2);
}

#[test]
fn exit_code_one_is_worker_exited() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Crash.lean");
    c.open_text(
        &uri,
        "-- fake: gate g\n-- fake: crash exit1\ndef b : Nat := 2\n",
        1,
        None,
    );
    c.project.await_gate("g");
    let pending = c.request("$/lean/plainGoal", Client::at(&uri, 2, 4));
    barrier(&mut c);
    c.project.open_gate("g");
    let r = c.response(&pending);
    assert_eq!(r["error"]["code"], -32901);
    assert_eq!(
        r["error"]["message"],
        format!("Server process for {uri} crashed, see stderr for exception.")
    );
    c.wait_for("fatal progress", fatal_progress);
    c.await_stderr(&format!("[{uri}] uncaught exception"));
}

#[test]
fn crash_once_does_not_repeat_after_the_restart() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Once.lean");
    let text = "-- fake: crash once\ndef b : Nat := 2\n";
    c.open_text(&uri, text, 1, None);
    c.wait_for("fatal progress", fatal_progress);
    c.change_full(&uri, 2, text);
    let msgs = c.sync(&uri, 2);
    assert!(msgs.iter().any(|m| m["params"]["processing"] == json!([])));
}

#[test]
fn a_worker_killed_from_outside_is_a_crash() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Killed.lean");
    c.open_text(
        &uri,
        "def a : Nat := 1\n-- fake: gate g\ndef b : Nat := 2\n",
        1,
        None,
    );
    c.project.await_gate("g");
    let pending = c.request("textDocument/hover", Client::at(&uri, 2, 4));
    barrier(&mut c);
    let pid = c.worker_pids()[0];
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    assert_eq!(c.error_code(&pending), -32902);
    c.wait_for("fatal progress", fatal_progress);
}

#[test]
fn watchdog_exit_by_directive_and_by_environment() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Die.lean");
    c.open_text(
        &uri,
        "-- fake: watchdog-exit \"boom\"\ndef a := 1\n",
        1,
        None,
    );
    assert_eq!(c.finish(), Some(1));
    assert!(c.stderr().contains("Watchdog error: boom"));

    let mut c =
        Client::ready(Opts::default().env("FAKE_LEAN_WATCHDOG_EXIT", "textDocument/hover:kaput"));
    let uri = c.open("Fixture/Basic.lean");
    c.request("textDocument/hover", Client::at(&uri, 7, 5));
    assert_eq!(c.finish(), Some(1));
    assert!(c.stderr().lines().any(|l| l == "Watchdog error: kaput"));
}

#[test]
fn hung_requests_answer_only_to_cancel() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_HANG", "textDocument/hover"));
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    let hung = c.request("textDocument/hover", Client::at(&uri, 7, 5));
    let other = c.request("$/lean/plainGoal", Client::at(&uri, 23, 2));
    c.result(&other);
    barrier(&mut c);
    assert!(!answered(&c, &hung));
    c.notify("$/cancelRequest", json!({"id": hung}));
    let r = c.response(&hung);
    assert_eq!(r["error"], json!({"code": -32800, "message": ""}));
}

#[test]
fn hang_directive_applies_to_its_document() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Hang.lean");
    c.open_text(
        &uri,
        "-- fake: hang $/lean/plainGoal\ntheorem t : True := by\n  trivial\n",
        1,
        None,
    );
    c.sync(&uri, 1);
    let hung = c.request("$/lean/plainGoal", Client::at(&uri, 2, 2));
    let hover = c.request("textDocument/hover", Client::at(&uri, 1, 9));
    c.result(&hover);
    assert!(!answered(&c, &hung));
    c.close(&uri);
    assert_eq!(c.error_code(&hung), -32801, "closing fails hung requests");
}

#[test]
fn slow_elaboration_reports_progress_and_is_superseded() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_SLOW_TICK_MS", "10"));
    let uri = c.project.uri("Fixture/Slow.lean");
    c.open_text(&uri, "def a := 1\n-- fake: slow 100\ndef b := 2\n", 1, None);
    let msgs = c.sync(&uri, 1);
    let ticks = msgs
        .iter()
        .filter(|m| m["params"]["processing"][0]["range"]["start"]["line"] == 2)
        .count();
    assert!(ticks >= 3, "progress while slow: {msgs:?}");
    // Version 2 is endlessly slow; version 3 supersedes it.
    c.change_full(&uri, 2, "def a := 1\n-- fake: slow 600000\ndef b := 2\n");
    c.wait_for("version 2 blocked", |m| {
        m["params"]["textDocument"]["version"] == 2
            && m["params"]["processing"][0]["range"]["start"]["line"] == 2
    });
    c.change_full(&uri, 3, "-- fake: error \"three\"\ndef a := 1\n");
    let msgs = c.sync(&uri, 3);
    assert_eq!(Client::last_diagnostics(&msgs)[0]["message"], "three");
    assert!(
        !c.log.iter().any(
            |m| m["params"]["version"] == 2 && m["method"] == "textDocument/publishDiagnostics"
        )
    );
}

#[test]
fn gates_announce_themselves_and_hold_elaboration() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Gate.lean");
    c.open_text(&uri, "def a := 1\n-- fake: gate one\ndef b := 2\n", 1, None);
    c.project.await_gate("one");
    let wait = c.request(
        "textDocument/waitForDiagnostics",
        json!({"uri": uri, "version": 1}),
    );
    barrier(&mut c);
    assert!(!answered(&c, &wait));
    c.project.open_gate("one");
    assert_eq!(c.result(&wait), json!({}));
    // The progress at the gate named the blocked command.
    assert!(
        c.log
            .iter()
            .any(|m| m["params"]["processing"][0]["range"]["start"]["line"] == 2)
    );
}

#[test]
fn garbage_frames() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_GARBAGE", "json:textDocument/hover"));
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    c.request("textDocument/hover", Client::at(&uri, 7, 5));
    let g = c.wait_for("garbage", |m| m.get("garbage").is_some());
    assert_eq!(g["garbage"], "{not json!!}");
    // Only the first one: the server goes on.
    let id = c.request("textDocument/hover", Client::at(&uri, 7, 5));
    assert!(c.result(&id).is_object());

    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LEAN_GARBAGE", "header"),
    );
    c.request("initialize", json!({"capabilities": {}}));
    let g = c.wait_for("garbage header", |m| m.get("garbage_header").is_some());
    assert_eq!(g["garbage_header"], "Content-Length: abc");
}

#[test]
fn a_server_that_never_answers_initialize() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LEAN_NO_INIT", "1"),
    );
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));
    assert_eq!(c.finish(), Some(1));
    assert!(c.log.is_empty(), "{:?}", c.log);
}

#[test]
fn lake_that_exits_at_once() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LAKE_EXIT", "3").env(
            "FAKE_LAKE_STDERR",
            "error: lakefile.toml: bad\\nerror: giving up",
        ),
    );
    assert_eq!(c.finish(), Some(3));
    assert!(c.log.is_empty());
    assert_eq!(c.stderr(), "error: lakefile.toml: bad\nerror: giving up\n");
}

#[test]
fn lake_that_floods_stderr_before_serving() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LAKE_STDERR_FLOOD", "2000000"),
    );
    c.handshake(json!({}));
    support::eventually("the whole flood", || c.stderr().len() >= 2_000_000);
}

#[test]
fn workspace_load_log_and_fallback_warning() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env(
            "FAKE_LAKE_LOAD_LOG",
            "warning: manifest out of date\\ninfo: fixture: cloning batteries",
        ),
    );
    c.handshake(json!({}));
    c.await_stderr("cloning batteries");
    let err = c.stderr();
    assert!(
        err.starts_with("warning: manifest out of date\ninfo: fixture: cloning batteries\n"),
        "{err}"
    );

    let p = Project::new();
    std::fs::remove_file(p.root.join("lakefile.toml")).unwrap();
    let mut c = Client::start(p, Opts::default());
    c.handshake(json!({}));
    c.await_stderr("falling back to plain `lean --server`");
}

#[test]
fn a_lake_configuration_that_does_not_load_fails_every_files_setup() {
    let p = Project::new();
    p.write(
        "lakefile.toml",
        "name = \"fixture\"\n[[lean_lib]\nname = \"Fixture\"\n",
    );
    let mut c = Client::start(p, Opts::default());
    c.handshake(json!({}));
    // Lake's load error, then its fallback to a plain server (LLS:79–80).
    c.await_stderr("falling back to plain `lean --server`");
    let err = c.stderr();
    assert!(err.starts_with("error: ./lakefile.toml:2:"), "{err}");
    let uri = c.open("Fixture/Basic.lean");
    let msgs = c.sync(&uri, 1);
    let diagnostics = Client::last_diagnostics(&msgs);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let header = diagnostics[0]["message"].as_str().unwrap();
    // Each file's header shows `lake setup-file` failing (LLS:82), with the load log; the
    // mid-era worker names Lake by its absolute path (LLS Part 3).
    assert!(header.starts_with("`/"), "{header}");
    assert!(header.contains("lake setup-file "), "{header}");
    assert!(
        header.contains("` failed:\n\nstderr:\nerror: ./lakefile.toml:2:"),
        "{header}"
    );
    assert_eq!(diagnostics[0]["severity"], 1);
    assert!(msgs.iter().any(fatal_progress));
}

#[test]
fn a_frame_cut_off_inside_its_body_then_the_watchdog_dies() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_GARBAGE", "cut:textDocument/hover"));
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    c.request("textDocument/hover", Client::at(&uri, 7, 5));
    assert_eq!(c.finish(), None, "killed by a signal");
    assert!(c.stderr().contains("Stack overflow detected. Aborting."));
    let cut = c
        .project
        .trace_lines()
        .into_iter()
        .find(|t| t["event"] == "garbage")
        .expect("the cut frame is traced");
    let bytes = cut["bytes"].as_str().unwrap();
    let (header, body) = bytes.split_once("\r\n\r\n").unwrap();
    let claimed: usize = header["Content-Length: ".len()..].parse().unwrap();
    assert!(body.len() < claimed, "{bytes}");
}

#[test]
fn a_frame_that_claims_a_length_beyond_any_message() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_GARBAGE", "huge:textDocument/hover"));
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    c.request("textDocument/hover", Client::at(&uri, 7, 5));
    let g = c.wait_for("the huge header", |m| m.get("garbage_header").is_some());
    assert_eq!(g["garbage_header"], "Content-Length: 1099511627776");
    // The server goes on: a client that read on would take its later output as that body.
    assert!(!support::process_gone(c.pid() as i32));
}

#[test]
fn faults_apply_to_the_first_lake_of_a_marker_only() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("faulted");
    let faulty = || {
        Opts::default()
            .env("FAKE_LAKE_EXIT", "3")
            .env("FAKE_LEAN_FAULTS_ONCE", marker.to_str().unwrap())
    };
    let mut first = Client::start(Project::new(), faulty());
    assert_eq!(first.finish(), Some(3));
    assert!(marker.exists());
    let mut second = Client::start(Project::new(), faulty());
    second.handshake(json!({}));
    assert_eq!(second.call("$/lean/waitForILeans", json!({})), json!({}));
}

#[test]
fn lake_that_floods_stderr_with_one_line() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LAKE_STDERR_FLOOD", "3000000:line"),
    );
    c.handshake(json!({}));
    support::eventually("the whole flood", || c.stderr().len() > 3_000_000);
    assert_eq!(c.stderr().matches('\n').count(), 1, "one line");
}
