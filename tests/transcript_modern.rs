//! Transcripts of the modern (2026-07-28) family against the shipped binary.

mod support;

use serde_json::{Value, json};
use support::*;

const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

fn server_info() -> Value {
    json!({"name": "lean-beam-mcp", "version": env!("CARGO_PKG_VERSION")})
}

/// A request whose `params` is exactly `{_meta: meta}` plus `rest`.
fn with_meta(id: impl Into<Value>, method: &str, meta: Value, rest: Value) -> Value {
    let mut params = if rest.is_null() { json!({}) } else { rest };
    params["_meta"] = meta;
    request(id, method, params)
}

/// Asserts the modern success envelope: `resultType` and `_meta` serverInfo.
fn assert_modern_result(response: &Value) -> &Value {
    let result = &response["result"];
    assert!(response.get("error").is_none(), "{response}");
    assert_eq!(result["resultType"], "complete", "{response}");
    assert_eq!(
        result["_meta"][SERVER_INFO_KEY],
        server_info(),
        "{response}"
    );
    result
}

/// Asserts the public one-hour cache hints.
fn assert_public_cacheable(result: &Value) {
    assert_eq!(result["ttlMs"], 3_600_000, "{result}");
    assert_eq!(result["cacheScope"], "public", "{result}");
}

#[test]
fn discover_then_tools_list_then_beam_version() {
    let mut server = McpProcess::server(&[]);
    let discover = server.ask(modern(1, "server/discover", json!({})));
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["ttlMs"], 3_600_000);
    server.ask(modern(2, "tools/list", json!({})));
    server.ask(modern(3, "tools/call", call("beam_version", json!({}))));
    let finished = server.finish();
    assert!(finished.status.success());
    assert_eq!(finished.stderr, "");
    assert_transcript!("modern", "discover_list_call", finished.transcript);
}

#[test]
fn discover_result_is_complete_and_public_cacheable() {
    let mut server = McpProcess::server(&[]);
    let response = server.ask(modern(1, "server/discover", Value::Null));
    let result = assert_modern_result(&response);
    assert_public_cacheable(result);
    assert_eq!(
        result,
        &json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"logging": {}, "tools": {"listChanged": false}},
            "instructions": lean_beam_mcp::lean::INSTRUCTIONS,
            "ttlMs": 3_600_000,
            "cacheScope": "public",
            "resultType": "complete",
            "_meta": {SERVER_INFO_KEY: server_info()}
        })
    );
    assert!(
        result.get("serverInfo").is_none(),
        "serverInfo lives in _meta"
    );
    let transcript = server.finish_clean();
    assert_transcript!("modern", "discover_result", transcript);
}

#[test]
fn discover_rejects_malformed_metadata_and_params() {
    let mut server = McpProcess::server(&[]);
    let caps = json!({});
    let info = json!({"name": "c", "version": "1"});
    let cases: Vec<(Value, &str)> = vec![
        // No params at all, and params without _meta.
        (request(1, "server/discover", Value::Null), VERSION_KEY),
        (request(2, "server/discover", json!({})), VERSION_KEY),
        (
            with_meta(
                3,
                "server/discover",
                json!({CAPABILITIES_KEY: caps, CLIENT_INFO_KEY: info}),
                Value::Null,
            ),
            VERSION_KEY,
        ),
        (
            with_meta(
                4,
                "server/discover",
                json!({VERSION_KEY: "2026-07-28", CLIENT_INFO_KEY: info}),
                Value::Null,
            ),
            CAPABILITIES_KEY,
        ),
        (
            with_meta(
                5,
                "server/discover",
                json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: []}),
                Value::Null,
            ),
            CAPABILITIES_KEY,
        ),
        (
            with_meta(
                6,
                "server/discover",
                json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: "none"}),
                Value::Null,
            ),
            CAPABILITIES_KEY,
        ),
        (
            with_meta(
                7,
                "server/discover",
                json!({VERSION_KEY: 20260728, CAPABILITIES_KEY: {}}),
                Value::Null,
            ),
            VERSION_KEY,
        ),
        (
            with_meta(
                8,
                "server/discover",
                json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: {}, CLIENT_INFO_KEY: {"name": "c"}}),
                Value::Null,
            ),
            CLIENT_INFO_KEY,
        ),
        (
            with_meta(
                9,
                "server/discover",
                json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"}),
                Value::Null,
            ),
            LOG_LEVEL_KEY,
        ),
        (
            modern(10, "server/discover", json!({"cursor": "x"})),
            "undeclared: cursor",
        ),
    ];
    for (message, mentions) in cases {
        let response = server.ask(message);
        assert_error(&response, -32602, mentions);
    }
    let transcript = server.finish_clean();
    assert_transcript!("modern", "discover_malformed", transcript);
}

