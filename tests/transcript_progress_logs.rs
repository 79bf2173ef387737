//! Progress notifications, the one-shot `beam.status` liveness notice, and log delivery in both
//! families, driven through the test host. Synchronisation is on observable messages only.

mod support;

use serde_json::{Value, json};
use support::*;

/// The status delay the test host runs with: short, so a gated call becomes "slow" quickly.
const FAST_STATUS: &[&str] = &["--status-delay-ms", "30"];

fn tool_call(id: impl Into<Value>, tool: &str, arguments: Value, meta: Value) -> Value {
    let mut params = call(tool, arguments);
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    request(id, "tools/call", params)
}

fn modern_call(id: impl Into<Value>, tool: &str, arguments: Value, meta: Value) -> Value {
    let mut params = call(tool, arguments);
    params["_meta"] = if meta.is_null() { json!({}) } else { meta };
    modern(id, "tools/call", params)
}

fn progress_of(messages: &[Value], token: &Value) -> Vec<u64> {
    messages
        .iter()
        .filter(|m| {
            m["method"] == "notifications/progress" && &m["params"]["progressToken"] == token
        })
        .map(|m| m["params"]["progress"].as_u64().expect("integer progress"))
        .collect()
}

fn status_notices_for(transcript: &str, id: &str) -> usize {
    let needle = format!("\"requestId\":{id},");
    transcript
        .lines()
        .filter(|l| l.starts_with("← ") && l.contains("beam.status") && l.contains(&needle))
        .count()
}

fn progress_run(modern_family: bool, token: Value) -> String {
    let mut server = McpProcess::test_host(&[]);
    let meta = json!({"progressToken": token});
    let message = if modern_family {
        modern_call(1, "progress", json!({"steps": 3}), meta)
    } else {
        server.initialize_legacy();
        tool_call(1, "progress", json!({"steps": 3}), meta)
    };
    server.send(&message);
    let seen = server.until_response(&json!(1));
    assert_eq!(
        progress_of(&seen, &token),
        [1, 2, 3],
        "strictly increasing from 1, all before the answer"
    );
    assert_eq!(
        seen.last().unwrap()["result"]["structuredContent"]["sent"],
        3
    );
    server.finish().transcript
}

#[test]
fn progress_with_a_string_token_in_the_legacy_family() {
    assert_transcript!(
        "progress_logs",
        "progress_legacy_string",
        progress_run(false, json!("p-1"))
    );
}

#[test]
fn progress_with_a_numeric_token_in_the_modern_family() {
    assert_transcript!(
        "progress_logs",
        "progress_modern_number",
        progress_run(true, json!(7))
    );
}

#[test]
fn without_a_token_no_progress_is_sent() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&tool_call(1, "progress", json!({"steps": 3}), Value::Null));
    let seen = server.until_response(&json!(1));
    assert_eq!(seen.len(), 1, "only the answer: {seen:?}");
    assert_eq!(seen[0]["result"]["structuredContent"]["sent"], 0);
    assert_transcript!(
        "progress_logs",
        "no_token_no_progress",
        server.finish().transcript
    );
}

#[test]
fn nothing_a_call_emits_after_its_answer_reaches_the_client() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&tool_call(
        1,
        "progress",
        json!({"steps": 2, "linger": true}),
        json!({"progressToken": "late"}),
    ));
    server.response(&json!(1));
    // More traffic gives any late emission every chance to slip out before the end.
    for id in 2..12 {
        server.ask(request(id, "ping", Value::Null));
    }
    let finished = server.finish();
    let after_answer: Vec<&str> = finished
        .transcript
        .lines()
        .skip_while(|l| !l.starts_with("← {\"id\":1,"))
        .skip(1)
        .collect();
    assert!(
        after_answer.iter().all(|l| !l.contains("after the answer")),
        "late notifications leaked:\n{}",
        finished.transcript
    );
    assert_transcript!(
        "progress_logs",
        "nothing_after_the_answer",
        finished.transcript
    );
}

#[test]
fn a_slow_call_without_a_token_gets_exactly_one_status_notice() {
    let mut server = McpProcess::test_host(FAST_STATUS);
    server.initialize_legacy();
    server.send(&tool_call(
        1,
        "gate",
        json!({"gate": "a", "path": "Main.lean"}),
        Value::Null,
    ));
    let notice = server.wait_for("beam.status", |m| m["params"]["logger"] == "beam.status");
    assert_eq!(
        notice["params"],
        json!({
            "level": "notice",
            "logger": "beam.status",
            "data": {
                "requestId": 1,
                "tool": "gate",
                "state": "running",
                "message": "gate on Main.lean is still working.",
                "path": "Main.lean",
                "progressHint": "For detailed live updates, pass tools/call params._meta.progressToken."
            }
        })
    );
    server.open_gate("a");
    server.response(&json!(1));
    let finished = server.finish();
    assert_eq!(status_notices_for(&finished.transcript, "1"), 1);
    assert_transcript!("progress_logs", "status_once", finished.transcript);
}

