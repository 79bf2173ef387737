//! The server under a scenario: `lean-beam-mcp` spawned with the fake `lake`, its answers read
//! on a thread of their own, its peak memory, and the Lean processes it has alive.
//!
//! Lean processes are the server's descendants (the fake's `lake serve` and the workers it
//! starts per open document), counted from `/proc`; a watcher thread samples them every
//! [`SAMPLE`] for as long as the server runs, and [`Server::count_lean`] samples at a moment
//! the scenario chooses, so a bound is checked where it must hold.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

/// How often the watcher counts Lean processes.
pub const SAMPLE: Duration = Duration::from_millis(25);

/// A server that stays silent this long has failed the scenario.
const SILENCE: Duration = Duration::from_secs(60);

pub struct Server {
    child: Child,
    input: Option<std::io::BufWriter<ChildStdin>>,
    answers: Receiver<Value>,
    peak_lean: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
}

impl Server {
    /// Starts `server --lake <lake>` with `flags`, its stderr into `log`, and opens the legacy
    /// family (`initialize`) unless `modern`.
    pub fn start(
        server: &Path,
        lake: &Path,
        flags: &[&str],
        log: &Path,
        modern: bool,
    ) -> Result<Server, String> {
        let stderr = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = Command::new(server)
            .arg("--lake")
            .arg(lake)
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", server.display()))?;
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines().map_while(Result::ok) {
                let parsed = serde_json::from_str(&line)
                    .unwrap_or_else(|e| json!({"unreadable": line, "error": e.to_string()}));
                if tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        let peak_lean = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let (pid, peak, stop) = (child.id(), peak_lean.clone(), done.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(descendants(pid), Ordering::Relaxed);
                std::thread::sleep(SAMPLE);
            }
        });
        let input = Some(std::io::BufWriter::new(child.stdin.take().expect("piped")));
        let mut server = Server {
            child,
            input,
            answers,
            peak_lean,
            done,
        };
        if !modern {
            let opening = json!({"jsonrpc": "2.0", "id": "open", "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "bench-lean-scenarios", "version": "1"}}});
            server.send(&opening)?;
            server.flush()?;
            let answer = server.next("initialize")?;
            if answer["id"] != "open" || answer.get("result").is_none() {
                return Err(format!("initialize: {answer}"));
            }
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        }
        Ok(server)
    }

    /// Queues one message (written at the next [`Server::flush`] or when the buffer fills).
    pub fn send(&mut self, message: &Value) -> Result<(), String> {
        let input = self.input.as_mut().ok_or("the input is closed")?;
        serde_json::to_writer(&mut *input, message).map_err(|e| format!("writing: {e}"))?;
        input.write_all(b"\n").map_err(|e| format!("writing: {e}"))
    }

    pub fn flush(&mut self) -> Result<(), String> {
        let input = self.input.as_mut().ok_or("the input is closed")?;
        input.flush().map_err(|e| format!("writing: {e}"))
    }

    /// The next message from the server.
    pub fn next(&mut self, waiting_for: &str) -> Result<Value, String> {
        match self.answers.recv_timeout(SILENCE) {
            Ok(answer) if answer.get("unreadable").is_some() => {
                Err(format!("an unreadable line: {answer}"))
            }
            Ok(answer) => Ok(answer),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the server was silent for {} s while {waiting_for}",
                SILENCE.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Err(format!("the server's output ended while {waiting_for}"))
            }
        }
    }

    /// Counts the Lean processes alive now (and keeps the peak).
    pub fn count_lean(&self) -> usize {
        let now = descendants(self.child.id());
        self.peak_lean.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// The most Lean processes seen alive at once.
    pub fn peak_lean(&self) -> usize {
        self.peak_lean.load(Ordering::Relaxed)
    }

    /// The server's peak resident set (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Result<u64, String> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .map_err(|e| format!("reading the server's status: {e}"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or_else(|| "no VmHWM in the server's status".to_string())
    }

    /// Closes the server's input and waits for it to end, which must be cleanly.
    pub fn finish(mut self) -> Result<(), String> {
        self.flush()?;
        self.input = None;
        let status = self.child.wait().map_err(|e| format!("waiting: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("the server ended with {status}"))
    }
}

impl Drop for Server {
    /// Stops the watcher; a server whose input closes ends its Lean processes itself.
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// How many processes descend from `pid` now.
fn descendants(pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut parents: HashMap<u32, u32> = HashMap::new();
    for entry in entries.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // The parent is the second field after the parenthesized command, which may hold
        // spaces and parentheses itself.
        let parent = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let rest = stat.get(stat.rfind(')')? + 2..)?.to_owned();
                rest.split(' ').nth(1)?.parse().ok()
            });
        if let Some(parent) = parent {
            parents.insert(child, parent);
        }
    }
    parents
        .keys()
        .filter(|&&p| {
            let mut at = p;
            while let Some(&up) = parents.get(&at) {
                if up == pid {
                    return true;
                }
                if up <= 1 {
                    return false;
                }
                at = up;
            }
            false
        })
        .count()
}
