//! The Streamable HTTP bridge (`bridge/`) driven over real HTTP, in front of the real server and
//! the test host: one test (or more) per rule of its contract, in the order the bridge applies
//! them. Waiting is always for an observable event (a response, an SSE event, the bridge's
//! in-flight count, a file), never for time.

mod support;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lean_beam_mcp_bridge::{Bridge, BridgeConfig, BridgeHandle, Mode};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use support::{PATIENCE, call, modern, notification, request, server_bin, test_host_bin};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

// ---------------------------------------------------------------------------------------------
// Harness

/// A bridge in front of a server, and an HTTP client for it.
struct Rig {
    bridge: BridgeHandle,
    http: reqwest::Client,
    gates: Option<tempfile::TempDir>,
}

impl Rig {
    async fn server(mode: Mode) -> Rig {
        Rig::start(mode, Command::new(server_bin()), None).await
    }

    async fn test_host(mode: Mode) -> Rig {
        let gates = tempfile::tempdir().expect("gate directory");
        let mut command = Command::new(test_host_bin());
        command.env("LEAN_BEAM_MCP_TEST_GATES", gates.path());
        Rig::start(mode, command, Some(gates)).await
    }

    async fn start(mode: Mode, server: Command, gates: Option<tempfile::TempDir>) -> Rig {
        Rig::with_config(BridgeConfig::new(mode, server), gates).await
    }

    async fn with_config(config: BridgeConfig, gates: Option<tempfile::TempDir>) -> Rig {
        let bridge = Bridge::start(config).await.expect("start the bridge");
        Rig {
            bridge,
            http: client(),
            gates,
        }
    }

    fn url(&self) -> &str {
        self.bridge.url()
    }

    fn port(&self) -> u16 {
        self.bridge.port()
    }

    fn open_gate(&self, gate: &str) {
        let dir = self.gates.as_ref().expect("a test host").path();
        std::fs::write(dir.join(gate), b"open").expect("open gate");
    }

    /// A POST with the media-type headers every client sends.
    fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH)
    }

    /// A POST with no headers at all beyond what the client adds itself.
    fn bare(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        self.http.request(method, self.url())
    }

    /// A modern message with the headers a modern client derives from it.
    fn modern(&self, message: &Value) -> reqwest::RequestBuilder {
        let mut builder = self.post().body(message.to_string());
        for (name, value) in modern_headers(message) {
            builder = builder.header(name, value);
        }
        builder
    }

    /// A legacy message with the version header a legacy client sends after `initialize`.
    fn legacy(&self, message: &Value) -> reqwest::RequestBuilder {
        self.post()
            .header("mcp-protocol-version", LEGACY)
            .body(message.to_string())
    }

    /// Completes a legacy handshake.
    async fn initialize(&self) -> Value {
        let init = request(
            0,
            "initialize",
            json!({
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "bridge-suite", "version": "1.0"}
            }),
        );
        let reply = send(self.post().body(init.to_string())).await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        let done = send(self.legacy(&notification("notifications/initialized", Value::Null))).await;
        assert_eq!(done.status, StatusCode::ACCEPTED, "{done:?}");
        reply.body
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(PATIENCE)
        .build()
        .expect("HTTP client")
}

/// `MCP-Protocol-Version` (the body's), `Mcp-Method` and, where the method has one, `Mcp-Name`.
fn modern_headers(message: &Value) -> Vec<(&'static str, String)> {
    let method = message["method"].as_str().expect("a method").to_string();
    let version = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or(MODERN)
        .to_string();
    let mut headers = vec![
        ("mcp-protocol-version", version),
        ("mcp-method", method.clone()),
    ];
    let name = match method.as_str() {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.push(("mcp-name", name.to_string()));
    }
    headers
}

/// A modern request with its `_meta` (plus `extra_meta`).
fn modern_with(id: impl Into<Value>, method: &str, params: Value, extra_meta: Value) -> Value {
    let mut params = if params.is_null() { json!({}) } else { params };
    params["_meta"] = extra_meta;
    modern(id, method, params)
}

/// One HTTP exchange, read to the end.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    text: String,
    /// The body as JSON (`Null` when empty or not JSON).
    body: Value,
}