/// Sends `quiet` first and waits until it runs, then a slow gate whose notice is awaited: the
/// earlier call's status timer, had it been armed, would have fired first.
fn no_notice_for(quiet: Value, mut server: McpProcess, loud: Value) -> String {
    server.send(&quiet);
    server.wait_for("the quiet call started", |m| {
        m["params"]["data"]["gate"] == "q"
    });
    server.send(&loud);
    server.wait_for("the loud call's notice", |m| {
        m["params"]["logger"] == "beam.status" && m["params"]["data"]["requestId"] == 2
    });
    server.open_gate("q");
    server.response(&json!(1));
    server.open_gate("l");
    server.response(&json!(2));
    let finished = server.finish();
    assert_eq!(
        status_notices_for(&finished.transcript, "1"),
        0,
        "{}",
        finished.transcript
    );
    finished.transcript
}

#[test]
fn a_call_with_a_progress_token_gets_no_status_notice() {
    let mut server = McpProcess::test_host(FAST_STATUS);
    server.initialize_legacy();
    let quiet = tool_call(
        1,
        "gate",
        json!({"gate": "q"}),
        json!({"progressToken": "t"}),
    );
    let loud = tool_call(2, "gate", json!({"gate": "l"}), Value::Null);
    assert_transcript!(
        "progress_logs",
        "status_not_with_token",
        no_notice_for(quiet, server, loud)
    );
}

#[test]
fn a_quiet_tool_gets_no_status_notice() {
    let mut server = McpProcess::test_host(FAST_STATUS);
    server.initialize_legacy();
    let quiet = tool_call(1, "quiet_gate", json!({"gate": "q"}), Value::Null);
    let loud = tool_call(2, "gate", json!({"gate": "l"}), Value::Null);
    assert_transcript!(
        "progress_logs",
        "status_not_for_quiet_tools",
        no_notice_for(quiet, server, loud)
    );
}

#[test]
fn a_modern_call_without_a_log_level_gets_no_status_notice() {
    let server = McpProcess::test_host(FAST_STATUS);
    // Call 3 carries no log level and must stay silent. Call 1 announces itself (its request
    // admits debug; its progress token keeps it from a notice of its own), and call 2 admits
    // notice, so call 2's notice is the point after which call 3's earlier deadline has passed.
    let quiet = modern_call(
        1,
        "gate",
        json!({"gate": "q"}),
        json!({"io.modelcontextprotocol/logLevel": "debug", "progressToken": "p"}),
    );
    let loud = modern_call(
        2,
        "gate",
        json!({"gate": "l"}),
        json!({"io.modelcontextprotocol/logLevel": "notice"}),
    );
    assert_transcript!(
        "progress_logs",
        "status_modern_levels",
        no_notice_for_modern(quiet, server, loud)
    );
}

/// As [`no_notice_for`], but the call that must stay quiet is a third one without a log level.
fn no_notice_for_modern(announced: Value, mut server: McpProcess, loud: Value) -> String {
    server.send(&modern_call(
        3,
        "gate",
        json!({"gate": "silent"}),
        Value::Null,
    ));
    server.send(&announced);
    server.wait_for("the announced call started", |m| {
        m["params"]["data"]["gate"] == "q"
    });
    server.send(&loud);
    server.wait_for("the loud call's notice", |m| {
        m["params"]["logger"] == "beam.status" && m["params"]["data"]["requestId"] == 2
    });
    for (gate, id) in [("silent", 3), ("q", 1), ("l", 2)] {
        server.open_gate(gate);
        server.response(&json!(id));
    }
    let finished = server.finish();
    assert_eq!(
        status_notices_for(&finished.transcript, "3"),
        0,
        "{}",
        finished.transcript
    );
    assert!(
        !finished
            .transcript
            .contains("\"gate\":\"silent\",\"state\""),
        "no log without a level"
    );
    finished.transcript
}

