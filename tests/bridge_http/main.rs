//! The Streamable HTTP bridge (`bridge/`) driven over real HTTP, in front of the real server and
//! the test host: one test (or more) per rule of its contract, in the order the bridge applies
//! them. Waiting is always for an observable event (a response, an SSE event, the bridge's
//! in-flight count, a file), never for time.
//!
//! This file is the shared harness (the bridge fixture [`Rig`], HTTP client helpers, SSE reading,
//! assert helpers) plus the command line's re-execution entry point; the tests live in modules
//! by concern: `guards`, `headers`, `statuses`, `routing` and `lifecycle`.

#[path = "../support/mod.rs"]
mod support;

mod guards;
mod headers;
mod lifecycle;
mod routing;
mod statuses;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use lean_beam_mcp_bridge::{Bridge, BridgeConfig, BridgeHandle, Mode};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use support::{PATIENCE, modern, notification, request, server_bin, test_host_bin};

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
// The command line's entry point (kept here, at the crate root, so its test name stays exactly
// `cli_entry_point`: `lifecycle` re-executes this binary with `--exact cli_entry_point`)

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
