//! One server under test: the shipped `lean-beam-mcp` over stdio with the fake behind it, its
//! calls and every answer to them, timed from the send to the arrival.
//!
//! Contract: `lake` is a wrapper (see [`lake_wrapper`]) that gives every `lake` process its own
//! trace file, named after its project and its pid, so what each `lake serve` was sent can be
//! replayed in its own order, and a program finds its own among those of earlier programs on
//! the same server. Answers are read by a thread that stamps them when they arrive; a wait
//! never sleeps, it blocks on the next answer up to the earliest deadline of a call still owed
//! one ([`ANSWER_BOUND`] after it was sent), so a hang becomes a recorded violation, not a
//! stuck suite. Machine paths (the project roots, the wrapper) are replaced by placeholders in
//! every answer, so answers of two servers on two projects compare.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::era::Era;
use crate::support::server_bin;

/// How long any call may take to answer: far beyond what a program needs, so only a hang
/// reaches it.
pub const ANSWER_BOUND: Duration = Duration::from_secs(20);

/// The `lake` every model server runs: the fake, tracing each process to a file of its own in
/// `$MODEL_TRACE_DIR`. Written once beside the binaries (atomically: test processes race).
pub fn lake_wrapper() -> &'static Path {
    static WRAPPER: OnceLock<PathBuf> = OnceLock::new();
    WRAPPER.get_or_init(|| {
        let fake = crate::harness::fake_lake();
        let path = fake.with_file_name("model-suite-lake");
        let script = format!(
            "#!/bin/sh\n\
             # The model suite's lake: the fake, with one trace file per lake process, named\n\
             # after the temporary directory of its project (its cwd is <tmp>/project).\n\
             tag=${{PWD%/project}}\n\
             FAKE_LEAN_TRACE=\"${{MODEL_TRACE_DIR:?}}/lake-${{tag##*/}}-$$.jsonl\"\n\
             export FAKE_LEAN_TRACE\n\
             exec '{}' \"$@\"\n",
            fake.display()
        );
        let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&temporary, script).expect("write the lake wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o755))
            .expect("make the lake wrapper executable");
        std::fs::rename(&temporary, &path).expect("install the lake wrapper");
        path
    })
}

/// One answer, as it arrived.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Its place in the order of everything sent and received.
    pub seq: u64,
    /// How long after its call was sent.
    pub after: Duration,
    /// The line, with placeholders for machine paths.
    pub raw: String,
    pub value: Value,
}

/// One call sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub id: i64,
    pub seq: u64,
    pub at: Instant,
    pub cancelled: Option<u64>,
    pub answers: Vec<Answer>,
}

/// How a server ended.
pub struct Ended {
    pub status: Option<i32>,
    pub stderr: String,
    pub problems: Vec<String>,
}

/// The prefix of the trace files of the `lake` processes of the project at `root` (see
/// [`lake_wrapper`]).
pub fn trace_prefix(root: &Path) -> String {
    let tag = root
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("lake-{tag}-")
}

pub struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    stderr: Option<JoinHandle<String>>,
    replacements: Vec<(String, String)>,
    seq: u64,
    pub sent: Vec<Sent>,
    by_id: HashMap<i64, usize>,
    /// Calls owed an answer: sent, not answered, not cancelled.
    owed: std::collections::BTreeSet<usize>,
    /// The first call of the current program (see [`Driver::begin`]).
    since: usize,
    /// Answers nobody asked for (or asked for by an earlier program), and server requests:
    /// each one a violation.
    pub strays: Vec<String>,
    /// Calls that outlived [`ANSWER_BOUND`].
    pub hung: Vec<usize>,
    /// The server closed its output.
    closed: bool,
}