#[test]
fn the_legacy_session_level_filters_the_status_notice() {
    // A status delay no test outlives: only the immediate notice_now path can emit.
    let mut server = McpProcess::test_host(&["--status-delay-ms", "600000"]);
    server.initialize_legacy();
    server.send(&tool_call(
        1,
        "gate",
        json!({"gate": "a", "notice_now": true, "path": "A.lean"}),
        Value::Null,
    ));
    let notice = server.wait_for("the notice", |m| m["params"]["logger"] == "beam.status");
    assert_eq!(notice["params"]["data"]["state"], "preparing_dependencies");
    assert_eq!(
        notice["params"]["data"]["message"],
        "gate on A.lean is still working."
    );
    server.open_gate("a");
    let admitted = server.response(&json!(1));
    assert_eq!(admitted["result"]["structuredContent"]["notice_sent"], true);
    server.ask(request(2, "logging/setLevel", json!({"level": "warning"})));
    server.send(&tool_call(
        3,
        "gate",
        json!({"gate": "b", "notice_now": true}),
        Value::Null,
    ));
    server.open_gate("b");
    let filtered = server.response(&json!(3));
    assert_eq!(
        filtered["result"]["structuredContent"]["notice_sent"],
        false
    );
    let finished = server.finish();
    assert_eq!(status_notices_for(&finished.transcript, "3"), 0);
    assert_transcript!("progress_logs", "status_session_level", finished.transcript);
}

#[test]
fn a_fence_waiting_behind_earlier_calls_gets_a_pathless_status_notice() {
    let mut server = McpProcess::test_host(FAST_STATUS);
    server.initialize_legacy();
    server.send(&tool_call(
        1,
        "gate",
        json!({"gate": "a"}),
        json!({"progressToken": "busy"}),
    ));
    server.wait_for("gate a entered", |m| m["params"]["data"]["gate"] == "a");
    server.send(&tool_call(
        2,
        "fence",
        json!({"label": "drop"}),
        Value::Null,
    ));
    let notice = server.wait_for("the fence's notice", |m| {
        m["params"]["logger"] == "beam.status"
    });
    assert_eq!(notice["params"]["data"]["requestId"], 2);
    assert_eq!(
        notice["params"]["data"]["message"],
        "fence is still working."
    );
    assert!(notice["params"]["data"].get("path").is_none());
    server.open_gate("a");
    server.response(&json!(2));
    assert_transcript!(
        "progress_logs",
        "status_held_fence",
        server.finish().transcript
    );
}

fn log_call(id: i64, level: &str) -> Value {
    tool_call(
        id,
        "log",
        json!({"level": level, "logger": "test.log", "data": {"at": level}}),
        Value::Null,
    )
}

#[test]
fn legacy_logs_follow_the_session_level_which_starts_at_debug() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&log_call(1, "debug"));
    let debug = server.until_response(&json!(1));
    assert_eq!(debug.len(), 2, "the debug log, then the answer");
    server.ask(request(2, "logging/setLevel", json!({"level": "error"})));
    let warning = server.ask(log_call(3, "warning"));
    assert_eq!(warning["result"]["structuredContent"]["sent"], false);
    server.send(&log_call(4, "emergency"));
    let emergency = server.until_response(&json!(4));
    assert_eq!(emergency[0]["params"]["level"], "emergency");
    assert_transcript!("progress_logs", "legacy_levels", server.finish().transcript);
}

#[test]
fn modern_logs_follow_only_the_request_level() {
    let mut server = McpProcess::test_host(&[]);
    let call = |id: i64, level: &str, request_level: Option<&str>| {
        let meta = match request_level {
            Some(l) => json!({"io.modelcontextprotocol/logLevel": l}),
            None => Value::Null,
        };
        modern_call(
            id,
            "log",
            json!({"level": level, "logger": "test.log"}),
            meta,
        )
    };
    let none = server.ask(call(1, "emergency", None));
    assert_eq!(
        none["result"]["structuredContent"]["sent"], false,
        "no level: no log notifications at all"
    );
    let below = server.ask(call(2, "info", Some("warning")));
    assert_eq!(below["result"]["structuredContent"]["sent"], false);
    server.send(&call(3, "error", Some("warning")));
    let admitted = server.until_response(&json!(3));
    assert_eq!(admitted[0]["params"]["level"], "error");
    // The level of one request is not retained for the next.
    let after = server.ask(call(4, "emergency", None));
    assert_eq!(after["result"]["structuredContent"]["sent"], false);
    assert_transcript!("progress_logs", "modern_levels", server.finish().transcript);
}

#[test]
fn operational_logs_go_to_stderr_and_never_to_stdout() {
    let mut server = McpProcess::server_with_env(&[], &[("RUST_LOG", "debug")]);
    server.ask(request(1, "ping", Value::Null));
    server.send_raw("not json");
    server.recv();
    let finished = server.finish();
    assert!(finished.status.success());
    assert!(
        finished.stderr.contains("DEBUG"),
        "stderr carries tracing output: {:?}",
        finished.stderr
    );
    // Every stdout line parsed as JSON (the harness fails otherwise); it holds only the answers.
    assert_eq!(
        finished
            .transcript
            .lines()
            .filter(|l| l.starts_with('←'))
            .count(),
        2
    );
}
