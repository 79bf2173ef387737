//! Routing between many HTTP requests and one server: concurrent requests forwarded at once,
//! duplicate client ids kept apart and ids returned with their JSON type, cancellations mapped
//! to the bridge's id (and dropped when ambiguous), and progress, logs and status notices
//! streamed over SSE to the request they belong to.

use lean_beam_mcp_bridge::Mode;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::{call, modern, notification, request};
use crate::{Events, Rig, assert_rejected, assert_result, modern_with, send, tools_list};

// ---------------------------------------------------------------------------------------------
// 8. Concurrency and id mapping

#[tokio::test(flavor = "multi_thread")]
async fn overlapping_requests_with_the_same_id_are_both_answered() {
    let rig = Rig::test_host(Mode::Modern).await;
    // A: a gated call that streams its logs, so we see it has started at the server.
    let gated = modern_with(
        7,
        "tools/call",
        call("gate", json!({"gate": "g"})),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let mut a = Events::open(rig.modern(&gated)).await;
    let entered = a.next_message().await;
    assert_eq!(entered["method"], "notifications/message", "{entered}");
    assert_eq!(
        entered["params"]["data"],
        json!({"gate": "g", "state": "entered"})
    );

    // B: a quick call with the same id, answered while A still waits at its gate.
    let quick = modern(7, "tools/call", call("echo", json!({"text": "quick"})));
    let b = send(rig.modern(&quick)).await;
    let result = assert_result(&b, 7);
    assert_eq!(result["structuredContent"]["text"], "quick");
    assert_eq!(rig.bridge.in_flight(), 1);

    rig.open_gate("g");
    let answer = a.next_message().await;
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["released"], true,
        "{answer}"
    );
    assert!(
        a.next().await.is_none(),
        "the stream ends after the response"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_requests_are_forwarded_at_once() {
    // Ten gated calls, all held at the server at the same time: a bridge that forwarded one
    // request at a time could never have all ten in flight.
    let rig = Rig::test_host(Mode::Modern).await;
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let message = modern(
                1,
                "tools/call",
                call("gate", json!({"gate": format!("g{i}")})),
            );
            tokio::spawn(send(rig.modern(&message)))
        })
        .collect();
    rig.bridge.wait_for_in_flight(10).await;
    for i in 0..10 {
        rig.open_gate(&format!("g{i}"));
    }
    for (i, reply) in calls.into_iter().enumerate() {
        let reply = reply.await.expect("the call");
        let result = assert_result(&reply, 1);
        assert_eq!(result["structuredContent"]["gate"], format!("g{i}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn response_ids_keep_their_json_type() {
    let rig = Rig::server(Mode::Modern).await;
    let ids = [
        json!(7),
        json!("7"),
        json!(-3),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("bridge-1"),
        json!(10.0),
    ];
    let calls: Vec<_> = ids
        .iter()
        .map(|id| tokio::spawn(send(rig.modern(&tools_list(id.clone())))))
        .collect();
    for (id, reply) in ids.iter().zip(calls) {
        let reply = reply.await.expect("the call");
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        // Exactly as sent: the raw text, not just an equal number.
        let expected = format!("\"id\":{id}");
        assert!(
            reply.text.contains(&expected),
            "{expected} in {}",
            reply.text
        );
        if *id != json!("bridge-1") {
            assert!(!reply.text.contains("bridge-"), "{}", reply.text);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 9. Cancellation

#[tokio::test(flavor = "multi_thread")]
async fn a_cancellation_reaches_the_server_under_the_bridge_id() {
    let rig = Rig::test_host(Mode::Modern).await;
    // A streamed call, cancelled: its stream ends with no response.
    let gated = modern_with(
        5,
        "tools/call",
        call("gate", json!({"gate": "never"})),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let mut stream = Events::open(rig.modern(&gated)).await;
    assert_eq!(
        stream.next_message().await["method"],
        "notifications/message"
    );
    let cancel = notification(
        "notifications/cancelled",
        json!({"requestId": 5, "reason": "test"}),
    );
    assert_eq!(
        send(rig.post().body(cancel.to_string())).await.status,
        StatusCode::ACCEPTED
    );
    assert!(
        stream.next().await.is_none(),
        "no response after cancellation"
    );

    // A JSON call, cancelled once the bridge has forwarded it: 204, no body.
    let plain = modern(9, "tools/call", call("gate", json!({"gate": "never"})));
    let waiting = tokio::spawn(send(rig.modern(&plain)));
    rig.bridge.wait_for_in_flight(1).await;
    let cancel = notification("notifications/cancelled", json!({"requestId": 9}));
    assert_eq!(
        send(rig.post().body(cancel.to_string())).await.status,
        StatusCode::ACCEPTED
    );
    let reply = waiting.await.expect("the call");
    assert_eq!(reply.status, StatusCode::NO_CONTENT, "{reply:?}");
    assert_eq!(reply.text, "");

    // The server really cancelled both: a fence starts only once every earlier call has ended,
    // and the gate they wait on never opens.
    let fence = modern(5, "tools/call", call("fence", json!({"label": "after"})));
    let result = assert_result(&send(rig.modern(&fence)).await, 5);
    assert_eq!(result["structuredContent"]["running_at_start"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ambiguous_or_unknown_cancellation_is_not_forwarded() {
    let rig = Rig::test_host(Mode::Modern).await;
    let first = modern(4, "tools/call", call("gate", json!({"gate": "one"})));
    let second = modern(4, "tools/call", call("gate", json!({"gate": "two"})));
    let first = tokio::spawn(send(rig.modern(&first)));
    let second = tokio::spawn(send(rig.modern(&second)));
    rig.bridge.wait_for_in_flight(2).await;
    for target in [json!(4), json!("4"), json!(12)] {
        let cancel = notification("notifications/cancelled", json!({"requestId": target}));
        assert_eq!(
            send(rig.post().body(cancel.to_string())).await.status,
            StatusCode::ACCEPTED
        );
    }
    assert_eq!(rig.bridge.in_flight(), 2);
    rig.open_gate("one");
    rig.open_gate("two");
    for (reply, gate) in [(first, "one"), (second, "two")] {
        let reply = reply.await.expect("the call");
        let result = assert_result(&reply, 4);
        assert_eq!(result["structuredContent"]["gate"], gate);
    }
}

// ---------------------------------------------------------------------------------------------
// 10. SSE: progress and logs for the request they belong to

#[tokio::test(flavor = "multi_thread")]
async fn progress_streams_before_the_response() {
    let rig = Rig::test_host(Mode::Modern).await;
    for (id, token) in [(json!(1), json!("tok")), (json!("two"), json!(99))] {
        let message = modern_with(
            id.clone(),
            "tools/call",
            call("progress", json!({"steps": 3})),
            json!({"progressToken": token}),
        );
        let mut events = Events::open(rig.modern(&message)).await;
        for step in 1..=3 {
            let progress = events.next_message().await;
            assert_eq!(progress["method"], "notifications/progress", "{progress}");
            assert_eq!(progress["params"]["progressToken"], token, "{progress}");
            assert_eq!(progress["params"]["progress"], step, "{progress}");
            assert_eq!(progress["params"]["message"], format!("step {step} of 3"));
        }
        let response = events.next_message().await;
        assert_eq!(response["id"], id, "{response}");
        assert_eq!(
            response["result"]["structuredContent"]["sent"], 3,
            "{response}"
        );
        assert!(
            events.next().await.is_none(),
            "the stream closes after the response"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_progress_streams_too() {
    let rig = Rig::test_host(Mode::Legacy).await;
    rig.initialize().await;
    let mut params = call("progress", json!({"steps": 2}));
    params["_meta"] = json!({"progressToken": 5});
    let mut events = Events::open(rig.legacy(&request(3, "tools/call", params))).await;
    for step in 1..=2 {
        let progress = events.next_message().await;
        assert_eq!(progress["params"]["progressToken"], 5, "{progress}");
        assert_eq!(progress["params"]["progress"], step, "{progress}");
    }
    assert_eq!(events.next_message().await["id"], 3);
    assert!(events.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_that_get_no_notification_are_plain_json() {
    let rig = Rig::test_host(Mode::Modern).await;
    // No token: the server sends no progress, the answer is JSON.
    let plain = modern(1, "tools/call", call("progress", json!({"steps": 3})));
    let result = assert_result(&send(rig.modern(&plain)).await, 1);
    assert_eq!(result["structuredContent"]["sent"], 0);
    // A token, but the response comes first: still JSON, so error statuses hold.
    let none = modern_with(
        2,
        "tools/call",
        call("progress", json!({"steps": 0})),
        json!({"progressToken": "t"}),
    );
    assert_result(&send(rig.modern(&none)).await, 2);
    let bad = modern_with(
        3,
        "tools/call",
        call("nope", json!({})),
        json!({"progressToken": "t"}),
    );
    assert_rejected(
        &send(rig.modern(&bad)).await,
        StatusCode::BAD_REQUEST,
        -32602,
        3,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_go_to_the_only_request_in_flight() {
    let rig = Rig::test_host(Mode::Modern).await;
    let log = modern_with(
        1,
        "tools/call",
        call(
            "log",
            json!({"level": "warning", "logger": "test.log", "data": {"n": 1}}),
        ),
        json!({"io.modelcontextprotocol/logLevel": "info"}),
    );
    let mut events = Events::open(rig.modern(&log)).await;
    let message = events.next_message().await;
    assert_eq!(
        message,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "logger": "test.log", "data": {"n": 1}}
        })
    );
    assert_eq!(events.next_message().await["id"], 1);
    assert!(events.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_log_no_single_request_owns_is_dropped() {
    let rig = Rig::test_host(Mode::Modern).await;
    let gated = modern_with(
        1,
        "tools/call",
        call("gate", json!({"gate": "a"})),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let mut a = Events::open(rig.modern(&gated)).await;
    assert_eq!(a.next_message().await["params"]["data"]["state"], "entered");
    // Two requests in flight: B's log could belong to either, so nobody gets it, and B's
    // answer (which then comes first) is plain JSON.
    let log = modern_with(
        2,
        "tools/call",
        call(
            "log",
            json!({"level": "error", "logger": "test.log", "data": "b"}),
        ),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let b = send(rig.modern(&log)).await;
    let result = assert_result(&b, 2);
    assert_eq!(
        result["structuredContent"]["sent"], true,
        "the server did send it"
    );
    rig.open_gate("a");
    let answer = a.next_message().await;
    assert_eq!(answer["id"], 1, "A's stream got no stray log: {answer}");
    assert!(a.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_status_notice_names_the_clients_request_id() {
    let rig = Rig::test_host(Mode::Modern).await;
    // Another request in flight, so only the notice's requestId can route it.
    let other = modern(9, "tools/call", call("gate", json!({"gate": "other"})));
    let other = tokio::spawn(send(rig.modern(&other)));
    rig.bridge.wait_for_in_flight(1).await;
    let gated = modern_with(
        "s-1",
        "tools/call",
        call(
            "gate",
            json!({"gate": "s", "notice_now": true, "path": "A.lean"}),
        ),
        json!({"io.modelcontextprotocol/logLevel": "notice"}),
    );
    let mut events = Events::open(rig.modern(&gated)).await;
    let notice = events.next_message().await;
    assert_eq!(notice["params"]["logger"], "beam.status", "{notice}");
    assert_eq!(notice["params"]["data"]["requestId"], "s-1", "{notice}");
    assert_eq!(notice["params"]["data"]["tool"], "gate", "{notice}");
    rig.open_gate("s");
    let answer = events.next_message().await;
    assert_eq!(answer["id"], "s-1");
    assert_eq!(answer["result"]["structuredContent"]["notice_sent"], true);
    assert!(events.next().await.is_none());
    rig.open_gate("other");
    assert_result(&other.await.expect("the call"), 9);
}
