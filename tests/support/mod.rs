//! Drives a server binary over real pipes and records the exchange as a reviewable transcript.
//!
//! Every line sent is recorded as `→ {json}` and every line received as `← {json}`, in the order
//! they crossed the pipes, with machine-specific values (binary path, source commit, toolchain)
//! redacted so snapshots are the same on every machine. Waiting is always for an observable
//! message, with a generous timeout that only turns a hang into a failure.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub mod contract;

/// How long any single wait may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The shipped server binary.
pub fn server_bin() -> &'static str {
    env!("CARGO_BIN_EXE_lean-beam-mcp")
}

/// The test-host binary (built with `--features test-host`).
#[cfg(feature = "test-host")]
pub fn test_host_bin() -> &'static str {
    env!("CARGO_BIN_EXE_lean-beam-mcp-test-host")
}

/// The reserved `_meta` every modern request carries, plus `extra` keys.
pub fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "transcript-suite", "version": "1.0"}
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// A request object.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": id.into(), "method": method});
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// A modern request: `params` plus the reserved `_meta` (merged with any `_meta` in `params`).
pub fn modern(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let mut params = if params.is_null() { json!({}) } else { params };
    let extra = params.get("_meta").cloned().unwrap_or(json!({}));
    params["_meta"] = modern_meta(extra);
    request(id, method, params)
}

/// A notification object.
pub fn notification(method: &str, params: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "method": method});
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// A `tools/call` params object.
pub fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// Proof handles (`lbh1.<payload>.<mac>`) are random per process: a transcript shows each as
/// `[handle]`, while the test itself gets the real one.
fn hide_handles(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("lbh1.") {
        out.push_str(&rest[..at]);
        out.push_str("[handle]");
        let token = &rest[at..];
        let len = token
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(token.len());
        rest = &token[len..];
    }
    out.push_str(rest);
    out
}

