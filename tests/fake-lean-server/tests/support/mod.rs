//! A tiny LSP client for driving `fake-lake serve` over real pipes: a copy of the fixture
//! project in a temporary directory, the server started in it with chosen environment
//! switches, framed messages both ways, and waits that end on messages or events. The only
//! timeout is a generous safety net that fails the test instead of hanging it.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const SAFETY_NET: Duration = Duration::from_secs(30);

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fake-lake")
}

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/lean-project")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        if name == ".lake" {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// A temporary copy of the fixture project (`root`) plus a trace file and a gate directory.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub trace: PathBuf,
    pub gates: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        Project::under(".")
    }

    /// A copy whose root is `<tmp>/<parent>/project`.
    pub fn under(parent: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(parent).join("project");
        copy_dir(&fixture_dir(), &root);
        let root = std::fs::canonicalize(root).unwrap();
        let gates = dir.path().join("gates");
        std::fs::create_dir_all(&gates).unwrap();
        let trace = dir.path().join("trace.jsonl");
        Project {
            dir,
            root,
            trace,
            gates,
        }
    }

    pub fn uri(&self, rel: &str) -> String {
        format!("file://{}", self.root.join(rel).display())
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// The trace lines recorded so far.
    pub fn trace_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.trace)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn violations(&self) -> Vec<Value> {
        self.trace_lines()
            .into_iter()
            .filter(|l| l.get("violation").is_some())
            .collect()
    }

    /// The Lean contract violations the server recorded (`src/contract.rs`): messages Lean
    /// never sends.
    pub fn contract_violations(&self) -> Vec<Value> {
        self.trace_lines()
            .into_iter()
            .filter(|l| l.get("contract").is_some())
            .collect()
    }

    /// Waits (by polling the file system, bounded by the safety net) for a gate's
    /// `.entered` marker — the fake's announcement that elaboration reached the gate.
    pub fn await_gate(&self, name: &str) {
        let marker = self.gates.join(format!("{name}.entered"));
        let start = std::time::Instant::now();
        while !marker.exists() {
            assert!(start.elapsed() < SAFETY_NET, "gate {name} never entered");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    pub fn open_gate(&self, name: &str) {
        std::fs::write(self.gates.join(name), "").unwrap();
    }
}

pub struct Client {
    pub project: Project,
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Value>>,
    /// Everything received, in order.
    pub log: Vec<Value>,
    /// Received but not yet consumed by a wait.
    backlog: Vec<Value>,
    next_id: i64,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    /// Answer server→client requests automatically.
    pub auto_answer: bool,
    /// The Lean contract violations were taken by the test: the drop does not check them.
    contract_taken: bool,
}

#[derive(Default)]
pub struct Opts {
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
}

impl Opts {
    pub fn env(mut self, k: &str, v: &str) -> Opts {
        self.env.push((k.into(), v.into()));
        self
    }
}

impl Client {
    pub fn start(project: Project, opts: Opts) -> Client {
        let mut cmd = Command::new(bin());
        cmd.arg("serve");
        if !opts.args.is_empty() {
            cmd.arg("--").args(&opts.args);
        }
        for (k, _) in std::env::vars() {
            if k.starts_with("FAKE_LEAN") || k.starts_with("FAKE_LAKE") {
                cmd.env_remove(k);
            }
        }
        cmd.current_dir(&project.root)
            .env("FAKE_LEAN_TRACE", &project.trace)
            .env("FAKE_LEAN_GATE_DIR", &project.gates)
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().expect("fake-lake starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut r = BufReader::new(stderr_pipe);
            let mut buf = Vec::new();
            while r.read_until(b'\n', &mut buf).unwrap_or(0) > 0 {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf));
                buf.clear();
            }
        });
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_frame(&mut r) {
                    Some(v) => {
                        if tx.send(Some(v)).is_err() {
                            return;
                        }
                    }
                    None => {
                        let _ = tx.send(None);
                        return;
                    }
                }
            }
        });
        Client {
            project,
            child,
            stdin,
            rx,
            log: Vec::new(),
            backlog: Vec::new(),
            next_id: 1,
            stderr,
            stderr_reader: Some(stderr_reader),
            auto_answer: true,
            contract_taken: false,
        }
    }

    /// Starts on a fresh fixture copy and completes the handshake.
    pub fn ready(opts: Opts) -> Client {
        let mut c = Client::start(Project::new(), opts);
        c.handshake(json!({}));
        c
    }

    /// The server's stderr so far (a stream unordered with stdout: after [`Client::finish`]
    /// it is complete, before it use [`Client::await_stderr`]).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits until the server's stderr contains `needle`.
    pub fn await_stderr(&self, needle: &str) {
        eventually(&format!("{needle:?} on stderr"), || {
            self.stderr().contains(needle)
        });
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, v: Value) {
        let body = serde_json::to_vec(&v).unwrap();
        self.send_raw(
            &[
                format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
                &body,
            ]
            .concat(),
        );
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        let _ = w.write_all(bytes).and_then(|_| w.flush());
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message from the server (`None` at EOF).
    fn next(&mut self) -> Option<Value> {
        let v = match self.rx.recv_timeout(SAFETY_NET) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no message from the server in time; stderr:\n{}",
                    self.stderr()
                )
            }
            Err(RecvTimeoutError::Disconnected) => None,
        }?;
        self.log.push(v.clone());
        // A request read after the client closed its side (`finish`) goes unanswered.
        if self.auto_answer
            && self.stdin.is_some()
            && v.get("method").is_some()
            && let Some(id) = v.get("id").cloned()
        {
            self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}));
        }
        Some(v)
    }

    /// Waits for the first message matching `pred`; messages skipped on the way stay
    /// available to later waits.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        loop {
            match self.next() {
                Some(v) if pred(&v) => return v,
                Some(v) => self.backlog.push(v),
                None => panic!(
                    "server closed its output while waiting for {what}; stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    pub fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.wait_for("a response", move |v| {
            v.get("method").is_none() && v.get("id") == Some(&id)
        })
    }

    pub fn result(&mut self, id: &Value) -> Value {
        let r = self.response(id);
        assert!(r.get("error").is_none(), "unexpected error: {r}");
        r["result"].clone()
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.result(&id)
    }

    pub fn error_code(&mut self, id: &Value) -> i64 {
        let r = self.response(id);
        r["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error, got {r}"))
    }

    /// Drains the server's output to EOF and returns the exit status code.
    pub fn finish(&mut self) -> Option<i32> {
        self.stdin.take();
        while let Some(v) = self.next() {
            self.backlog.push(v);
        }
        let code = self.child.wait().ok().and_then(|s| s.code());
        if let Some(r) = self.stderr_reader.take() {
            let _ = r.join();
        }
        code
    }

    pub fn handshake(&mut self, capabilities: Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities}),
        );
        let init = self.result(&id);
        self.notify("initialized", json!({}));
        self.wait_for("register_lean_watcher", |v| {
            v["method"] == "client/registerCapability"
        });
        init
    }

    pub fn open(&mut self, rel: &str) -> String {
        let uri = self.project.uri(rel);
        let text = self.project.read(rel);
        self.open_text(&uri, &text, 1, None);
        uri
    }

    pub fn open_text(&mut self, uri: &str, text: &str, version: i64, mode: Option<&str>) {
        let mut p = json!({"textDocument": {"uri": uri, "languageId": "lean", "version": version, "text": text}});
        if let Some(m) = mode {
            p["dependencyBuildMode"] = json!(m);
        }
        self.notify("textDocument/didOpen", p);
    }

    pub fn change_full(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    pub fn close(&mut self, uri: &str) {
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    /// `waitForDiagnostics` for the version, returning the messages about `uri` received
    /// before its response (consumed from the backlog).
    pub fn sync(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let id = self.request(
            "textDocument/waitForDiagnostics",
            json!({"uri": uri, "version": version}),
        );
        let start = self.log.len();
        let r = self.response(&id);
        assert_eq!(r["result"], json!({}), "waitForDiagnostics: {r}");
        let _ = start;
        let about =
            |v: &Value| v["params"]["uri"] == uri || v["params"]["textDocument"]["uri"] == uri;
        let msgs: Vec<Value> = self.backlog.iter().filter(|v| about(v)).cloned().collect();
        self.backlog.retain(|v| !about(v));
        msgs
    }

    /// The diagnostics of the last publish among `msgs`.
    pub fn last_diagnostics(msgs: &[Value]) -> Vec<Value> {
        msgs.iter()
            .rev()
            .find(|m| m["method"] == "textDocument/publishDiagnostics")
            .and_then(|m| m["params"]["diagnostics"].as_array().cloned())
            .unwrap_or_default()
    }

    pub fn pos(line: u32, character: u32) -> Value {
        json!({"line": line, "character": character})
    }

    pub fn at(uri: &str, line: u32, character: u32) -> Value {
        json!({"textDocument": {"uri": uri}, "position": Client::pos(line, character)})
    }

    /// Worker pids the server reported starting.
    pub fn worker_pids(&self) -> Vec<i32> {
        self.project
            .trace_lines()
            .iter()
            .filter(|l| l["event"] == "worker-spawned")
            .filter_map(|l| l["pid"].as_i64().map(|p| p as i32))
            .collect()
    }

    /// Kills the server's whole process group.
    pub fn kill_group(&mut self) {
        // SAFETY: plain signal delivery to a process group we created.
        unsafe {
            libc::killpg(self.child.id() as i32, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }

    /// The Lean contract violations so far, which the test then judges itself (the drop does
    /// not).
    pub fn take_contract_violations(&mut self) -> Vec<Value> {
        self.contract_taken = true;
        self.project.contract_violations()
    }
}

/// Ends the server; then, unless the test took them or is failing already, fails the test on
/// any message it sent that Lean never sends.
impl Drop for Client {
    fn drop(&mut self) {
        // SAFETY: plain signal delivery to a process group we created.
        unsafe {
            libc::killpg(self.child.id() as i32, libc::SIGKILL);
        }
        let _ = self.child.wait();
        if self.contract_taken || std::thread::panicking() {
            return;
        }
        let broken = self.project.contract_violations();
        assert!(
            broken.is_empty(),
            "the fake sent what Lean never sends (Lean contract, README):\n{}",
            broken
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = Some(v.parse::<usize>().map_err(|_| line.to_owned()));
        }
    }
    match len? {
        // A length no message has (the `huge` garbage fault): reported, never allocated.
        Ok(n) if n > 64 << 20 => Some(json!({"garbage_header": format!("Content-Length: {n}")})),
        Ok(n) => {
            let mut body = vec![0; n];
            r.read_exact(&mut body).ok()?;
            Some(
                serde_json::from_slice(&body)
                    .unwrap_or_else(|_| json!({"garbage": String::from_utf8_lossy(&body)})),
            )
        }
        Err(header) => Some(json!({"garbage_header": header})),
    }
}

/// Is the process gone (or a zombie)?
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Polls (bounded by the safety net) until `cond` holds — for process-table facts that no
/// message announces.
pub fn eventually(what: &str, cond: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < SAFETY_NET, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}
