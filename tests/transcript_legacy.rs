//! Transcripts of the legacy (2025-11-25) lifecycle against the shipped binary: `initialize`,
//! `notifications/initialized`, the methods a ready session serves, and the family lock.
//!
//! Every exchange is read back with `recv`, so each transcript also pins that notifications got
//! no answer and nothing else was written in between.

mod support;

use serde_json::{Value, json};
use support::*;

const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Asserts that `response` succeeds for `id` and returns its result.
#[track_caller]
fn assert_ok(response: &Value, id: impl Into<Value>) -> Value {
    let id = id.into();
    assert_eq!(response.get("id"), Some(&id), "{response}");
    assert!(response.get("error").is_none(), "{response}");
    response.get("result").cloned().expect("a result")
}

/// Sends a request and returns the very next message, which must answer it.
fn exchange(server: &mut McpProcess, message: Value) -> Value {
    server.send(&message);
    let response = server.recv();
    assert_eq!(response.get("id"), message.get("id"), "{response}");
    response
}

/// Well-formed `initialize` params proposing `version`.
fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "transcript-suite", "version": "1.0"}
    })
}

/// A server with a completed legacy handshake (`initialize` took id 0).
fn ready() -> McpProcess {
    let mut server = McpProcess::server(&[]);
    let response = server.initialize_legacy();
    assert_initialize_result(&assert_ok(&response, 0));
    server
}

#[track_caller]
fn assert_initialize_result(result: &Value) {
    assert_eq!(result["protocolVersion"], "2025-11-25", "{result}");
    assert_eq!(
        result["capabilities"],
        json!({"logging": {}, "tools": {"listChanged": false}})
    );
    assert_eq!(
        result["serverInfo"],
        json!({"name": "lean-beam-mcp", "version": "0.1.0"})
    );
    assert!(result.get("resultType").is_none(), "{result}");
    assert!(result.get("_meta").is_none(), "{result}");
}

#[test]
fn initialize_answers_2025_11_25_even_when_the_client_proposes_2025_06_18() {
    let mut server = McpProcess::server(&[]);
    let response = exchange(
        &mut server,
        request(1, "initialize", initialize_params("2025-06-18")),
    );
    let result = assert_ok(&response, 1);
    assert_initialize_result(&result);
    assert!(result["instructions"].is_string(), "{result}");
    server.send(&notification("notifications/initialized", Value::Null));
    let tools = assert_ok(
        &exchange(&mut server, request(2, "tools/list", Value::Null)),
        2,
    );
    assert_eq!(tools["tools"][0]["name"], "beam_version");
    assert_transcript!("legacy", "initialize_2025_06_18", server.finish_clean());
}

#[test]
fn malformed_initialize_is_invalid_params_and_changes_no_state() {
    let mut server = McpProcess::server(&[]);
    let good = initialize_params("2025-11-25");
    let mut extra = good.clone();
    extra["unexpected"] = json!(true);
    let mut capabilities = good.clone();
    capabilities["capabilities"] = json!([]);
    let mut client_info = good.clone();
    client_info["clientInfo"] = json!({"name": "transcript-suite"});
    let mut version = good.clone();
    version["protocolVersion"] = json!(20251125);
    let mut no_client_info = good.clone();
    no_client_info.as_object_mut().unwrap().remove("clientInfo");
    let cases = [
        (Value::Null, "protocolVersion"),
        (json!([]), "must be an object"),
        (capabilities, "capabilities object"),
        (client_info, "clientInfo with string name and version"),
        (no_client_info, "clientInfo"),
        (extra, "undeclared: unexpected"),
        (version, "protocolVersion string"),
    ];
    for (id, (params, words)) in (1..).zip(cases) {
        let response = exchange(&mut server, request(id, "initialize", params));
        assert_error_for(&response, INVALID_PARAMS, id, words);
    }
    // Still fresh: not awaiting notifications/initialized, not locked to the legacy family.
    let response = exchange(&mut server, request(20, "tools/list", Value::Null));
    assert_error_for(
        &response,
        INVALID_REQUEST,
        20,
        "initialize must be the first MCP operation",
    );
    let response = exchange(&mut server, request(21, "initialize", good));
    assert_initialize_result(&assert_ok(&response, 21));
    assert_transcript!("legacy", "malformed_initialize", server.finish_clean());
}