/// Replaces machine-specific values with stable placeholders, in structured results and in the
/// JSON text that mirrors them. `source_commit` and `source_dirty` are removed: whether they are
/// present depends on whether the build ran in a git checkout.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.remove("source_commit");
            object.remove("source_dirty");
            for (key, field) in object.iter_mut() {
                match key.as_str() {
                    "server_binary" => *field = json!("[server_binary]"),
                    // The build a binary reports (beam_version), and only that.
                    "build" if field.is_object() => {
                        for part in ["rustc", "target", "profile"] {
                            if let Some(value) = field.get_mut(part) {
                                *value = json!(format!("[{part}]"));
                            }
                        }
                    }
                    "text" => {
                        if let Some(text) = field.as_str()
                            && let Ok(mut inner) = serde_json::from_str::<Value>(text)
                            && inner.is_object()
                        {
                            redact(&mut inner);
                            *field = json!(inner.to_string());
                        }
                    }
                    _ => redact(field),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

/// Asserts a JSON-RPC error answer: its code, and words its message must contain.
#[track_caller]
pub fn assert_error(response: &Value, code: i64, words: &str) {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert!(response.get("result").is_none(), "{response}");
    assert_eq!(response["error"]["code"], code, "{response}");
    let message = response["error"]["message"]
        .as_str()
        .expect("an error message");
    assert!(
        message.contains(words),
        "{message:?} should mention {words:?}"
    );
}

/// As [`assert_error`], and the answer carries exactly `id` (`null` included).
#[track_caller]
pub fn assert_error_for(response: &Value, code: i64, id: impl Into<Value>, words: &str) {
    assert_eq!(response.get("id"), Some(&id.into()), "{response}");
    assert_error(response, code, words);
}

/// How a finished process ended.
pub struct Finished {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it wrote to stderr.
    pub stderr: String,
    /// The full transcript.
    pub transcript: String,
}

/// A running server with piped stdin, stdout and stderr.
pub struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The thread that reads stdout into `lines`; it ends (closing stdout) once `lines` is gone.
    reader: Option<thread::JoinHandle<()>>,
    stderr: Option<thread::JoinHandle<String>>,
    held: VecDeque<Value>,
    transcript: Vec<String>,
    gates: Option<tempfile::TempDir>,
    /// Machine-specific text (a temporary directory) replaced in everything recorded.
    replacements: Vec<(String, String)>,
}

impl McpProcess {
    /// Starts the shipped server.
    pub fn server(args: &[&str]) -> Self {
        Self::server_with_env(args, &[])
    }

    /// Starts the shipped server with extra environment.
    pub fn server_with_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(server_bin());
        command.args(args).envs(env.iter().copied());
        Self::spawn(&mut command, None)
    }

    /// Starts the test host with a fresh gate directory.
    #[cfg(feature = "test-host")]
    pub fn test_host(args: &[&str]) -> Self {
        Self::test_host_with(args, &[])
    }

    /// Starts the test host with a fresh gate directory and extra environment.
    ///
    /// Unless `args` set `--status-delay-ms`, the timed liveness notice is off: on a loaded
    /// machine a gated call could otherwise become "slow" and add a notice to a transcript.
    #[cfg(feature = "test-host")]
    pub fn test_host_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let gates = tempfile::tempdir().expect("gate directory");
        let mut command = Command::new(test_host_bin());
        command
            .args(args)
            // The test host reads the first occurrence of a flag: `args` win.
            .args(["--status-delay-ms", "3600000"])
            .env("LEAN_BEAM_MCP_TEST_GATES", gates.path());
        for (key, value) in env {
            command.env(key, value);
        }
        Self::spawn(&mut command, Some(gates))
    }

    fn spawn(command: &mut Command, gates: Option<tempfile::TempDir>) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut err = child.stderr.take().expect("stderr");
        let stderr = Some(thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        }));
        let stdin = child.stdin.take();
        McpProcess {
            child,
            stdin,
            lines,
            reader: Some(reader),
            stderr,
            held: VecDeque::new(),
            transcript: Vec::new(),
            gates,
            replacements: Vec::new(),
        }
    }

    /// From now on, `text` (a temporary directory, say) is recorded and returned as
    /// `placeholder`, so transcripts are the same on every machine.
    pub fn replace(&mut self, text: &str, placeholder: &str) {
        self.replacements
            .push((text.to_owned(), placeholder.to_owned()));
    }

    fn replaced(&self, line: &str) -> String {
        let mut line = line.to_owned();
        for (text, placeholder) in &self.replacements {
            line = line.replace(text, placeholder);
        }
        line
    }

    /// The operating-system process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The gate directory of a test host.
    pub fn gate_dir(&self) -> &Path {
        self.gates
            .as_ref()
            .expect("only the test host has gates")
            .path()
    }

    /// Opens a gate: every `gate` call waiting on it completes.
    pub fn open_gate(&mut self, gate: &str) {
        self.note(&format!("open gate {gate}"));
        std::fs::write(self.gate_dir().join(gate), b"open").expect("open gate");
    }

    /// Sends one message as a line.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// Sends raw text followed by a newline, recorded as is.
    pub fn send_raw(&mut self, line: &str) {
        let recorded = hide_handles(&self.replaced(line));
        self.transcript.push(format!("→ {recorded}"));
        self.write_bytes(format!("{line}\n").as_bytes());
    }

    /// Writes bytes without recording them (for huge or binary input).
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush to the server");
    }

    /// Records a note in the transcript (what the test did out of band).
    pub fn note(&mut self, text: &str) {
        self.transcript.push(format!("# {text}"));
    }

    /// Closes the server's stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.transcript.push("# end of input".into());
        self.stdin = None;
    }

    /// Closes the server's stdout, then sends a `ping` so that the server finds no reader when
    /// it answers. (The reader lets go of stdout at the next line it reads, which the first
    /// `ping`'s answer provides.) Writes that fail because the server has gone are ignored.
    pub fn close_stdout(&mut self) {
        self.transcript.push("# stdout closed".into());
        self.lines = channel().1;
        self.held.clear();
        let mut ping = |id: &str| {
            if let Some(stdin) = self.stdin.as_mut() {
                let ping = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
                let _ = writeln!(stdin, "{ping}").and_then(|()| stdin.flush());
            }
        };
        ping("stdout-closing");
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the stdout reader");
        }
        ping("stdout-closed");
    }

    /// The next message from the server, waiting for it.
    pub fn recv(&mut self) -> Value {
        if let Some(held) = self.held.pop_front() {
            return held;
        }
        self.read_next()
            .unwrap_or_else(|| panic!("no message from the server\n{}", self.transcript()))
    }

    fn read_next(&mut self) -> Option<Value> {
        let deadline = Instant::now() + PATIENCE;
        let line = match self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("timed out waiting for the server\n{}", self.transcript())
            }
            Err(RecvTimeoutError::Disconnected) => return None,
        };
        let line = self.replaced(&line);
        let mut value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line:?}"));
        redact(&mut value);
        self.transcript
            .push(format!("← {}", hide_handles(&value.to_string())));
        Some(value)
    }

    /// Every message up to and including the response to `id`, in arrival order.
    pub fn until_response(&mut self, id: &Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.recv();
            let done = message.get("id") == Some(id) && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// The response to `id`; messages before it are kept for later `recv` calls.
    pub fn response(&mut self, id: &Value) -> Value {
        let mut seen = self.until_response(id);
        let response = seen.pop().expect("a response");
        for message in seen.into_iter().rev() {
            self.held.push_front(message);
        }
        response
    }

    /// Sends a request and returns its response.
    pub fn ask(&mut self, message: Value) -> Value {
        self.send(&message);
        let id = message["id"].clone();
        self.response(&id)
    }

    /// Waits for the next notification satisfying `matches`, keeping other messages for later.
    pub fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let mut skipped = Vec::new();
        let found = loop {
            let message = match self.held.pop_front() {
                Some(message) => message,
                None => self
                    .read_next()
                    .unwrap_or_else(|| panic!("server ended before {what}\n{}", self.transcript())),
            };
            if matches(&message) {
                break message;
            }
            skipped.push(message);
        };
        for message in skipped.into_iter().rev() {
            self.held.push_front(message);
        }
        found
    }

    /// Completes a legacy handshake: `initialize`, then `notifications/initialized`.
    pub fn initialize_legacy(&mut self) -> Value {
        let response = self.ask(request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "transcript-suite", "version": "1.0"}
            }),
        ));
        self.send(&notification("notifications/initialized", Value::Null));
        response
    }

    /// The transcript so far.
    pub fn transcript(&self) -> String {
        self.transcript.join("\n") + "\n"
    }

    /// Closes stdin, reads everything left, and waits for the process to exit.
    pub fn finish(mut self) -> Finished {
        if self.stdin.is_some() {
            self.close_stdin();
        }
        self.finish_without_closing()
    }

    /// Ends input, checks the clean exit every well-behaved run ends with (status 0, nothing on
    /// stderr), and returns the transcript.
    #[track_caller]
    pub fn finish_clean(self) -> String {
        let finished = self.finish();
        assert_eq!(
            finished.status.code(),
            Some(0),
            "exit: {:?}",
            finished.status
        );
        assert_eq!(finished.stderr, "");
        finished.transcript
    }

    /// Reads everything left and waits for the process to exit, leaving stdin as it is.
    pub fn finish_without_closing(mut self) -> Finished {
        while let Some(message) = self.held.pop_front() {
            drop(message);
        }
        while self.read_next().is_some() {}
        let status = wait_with_patience(&mut self.child);
        let stderr = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        Finished {
            status,
            stderr,
            transcript: self.transcript(),
        }
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a file a host or the fake Lean writes to mark an event (a gate entered, a cleanup
/// done). The same polling the gates use; a timeout only turns a hang into a failure.
pub fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + PATIENCE;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(2));
    }
}