impl Reply {
    fn content_type(&self) -> &str {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

async fn send(builder: reqwest::RequestBuilder) -> Reply {
    let response = builder.send().await.expect("an HTTP response");
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        text,
        body,
    }
}

/// Asserts a bridge or server error answer.
#[track_caller]
fn assert_rejected(reply: &Reply, status: StatusCode, code: i64, id: impl Into<Value>) {
    assert_eq!(reply.status, status, "{reply:?}");
    assert!(
        reply.content_type().starts_with("application/json"),
        "{reply:?}"
    );
    assert_eq!(reply.body["jsonrpc"], "2.0", "{reply:?}");
    assert_eq!(reply.body["error"]["code"], code, "{reply:?}");
    assert!(reply.body["error"]["message"].is_string(), "{reply:?}");
    assert_eq!(reply.body.get("id"), Some(&id.into()), "{reply:?}");
    assert!(reply.body.get("result").is_none(), "{reply:?}");
}

/// Asserts a 200 JSON answer to `id` and returns its result.
#[track_caller]
fn assert_result(reply: &Reply, id: impl Into<Value>) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
    assert!(
        reply.content_type().starts_with("application/json"),
        "{reply:?}"
    );
    assert_eq!(reply.body.get("id"), Some(&id.into()), "{reply:?}");
    assert!(reply.body.get("error").is_none(), "{reply:?}");
    reply.body["result"].clone()
}

/// A response read as an SSE stream, one `event: message` at a time.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    async fn open(builder: reqwest::RequestBuilder) -> Events {
        let response = builder.send().await.expect("an HTTP response");
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers();
        assert_eq!(headers["content-type"], "text/event-stream", "{headers:?}");
        assert_eq!(headers["x-accel-buffering"], "no", "{headers:?}");
        assert_eq!(headers["cache-control"], "no-cache", "{headers:?}");
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event's JSON, or `None` once the stream has ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let mut kind = None;
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        kind = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                assert_eq!(kind.as_deref(), Some("message"), "frame {frame:?}");
                return Some(serde_json::from_str(&data).expect("JSON data"));
            }
            match self.response.chunk().await.expect("the stream continues") {
                Some(bytes) => self
                    .buffer
                    .push_str(std::str::from_utf8(&bytes).expect("UTF-8")),
                None => {
                    assert!(
                        self.buffer.trim().is_empty(),
                        "a torn frame: {:?}",
                        self.buffer
                    );
                    return None;
                }
            }
        }
    }

    async fn next_message(&mut self) -> Value {
        self.next().await.expect("another event")
    }
}

