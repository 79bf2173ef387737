//! Drives the shipped server against the fake Lean (`fake-lake`) on a fresh copy of the fixture
//! project, and observes what Lean was sent (the fake's trace) and which processes live in the
//! project (every `lake serve` and worker has it as its working directory).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::contract::Contract;
use crate::support::{McpProcess, PATIENCE, call, modern, request, server_bin};

/// The real `lake` the real-Lean lane runs against (`LEAN_BEAM_TEST_LAKE`), if it does.
pub fn real_lake() -> Option<PathBuf> {
    std::env::var_os("LEAN_BEAM_TEST_LAKE").map(PathBuf::from)
}

/// The `lake` the suite runs: the real one in the real-Lean lane, else the fake.
pub fn lake() -> PathBuf {
    real_lake().unwrap_or_else(fake_lake)
}

/// Whether a scenario needs the fake (its fault modes, gates or trace) and so cannot run in the
/// real-Lean lane; says so by name when it is skipped.
pub fn fake_only(scenario: &str) -> bool {
    let real = real_lake().is_some();
    if real {
        println!("SKIPPED under real Lean: {scenario} (needs the fake's fault modes or trace)");
    }
    real
}

/// Pins a transcript, against the fake only: real Lean's answers differ in their details.
pub fn snapshot(name: &str, transcript: String) {
    if real_lake().is_none() {
        crate::assert_transcript!("lean_host", name, transcript);
    }
}

/// The fake `lake`, built beside the server by `cargo test --workspace`.
pub fn fake_lake() -> PathBuf {
    let dir = Path::new(server_bin()).parent().expect("target directory");
    let fake = dir.join("fake-lake");
    assert!(
        fake.exists(),
        "{} is missing: build it with `cargo build -p lean-beam-fake-lean` (scripts/test.sh does)",
        fake.display()
    );
    fake
}

/// The LSP version Lean gets with a real document's first `didOpen`: real documents' LSP
/// versions lie above 10⁹, twins' below (`session/mirror.rs`), one more per change or revival.
pub const FIRST_LSP_VERSION: i64 = 1_000_000_001;

/// A copy of `tests/fixtures/lean-project` in a temporary directory.
pub struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    /// A fresh copy of the fixture project.
    pub fn fixture() -> Project {
        Project::fixture_in(tempfile::tempdir().expect("a temporary directory"))
    }

    /// A fresh copy of the fixture project, as `<dir>/project`.
    pub fn fixture_in(dir: tempfile::TempDir) -> Project {
        let root = dir.path().join("project");
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lean-project"),
            &root,
        );
        let root = std::fs::canonicalize(root).expect("canonical root");
        Project { _dir: dir, root }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `{"root": ...}`.
    pub fn descriptor(&self) -> Value {
        json!({"root": self.root})
    }

    /// Writes a file of the project.
    pub fn write(&self, relative: &str, text: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(path, text).expect("write a project file");
    }

    /// Reads a file of the project.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative)).expect("read a project file")
    }

    /// The processes whose working directory is in this project (`lake serve`, its workers).
    pub fn processes(&self) -> Vec<u32> {
        processes_in(&self.root)
    }

    /// Waits until no process lives in the project (a timeout only turns a hang into a failure).
    pub fn wait_no_processes(&self) {
        wait_no_processes_in(&self.root);
    }
}

/// The processes whose working directory is in `root`.
pub fn processes_in(root: &Path) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cwd) = std::fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|stat| stat.contains(") Z "))
            .unwrap_or(true);
        if cwd.starts_with(root) && !zombie {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no process lives in `root` (a timeout only turns a hang into a failure).
pub fn wait_no_processes_in(root: &Path) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = processes_in(root);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes outlived the server: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits until the process `pid` no longer lives in `root`.
pub fn wait_gone_from(root: &Path, pid: u32) {
    let deadline = Instant::now() + PATIENCE;
    while processes_in(root).contains(&pid) {
        assert!(Instant::now() < deadline, "process {pid} outlived its use");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Copies a directory tree, leaving out any `.lake` build directory.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the fixture") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            if entry.file_name() != ".lake" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).expect("copy a file");
        }
    }
}

/// The server, speaking the legacy family (or the modern one, [`Lean::start_modern`]), with
/// the fake Lean behind it. When it is dropped (after the server, which the drop kills), the
/// Lean contract check runs over what Lean sent (`contract`).
pub struct Lean {
    /// The MCP process.
    pub server: McpProcess,
    /// The scratch directory (the fake's trace, the gates) and the contract check.
    contract: Contract,
    next_id: i64,
    /// Calls go out in the modern family (every request carries its `_meta`).
    modern: bool,
}

