//! The modern era's request headers, checked after the guards: `MCP-Protocol-Version` against
//! the body's version (then supported versions, -32022), `Mcp-Method` against the body's method,
//! and `Mcp-Name` against the tool or prompt name or resource URI; header names in any case.

use lean_beam_mcp_bridge::Mode;
use reqwest::StatusCode;
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

use crate::support::{call, modern, request};
use crate::{
    ACCEPT_BOTH, LEGACY, MODERN, Rig, assert_rejected, assert_result, discover, modern_with,
    raw_exchange, send, tools_list,
};

// ---------------------------------------------------------------------------------------------
// 4. Modern headers: MCP-Protocol-Version, then Mcp-Method, then Mcp-Name (400)

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_protocol_version_header_is_header_mismatch() {
    let rig = Rig::server(Mode::Modern).await;
    for message in [tools_list(1), request(1, "tools/list", Value::Null)] {
        // Missing even when the body lacks _meta too: the header is checked first.
        let reply = send(
            rig.post()
                .header("mcp-method", "tools/list")
                .body(message.to_string()),
        )
        .await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32020, 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_body_protocol_version_is_invalid_params() {
    let rig = Rig::server(Mode::Modern).await;
    let bodies = [
        request(7, "server/discover", Value::Null),
        request(7, "server/discover", json!({})),
        request(7, "server/discover", json!({"_meta": {}})),
        request(
            7,
            "server/discover",
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
        request(
            7,
            "server/discover",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 2026}}),
        ),
    ];
    for body in bodies {
        let reply = send(
            rig.post()
                .header("mcp-protocol-version", MODERN)
                .header("mcp-method", "server/discover")
                .body(body.to_string()),
        )
        .await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32602, 7);
    }
    // Other _meta faults are the server's to find; its -32602 is 400 too.
    let no_capabilities = request(
        8,
        "server/discover",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}),
    );
    let reply = send(rig.modern(&no_capabilities)).await;
    assert_rejected(&reply, StatusCode::BAD_REQUEST, -32602, 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_body_version_mismatch_wins_over_an_unsupported_version() {
    let rig = Rig::server(Mode::Modern).await;
    let unsupported = modern_with(
        3,
        "server/discover",
        Value::Null,
        json!({"io.modelcontextprotocol/protocolVersion": "v999.0.0"}),
    );
    let reply = send(
        rig.post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "server/discover")
            .body(unsupported.to_string()),
    )
    .await;
    assert_rejected(&reply, StatusCode::BAD_REQUEST, -32020, 3);
    let reply = send(
        rig.post()
            .header("mcp-protocol-version", "v999.0.0")
            .header("mcp-method", "server/discover")
            .body(discover(4).to_string()),
    )
    .await;
    assert_rejected(&reply, StatusCode::BAD_REQUEST, -32020, 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unsupported_version_is_32022_with_the_supported_list() {
    let rig = Rig::server(Mode::Modern).await;
    for version in ["v999.0.0", LEGACY] {
        let message = modern_with(
            "u",
            "server/discover",
            Value::Null,
            json!({"io.modelcontextprotocol/protocolVersion": version}),
        );
        // Mcp-Method is wrong too: the version rule answers first.
        let reply = send(
            rig.post()
                .header("mcp-protocol-version", version)
                .header("mcp-method", "tools/list")
                .body(message.to_string()),
        )
        .await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32022, "u");
        assert_eq!(
            reply.body["error"]["data"],
            json!({"supported": [MODERN], "requested": version})
        );
    }
    // Optional whitespace around the header value is not part of it.
    let reply = send(
        rig.post()
            .header("mcp-protocol-version", format!(" \t{MODERN} "))
            .header("mcp-method", "server/discover")
            .body(discover(5).to_string()),
    )
    .await;
    assert_result(&reply, 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_method_must_equal_the_body_method_exactly() {
    let rig = Rig::server(Mode::Modern).await;
    let message = tools_list(1);
    for method in [
        None,
        Some("TOOLS/LIST"),
        Some("prompts/list"),
        Some("tools/list/"),
    ] {
        let mut builder = rig
            .post()
            .header("mcp-protocol-version", MODERN)
            .body(message.to_string());
        if let Some(method) = method {
            builder = builder.header("mcp-method", method);
        }
        assert_rejected(&send(builder).await, StatusCode::BAD_REQUEST, -32020, 1);
    }
    let reply = send(
        rig.post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "  tools/list\t")
            .body(message.to_string()),
    )
    .await;
    assert!(assert_result(&reply, 1)["tools"].is_array());
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_name_must_match_the_tool_name() {
    let rig = Rig::test_host(Mode::Modern).await;
    let echo = modern(1, "tools/call", call("echo", json!({"text": "hi"})));
    let base = || {
        rig.post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .body(echo.to_string())
    };
    let rejected = [
        None,
        Some(HeaderValue::from_static("ECHO")),
        Some(HeaderValue::from_static("shape")),
        Some(HeaderValue::from_static("=?base64?ZWNobw?=")), // padding missing
        Some(HeaderValue::from_static("=?base64?ZW!ob3==?=")), // not Base64
        Some(HeaderValue::from_static("=?base64?/w==?=")),   // not UTF-8
        Some(HeaderValue::from_static("=?base64?ZWNobw==")), // no suffix: literal
        Some(HeaderValue::from_bytes(b"\xe9cho").expect("obs-text")),
    ];
    for name in rejected {
        let mut builder = base();
        if let Some(name) = &name {
            builder = builder.header("mcp-name", name.clone());
        }
        let reply = send(builder).await;
        assert_rejected(&reply, StatusCode::BAD_REQUEST, -32020, 1);
    }
    let twice = send(base().header("mcp-name", "echo").header("mcp-name", "echo")).await;
    assert_rejected(&twice, StatusCode::BAD_REQUEST, -32020, 1);
    for name in [
        "echo",
        "  echo  ",
        "\techo",
        "=?base64?ZWNobw==?=",
        " =?base64?ZWNobw==?=\t",
    ] {
        let reply = send(base().header("mcp-name", name)).await;
        let result = assert_result(&reply, 1);
        assert_eq!(result["structuredContent"]["text"], "hi", "{name:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_name_mirrors_prompt_names_and_resource_uris() {
    let rig = Rig::server(Mode::Modern).await;
    // This server has no prompts or resources: a request that passes the header rules reaches
    // it and is -32601 (404); one that fails them is stopped at the bridge (400).
    let prompt = modern(1, "prompts/get", json!({"name": "résumé"}));
    let headers = |name: Option<&str>| {
        let mut builder = rig
            .post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "prompts/get")
            .body(prompt.to_string());
        if let Some(name) = name {
            builder = builder.header("mcp-name", name);
        }
        builder
    };
    let encoded = "=?base64?csOpc3Vtw6k=?=";
    assert_rejected(
        &send(headers(Some(encoded))).await,
        StatusCode::NOT_FOUND,
        -32601,
        1,
    );
    assert_rejected(
        &send(headers(Some("resume"))).await,
        StatusCode::BAD_REQUEST,
        -32020,
        1,
    );
    assert_rejected(
        &send(headers(None)).await,
        StatusCode::BAD_REQUEST,
        -32020,
        1,
    );

    let read = modern(2, "resources/read", json!({"uri": "file:///tmp/a b.lean"}));
    let uri = |name: Option<&str>| {
        let mut builder = rig
            .post()
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "resources/read")
            .body(read.to_string());
        if let Some(name) = name {
            builder = builder.header("mcp-name", name);
        }
        builder
    };
    assert_rejected(
        &send(uri(Some("file:///tmp/a b.lean"))).await,
        StatusCode::NOT_FOUND,
        -32601,
        2,
    );
    assert_rejected(
        &send(uri(Some("file:///tmp/other.lean"))).await,
        StatusCode::BAD_REQUEST,
        -32020,
        2,
    );
    assert_rejected(&send(uri(None)).await, StatusCode::BAD_REQUEST, -32020, 2);

    // Methods without a name source ignore Mcp-Name; a body without the field needs no header.
    let reply = send(rig.modern(&tools_list(3)).header("mcp-name", "anything")).await;
    assert_result(&reply, 3);
    let nameless = modern(4, "tools/call", json!({"arguments": {}}));
    let reply = send(rig.modern(&nameless)).await;
    assert_rejected(&reply, StatusCode::BAD_REQUEST, -32602, 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn header_names_are_case_insensitive() {
    let rig = Rig::server(Mode::Modern).await;
    let port = rig.port();
    let body = tools_list(1).to_string();
    for (version, method) in [
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
        ("mcp-protocol-version", "mcp-method"),
        ("Mcp-Protocol-Version", "Mcp-Method"),
    ] {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHOST: 127.0.0.1:{port}\r\nCONTENT-TYPE: application/json\r\nACCEPT: {ACCEPT_BOTH}\r\n{version}: {MODERN}\r\n{method}: tools/list\r\n"
        );
        let (status, answer) = raw_exchange(port, &head, &body);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], 1);
        assert!(answer["result"]["tools"].is_array(), "{answer}");
    }
}