impl Driver {
    /// Starts and initializes a server over `roots` (each shown as `[root]` in answers), its
    /// `lake` (the fake) in `era`.
    pub fn start(roots: &[&Path], args: &[String], era: Era, trace_dir: &Path) -> Driver {
        let lake = lake_wrapper();
        let mut child = Command::new(server_bin())
            .arg("--lake")
            .arg(lake)
            .args(["--status-delay-ms", "3600000", "--heartbeat-ms", "3600000"])
            .args(args)
            .envs(era.env())
            .env("MODEL_TRACE_DIR", trace_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send((Instant::now(), line)).is_err() {
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
        let replacements = vec![(lake.display().to_string(), "[lake]".to_owned())];
        let mut driver = Driver {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            replacements,
            seq: 0,
            sent: Vec::new(),
            by_id: HashMap::new(),
            owed: Default::default(),
            since: 0,
            strays: Vec::new(),
            hung: Vec::new(),
            closed: false,
        };
        driver.set_roots(roots);
        driver.write(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "model-suite", "version": "1"}}}),
        );
        let deadline = Instant::now() + ANSWER_BOUND;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (_, line) = driver
                .lines
                .recv_timeout(left)
                .expect("initialize answered");
            if serde_json::from_str::<Value>(&line).is_ok_and(|v| v["id"] == "init") {
                break;
            }
        }
        driver.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        driver
    }

    /// Starts a program: from now on an answer to an earlier call is a stray.
    pub fn begin(&mut self) {
        self.since = self.sent.len();
    }

    /// From now on answers show `roots` (and no earlier ones) as `[root]`.
    pub fn set_roots(&mut self, roots: &[&Path]) {
        self.replacements.truncate(1);
        for root in roots {
            let root = root.display().to_string();
            self.replacements.push((root, "[root]".to_owned()));
        }
    }

    fn write(&mut self, message: &Value) {
        self.seq += 1;
        if let Some(stdin) = self.stdin.as_mut() {
            // A server that died is seen at its exit; the write itself may fail meanwhile.
            let _ = writeln!(stdin, "{message}").and_then(|()| stdin.flush());
        }
    }

    /// Sends a `tools/call`; its index in [`Driver::sent`].
    pub fn call(&mut self, tool: &str, arguments: Value) -> usize {
        let id = self.sent.len() as i64 + 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                           "params": {"name": tool, "arguments": arguments}}));
        self.by_id.insert(id, self.sent.len());
        self.owed.insert(self.sent.len());
        self.sent.push(Sent {
            id,
            seq: self.seq,
            at: Instant::now(),
            cancelled: None,
            answers: Vec::new(),
        });
        self.sent.len() - 1
    }

    /// Cancels call `index`; whether it was still unanswered (only then does it count as
    /// cancelled).
    pub fn cancel(&mut self, index: usize) -> bool {
        let id = self.sent[index].id;
        self.write(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": id, "reason": "model suite"}}),
        );
        let open = self.sent[index].answers.is_empty();
        if open {
            self.sent[index].cancelled = Some(self.seq);
            self.owed.remove(&index);
        }
        open
    }

    /// Calls still owed an answer (cancelled ones owe none).
    pub fn outstanding(&self) -> usize {
        self.owed.len()
    }

    /// Reads the next answer, waiting at most until a call owed one is overdue; false when one
    /// is (it is recorded in [`Driver::hung`]) or the server closed its output.
    pub fn pump(&mut self) -> bool {
        let owed = self
            .owed
            .iter()
            .map(|&i| self.sent[i].at + ANSWER_BOUND)
            .min();
        let wait = owed.map_or(ANSWER_BOUND, |d| {
            d.saturating_duration_since(Instant::now())
        });
        match self.lines.recv_timeout(wait) {
            Ok((at, line)) => {
                self.take(at, &line);
                true
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                self.hung = (self.owed.iter().copied())
                    .filter(|&i| now >= self.sent[i].at + ANSWER_BOUND)
                    .collect();
                false
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.closed = true;
                false
            }
        }
    }

    /// Whether nothing more can be asked: a call hung, or the server closed its output.
    pub fn stopped(&self) -> bool {
        self.closed || !self.hung.is_empty()
    }

    /// Waits until call `index` is answered; false if it never is (see [`Driver::pump`]).
    pub fn wait_answered(&mut self, index: usize) -> bool {
        while self.sent[index].answers.is_empty() {
            if self.sent[index].cancelled.is_some() && self.outstanding() == 0 {
                return false;
            }
            if !self.pump() {
                return false;
            }
        }
        true
    }

    fn take(&mut self, at: Instant, line: &str) {
        self.seq += 1;
        let mut raw = line.to_owned();
        for (text, placeholder) in &self.replacements {
            raw = raw.replace(text, placeholder);
        }
        let Ok(value) = serde_json::from_str::<Value>(&raw) else {
            self.strays.push(format!("a line that is not JSON: {raw}"));
            return;
        };
        if value.get("method").is_some() {
            if value.get("id").is_some() {
                self.strays
                    .push(format!("a request from the server: {raw}"));
            }
            return;
        }
        let Some(&index) = value["id"].as_i64().and_then(|id| self.by_id.get(&id)) else {
            self.strays.push(format!("an answer to no call: {raw}"));
            return;
        };
        if index < self.since {
            self.strays
                .push(format!("an answer to a call of an earlier program: {raw}"));
        }
        self.owed.remove(&index);
        let sent = &mut self.sent[index];
        sent.answers.push(Answer {
            seq: self.seq,
            after: at.saturating_duration_since(sent.at),
            raw,
            value,
        });
    }

    /// Ends input, reads what is left (late answers to cancelled calls), and waits for the
    /// exit, each within [`ANSWER_BOUND`]; the calls, and the strays since the last
    /// [`Driver::take_strays`].
    pub fn finish(mut self) -> (Ended, Vec<Sent>, Vec<String>) {
        self.stdin = None;
        let deadline = Instant::now() + ANSWER_BOUND;
        let mut problems = Vec::new();
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok((at, line)) => self.take(at, &line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    problems.push("the server kept its output open after end of input".into());
                    break;
                }
            }
        }
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.code(),
                _ if Instant::now() > deadline => {
                    problems.push("the server did not exit after end of input".into());
                    let _ = self.child.kill();
                    break self.child.wait().ok().and_then(|s| s.code());
                }
                // Exit has no event to block on but the process itself: poll it briefly.
                _ => thread::sleep(Duration::from_millis(2)),
            }
        };
        let stderr = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let sent = std::mem::take(&mut self.sent);
        let strays = std::mem::take(&mut self.strays);
        (
            Ended {
                status,
                stderr,
                problems,
            },
            sent,
            strays,
        )
    }

    /// The strays so far, forgotten.
    pub fn take_strays(&mut self) -> Vec<String> {
        std::mem::take(&mut self.strays)
    }

    /// Kills the server (after a hang: nothing more is asked of it).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
