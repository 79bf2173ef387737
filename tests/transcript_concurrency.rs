//! Concurrency, id ownership, cancellation, fences and shutdown, driven through the test host.
//!
//! Synchronisation is always on observable events: a gated call announces itself with a
//! `test.gate` log ("entered") before it waits, and a gate opens when the test creates its file.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::*;

fn gate(id: impl Into<Value>, gate: &str) -> Value {
    request(id, "tools/call", call("gate", json!({"gate": gate})))
}

fn echo(id: impl Into<Value>, text: &str) -> Value {
    request(id, "tools/call", call("echo", json!({"text": text})))
}

fn fence(id: impl Into<Value>, label: &str, gate: &str) -> Value {
    request(
        id,
        "tools/call",
        call("fence", json!({"label": label, "gate": gate})),
    )
}

fn cancel(id: impl Into<Value>) -> Value {
    notification(
        "notifications/cancelled",
        json!({"requestId": id.into(), "reason": "test"}),
    )
}

fn entered(server: &mut McpProcess, key: &str, name: &str) {
    let (key, name) = (key.to_string(), name.to_string());
    server.wait_for(&format!("{key} {name} entered"), move |m| {
        m["params"]["logger"] == "test.gate" && m["params"]["data"][&key] == name.as_str()
    });
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

fn response_ids(transcript_messages: &[Value]) -> Vec<Value> {
    transcript_messages
        .iter()
        .filter(|m| m.get("method").is_none())
        .map(|m| m["id"].clone())
        .collect()
}

#[test]
fn calls_overlap_and_answer_out_of_order() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(1, "a"));
    entered(&mut server, "gate", "a");
    let quick = server.ask(echo(2, "quick"));
    assert_eq!(quick["result"]["structuredContent"]["text"], "quick");
    server.open_gate("a");
    let slow = server.response(&json!(1));
    assert_eq!(slow["result"]["structuredContent"]["released"], true);
    assert_transcript!("concurrency", "out_of_order", server.finish().transcript);
}

#[test]
fn a_request_reusing_an_active_id_is_ignored_and_reuse_after_completion_is_valid() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(1, "a"));
    entered(&mut server, "gate", "a");
    server.send(&echo(1, "duplicate"));
    server.send_raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"extra":true}"#,
    );
    // A later request is answered, so the duplicates were read and dropped, not queued.
    server.ask(request(9, "ping", Value::Null));
    server.open_gate("a");
    let first = server.response(&json!(1));
    assert_eq!(
        first["result"]["structuredContent"]["gate"], "a",
        "the original call answers"
    );
    let reused = server.ask(echo(1, "reused"));
    assert_eq!(reused["result"]["structuredContent"]["text"], "reused");
    let finished = server.finish();
    let answers_to_1 = finished
        .transcript
        .lines()
        .filter(|l| l.starts_with("← {\"id\":1,"))
        .count();
    assert_eq!(
        answers_to_1, 2,
        "one answer for the gate call and one for the reuse"
    );
    assert_transcript!("concurrency", "duplicate_active_id", finished.transcript);
}

#[test]
fn string_and_integer_ids_are_owned_separately() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(77, "a"));
    entered(&mut server, "gate", "a");
    server.send(&gate("77", "b"));
    entered(&mut server, "gate", "b");
    server.open_gate("b");
    let string = server.response(&json!("77"));
    assert_eq!(string["result"]["structuredContent"]["gate"], "b");
    server.open_gate("a");
    let number = server.response(&json!(77));
    assert_eq!(number["result"]["structuredContent"]["gate"], "a");
    assert_transcript!(
        "concurrency",
        "string_and_integer_ids",
        server.finish().transcript
    );
}

