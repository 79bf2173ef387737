//! The seam a host builds on, driven through the test host: progress with a total, the liveness
//! notice's content set by the host, a fence's preparation progress while it waits, cooperative
//! cancellation, the bound on running calls, a host panic before its first await, a context that
//! outlives its call, and the client's identity. Synchronisation is on observable messages and
//! on files the host writes, never on sleeps.

mod support;

use serde_json::{Value, json};
use support::*;

fn tool_call(id: impl Into<Value>, tool: &str, arguments: Value, meta: Value) -> Value {
    let mut params = call(tool, arguments);
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    request(id, "tools/call", params)
}

fn entered(server: &mut McpProcess, gate: &str) {
    let gate = gate.to_string();
    server.wait_for(&format!("gate {gate} entered"), move |m| {
        m["params"]["logger"] == "test.gate" && m["params"]["data"]["gate"] == gate.as_str()
    });
}

fn is_answer(message: &Value, id: i64) -> bool {
    message.get("method").is_none() && message["id"] == id
}

/// Every message until each of `ids` has been answered, in arrival order.
fn answers_to(server: &mut McpProcess, ids: &[i64]) -> Vec<Value> {
    let mut missing = ids.to_vec();
    let mut seen = Vec::new();
    while !missing.is_empty() {
        let message = server.recv();
        missing.retain(|id| !is_answer(&message, *id));
        seen.push(message);
    }
    seen
}

#[test]
fn progress_may_carry_a_total_and_never_decreases() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    let seen = {
        server.send(&tool_call(
            1,
            "progress",
            json!({"steps": 3, "total": true, "repeat_last": true}),
            json!({"progressToken": "p"}),
        ));
        server.until_response(&json!(1))
    };
    let progress: Vec<(u64, u64)> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            let p = &m["params"];
            (
                p["progress"].as_u64().unwrap(),
                p["total"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(progress, [(1, 3), (2, 3), (3, 3)]);
    let result = &seen.last().unwrap()["result"]["structuredContent"];
    assert_eq!(
        result["refused"],
        json!([true, true]),
        "a repeat and a total below progress are refused"
    );
    assert_transcript!("seam", "progress_total", server.finish_clean());
}

#[test]
fn the_host_sets_the_notice_state_and_subject() {
    let mut server = McpProcess::test_host(&["--status-delay-ms", "30"]);
    server.initialize_legacy();
    server.send(&tool_call(
        1,
        "gate",
        json!({"gate": "a", "state": "preparing_dependencies", "path": "Deps.lean"}),
        Value::Null,
    ));
    let notice = server.wait_for("the timed notice", |m| {
        m["params"]["logger"] == "beam.status"
    });
    let data = &notice["params"]["data"];
    assert_eq!(data["state"], "preparing_dependencies");
    assert_eq!(data["path"], "Deps.lean");
    assert_eq!(data["message"], "gate on Deps.lean is still working.");
    // A call whose host names no subject gets a pathless notice.
    server.send(&tool_call(2, "gate", json!({"gate": "b"}), Value::Null));
    let pathless = server.wait_for("the pathless notice", |m| {
        m["params"]["logger"] == "beam.status" && m["params"]["data"]["requestId"] == 2
    });
    assert!(
        pathless["params"]["data"].get("path").is_none(),
        "{pathless}"
    );
    assert_eq!(pathless["params"]["data"]["state"], "running");
    server.open_gate("a");
    server.response(&json!(1));
    server.open_gate("b");
    server.response(&json!(2));
    assert_transcript!("seam", "notice_content", server.finish_clean());
}

#[test]
fn a_fence_reports_preparation_while_it_waits() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&tool_call(1, "gate", json!({"gate": "a"}), Value::Null));
    entered(&mut server, "a");
    server.send(&tool_call(
        2,
        "fence",
        json!({"label": "drop", "gate": "f"}),
        json!({"progressToken": "drop"}),
    ));
    let preparing = server.wait_for("the fence's preparation", |m| {
        m["method"] == "notifications/progress"
    });
    assert_eq!(
        preparing["params"]["message"],
        "fence drop: preparing (waits for earlier calls)"
    );
    // Only now does the earlier call finish: the fence reported while it waited.
    server.open_gate("a");
    server.response(&json!(1));
    server.open_gate("f");
    let answer = server.response(&json!(2));
    assert_eq!(answer["result"]["structuredContent"]["running_at_start"], 0);
    assert_transcript!("seam", "fence_preparation", server.finish_clean());
}

