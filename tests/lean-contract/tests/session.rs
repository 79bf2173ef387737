//! The checker over whole sessions: Lean's traffic passes, and each shape Lean never sends is
//! named by its rule.

use lean_contract::Checker;
use serde_json::{Value, json};

const URI: &str = "file:///w/A.lean";
const TEXT: &str = "import B\n\ntheorem t : True := by\n  trivial\n";

fn range(a: u64, b: u64, c: u64, d: u64) -> Value {
    json!({"start": {"line": a, "character": b}, "end": {"line": c, "character": d}})
}

fn notify(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn answer(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A session through the handshake, with `A.lean` open at version 1.
fn opened(incremental: bool) -> Checker {
    let mut c = Checker::new();
    let caps = json!({"lean": {"incrementalDiagnosticSupport": incremental}});
    c.client(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                     "params": {"capabilities": caps}}));
    assert_eq!(
        ids(&mut c, answer(json!(0), json!({"capabilities": {}}))),
        NONE
    );
    c.client(&notify("initialized", json!({})));
    let register = json!({"jsonrpc": "2.0", "id": "register_lean_watcher",
                          "method": "client/registerCapability", "params": {}});
    assert_eq!(ids(&mut c, register), NONE);
    c.client(&notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "lean", "version": 1, "text": TEXT}}),
    ));
    c
}

const NONE: [&str; 0] = [];

fn ids(c: &mut Checker, msg: Value) -> Vec<&'static str> {
    c.server(&msg).iter().map(|v| v.rule.id).collect()
}

fn progress(version: i64, processing: Value) -> Value {
    notify(
        "$/lean/fileProgress",
        json!({"textDocument": {"uri": URI, "version": version}, "processing": processing}),
    )
}

fn publish(version: i64, diagnostics: Value) -> Value {
    notify(
        "textDocument/publishDiagnostics",
        json!({"uri": URI, "version": version, "diagnostics": diagnostics}),
    )
}

fn wait(c: &mut Checker, id: i64, version: i64) {
    c.client(
        &json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/waitForDiagnostics",
                     "params": {"uri": URI, "version": version}}),
    );
}

#[test]
fn a_version_reported_as_lean_reports_it_passes() {
    let mut c = opened(false);
    let running = json!([{"range": range(0, 0, 4, 0), "kind": 1}]);
    assert_eq!(ids(&mut c, progress(1, running)), NONE);
    let error = json!({"severity": 1, "source": "Lean 4", "message": "unsolved goals",
                       "range": range(2, 8, 3, 0), "fullRange": range(2, 8, 3, 9)});
    assert_eq!(ids(&mut c, publish(1, json!([error]))), NONE);
    wait(&mut c, 7, 1);
    assert_eq!(ids(&mut c, progress(1, json!([]))), NONE);
    assert_eq!(ids(&mut c, answer(json!(7), json!({}))), NONE);
    c.client(&json!({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": URI}, "position": {"line": 3, "character": 3}}}));
    let hover = json!({"contents": {"kind": "markdown", "value": "x"}, "range": range(3, 2, 3, 9)});
    assert_eq!(ids(&mut c, answer(json!(8), hover)), NONE);
    let refresh = json!({"jsonrpc": "2.0", "id": 0, "method": "workspace/semanticTokens/refresh"});
    assert_eq!(ids(&mut c, refresh), NONE);
}

#[test]
fn the_header_error_lean_sends_passes_and_range_equal_to_full_range_fails() {
    let mut c = opened(false);
    let header = |r: Value| {
        json!({"severity": 1, "source": "Lean 4", "message": "Failed to build module dependencies.",
               "range": r, "fullRange": range(0, 0, 4, 0)})
    };
    assert_eq!(
        ids(&mut c, publish(1, json!([header(range(0, 0, 1, 0))]))),
        NONE
    );
    let wrong = c.server(&publish(1, json!([header(range(0, 0, 4, 0))])));
    assert_eq!(wrong.len(), 1, "{wrong:?}");
    assert_eq!(wrong[0].rule.id, "diagnostic.header-error");
    let line = wrong[0].to_json();
    assert_eq!(line["contract"], "diagnostic.header-error");
    assert!(
        line["source"]
            .as_str()
            .unwrap()
            .contains("diagnosticsOfHeaderError")
    );
    assert_eq!(line["detail"]["message"]["version"], 1);
    let fatal = json!([{"range": range(0, 0, 4, 0), "kind": 2}]);
    assert_eq!(ids(&mut c, progress(1, fatal)), NONE);
}

#[test]
fn edits_are_applied_and_positions_held_to_the_edited_text() {
    let mut c = opened(false);
    c.client(&notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2},
               "contentChanges": [{"range": range(3, 2, 3, 9), "text": "exact True.intro -- 😉"}]}),
    ));
    let at_end = json!({"severity": 2, "message": "w", "range": range(3, 24, 3, 24),
                        "fullRange": range(3, 24, 3, 24)});
    assert_eq!(ids(&mut c, publish(2, json!([at_end]))), NONE);
    let past = json!({"severity": 2, "message": "w", "range": range(3, 25, 3, 25),
                      "fullRange": range(3, 25, 3, 25)});
    assert_eq!(ids(&mut c, publish(2, json!([past]))), ["position.in-text"]);
    let short = json!([{"range": range(1, 0, 3, 0), "kind": 1}]);
    assert_eq!(ids(&mut c, progress(2, short)), ["progress.shape"]);
    let fatal_late = json!([{"range": range(1, 0, 4, 0), "kind": 2}]);
    assert_eq!(ids(&mut c, progress(2, fatal_late)), ["progress.shape"]);
    let kind = json!([{"range": range(1, 0, 4, 0), "kind": 3}]);
    assert_eq!(ids(&mut c, progress(2, kind)), ["progress.shape"]);
    // An empty change is dropped by the watchdog: version 3 was never sent.
    c.client(&notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": []}),
    ));
    assert_eq!(ids(&mut c, publish(3, json!([]))), ["version.sent"]);
}