fn cancellation_wins(modern_family: bool) -> String {
    let mut server = McpProcess::test_host(&[]);
    let make = |id: i64, tool: &str, arguments: Value| {
        let mut params = call(tool, arguments);
        if modern_family {
            params["_meta"] = json!({"io.modelcontextprotocol/logLevel": "debug"});
            modern(id, "tools/call", params)
        } else {
            request(id, "tools/call", params)
        }
    };
    if !modern_family {
        server.initialize_legacy();
    }
    server.send(&make(1, "gate", json!({"gate": "a"})));
    entered(&mut server, "gate", "a");
    server.send(&cancel(1));
    // Cancelling an unknown id is harmless.
    server.send(&cancel(12345));
    // Messages are handled in order: once this is answered, the cancellation has been applied.
    server.ask(make(3, "echo", json!({"text": "sync"})));
    server.open_gate("a");
    let after = server.ask(make(2, "echo", json!({"text": "after"})));
    assert_eq!(after["result"]["structuredContent"]["text"], "after");
    let finished = server.finish();
    assert!(finished.status.success());
    assert!(
        !finished.transcript.contains("← {\"id\":1,"),
        "a cancelled call is never answered"
    );
    finished.transcript
}

#[test]
fn cancellation_wins_in_the_legacy_family() {
    assert_transcript!("concurrency", "cancel_legacy", cancellation_wins(false));
}

#[test]
fn cancellation_wins_in_the_modern_family() {
    assert_transcript!("concurrency", "cancel_modern", cancellation_wins(true));
}

/// A cancellation names its call by the literal of `requestId`, like a request id: a literal a
/// float would round onto a running call's id does not cancel it, and the exact one does.
#[test]
fn cancellation_request_ids_are_read_on_their_literal() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send_raw(
        r#"{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/call","params":{"name":"gate","arguments":{"gate":"a"}}}"#,
    );
    entered(&mut server, "gate", "a");
    for literal in ["9007199254740993.0", "9007199254740992.5", "1e-400"] {
        server.send_raw(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{literal}}}}}"#
        ));
    }
    // Handled in order: once this is answered, the three cancellations were read; none named
    // the call, so it still answers when its gate opens.
    server.ask(request(1, "ping", Value::Null));
    server.open_gate("a");
    let answer = server.response(&json!(9_007_199_254_740_992_u64));
    assert_eq!(
        answer["result"]["structuredContent"]["released"], true,
        "{answer}"
    );
    // The same id again, now cancelled by the exact literal of that id.
    server.send_raw(
        r#"{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/call","params":{"name":"gate","arguments":{"gate":"b"}}}"#,
    );
    entered(&mut server, "gate", "b");
    server.send_raw(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740992.0}}"#,
    );
    server.ask(request(2, "ping", Value::Null));
    server.open_gate("b");
    let finished = server.finish();
    let answers = finished
        .transcript
        .matches(r#""id":9007199254740992,"jsonrpc":"2.0","result""#)
        .count();
    assert_eq!(
        answers, 1,
        "the cancelled call answers nothing\n{}",
        finished.transcript
    );
    assert_eq!(finished.status.code(), Some(0));
}

#[test]
fn a_fence_drains_earlier_calls_and_holds_later_ones() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(1, "a"));
    entered(&mut server, "gate", "a");
    server.send(&fence(2, "drop", "f"));
    server.send(&echo(3, "later"));
    // Requests that are not tool calls are still answered while the fence waits.
    server.ask(request(4, "ping", Value::Null));
    server.open_gate("a");
    entered(&mut server, "fence", "drop");
    server.open_gate("f");
    let seen = server.until_response(&json!(3));
    let order = response_ids(&seen);
    assert_eq!(
        order,
        [json!(1), json!(2), json!(3)],
        "earlier call, then the fence, then the later call"
    );
    let fence_result = seen.iter().find(|m| is_response_to(m, &json!(2))).unwrap();
    assert_eq!(
        fence_result["result"]["structuredContent"]["running_at_start"],
        0
    );
    assert_eq!(
        seen.last().unwrap()["result"]["structuredContent"]["during_fence"],
        false
    );
    assert_transcript!("concurrency", "fence_order", server.finish().transcript);
}