impl Lean {
    /// Starts the server with the fake `lake`, initializes it, and redacts `projects`' roots
    /// from the transcript. `env` goes to the fake (FAKE_LEAN_* switches); `args` to the server.
    pub fn start(projects: &[&Project], args: &[&str], env: &[(&str, &str)]) -> Lean {
        let mut lean = Lean::started(projects, args, env);
        lean.server.initialize_legacy();
        lean
    }

    /// [`Lean::start`] in the modern family: no `initialize`, and every call carries the
    /// reserved `_meta`.
    pub fn start_modern(projects: &[&Project], args: &[&str], env: &[(&str, &str)]) -> Lean {
        let mut lean = Lean::started(projects, args, env);
        lean.modern = true;
        lean
    }

    fn started(projects: &[&Project], args: &[&str], env: &[(&str, &str)]) -> Lean {
        let contract = Contract::new(args);
        let trace = contract.fake_trace();
        let gates = contract.dir().join("gates");
        std::fs::create_dir_all(&gates).expect("gate directory");
        let checked = contract.server_args(args);
        let lake = lake();
        let mut all_args: Vec<&str> = Vec::new();
        let named = args.contains(&"--lake") || env.iter().any(|(k, _)| *k == "LEAN_BEAM_LAKE");
        if !named {
            all_args.extend(["--lake", lake.to_str().expect("utf-8 path")]);
        }
        all_args.extend_from_slice(args);
        all_args.extend(checked.iter().map(String::as_str));
        // No timed liveness notice unless a test sets the delay.
        if !args.contains(&"--status-delay-ms") {
            all_args.extend_from_slice(&["--status-delay-ms", "3600000"]);
        }
        // Nor heartbeats: a slow machine would otherwise add them to transcripts.
        if !args.contains(&"--heartbeat-ms") {
            all_args.extend_from_slice(&["--heartbeat-ms", "3600000"]);
        }
        let mut all_env: Vec<(&str, &str)> = vec![
            ("FAKE_LEAN_TRACE", trace.to_str().expect("utf-8 path")),
            ("FAKE_LEAN_GATE_DIR", gates.to_str().expect("utf-8 path")),
        ];
        all_env.extend_from_slice(env);
        let mut server = McpProcess::server_with_env(&all_args, &all_env);
        for (n, project) in projects.iter().enumerate() {
            let placeholder = if n == 0 {
                "[root]".to_string()
            } else {
                format!("[root{}]", n + 1)
            };
            server.replace(&project.root().display().to_string(), &placeholder);
        }
        server.replace(&lake.display().to_string(), "[fake-lake]");
        Lean {
            server,
            contract,
            next_id: 1,
            modern: false,
        }
    }

