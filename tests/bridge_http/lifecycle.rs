//! The ends of a bridge's life: a server that dies (500 -32603), a shutdown that ends the
//! server's input and waits for it, and the command line run in a child process (this test
//! binary re-executed through `cli_entry_point`): SIGTERM/SIGINT exit 0, a server exiting on
//! its own exits 1, bad usage exits 2.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lean_beam_mcp_bridge::Mode;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{PATIENCE, call, modern, notification, request, server_bin, test_host_bin};
use crate::{
    ACCEPT_BOTH, CLI_ARGS_ENV, Events, LEGACY, Rig, assert_rejected, assert_result, client,
    modern_headers, modern_with, send, tools_list,
};

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