#[test]
fn unsupported_version_is_32022_with_supported_and_requested() {
    let mut server = McpProcess::server(&[]);
    let meta = json!({VERSION_KEY: "1900-01-01", CAPABILITIES_KEY: {}});
    for (id, method) in [(1, "server/discover"), (2, "tools/list")] {
        let response = server.ask(with_meta(id, method, meta.clone(), Value::Null));
        assert_error(&response, -32022, "Unsupported protocol version");
        assert_eq!(
            response["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": "1900-01-01"})
        );
    }
    let transcript = server.finish_clean();
    assert_transcript!("modern", "unsupported_version", transcript);
}

#[test]
fn discover_does_not_select_a_family() {
    let mut server = McpProcess::server(&[]);
    assert_modern_result(&server.ask(modern(1, "server/discover", Value::Null)));
    // Still unselected: a bare request is legacy input before initialize.
    let early = server.ask(request(2, "tools/list", Value::Null));
    assert_error(&early, -32600, "initialize");
    let initialize = server.initialize_legacy();
    assert_eq!(initialize["result"]["protocolVersion"], "2025-11-25");
    assert!(initialize["result"].get("resultType").is_none());
    let version = server.ask(request(3, "tools/call", call("beam_version", json!({}))));
    assert_eq!(version["result"]["isError"], false, "{version}");
    assert_eq!(
        version["result"]["structuredContent"]["name"],
        "lean-beam-mcp"
    );
    assert!(version["result"].get("resultType").is_none());
    assert!(version["result"].get("_meta").is_none());
    // Now the transport is legacy: modern traffic conflicts, discovery included.
    let modern_list = server.ask(modern(4, "tools/list", Value::Null));
    assert_error(&modern_list, -32600, "legacy protocol family");
    let transcript = server.finish_clean();
    assert_transcript!("modern", "discover_then_legacy", transcript);
}

#[test]
fn bare_request_after_modern_tools_list_is_invalid_params() {
    let mut server = McpProcess::server(&[]);
    let list = server.ask(modern(1, "tools/list", Value::Null));
    let result = assert_modern_result(&list);
    assert_public_cacheable(result);
    let tools = result["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t["name"] == "beam_version"));
    for (id, params) in [(2, Value::Null), (3, json!({})), (4, json!({"_meta": {}}))] {
        let bare = server.ask(request(id, "tools/list", params));
        assert_error(&bare, -32602, "protocolVersion");
    }
    let transcript = server.finish_clean();
    assert_transcript!("modern", "bare_after_modern", transcript);
}

#[test]
fn legacy_initialize_after_modern_selection_is_invalid_request() {
    let mut server = McpProcess::server(&[]);
    assert_modern_result(&server.ask(modern(1, "tools/call", call("beam_version", json!({})))));
    let initialize = server.ask(request(
        2,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "transcript-suite", "version": "1.0"}
        }),
    ));
    assert_error(&initialize, -32600, "modern protocol family");
    // The transport stays modern.
    assert_modern_result(&server.ask(modern(3, "server/discover", Value::Null)));
    let transcript = server.finish_clean();
    assert_transcript!("modern", "legacy_initialize_after_modern", transcript);
}

#[test]
fn removed_and_unknown_methods_are_method_not_found() {
    let mut server = McpProcess::server(&[]);
    let methods = [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tools/frobnicate",
    ];
    for (id, method) in (1..).zip(methods) {
        let response = server.ask(modern(id, method, Value::Null));
        assert_error(&response, -32601, method);
    }
    // With parameters the removed methods used to take, still -32601.
    let set_level = server.ask(modern(7, "logging/setLevel", json!({"level": "debug"})));
    assert_error(&set_level, -32601, "logging/setLevel");
    let subscribe = server.ask(modern(
        8,
        "resources/subscribe",
        json!({"uri": "file:///x"}),
    ));
    assert_error(&subscribe, -32601, "resources/subscribe");
    let transcript = server.finish_clean();
    assert_transcript!("modern", "method_not_found", transcript);
}

