//! How answers map to HTTP: modern errors to their statuses and legacy answers always 200, the
//! legacy era's one header rule and the SDK client's session-less flow, notifications (202),
//! other methods (405), other paths (404), and sessions (none minted, a foreign one ignored).

use lean_beam_mcp_bridge::Mode;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{call, modern, notification, request};
use crate::{
    ACCEPT_BOTH, LEGACY, MODERN, Rig, assert_rejected, assert_result, discover, modern_headers,
    send, tools_list,
};

// ---------------------------------------------------------------------------------------------
// 5. Server answers: statuses per era

#[tokio::test(flavor = "multi_thread")]
async fn modern_errors_map_to_http_statuses() {
    let rig = Rig::test_host(Mode::Modern).await;
    for (id, method) in [
        (1, "unknown/method"),
        (2, "initialize"),
        (3, "ping"),
        (4, "logging/setLevel"),
    ] {
        let reply = send(rig.modern(&modern(id, method, Value::Null))).await;
        assert_rejected(&reply, StatusCode::NOT_FOUND, -32601, id);
    }
    let unknown_tool = modern(5, "tools/call", call("nope", json!({})));
    assert_rejected(
        &send(rig.modern(&unknown_tool)).await,
        StatusCode::BAD_REQUEST,
        -32602,
        5,
    );
    let panics = modern(6, "tools/call", call("panic", json!({"message": "boom"})));
    assert_rejected(
        &send(rig.modern(&panics)).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        -32603,
        6,
    );
    // A tool failure is a result, not a JSON-RPC error.
    let fails = modern(
        7,
        "tools/call",
        call("fail", json!({"code": "invalidInput"})),
    );
    let result = assert_result(&send(rig.modern(&fails)).await, 7);
    assert_eq!(result["isError"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_answers_are_200_even_for_errors() {
    let rig = Rig::server(Mode::Legacy).await;
    let early = send(
        rig.post()
            .body(request(1, "tools/list", Value::Null).to_string()),
    )
    .await;
    assert_eq!(early.status, StatusCode::OK, "{early:?}");
    assert!(early.body["error"]["code"].is_i64(), "{early:?}");
    rig.initialize().await;
    let unknown = send(rig.legacy(&request(2, "unknown/method", Value::Null))).await;
    assert_eq!(unknown.status, StatusCode::OK, "{unknown:?}");
    assert_eq!(unknown.body["error"]["code"], -32601);
    assert_eq!(unknown.body["id"], 2);
}

// ---------------------------------------------------------------------------------------------
// 6. Legacy era: the one header rule, and the SDK 1.32.2 client's flow

#[tokio::test(flavor = "multi_thread")]
async fn legacy_protocol_version_header_must_be_2025_11_25_when_present() {
    let rig = Rig::server(Mode::Legacy).await;
    for version in ["2025-06-18", MODERN, "garbage"] {
        let reply = send(
            rig.post()
                .header("mcp-protocol-version", version)
                .body(request(9, "ping", Value::Null).to_string()),
        )
        .await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32600, 9);
        let reply = send(
            rig.post()
                .header("mcp-protocol-version", version)
                .body(notification("notifications/initialized", Value::Null).to_string()),
        )
        .await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32600, Value::Null);
    }
    // Absent (initialize never carries it) and correct are both served.
    let reply = send(
        rig.post()
            .body(request(10, "ping", Value::Null).to_string()),
    )
    .await;
    assert_eq!(assert_result(&reply, 10), json!({}));
    let reply = send(rig.legacy(&request(11, "ping", Value::Null))).await;
    assert_eq!(assert_result(&reply, 11), json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_legacy_sdk_client_flow_works_without_sessions() {
    // What @modelcontextprotocol/sdk 1.32.2 (inside conformance 0.1.16) does: initialize, the
    // initialized notification, an optional GET for a server stream (405 means "none"), its
    // requests with MCP-Protocol-Version, and a DELETE only if a session id was issued.
    let rig = Rig::server(Mode::Legacy).await;
    let init = request(
        0,
        "initialize",
        json!({
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "sdk-like", "version": "1.32.2"}
        }),
    );
    let reply = send(rig.post().body(init.to_string())).await;
    let result = assert_result(&reply, 0);
    assert_eq!(result["protocolVersion"], LEGACY);
    assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");

    let initialized =
        send(rig.legacy(&notification("notifications/initialized", Value::Null))).await;
    assert_eq!(initialized.status, StatusCode::ACCEPTED);
    assert_eq!(initialized.text, "");

    let stream = send(
        rig.bare(reqwest::Method::GET)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", LEGACY),
    )
    .await;
    assert_eq!(stream.status, StatusCode::METHOD_NOT_ALLOWED);

    let tools = send(rig.legacy(&request(1, "tools/list", Value::Null))).await;
    let tools = assert_result(&tools, 1);
    assert!(
        tools["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "beam_version"),
        "{tools}"
    );
    let ping = send(rig.legacy(&request(2, "ping", Value::Null))).await;
    assert_eq!(assert_result(&ping, 2), json!({}));

    let delete = send(
        rig.bare(reqwest::Method::DELETE)
            .header("mcp-protocol-version", LEGACY),
    )
    .await;
    assert_eq!(delete.status, StatusCode::METHOD_NOT_ALLOWED);
}

// ---------------------------------------------------------------------------------------------
// 7. Notifications (202), other methods (405), other paths (404), no sessions

#[tokio::test(flavor = "multi_thread")]
async fn notifications_are_202_with_no_body() {
    let rig = Rig::server(Mode::Modern).await;
    // Modern notifications carry no required headers.
    for message in [
        notification("notifications/initialized", Value::Null),
        notification("notifications/cancelled", json!({"requestId": 99})),
        notification("notifications/whatever", json!({"x": 1})),
    ] {
        let reply = send(rig.post().body(message.to_string())).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{reply:?}");
        assert_eq!(reply.text, "");
    }
    // The server is still fine.
    assert_result(&send(rig.modern(&discover(1))).await, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn get_delete_and_other_methods_are_405() {
    let rig = Rig::server(Mode::Modern).await;
    for method in [
        reqwest::Method::GET,
        reqwest::Method::DELETE,
        reqwest::Method::PUT,
        reqwest::Method::PATCH,
    ] {
        let reply = send(
            rig.bare(method.clone())
                .header("accept", "text/event-stream")
                .header("mcp-session-id", "abc"),
        )
        .await;
        assert_rejected(&reply, StatusCode::METHOD_NOT_ALLOWED, -32600, Value::Null);
        assert_eq!(reply.headers["allow"], "POST", "{method}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn other_paths_are_404() {
    let rig = Rig::server(Mode::Modern).await;
    let base = rig.url().trim_end_matches("/mcp").to_string();
    for path in ["/", "/mcp/", "/mcp/x", "/MCP", "/sse"] {
        let message = discover(1);
        let mut builder = rig
            .http
            .post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH)
            .body(message.to_string());
        for (name, value) in modern_headers(&message) {
            builder = builder.header(name, value);
        }
        let reply = send(builder).await;
        assert_rejected(&reply, StatusCode::NOT_FOUND, -32600, Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_session_id_is_minted_and_a_foreign_one_is_ignored() {
    for mode in [Mode::Legacy, Mode::Modern] {
        let rig = Rig::server(mode).await;
        let reply = match mode {
            Mode::Legacy => {
                rig.initialize().await;
                send(
                    rig.legacy(&request(1, "tools/list", Value::Null))
                        .header("mcp-session-id", "never-issued"),
                )
                .await
            }
            Mode::Modern => {
                send(
                    rig.modern(&tools_list(1))
                        .header("mcp-session-id", "never-issued"),
                )
                .await
            }
        };
        assert!(assert_result(&reply, 1)["tools"].is_array());
        assert!(reply.headers.get("mcp-session-id").is_none(), "{reply:?}");
    }
}