/// A live process's peak resident set (VmHWM), in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

fn wait_with_patience(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server did not exit within {PATIENCE:?}");
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Runs a binary with `input` on stdin (closed afterwards) and returns its redacted transcript
/// of output lines, preceded by the input lines, plus the exit status and stderr.
pub fn one_shot(bin: &str, args: &[&str], input: &[&str]) -> Finished {
    let mut process = McpProcess::spawn(Command::new(bin).args(args), None);
    for line in input {
        process.send_raw(line);
    }
    process.finish()
}

/// A time becomes `[t]`: right-aligned in the same width in the report's time column (after
/// two spaces or more), else after one space.
pub fn hide_times(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let spaces = chars[i..].iter().take_while(|c| **c == ' ').count();
        let digits_from = i + spaces;
        let digits = chars[digits_from..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == '.')
            .count();
        let rest: String = chars[digits_from + digits..].iter().collect();
        let unit = [" ms", " s"].into_iter().find(|u| {
            rest.starts_with(u)
                && rest[u.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| " .,)".contains(c))
        });
        match unit {
            Some(unit) if spaces > 0 && digits > 0 => {
                let width = if spaces > 1 {
                    spaces + digits + unit.len()
                } else {
                    4
                };
                out.push_str(&" ".repeat(width.saturating_sub(3)));
                out.push_str("[t]");
                i = digits_from + digits + unit.len();
            }
            _ => {
                out.extend(&chars[i..digits_from.max(i + 1)]);
                i = digits_from.max(i + 1);
            }
        }
    }
    out
}

/// The directory holding this suite's snapshots.
pub fn snapshot_dir(suite: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(suite)
}

/// Asserts a transcript snapshot stored under `snapshots/<suite>/`.
#[macro_export]
macro_rules! assert_transcript {
    ($suite:expr, $name:expr, $transcript:expr) => {
        insta::with_settings!({
            snapshot_path => $crate::support::snapshot_dir($suite),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $transcript);
        });
    };
}
