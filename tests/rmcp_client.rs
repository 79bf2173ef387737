//! The rmcp lane: the official Rust SDK's client (`rmcp` 3.x, child-process transport) drives the
//! real binary over stdio in each of its lifecycle modes: `Discover` (modern, 2026-07-28),
//! `Initialize` (legacy, 2025-11-25) and `Auto` (probes discover, must settle on modern). Each
//! lists tools, calls `beam_version`, checks its structured content and closes cleanly: the
//! server exits 0 on end of input by itself (a shell around it reports the status, which it
//! could not if rmcp had to kill it after its grace period), is reaped, and writes nothing else
//! to stderr. With the test host built, it also checks progress and per-request log
//! delivery to rmcp's client handler.

// rmcp marks the logging types deprecated (SEP-2577); the server still serves logging, so the
// lane still checks it.
#![allow(deprecated)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

/// Everything rmcp's client handler is told, in arrival order.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<rmcp::model::ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<rmcp::model::LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

struct Connection {
    client: RunningService<RoleClient, Recorder>,
    recorder: Recorder,
    pid: u32,
    stderr: ChildStderr,
}

/// What the shell around the server writes to stderr when the server exits by itself.
const EXITED_ZERO: &str = "server exit status 0\n";

async fn connect(binary: &str, lifecycle: ClientLifecycleMode) -> Connection {
    // The shell only reports the server's status; stdin, stdout and stderr are the server's.
    let mut command = tokio::process::Command::new("sh");
    command
        .args(["-c", r#""$0"; echo "server exit status $?" >&2"#, binary])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the server");
    let pid = transport.id().expect("child pid");
    let recorder = Recorder::default();
    let client = tokio::time::timeout(
        Duration::from_secs(20),
        recorder.clone().serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .expect("connect within 20 s")
    .expect("rmcp connects");
    Connection {
        client,
        recorder,
        pid,
        stderr: stderr.expect("piped stderr"),
    }
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

fn auto() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &'static str,
    arguments: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name)
        .with_arguments(arguments.as_object().cloned().expect("object arguments"));
    tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
        .await
        .expect("tools/call answered within 10 s")
        .expect("tools/call succeeds")
}

/// tools/list names beam_version, and its call returns the identity both structured and as text,
/// quietly (no progress although rmcp sends a token, no logs).
async fn check_tools(connection: &Connection) {
    let client = &connection.client;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().any(|tool| tool.name == "beam_version"),
        "beam_version missing from {:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let result = call(client, "beam_version", json!({})).await;
    assert_ne!(
        result.is_error,
        Some(true),
        "beam_version failed: {result:?}"
    );
    let structured = result.structured_content.expect("structuredContent");
    assert_eq!(structured["name"], "lean-beam-mcp");
    assert_eq!(structured["mcp_protocol"], "2026-07-28");
    let text = &result.content[0]
        .as_text()
        .expect("content[0] is text")
        .text;
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("text is JSON"),
        structured,
        "content[0].text mirrors structuredContent"
    );
    // A later answer is the barrier: rmcp dispatches notifications in arrival order, so anything
    // the server sent for beam_version has reached the handler by then.
    client.list_all_tools().await.expect("tools/list");
    assert!(connection.recorder.progress.lock().unwrap().is_empty());
    assert!(connection.recorder.logs.lock().unwrap().is_empty());
}

/// Closes the client: the server must exit 0 on end of input by itself (not be killed by rmcp
/// after its grace period), be reaped, and have written nothing to stderr.
async fn close_cleanly(mut connection: Connection) {
    tokio::time::timeout(Duration::from_secs(15), connection.client.close())
        .await
        .expect("close within 15 s")
        .expect("the client task joins");
    assert!(
        !std::path::Path::new(&format!("/proc/{}", connection.pid)).exists(),
        "server pid {} was not reaped",
        connection.pid
    );
    let mut stderr = String::new();
    connection
        .stderr
        .read_to_string(&mut stderr)
        .await
        .expect("read stderr");
    assert_eq!(
        stderr, EXITED_ZERO,
        "the server exits 0 on end of input and writes nothing else to stderr"
    );
}

fn negotiated(connection: &Connection) -> ProtocolVersion {
    connection
        .client
        .peer_info()
        .expect("peer info after connect")
        .protocol_version
        .clone()
}

#[tokio::test]
async fn rmcp_discover_mode_is_modern() {
    let connection = connect(env!("CARGO_BIN_EXE_lean-beam-mcp"), modern()).await;
    assert_eq!(negotiated(&connection), ProtocolVersion::V_2026_07_28);
    let info = connection.client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("lean-beam-mcp")
    );
    assert!(info.capabilities.tools.is_some(), "tools capability");
    let discover = connection
        .client
        .discover(Default::default())
        .await
        .expect("server/discover");
    assert_eq!(
        discover.supported_versions,
        vec![ProtocolVersion::V_2026_07_28]
    );
    check_tools(&connection).await;
    close_cleanly(connection).await;
}