#[test]
fn log_level_only_metadata_is_modern_and_invalid() {
    let mut server = McpProcess::server(&[]);
    let meta = json!({LOG_LEVEL_KEY: "info"});
    let cases = [
        with_meta(1, "tools/list", meta.clone(), Value::Null),
        with_meta(
            2,
            "tools/call",
            meta.clone(),
            call("beam_version", json!({})),
        ),
        with_meta(3, "ping", meta.clone(), Value::Null),
        with_meta(
            4,
            "initialize",
            meta,
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"}
            }),
        ),
    ];
    for message in cases {
        // Legacy input before initialize would be -32600 (or succeed, for initialize and ping).
        let response = server.ask(message);
        assert_error(&response, -32602, VERSION_KEY);
    }
    // None of that selected a family: a legacy session can still start.
    let initialize = server.initialize_legacy();
    assert_eq!(initialize["result"]["protocolVersion"], "2025-11-25");
    let transcript = server.finish_clean();
    assert_transcript!("modern", "log_level_only", transcript);
}

#[test]
fn request_metadata_is_not_retained() {
    let mut server = McpProcess::server(&[]);
    let mut params = call("beam_version", json!({}));
    params["_meta"] = json!({LOG_LEVEL_KEY: "debug"});
    let first = server.ask(modern(1, "tools/call", params));
    assert_modern_result(&first);
    let no_meta = server.ask(request(2, "tools/call", call("beam_version", json!({}))));
    assert_error(&no_meta, -32602, VERSION_KEY);
    let no_version = server.ask(with_meta(
        3,
        "tools/call",
        json!({CAPABILITIES_KEY: {}, CLIENT_INFO_KEY: {"name": "c", "version": "1"}}),
        call("beam_version", json!({})),
    ));
    assert_error(&no_version, -32602, VERSION_KEY);
    let no_capabilities = server.ask(with_meta(
        4,
        "tools/list",
        json!({VERSION_KEY: "2026-07-28"}),
        Value::Null,
    ));
    assert_error(&no_capabilities, -32602, CAPABILITIES_KEY);
    // Client info is optional on every request, including after one that sent it.
    let minimal = server.ask(with_meta(
        5,
        "tools/call",
        json!({VERSION_KEY: "2026-07-28", CAPABILITIES_KEY: {}}),
        call("beam_version", json!({})),
    ));
    assert_modern_result(&minimal);
    assert_eq!(minimal["result"]["isError"], false);
    let transcript = server.finish_clean();
    assert_transcript!("modern", "metadata_not_retained", transcript);
}

#[test]
fn mrtr_continuation_fields_are_invalid_params() {
    let mut server = McpProcess::server(&[]);
    let mut with_responses = call("beam_version", json!({}));
    with_responses["inputResponses"] = json!({"k": {"action": "accept"}});
    let mut with_state = call("beam_version", json!({}));
    with_state["requestState"] = json!("opaque");
    let mut with_both = call("beam_version", json!({}));
    with_both["inputResponses"] = json!({});
    with_both["requestState"] = json!("");
    for (id, params) in (1..).zip([with_responses, with_state, with_both]) {
        let response = server.ask(modern(id, "tools/call", params));
        assert_error(&response, -32602, "input_required");
    }
    let transcript = server.finish_clean();
    assert_transcript!("modern", "mrtr_fields", transcript);
}

#[test]
fn id_reuse_after_completion_is_answered() {
    let mut server = McpProcess::server(&[]);
    for _ in 0..2 {
        let call_result = server.ask(modern(7, "tools/call", call("beam_version", json!({}))));
        assert_eq!(call_result["id"], 7);
        assert_modern_result(&call_result);
    }
    for _ in 0..2 {
        let discover = server.ask(modern("7", "server/discover", Value::Null));
        assert_eq!(discover["id"], "7");
        assert_modern_result(&discover);
    }
    // An error answer completes the id too.
    for _ in 0..2 {
        let error = server.ask(modern(7, "ping", Value::Null));
        assert_error(&error, -32601, "ping");
    }
    let transcript = server.finish_clean();
    assert_transcript!("modern", "id_reuse", transcript);
}

#[test]
fn beam_version_result_is_modern_and_mirrors_structured_content() {
    let mut server = McpProcess::server(&[]);
    let response = server.ask(modern(1, "tools/call", call("beam_version", json!({}))));
    let result = assert_modern_result(&response);
    assert_eq!(result["isError"], false);
    assert!(
        result.get("ttlMs").is_none(),
        "tool results are not cacheable"
    );
    let structured = &result["structuredContent"];
    assert_eq!(structured["name"], "lean-beam-mcp");
    assert_eq!(structured["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(structured["mcp_protocol"], "2026-07-28");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    let text: Value =
        serde_json::from_str(content[0]["text"].as_str().expect("text")).expect("JSON text");
    assert_eq!(&text, structured);
    let transcript = server.finish_clean();
    assert_transcript!("modern", "beam_version", transcript);
}