/// Sends raw HTTP/1.1 (for header spellings and omissions a client library will not produce)
/// and returns the status and body.
fn raw_exchange(port: u16, head: &str, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let message = format!(
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(message.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {answer:?}"));
    let (_, payload) = answer.split_once("\r\n\r\n").expect("a header end");
    (status, serde_json::from_str(payload).unwrap_or(Value::Null))
}

fn discover(id: impl Into<Value>) -> Value {
    modern(id, "server/discover", Value::Null)
}

fn tools_list(id: impl Into<Value>) -> Value {
    modern(id, "tools/list", Value::Null)
}

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

// ---------------------------------------------------------------------------------------------
// 11. The server's end, and the bridge's

#[tokio::test(flavor = "multi_thread")]
async fn when_the_server_dies_requests_are_500_internal_error() {
    let rig = Rig::test_host(Mode::Modern).await;
    let gated = modern_with(
        "a",
        "tools/call",
        call("gate", json!({"gate": "never"})),
        json!({"io.modelcontextprotocol/logLevel": "debug"}),
    );
    let mut streamed = Events::open(rig.modern(&gated)).await;
    assert_eq!(
        streamed.next_message().await["method"],
        "notifications/message"
    );
    let plain = modern(2, "tools/call", call("gate", json!({"gate": "never"})));
    let plain = tokio::spawn(send(rig.modern(&plain)));
    rig.bridge.wait_for_in_flight(2).await;

    let pid = rig.bridge.server_pid().expect("a server pid");
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());

    // Waiting requests: the stream ends with a -32603 error, the JSON request is 500.
    let failure = streamed.next_message().await;
    assert_eq!(failure["id"], "a", "{failure}");
    assert_eq!(failure["error"]["code"], -32603, "{failure}");
    assert!(streamed.next().await.is_none());
    let reply = plain.await.expect("the call");
    assert_rejected(&reply, StatusCode::INTERNAL_SERVER_ERROR, -32603, 2);

    // Later requests and notifications: 500 at once.
    let status = rig.bridge.server_exited().await.expect("an exit status");
    assert!(!status.success());
    assert_rejected(
        &send(rig.modern(&tools_list(3))).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        -32603,
        3,
    );
    let note = notification("notifications/initialized", Value::Null);
    assert_rejected(
        &send(rig.post().body(note.to_string())).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        -32603,
        Value::Null,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_ends_the_servers_input_and_waits_for_it() {
    let marks = tempfile::tempdir().expect("mark directory");
    let mark = marks.path().join("shut-down");
    let gates = tempfile::tempdir().expect("gate directory");
    let mut command = Command::new(test_host_bin());
    command
        .env("LEAN_BEAM_MCP_TEST_GATES", gates.path())
        .env("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK", &mark);
    let rig = Rig::start(Mode::Modern, command, Some(gates)).await;
    assert_result(&send(rig.modern(&tools_list(1))).await, 1);
    let url = rig.url().to_string();
    let status = rig.bridge.shutdown().await.expect("an exit status");
    assert!(status.success(), "{status}");
    assert!(
        mark.exists(),
        "the server saw end of input and shut its host down"
    );
    assert!(
        client().post(&url).send().await.is_err(),
        "the bridge no longer listens"
    );
}

// ---------------------------------------------------------------------------------------------
// 12. The command line (run in a child process: this test binary re-executed)

/// The environment variable carrying the CLI arguments for the re-executed test binary.
const CLI_ARGS_ENV: &str = "LEAN_BEAM_MCP_BRIDGE_CLI_ARGS";

/// Not a test of its own: when re-executed with `CLI_ARGS_ENV` set, this runs the bridge's
/// command line and exits with its code.
#[test]
fn cli_entry_point() {
    let Ok(args) = std::env::var(CLI_ARGS_ENV) else {
        return;
    };
    let args: Vec<String> = serde_json::from_str(&args).expect("CLI arguments");
    let mut argv = vec![OsString::from("lean-beam-mcp-bridge")];
    argv.extend(args.into_iter().map(OsString::from));
    std::process::exit(i32::from(lean_beam_mcp_bridge::cli::run(argv)));
}

/// The bridge's command line running in a child process.
struct CliBridge {
    child: std::process::Child,
    ready: PathBuf,
    _dir: tempfile::TempDir,
}

impl CliBridge {
    fn start(args: &[&str], env: &[(&str, &Path)]) -> CliBridge {
        let dir = tempfile::tempdir().expect("a directory");
        let ready = dir.path().join("ready.json");
        let mut all = vec!["--ready-file", ready.to_str().expect("UTF-8 path")];
        all.extend_from_slice(args);
        let mut command = Command::new(std::env::current_exe().expect("this test binary"));
        command
            .args([
                "--exact",
                "cli_entry_point",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CLI_ARGS_ENV, serde_json::to_string(&all).expect("JSON"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        CliBridge {
            child: command.spawn().expect("start the bridge"),
            ready,
            _dir: dir,
        }
    }

    /// Waits for the ready file (or for the bridge to exit first) and returns the URL.
    fn url(&mut self) -> Option<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.ready) {
                let ready: Value = serde_json::from_str(&text).expect("ready JSON");
                return Some(ready["url"].as_str().expect("a url").to_string());
            }
            if self.child.try_wait().expect("wait").is_some() {
                return None;
            }
            assert!(
                Instant::now() < deadline,
                "no ready file within {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
    }

    /// Waits for the exit; returns the code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the bridge did not exit within {PATIENCE:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        (status.code(), stderr)
    }
}

impl Drop for CliBridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_serves_until_sigterm_then_ends_the_server_and_exits_0() {
    let marks = tempfile::tempdir().expect("mark directory");
    let mark = marks.path().join("shut-down");
    let gates = tempfile::tempdir().expect("gate directory");
    let mut bridge = CliBridge::start(
        &["--mode", "modern", "--", test_host_bin()],
        &[
            ("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK", &mark),
            ("LEAN_BEAM_MCP_TEST_GATES", gates.path()),
        ],
    );
    let url = bridge.url().expect("the bridge is ready");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let message = tools_list(1);
    let mut builder = client()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .body(message.to_string());
    for (name, value) in modern_headers(&message) {
        builder = builder.header(name, value);
    }
    assert_result(&send(builder).await, 1);
    bridge.signal("-TERM");
    let (code, stderr) = bridge.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        mark.exists(),
        "the server got end of input and shut down cleanly"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_binds_the_requested_port_in_legacy_mode() {
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        probe.local_addr().expect("address").port()
    };
    let port_text = port.to_string();
    let mut bridge = CliBridge::start(
        &["--mode", "legacy", "--port", &port_text, "--", server_bin()],
        &[],
    );
    let url = bridge.url().expect("the bridge is ready");
    assert_eq!(url, format!("http://127.0.0.1:{port}/mcp"));
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    let reply = send(
        client()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH)
            .body(init.to_string()),
    )
    .await;
    assert_eq!(assert_result(&reply, 0)["protocolVersion"], LEGACY);
    bridge.signal("-INT");
    let (code, stderr) = bridge.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_cli_exits_1_when_the_server_exits_on_its_own() {
    let mut bridge = CliBridge::start(
        &["--mode", "modern", "--", server_bin(), "--no-such-flag"],
        &[],
    );
    // It may or may not get to write its ready file before it notices the server is gone.
    let _ = bridge.url();
    let (code, stderr) = bridge.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("exited on its own"), "{stderr}");
}

#[test]
fn the_cli_refuses_bad_usage_with_2() {
    for args in [
        &["--mode", "modern"][..],
        &["--", server_bin()][..],
        &["--mode", "sideways", "--", server_bin()][..],
    ] {
        let bridge = CliBridge::start(args, &[]);
        let (code, stderr) = bridge.finish();
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error:"), "{stderr}");
    }
}