#[test]
fn a_fence_is_not_cancellable_and_a_call_held_behind_it_can_be() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(1, "a"));
    entered(&mut server, "gate", "a");
    server.send(&fence(2, "drop", "f"));
    server.send(&gate(3, "b"));
    server.send(&cancel(2));
    server.send(&cancel(3));
    server.open_gate("a");
    entered(&mut server, "fence", "drop");
    server.open_gate("b");
    server.open_gate("f");
    let fence_answer = server.response(&json!(2));
    assert_eq!(fence_answer["result"]["structuredContent"]["label"], "drop");
    // The held call was cancelled before it started: it never runs and never answers.
    let after = server.ask(echo(4, "after"));
    assert_eq!(after["result"]["structuredContent"]["during_fence"], false);
    let finished = server.finish();
    assert!(!finished.transcript.contains("← {\"id\":3,"));
    assert!(
        !finished
            .transcript
            .contains("\"gate\":\"b\",\"state\":\"entered\""),
        "held call never started"
    );
    assert_transcript!("concurrency", "fence_cancel", finished.transcript);
}

/// A legacy test host with call 1 running behind a gate that never opens, and the path its
/// host's `shutdown` will create (inside the returned directory).
fn busy_server_with_shutdown_mark() -> (McpProcess, std::path::PathBuf, tempfile::TempDir) {
    let mark_dir = tempfile::tempdir().unwrap();
    let mark = mark_dir.path().join("shutdown");
    let mut server = McpProcess::test_host_with(
        &[],
        &[("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK", mark.to_str().unwrap())],
    );
    server.initialize_legacy();
    server.send(&gate(1, "never"));
    entered(&mut server, "gate", "never");
    (server, mark, mark_dir)
}

#[test]
fn end_of_input_cancels_running_calls_shuts_the_host_down_and_exits_zero() {
    let (server, mark, _mark_dir) = busy_server_with_shutdown_mark();
    let finished = server.finish();
    assert!(
        finished.status.success(),
        "exit status {:?}",
        finished.status
    );
    assert_eq!(finished.stderr, "");
    assert!(!finished.transcript.contains("← {\"id\":1,"));
    assert!(mark.exists(), "the host's shutdown ran before exit");
    assert_transcript!("concurrency", "eof_cancels", finished.transcript);
}

#[test]
fn end_of_input_lets_a_running_fence_finish() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&fence(1, "drop", "f"));
    entered(&mut server, "fence", "drop");
    server.close_stdin();
    server.open_gate("f");
    let answer = server.response(&json!(1));
    assert_eq!(answer["result"]["structuredContent"]["label"], "drop");
    let finished = server.finish();
    assert!(finished.status.success());
    assert_transcript!("concurrency", "eof_fence", finished.transcript);
}

#[test]
fn a_closed_stdout_exits_zero_quietly() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = Command::new(test_host_bin())
        .env("LEAN_BEAM_MCP_TEST_GATES", gates.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    // Writes may fail once the server has gone; that is the point.
    let _ = writeln!(stdin, "{init}");
    let _ = writeln!(
        stdin,
        "{}",
        notification("notifications/initialized", Value::Null)
    );
    for id in 1..=50 {
        let _ = writeln!(stdin, "{}", echo(id, "into the void"));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "exit status {:?}", output.status);
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[test]
fn a_panicking_tool_answers_internal_error_and_the_server_keeps_serving() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&gate(1, "a"));
    entered(&mut server, "gate", "a");
    let panicked = server.ask(request(
        2,
        "tools/call",
        call("panic", json!({"message": "boom"})),
    ));
    assert_eq!(panicked["error"]["code"], -32603);
    assert!(
        panicked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("boom")
    );
    server.open_gate("a");
    let survivor = server.response(&json!(1));
    assert_eq!(survivor["result"]["structuredContent"]["released"], true);
    let finished = server.finish();
    assert!(finished.status.success());
    assert_transcript!("concurrency", "panic", finished.transcript);
}

#[test]
fn sigterm_is_an_orderly_end_of_input() {
    let (mut server, mark, _mark_dir) = busy_server_with_shutdown_mark();
    let status = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    server.note("SIGTERM");
    // Stdin stays open: the signal alone ends the server.
    let finished = server.finish_without_closing();
    assert!(
        finished.status.success(),
        "exit status {:?}",
        finished.status
    );
    assert_eq!(finished.stderr, "");
    assert!(!finished.transcript.contains("← {\"id\":1,"));
    assert!(mark.exists(), "the host's shutdown ran before exit");
}