    /// The next request id.
    pub fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Calls a tool and returns the whole response.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.id();
        let params = call(tool, arguments);
        let message = if self.modern {
            modern(id, "tools/call", params)
        } else {
            request(id, "tools/call", params)
        };
        self.server.ask(message)
    }

    /// Calls a tool that must succeed; its structured content.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.call(tool, arguments);
        assert_eq!(
            response["result"]["isError"], false,
            "{tool} failed: {response}"
        );
        response["result"]["structuredContent"].clone()
    }

    /// Calls a tool that must fail with `code`; its structured error.
    pub fn fails(&mut self, tool: &str, arguments: Value, code: &str) -> Value {
        let response = self.call(tool, arguments);
        let error = &response["result"]["structuredContent"];
        assert_eq!(
            response["result"]["isError"], true,
            "{tool} succeeded: {response}"
        );
        assert_eq!(error["code"], code, "{response}");
        error.clone()
    }

    /// The gate directory of the fake's `gate` directives.
    pub fn gates(&self) -> PathBuf {
        self.contract.dir().join("gates")
    }

    /// Opens a fake gate.
    pub fn open_gate(&mut self, gate: &str) {
        self.server.note(&format!("open Lean gate {gate}"));
        std::fs::write(self.gates().join(gate), b"open").expect("open a gate");
    }

    /// Waits until the fake's elaboration has reached a gate.
    pub fn gate_entered(&mut self, gate: &str) {
        crate::support::wait_for_file(&self.gates().join(format!("{gate}.entered")));
        self.server.note(&format!("Lean reached gate {gate}"));
    }

    /// Everything the fake recorded.
    pub fn trace(&self) -> Vec<Value> {
        read_trace(&self.contract.fake_trace())
    }

    /// The requests and notifications the fake received, as `method` names: what the host asked
    /// or told Lean. Answers to Lean's own requests (the watcher registration, the refresh
    /// requests Lean sends after each worker start) are Lean's initiative and not counted.
    pub fn received(&self) -> Vec<String> {
        self.trace()
            .iter()
            .filter(|t| t["dir"] == "in")
            .filter_map(|t| t["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// What the fake has received, once it has our answer to its watcher registration: Lean
    /// asks for it when the handshake ends, and the answer may reach it after the first call's
    /// own messages (the host answers as it reads, while the call goes on), so a window of
    /// messages that starts after the first call starts here.
    /// (A real Lean leaves no trace: nothing to wait for.)
    pub fn received_after_handshake(&self) -> Vec<String> {
        if real_lake().is_some() {
            return self.received();
        }
        self.wait_received("the answer to register_lean_watcher", |t| {
            t["id"] == "register_lean_watcher" && t["response"] == true
        });
        self.received()
    }

    /// Waits until the fake has received a message satisfying `matches`.
    pub fn wait_received(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(found) = self
                .trace()
                .into_iter()
                .find(|t| t["dir"] == "in" && matches(t))
            {
                return found;
            }
            assert!(Instant::now() < deadline, "Lean never received {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the fake has received `n` messages satisfying `matches` (notifications reach
    /// it after the call that sent them answers); what it received by then, as `received`.
    pub fn wait_received_count(
        &self,
        what: &str,
        n: usize,
        matches: impl Fn(&Value) -> bool,
    ) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let trace = self.trace();
            let seen = trace
                .iter()
                .filter(|t| t["dir"] == "in" && matches(t))
                .count();
            if seen >= n {
                return self.received();
            }
            assert!(
                Instant::now() < deadline,
                "Lean received {seen} of {n} {what}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Protocol violations the fake recorded (there should be none).
    pub fn violations(&self) -> Vec<Value> {
        self.trace()
            .into_iter()
            .filter(|t| t.get("violation").is_some())
            .collect()
    }

    /// Ends the server cleanly, then checks that Lean recorded no protocol violation, those
    /// only seen at its exit included, and that it sent nothing Lean never sends; the
    /// transcript.
    #[track_caller]
    pub fn finish_without_violations(self) -> String {
        let Lean {
            server,
            mut contract,
            ..
        } = self;
        let transcript = server.finish_clean();
        let violations: Vec<Value> = read_trace(&contract.fake_trace())
            .into_iter()
            .filter(|t| t.get("violation").is_some())
            .collect();
        assert_eq!(violations, Vec::<Value>::new());
        contract.check();
        transcript
    }
}

fn read_trace(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The twin files under the project's `.lake/beam/twins/<owner>/`: each file's path relative to
/// the project root, and relative to its owner's directory (the real file's relative path).
pub fn twin_files(project: &Project) -> Vec<(String, String)> {
    let dir = project.root().join(".lake/beam/twins");
    let mut found = Vec::new();
    let mut pending = vec![dir.clone()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
                continue;
            }
            let path = entry.path();
            let in_root = path
                .strip_prefix(project.root())
                .unwrap()
                .display()
                .to_string();
            let owned = path.strip_prefix(&dir).unwrap().components().skip(1);
            let owned = owned.collect::<PathBuf>().display().to_string();
            found.push((in_root, owned));
        }
    }
    found.sort();
    found
}

/// Whether a URI is one of the host's hidden twins (links under `.lake/beam/twins`).
pub fn is_twin_uri(uri: &str) -> bool {
    uri.contains("/.lake/beam/")
}

/// Replays what one fake `lake serve` was told to open and close (its trace; a `start` event
/// begins another server's life), calling `seen` with the URIs open after each change.
pub fn replay_open(trace: &[Value], mut seen: impl FnMut(&std::collections::BTreeSet<String>)) {
    let mut open = std::collections::BTreeSet::new();
    for entry in trace {
        if entry["event"] == "start" {
            open.clear();
        }
        if entry["dir"] != "in" {
            continue;
        }
        let Some(uri) = entry["uri"].as_str() else {
            continue;
        };
        match entry["method"].as_str() {
            Some("textDocument/didOpen") => {
                open.insert(uri.to_owned());
            }
            Some("textDocument/didClose") => {
                open.remove(uri);
            }
            _ => continue,
        }
        seen(&open);
    }
}

/// The goals' targets of a speculative run's proof state.
pub fn targets(result: &Value) -> Vec<String> {
    result["proof_state"]["goals"]
        .as_array()
        .unwrap_or_else(|| panic!("no proof state: {result}"))
        .iter()
        .map(|g| g["target"].as_str().unwrap().to_owned())
        .collect()
}

/// `bytes`' SHA-256 in lowercase hex, as receipts name texts and files.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `{"workspace": ..., "path": ...}` plus `more`.
pub fn args(project: &Project, path: &str, more: Value) -> Value {
    let mut args = json!({"workspace": project.descriptor(), "path": path});
    if let Value::Object(more) = more {
        args.as_object_mut().expect("object").extend(more);
    }
    args
}
