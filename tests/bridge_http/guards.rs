//! The bridge's guards, in the order it applies them before a message reaches the server: Host
//! and Origin (403, before anything else), Content-Type (415), Accept (406), a body that parses
//! (400 -32700), one JSON-RPC object rather than a batch or other value (400 -32600), and the
//! size limit (413).

use std::process::Command;

use lean_beam_mcp_bridge::{BridgeConfig, Mode};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{call, modern, server_bin};
use crate::{
    ACCEPT_BOTH, MODERN, Rig, assert_rejected, assert_result, discover, modern_headers,
    raw_exchange, send, tools_list,
};

// ---------------------------------------------------------------------------------------------
// 1. Host and Origin (403), checked before everything else

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_host_is_403_before_any_other_check() {
    let rig = Rig::server(Mode::Modern).await;
    let port = rig.port();
    for host in [
        "evil.example.com".to_string(),
        format!("evil.example.com:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1).max(1)),
        "127.0.0.1".to_string(),
        format!("localhost.:{port}"),
        format!("127.0.0.2:{port}"),
    ] {
        // Every later rule is broken too: the Host rule must answer first.
        let reply = send(
            rig.bare(reqwest::Method::POST)
                .header("host", &host)
                .header("content-type", "text/plain")
                .body("{not json"),
        )
        .await;
        assert_rejected(&reply, StatusCode::FORBIDDEN, -32600, Value::Null);
        // Also for methods that would otherwise be 405.
        let reply = send(rig.bare(reqwest::Method::GET).header("host", &host)).await;
        assert_rejected(&reply, StatusCode::FORBIDDEN, -32600, Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_origin_is_403() {
    let rig = Rig::server(Mode::Modern).await;
    let port = rig.port();
    for origin in [
        "http://evil.example.com".to_string(),
        format!("http://evil.example.com:{port}"),
        format!("http://127.0.0.1:{}", port.wrapping_add(1).max(1)),
        format!("https://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{port}/mcp"),
        "http://127.0.0.1".to_string(),
        "null".to_string(),
    ] {
        let reply = send(rig.modern(&discover(1)).header("origin", &origin)).await;
        assert_rejected(&reply, StatusCode::FORBIDDEN, -32600, Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bridges_own_loopback_names_are_accepted() {
    let rig = Rig::server(Mode::Modern).await;
    let port = rig.port();
    let hosts = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ];
    for (i, host) in hosts.iter().enumerate() {
        for origin in [
            None,
            Some(format!("http://127.0.0.1:{port}")),
            Some(format!("http://localhost:{port}")),
            Some(format!("http://[::1]:{port}")),
        ] {
            let mut builder = rig.modern(&discover(i)).header("host", host);
            if let Some(origin) = &origin {
                builder = builder.header("origin", origin);
            }
            let reply = send(builder).await;
            let result = assert_result(&reply, i);
            assert_eq!(
                result["supportedVersions"],
                json!([MODERN]),
                "{host} {origin:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_conformance_dns_rebinding_probe_passes() {
    // What the conformance scenario sends at the 2026-07-28 wire: evil Host and Origin (4xx),
    // then the URL's own host as both (2xx).
    let rig = Rig::server(Mode::Modern).await;
    let own = format!("127.0.0.1:{}", rig.port());
    let evil = send(
        rig.modern(&discover(1))
            .header("host", "evil.example.com")
            .header("origin", "http://evil.example.com"),
    )
    .await;
    assert!(evil.status.is_client_error(), "{evil:?}");
    let good = send(
        rig.modern(&discover(1))
            .header("host", &own)
            .header("origin", format!("http://{own}")),
    )
    .await;
    assert!(good.status.is_success(), "{good:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_repeated_host_is_403() {
    let rig = Rig::server(Mode::Modern).await;
    let port = rig.port();
    let body = discover(1).to_string();
    let headers = format!(
        "Content-Type: application/json\r\nAccept: {ACCEPT_BOTH}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: server/discover\r\n"
    );
    let (status, answer) = raw_exchange(port, &format!("POST /mcp HTTP/1.1\r\n{headers}"), &body);
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    let twice = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: 127.0.0.1:{port}\r\n{headers}"
    );
    let (status, _) = raw_exchange(port, &twice, &body);
    assert!(status == 403 || status == 400, "status {status}");
    let once = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}");
    let (status, answer) = raw_exchange(port, &once, &body);
    assert_eq!(status, 200, "{answer}");
}

// ---------------------------------------------------------------------------------------------
// 2. Content-Type (415), then Accept (406)

#[tokio::test(flavor = "multi_thread")]
async fn content_type_must_be_application_json() {
    let rig = Rig::server(Mode::Modern).await;
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("text/json"),
    ] {
        // Accept and body are broken too: 415 comes before 406 and 400.
        let mut builder = rig.bare(reqwest::Method::POST).body("{not json");
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        let reply = send(builder).await;
        assert_rejected(
            &reply,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32600,
            Value::Null,
        );
    }
    for content_type in ["application/json; charset=utf-8", "Application/JSON"] {
        let message = discover(1);
        let mut builder = rig
            .bare(reqwest::Method::POST)
            .header("content-type", content_type)
            .header("accept", ACCEPT_BOTH)
            .body(message.to_string());
        for (name, value) in modern_headers(&message) {
            builder = builder.header(name, value);
        }
        assert_result(&send(builder).await, 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_must_list_json_and_event_stream() {
    let rig = Rig::server(Mode::Modern).await;
    for accept in [
        None,
        Some("application/json"),
        Some("text/event-stream"),
        Some("*/*"),
        Some("application/*, text/*"),
        Some("application/json-seq, text/event-streams"),
    ] {
        // The body is broken too: 406 comes before 400.
        let mut builder = rig
            .bare(reqwest::Method::POST)
            .header("content-type", "application/json")
            .body("{not json");
        if let Some(accept) = accept {
            builder = builder.header("accept", accept);
        }
        let reply = send(builder).await;
        assert_rejected(&reply, StatusCode::NOT_ACCEPTABLE, -32600, Value::Null);
    }
    let message = discover(1);
    let with = |accept: &[&str]| {
        let mut builder = rig
            .bare(reqwest::Method::POST)
            .header("content-type", "application/json")
            .body(message.to_string());
        for (name, value) in modern_headers(&message) {
            builder = builder.header(name, value);
        }
        for value in accept {
            builder = builder.header("accept", *value);
        }
        builder
    };
    // What the conformance suite and the SDK clients send.
    assert_result(
        &send(with(&["application/json, text/event-stream"])).await,
        1,
    );
    assert_result(
        &send(with(&["TEXT/EVENT-STREAM;q=0.9 ,application/json; q=1"])).await,
        1,
    );
    assert_result(
        &send(with(&["application/json", "text/event-stream"])).await,
        1,
    );
}

// ---------------------------------------------------------------------------------------------
// 3. The body: parse (400 -32700), one object (400 -32600)

#[tokio::test(flavor = "multi_thread")]
async fn bodies_that_do_not_parse_are_400_parse_error() {
    for mode in [Mode::Modern, Mode::Legacy] {
        let rig = Rig::server(mode).await;
        for body in ["{not json", "", "{\"jsonrpc\":\"2.0\",", "\u{feff}"] {
            // No MCP headers either: the parse rule comes before the era's header rules.
            let reply = send(rig.post().body(body)).await;
            assert_rejected(&reply, StatusCode::BAD_REQUEST, -32700, Value::Null);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn batches_and_other_non_messages_are_400_invalid_request() {
    for mode in [Mode::Modern, Mode::Legacy] {
        let rig = Rig::server(mode).await;
        let batch = json!([tools_list(1), tools_list(2)]);
        for body in [
            batch,
            json!([]),
            json!(42),
            json!("tools/list"),
            Value::Null,
        ] {
            let reply = send(rig.post().body(body.to_string())).await;
            assert_rejected(&reply, StatusCode::BAD_REQUEST, -32600, Value::Null);
        }
        // A client response: this server never sends requests to answer.
        let response = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        let reply = send(rig.post().body(response.to_string())).await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32600, 3);
        // Ids the server would refuse are refused here, since it never sees the client's id.
        for id in [
            Value::Null,
            json!(true),
            json!(1.5),
            json!({"a": 1}),
            json!([1]),
        ] {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            let reply = send(rig.post().body(message.to_string())).await;
            assert_rejected(&reply, StatusCode::BAD_REQUEST, -32600, Value::Null);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_bodies_are_413() {
    let mut config = BridgeConfig::new(Mode::Modern, Command::new(server_bin()));
    config.max_body_bytes = 256;
    let rig = Rig::with_config(config, None).await;
    let message = modern(
        1,
        "tools/call",
        call("beam_version", json!({"pad": "x".repeat(300)})),
    );
    let reply = send(rig.modern(&message)).await;
    assert_rejected(&reply, StatusCode::PAYLOAD_TOO_LARGE, -32600, Value::Null);
    assert_result(&send(rig.modern(&discover(2))).await, 2);
}