#[test]
fn a_cancelled_call_learns_of_it_in_time_to_clean_up_and_answers_nothing() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    server.send(&tool_call(1, "gate", json!({"gate": "c"}), Value::Null));
    entered(&mut server, "c");
    server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "test"}),
    ));
    wait_for_file(&server.gate_dir().join("c.cancelled"));
    server.note("the host cleaned up after its cancellation");
    // The id is free again, and the server goes on serving.
    let reuse = server.ask(tool_call(1, "echo", json!({"text": "again"}), Value::Null));
    assert_eq!(reuse["result"]["structuredContent"]["text"], "again");
    let finished = server.finish();
    assert_eq!(finished.status.code(), Some(0));
    assert!(!finished.transcript.contains(r#""cancelled":true"#));
    assert_transcript!("seam", "cooperative_cancellation", finished.transcript);
}

#[test]
fn calls_past_the_bound_wait_their_turn_in_order() {
    let mut server = McpProcess::test_host(&["--max-running-calls", "2"]);
    server.initialize_legacy();
    for (id, gate) in [(1, "a"), (2, "b")] {
        server.send(&tool_call(id, "gate", json!({"gate": gate}), Value::Null));
        entered(&mut server, gate);
    }
    server.send(&tool_call(3, "gate", json!({"gate": "c"}), Value::Null));
    server.send(&tool_call(4, "gate", json!({"gate": "d"}), Value::Null));
    server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 4, "reason": "cancelled while waiting"}),
    ));
    server.send(&tool_call(5, "echo", json!({"text": "last"}), Value::Null));
    // Direct answers are not tool calls: they are not held behind the bound.
    server.ask(request(6, "ping", Value::Null));
    server.open_gate("c");
    server.open_gate("d");
    server.open_gate("a");
    // `b` still holds one of the two places: `a`, then `c`, then the echo take the other.
    let all = answers_to(&mut server, &[1, 3, 5]);
    let position = |pred: &dyn Fn(&Value) -> bool| all.iter().position(pred);
    let a_answered = position(&|m| is_answer(m, 1)).unwrap();
    let c_entered = position(&|m| m["params"]["data"]["gate"] == "c").expect("c ran");
    assert!(c_entered > a_answered, "c started only once a finished");
    assert!(
        position(&|m| m["params"]["data"]["gate"] == "d").is_none(),
        "the cancelled waiting call never started"
    );
    server.open_gate("b");
    answers_to(&mut server, &[2]);
    let finished = server.finish();
    assert!(!finished.transcript.contains(r#"← {"id":4,"#));
    assert_transcript!("seam", "bounded_running_calls", finished.transcript);
}

#[test]
fn a_host_that_panics_before_its_first_await_answers_internal_error() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    let panicked = server.ask(tool_call(
        1,
        "panic",
        json!({"early": true, "message": "built badly"}),
        Value::Null,
    ));
    assert_error_for(&panicked, -32603, 1, "built badly");
    let next = server.ask(tool_call(
        2,
        "echo",
        json!({"text": "still here"}),
        Value::Null,
    ));
    assert_eq!(next["result"]["structuredContent"]["text"], "still here");
    let finished = server.finish();
    assert_eq!(finished.status.code(), Some(0));
    assert_transcript!("seam", "early_panic", finished.transcript);
}

/// A host that panics in `admitted`, while keeping a clone of the call's context, answers -32603,
/// and the clone keeps nothing alive: end of input still ends the server cleanly.
#[test]
fn a_host_that_panics_admitting_a_call_answers_internal_error() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    let panicked = server.ask(tool_call(
        1,
        "panic",
        json!({"admitting": true, "message": "admitted badly"}),
        Value::Null,
    ));
    assert_error_for(&panicked, -32603, 1, "admitted badly");
    let next = server.ask(tool_call(
        2,
        "echo",
        json!({"text": "still here"}),
        Value::Null,
    ));
    assert_eq!(next["result"]["structuredContent"]["text"], "still here");
    let finished = server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

/// At the bound on waiting calls, input is still read, so a cancellation gets through.
#[test]
fn at_the_waiting_bound_a_cancellation_still_gets_through() {
    let mut server =
        McpProcess::test_host(&["--max-running-calls", "1", "--max-waiting-calls", "1"]);
    server.initialize_legacy();
    server.send(&tool_call(1, "gate", json!({"gate": "a"}), Value::Null));
    entered(&mut server, "a");
    // `b` waits: the waiting bound is reached.
    server.send(&tool_call(2, "gate", json!({"gate": "b"}), Value::Null));
    server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "make room"}),
    ));
    // The cancellation was read: `a` ends, so `b` starts.
    entered(&mut server, "b");
    server.open_gate("b");
    let answer = server.response(&json!(2));
    assert_eq!(answer["result"]["structuredContent"]["released"], true);
    let finished = server.finish();
    assert!(!finished.transcript.contains(r#"← {"id":1,"#));
}

/// A context clone that outlives its call (its gate is never opened) must not keep the server
/// from ending at end of input.
#[test]
fn a_context_that_outlives_its_call_does_not_keep_the_server_alive() {
    let mut server = McpProcess::test_host(&[]);
    server.initialize_legacy();
    let kept = server.ask(tool_call(
        1,
        "keep_context",
        json!({"gate": "never"}),
        Value::Null,
    ));
    assert_eq!(kept["result"]["structuredContent"]["kept"], true);
    let finished = server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.stderr);
}

#[test]
fn the_host_sees_the_clients_family_and_name() {
    let mut legacy = McpProcess::test_host(&[]);
    legacy.initialize_legacy();
    let answer = legacy.ask(tool_call(1, "client", json!({}), Value::Null));
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"family": "legacy", "clientInfo": {"name": "transcript-suite", "version": "1.0"}})
    );
    legacy.finish_clean();

    let mut modern_server = McpProcess::test_host(&[]);
    let named = modern_server.ask(modern(1, "tools/call", call("client", json!({}))));
    assert_eq!(
        named["result"]["structuredContent"],
        json!({"family": "modern", "clientInfo": {"name": "transcript-suite", "version": "1.0"}})
    );
    let mut anonymous = request(2, "tools/call", call("client", json!({})));
    anonymous["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let anonymous = modern_server.ask(anonymous);
    assert_eq!(
        anonymous["result"]["structuredContent"],
        json!({"family": "modern", "clientInfo": null})
    );
    assert_transcript!("seam", "client_identity", modern_server.finish_clean());
}