#[tokio::test]
async fn rmcp_initialize_mode_is_legacy() {
    let connection = connect(
        env!("CARGO_BIN_EXE_lean-beam-mcp"),
        ClientLifecycleMode::Initialize,
    )
    .await;
    assert_eq!(negotiated(&connection), ProtocolVersion::V_2025_11_25);
    let info = connection.client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("lean-beam-mcp")
    );
    check_tools(&connection).await;
    close_cleanly(connection).await;
}

#[tokio::test]
async fn rmcp_auto_mode_settles_on_modern() {
    let connection = connect(env!("CARGO_BIN_EXE_lean-beam-mcp"), auto()).await;
    assert_eq!(negotiated(&connection), ProtocolVersion::V_2026_07_28);
    check_tools(&connection).await;
    close_cleanly(connection).await;
}

/// Waits for `ready` (handler notifications are dispatched after the response); the deadline
/// only turns a hang into a failure.
#[cfg(feature = "test-host")]
async fn eventually(ready: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !ready() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    true
}

/// rmcp stamps a progress token on every request, so the test host's progress tool reports to the
/// handler; logs reach it only for requests that carry a per-request log level. rmcp runs each
/// notification handler as its own task; on this current-thread runtime they run in arrival order.
#[cfg(feature = "test-host")]
#[tokio::test]
async fn rmcp_discover_mode_progress_and_per_request_log_level() {
    use rmcp::model::{LoggingLevel, RequestMetaObject};

    let connection = connect(env!("CARGO_BIN_EXE_lean-beam-mcp-test-host"), modern()).await;
    let recorder = connection.recorder.clone();

    let result = call(&connection.client, "progress", json!({"steps": 5})).await;
    assert_eq!(result.structured_content.unwrap()["sent"], 5);
    assert!(
        eventually(|| recorder.progress.lock().unwrap().len() >= 5).await,
        "progress notifications delivered: {:?}",
        recorder.progress.lock().unwrap()
    );
    let values: Vec<f64> = recorder
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.progress)
        .collect();
    assert_eq!(values.len(), 5, "progress notifications: {values:?}");
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress strictly increasing: {values:?}"
    );

    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Warning);
    let mut params = CallToolRequestParams::new("log").with_arguments(
        json!({"level": "warning", "logger": "rmcp.warning", "data": "w"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    params.meta = Some(meta);
    let result = connection.client.call_tool(params).await.expect("log call");
    assert_eq!(result.structured_content.unwrap()["sent"], true);
    assert!(
        eventually(|| !recorder.logs.lock().unwrap().is_empty()).await,
        "the warning reached the handler"
    );

    let result = call(
        &connection.client,
        "log",
        json!({"level": "emergency", "logger": "rmcp.none", "data": "n"}),
    )
    .await;
    assert_eq!(result.structured_content.unwrap()["sent"], false);
    // Barrier: a second warning, requested like the first. Once it has reached the handler,
    // anything sent before it has too (notifications are dispatched in arrival order).
    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Warning);
    let mut params = CallToolRequestParams::new("log").with_arguments(
        json!({"level": "warning", "logger": "rmcp.barrier", "data": "b"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    params.meta = Some(meta);
    connection.client.call_tool(params).await.expect("log call");
    assert!(
        eventually(|| recorder.logs.lock().unwrap().len() >= 2).await,
        "the barrier warning reached the handler"
    );
    let logs = recorder.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 2, "only the requested logs arrive: {logs:?}");
    assert_eq!(logs[0].level, LoggingLevel::Warning);
    assert_eq!(logs[0].logger.as_deref(), Some("rmcp.warning"));
    assert_eq!(logs[1].logger.as_deref(), Some("rmcp.barrier"));

    close_cleanly(connection).await;
}