#[test]
fn a_barrier_answered_before_the_final_progress_fails() {
    let mut c = opened(false);
    wait(&mut c, 5, 1);
    assert_eq!(
        ids(&mut c, answer(json!(5), json!({}))),
        ["wait.after-final-progress"]
    );
    wait(&mut c, 6, 2);
    assert_eq!(ids(&mut c, answer(json!(6), json!({}))), ["wait.version"]);
    wait(&mut c, 9, 1);
    assert_eq!(ids(&mut c, progress(1, json!([]))), NONE);
    let running = json!([{"range": range(2, 0, 4, 0), "kind": 1}]);
    assert_eq!(ids(&mut c, progress(1, running)), NONE);
    assert_eq!(
        ids(&mut c, answer(json!(9), json!({}))),
        ["wait.after-final-progress"]
    );
}

#[test]
fn responses_answer_pending_requests_once_with_lean_error_codes() {
    let mut c = opened(false);
    assert_eq!(ids(&mut c, answer(json!(41), json!(null))), ["response.id"]);
    c.client(&json!({"jsonrpc": "2.0", "id": "x", "method": "textDocument/hover",
                     "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}}));
    let error = json!({"jsonrpc": "2.0", "id": "x", "error": {"code": -32000, "message": "?"}});
    assert_eq!(ids(&mut c, error.clone()), ["response.error-code"]);
    assert_eq!(ids(&mut c, error), ["response.id"]);
}

#[test]
fn the_handshake_and_server_request_ids_are_lean_s() {
    let mut c = Checker::new();
    assert_eq!(
        ids(&mut c, notify("window/logMessage", json!({}))),
        ["handshake.order"]
    );
    c.client(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}));
    assert_eq!(
        ids(&mut c, progress(1, json!([]))),
        ["handshake.order", "version.sent"]
    );
    assert_eq!(ids(&mut c, answer(json!(0), json!({}))), NONE);
    c.client(&notify("initialized", json!({})));
    let refresh =
        |id: Value| json!({"jsonrpc": "2.0", "id": id, "method": "workspace/inlayHint/refresh"});
    assert_eq!(ids(&mut c, refresh(json!(0))), ["handshake.order"]);
    assert_eq!(ids(&mut c, refresh(json!(2))), ["server-request.id"]);
    assert_eq!(ids(&mut c, refresh(json!(1))), NONE);
}

#[test]
fn incremental_publishes_need_the_capability_and_a_replacing_publish_first() {
    let mut c = opened(true);
    let appended = |flag: bool| {
        notify(
            "textDocument/publishDiagnostics",
            json!({"uri": URI, "version": 1, "isIncremental": flag, "diagnostics": []}),
        )
    };
    assert_eq!(ids(&mut c, appended(true)), ["publish.incremental"]);
    assert_eq!(ids(&mut c, appended(false)), NONE);
    assert_eq!(ids(&mut c, appended(true)), NONE);
    let mut plain = opened(false);
    assert_eq!(ids(&mut plain, appended(false)), ["publish.incremental"]);
}

#[test]
fn lake_reports_on_other_files_carry_no_version() {
    let mut c = opened(false);
    let lake = notify(
        "textDocument/publishDiagnostics",
        json!({"uri": "file:///w/B.lean", "diagnostics": [
            {"severity": 1, "source": "Lake", "message": "e", "range": range(3, 1, 5, 2)}]}),
    );
    assert_eq!(ids(&mut c, lake), NONE);
    let bare = notify(
        "textDocument/publishDiagnostics",
        json!({"uri": URI, "diagnostics": []}),
    );
    assert_eq!(ids(&mut c, bare), ["version.sent"]);
}

#[test]
fn a_version_not_above_the_newest_leaves_the_document_unjudged() {
    let mut c = opened(false);
    c.client(&notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 1}, "contentChanges": [{"text": "x"}]}),
    ));
    wait(&mut c, 3, 1);
    assert_eq!(ids(&mut c, answer(json!(3), json!({}))), NONE);
    let far = json!({"severity": 2, "message": "w", "range": range(3, 9, 3, 9),
                     "fullRange": range(3, 9, 3, 9)});
    assert_eq!(ids(&mut c, publish(1, json!([far]))), NONE);
}