#[test]
fn requests_before_initialize() {
    let mut server = McpProcess::server(&[]);
    let response = exchange(&mut server, request(1, "tools/list", Value::Null));
    assert_error_for(&response, INVALID_REQUEST, 1, "initialize");
    let response = exchange(
        &mut server,
        request(2, "tools/call", call("beam_version", json!({}))),
    );
    assert_error_for(&response, INVALID_REQUEST, 2, "initialize");
    let response = exchange(&mut server, request(3, "resources/list", Value::Null));
    assert_error_for(
        &response,
        INVALID_REQUEST,
        3,
        "initialize must be the first MCP operation",
    );
    let response = exchange(
        &mut server,
        request(4, "logging/setLevel", json!({"level": "info"})),
    );
    assert_error_for(
        &response,
        INVALID_REQUEST,
        4,
        "initialize must be the first MCP operation",
    );
    // Deliberate: MCP allows ping before initialize.
    let response = exchange(&mut server, request(5, "ping", Value::Null));
    assert_eq!(assert_ok(&response, 5), json!({}));
    // notifications/initialized before initialize is ignored: still fresh afterwards.
    server.send(&notification("notifications/initialized", Value::Null));
    let response = exchange(&mut server, request(6, "tools/list", Value::Null));
    assert_error_for(
        &response,
        INVALID_REQUEST,
        6,
        "initialize must be the first MCP operation",
    );
    assert_transcript!("legacy", "before_initialize", server.finish_clean());
}

#[test]
fn tools_wait_for_notifications_initialized() {
    let mut server = McpProcess::server(&[]);
    let response = exchange(
        &mut server,
        request(1, "initialize", initialize_params("2025-11-25")),
    );
    assert_initialize_result(&assert_ok(&response, 1));
    let response = exchange(&mut server, request(2, "tools/list", Value::Null));
    assert_error_for(&response, INVALID_REQUEST, 2, "notifications/initialized");
    let response = exchange(
        &mut server,
        request(3, "tools/call", call("beam_version", json!({}))),
    );
    assert_error_for(&response, INVALID_REQUEST, 3, "notifications/initialized");
    let response = exchange(&mut server, request(4, "ping", Value::Null));
    assert_eq!(assert_ok(&response, 4), json!({}));
    let response = exchange(
        &mut server,
        request(5, "initialize", initialize_params("2025-11-25")),
    );
    assert_error_for(&response, INVALID_REQUEST, 5, "already completed");
    // A malformed notifications/initialized is ignored (no answer, no state change).
    server.send(&notification("notifications/initialized", json!([])));
    let response = exchange(&mut server, request(6, "tools/list", Value::Null));
    assert_error_for(&response, INVALID_REQUEST, 6, "notifications/initialized");
    // The valid one completes initialization.
    server.send(&notification("notifications/initialized", json!({})));
    let tools = assert_ok(
        &exchange(&mut server, request(7, "tools/list", Value::Null)),
        7,
    );
    assert_eq!(tools["tools"][0]["name"], "beam_version");
    assert_transcript!("legacy", "awaiting_initialized", server.finish_clean());
}

#[test]
fn second_initialize_is_rejected_once_ready() {
    let mut server = ready();
    let response = exchange(
        &mut server,
        request(1, "initialize", initialize_params("2025-11-25")),
    );
    assert_error_for(&response, INVALID_REQUEST, 1, "already completed");
    // The session is unchanged: still ready.
    let response = exchange(&mut server, request(2, "ping", Value::Null));
    assert_eq!(assert_ok(&response, 2), json!({}));
    let tools = assert_ok(
        &exchange(&mut server, request(3, "tools/list", Value::Null)),
        3,
    );
    assert_eq!(tools["tools"][0]["name"], "beam_version");
    assert_transcript!("legacy", "second_initialize", server.finish_clean());
}

#[test]
fn ping_params_are_closed() {
    let mut server = ready();
    let response = exchange(&mut server, request(1, "ping", Value::Null));
    assert_eq!(assert_ok(&response, 1), json!({}));
    let response = exchange(&mut server, request(2, "ping", json!({})));
    assert_eq!(assert_ok(&response, 2), json!({}));
    let response = exchange(&mut server, request(3, "ping", json!([])));
    assert_error_for(&response, INVALID_PARAMS, 3, "must be an object");
    let response = exchange(&mut server, request(4, "ping", json!({"unexpected": 1})));
    assert_error_for(&response, INVALID_PARAMS, 4, "undeclared: unexpected");
    let response = exchange(&mut server, request(5, "ping", json!({"_meta": {}})));
    assert_eq!(assert_ok(&response, 5), json!({}));
    assert_transcript!("legacy", "ping", server.finish_clean());
}

