//! A minimal MCP client over a spawned stdio server: newline-delimited JSON-RPC, the legacy
//! handshake, one call at a time (notifications skipped), and the fake Lean's trace read for
//! what the server sent Lean.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running MCP server, with the fake Lean's trace file its `lake serve` writes.
pub struct Mcp {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    trace: PathBuf,
}

/// One tool call, measured.
pub struct Timed {
    /// The call's result (`structuredContent`).
    pub result: Value,
    /// From writing the request to reading its answer.
    pub wall: Duration,
}

impl Mcp {
    /// Starts `command` with `env`, its stderr appended to `log`, its Lean tracing to `trace`;
    /// completes the 2025-11-25 handshake.
    pub fn start(
        command: &[String],
        env: &[(String, String)],
        log: &Path,
        trace: &Path,
    ) -> Result<Mcp, String> {
        let stderr = std::fs::File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("opening {}: {e}", log.display()))?;
        let _ = std::fs::remove_file(trace);
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("FAKE_LEAN_TRACE", trace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .map_err(|e| format!("starting {}: {e}", command[0]))?;
        let stdin = BufWriter::new(child.stdin.take().expect("piped"));
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
            next_id: 0,
            trace: trace.to_path_buf(),
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench-try-edit", "version": "0"}}),
        )?;
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(mcp)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to the server: {e}"))
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            let read = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| format!("reading from the server: {e}"))?;
            if read == 0 {
                return Err(format!(
                    "the server closed its output before answering {method}"
                ));
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return match message.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(format!("{method} failed: {message}")),
                };
            }
        }
    }

    /// Calls `tool`; its structured result, which must not be an error, and the wall time.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<Timed, String> {
        let started = Instant::now();
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let wall = started.elapsed();
        if result.get("isError") == Some(&json!(true)) {
            return Err(format!("{tool} answered an error: {result}"));
        }
        let result = match result.get("structuredContent") {
            Some(content) => content.clone(),
            None => result,
        };
        Ok(Timed { result, wall })
    }

    /// How many messages Lean has received from this server so far (answers to Lean's own
    /// requests aside).
    pub fn lean_received(&self) -> usize {
        std::fs::read_to_string(&self.trace)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|t| t["dir"] == "in" && t.get("response").is_none() && t["method"].is_string())
            .count()
    }

    /// Ends the server: its input closed, then its process reaped (killed after a grace).
    pub fn finish(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