#[test]
fn logging_set_level() {
    let mut server = ready();
    for (id, level) in (1..).zip(["info", "emergency", "debug"]) {
        let response = exchange(
            &mut server,
            request(id, "logging/setLevel", json!({"level": level})),
        );
        assert_eq!(assert_ok(&response, id), json!({}));
    }
    let response = exchange(
        &mut server,
        request(4, "logging/setLevel", json!({"level": "loud"})),
    );
    assert_error_for(&response, INVALID_PARAMS, 4, "level must be one of");
    let response = exchange(
        &mut server,
        request(5, "logging/setLevel", json!({"level": "INFO"})),
    );
    assert_error_for(&response, INVALID_PARAMS, 5, "level must be one of");
    let response = exchange(&mut server, request(6, "logging/setLevel", json!({})));
    assert_error_for(&response, INVALID_PARAMS, 6, "level must be one of");
    let response = exchange(&mut server, request(7, "logging/setLevel", Value::Null));
    assert_error_for(&response, INVALID_PARAMS, 7, "level must be one of");
    let response = exchange(
        &mut server,
        request(8, "logging/setLevel", json!({"level": "info", "extra": 1})),
    );
    assert_error_for(&response, INVALID_PARAMS, 8, "undeclared: extra");
    assert_transcript!("legacy", "logging_set_level", server.finish_clean());
}

#[test]
fn tools_list_is_the_plain_legacy_listing() {
    let mut server = ready();
    let response = exchange(&mut server, request(1, "tools/list", Value::Null));
    let result = assert_ok(&response, 1);
    let names: Vec<&str> = result["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    // The catalog itself is pinned by tests/lean_host/catalog.rs.
    assert_eq!(names.first(), Some(&"beam_version"), "{names:?}");
    assert!(names.contains(&"lean_sync"), "{names:?}");
    let keys: Vec<&String> = result.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["tools"], "no ttlMs, cacheScope, resultType or _meta");
    let response = exchange(&mut server, request(2, "tools/list", json!({"_meta": {}})));
    assert_eq!(assert_ok(&response, 2), result);
    let response = exchange(
        &mut server,
        request(3, "tools/list", json!({"cursor": "x"})),
    );
    assert_error_for(&response, INVALID_PARAMS, 3, "does not paginate");
    let response = exchange(&mut server, request(4, "tools/list", json!({"_meta": []})));
    assert_error_for(&response, INVALID_PARAMS, 4, "_meta must be an object");
    let response = exchange(
        &mut server,
        request(5, "tools/list", json!({"unexpected": 1})),
    );
    assert_error_for(&response, INVALID_PARAMS, 5, "undeclared: unexpected");
    assert_transcript!("legacy", "tools_list", server.finish_clean());
}

#[test]
fn tools_call_beam_version_has_the_legacy_result_envelope() {
    let mut server = ready();
    let response = exchange(
        &mut server,
        request(1, "tools/call", call("beam_version", json!({}))),
    );
    let result = assert_ok(&response, 1);
    assert_eq!(result["isError"], false);
    assert!(result.get("resultType").is_none(), "{result}");
    assert!(result.get("_meta").is_none(), "{result}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["name"], "lean-beam-mcp");
    assert_eq!(structured["version"], "0.1.0");
    let content = result["content"].as_array().expect("content array");
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    let text: Value =
        serde_json::from_str(content[0]["text"].as_str().expect("text")).expect("JSON text");
    assert_eq!(&text, structured, "content[0].text is structuredContent");
    assert_transcript!("legacy", "tools_call_beam_version", server.finish_clean());
}

#[test]
fn unknown_methods_after_ready_are_method_not_found() {
    let mut server = ready();
    let response = exchange(&mut server, request(1, "resources/list", Value::Null));
    assert_error_for(&response, METHOD_NOT_FOUND, 1, "resources/list");
    let response = exchange(&mut server, request(2, "lean/unknown", json!({})));
    assert_error_for(&response, METHOD_NOT_FOUND, 2, "2025-11-25");
    assert_transcript!("legacy", "unknown_method", server.finish_clean());
}

#[test]
fn modern_requests_on_a_legacy_transport_are_invalid_requests() {
    let mut server = ready();
    let response = exchange(&mut server, modern(1, "tools/list", json!({})));
    assert_error_for(&response, INVALID_REQUEST, 1, "legacy protocol family");
    let response = exchange(&mut server, modern(2, "server/discover", json!({})));
    assert_error_for(&response, INVALID_REQUEST, 2, "legacy protocol family");
    let response = exchange(
        &mut server,
        modern(3, "tools/call", call("beam_version", json!({}))),
    );
    assert_error_for(&response, INVALID_REQUEST, 3, "legacy protocol family");
    // The legacy session is unaffected.
    let tools = assert_ok(
        &exchange(&mut server, request(4, "tools/list", Value::Null)),
        4,
    );
    assert_eq!(tools["tools"][0]["name"], "beam_version");
    assert_transcript!("legacy", "modern_on_legacy", server.finish_clean());
}

#[test]
fn end_of_input_after_the_handshake_exits_zero_with_empty_stderr() {
    let server = ready();
    let transcript = server.finish_clean();
    assert!(transcript.ends_with("# end of input\n"), "{transcript}");
    assert_transcript!("legacy", "eof", transcript);
}
