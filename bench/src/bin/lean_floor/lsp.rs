//! A minimal LSP client over a spawned `lake serve`: Content-Length framing, JSON-RPC requests
//! with numeric ids, the server's own requests answered `null`, notifications skipped, and a
//! watchdog that kills a server silent for 30 s while an answer is awaited.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// No message for this long while an answer is awaited kills the server.
const STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What one message from the server is.
pub enum Incoming {
    /// The answer to our request `id`: its result, or the error as text.
    Answer(u64, Result<Value, String>),
    /// A notification, or a request of the server's (already answered).
    Other,
}

struct Watch {
    pid: i32,
    progress: AtomicU64,
    armed: AtomicBool,
    stop: AtomicBool,
}

/// A running language server.
pub struct Lsp {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    watch: Arc<Watch>,
    watchdog: Option<thread::JoinHandle<()>>,
    next_id: u64,
    body: Vec<u8>,
}

impl Lsp {
    /// Starts `lake serve` in the project `root`, its stderr appended to `log`.
    pub fn spawn(lake: &Path, root: &Path, log: Option<&Path>) -> Result<Lsp, String> {
        let stderr = match log {
            Some(log) => Stdio::from(
                std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(log)
                    .map_err(|e| format!("opening {}: {e}", log.display()))?,
            ),
            None => Stdio::null(),
        };
        let mut child = Command::new(lake)
            .arg("serve")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting {} serve: {e}", lake.display()))?;
        let stdin = BufWriter::new(child.stdin.take().expect("piped"));
        let stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().expect("piped"));
        let watch = Arc::new(Watch {
            pid: child.id() as i32,
            progress: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        });
        let watchdog = {
            let watch = watch.clone();
            thread::spawn(move || {
                let (mut seen, mut since) = (0, Instant::now());
                while !watch.stop.load(Ordering::Relaxed) {
                    thread::sleep(Duration::from_millis(100));
                    let now = watch.progress.load(Ordering::Relaxed);
                    if now != seen || !watch.armed.load(Ordering::Relaxed) {
                        (seen, since) = (now, Instant::now());
                    } else if since.elapsed() > STALL_TIMEOUT {
                        // SAFETY: kill(2) on the pid we spawned and have not reaped.
                        unsafe { libc::kill(watch.pid, libc::SIGKILL) };
                        return;
                    }
                }
            })
        };
        Ok(Lsp {
            child,
            stdin,
            stdout,
            watch,
            watchdog: Some(watchdog),
            next_id: 0,
            body: Vec::new(),
        })
    }

    /// Writes one message (call [`Lsp::flush`] after a batch).
    pub fn write(&mut self, message: &Value) -> Result<(), String> {
        let body = serde_json::to_vec(message).expect("JSON values serialize");
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len())
            .and_then(|()| self.stdin.write_all(&body))
            .map_err(|e| format!("writing to lake serve: {e}"))
    }

    /// Flushes what was written.
    pub fn flush(&mut self) -> Result<(), String> {
        self.stdin
            .flush()
            .map_err(|e| format!("writing to lake serve: {e}"))
    }

    /// Writes request `method(params)` with a fresh id, returned.
    pub fn send_request(&mut self, method: &str, params: &Value) -> Result<u64, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    /// Writes and flushes a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))?;
        self.flush()
    }

    /// Reads the next message; the server's requests are answered `null` on the spot.
    pub fn read(&mut self) -> Result<Incoming, String> {
        self.watch.armed.store(true, Ordering::Relaxed);
        let message = self.read_frame();
        self.watch.armed.store(false, Ordering::Relaxed);
        let message = message?;
        self.watch.progress.fetch_add(1, Ordering::Relaxed);
        if message.get("method").is_some() {
            if let Some(id) = message.get("id") {
                self.write(&json!({"jsonrpc": "2.0", "id": id, "result": null}))?;
                self.flush()?;
            }
            return Ok(Incoming::Other);
        }
        let id = message
            .get("id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("a response without a numeric id: {message}"))?;
        Ok(Incoming::Answer(
            id,
            match (message.get("result"), message.get("error")) {
                (_, Some(error)) => Err(error.to_string()),
                (Some(result), None) => Ok(result.clone()),
                (None, None) => Err("neither result nor error".into()),
            },
        ))
    }

    /// One request, waited for.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.send_request(method, &params)?;
        self.flush()?;
        loop {
            if let Incoming::Answer(got, result) = self.read()? {
                if got != id {
                    return Err(format!("{method}: expected the answer to {id}, got {got}"));
                }
                return result.map_err(|e| format!("{method} failed: {e}"));
            }
        }
    }

    fn read_frame(&mut self) -> Result<Value, String> {
        let mut length = None;
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| format!("reading from lake serve: {e}"))?;
            if n == 0 {
                return Err(
                    "lake serve closed its output (exited, or killed after a stall)".into(),
                );
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some(v) = header.strip_prefix("Content-Length:") {
                length = v.trim().parse::<usize>().ok();
            }
        }
        let length = length.ok_or("a frame without Content-Length")?;
        self.body.resize(length, 0);
        self.stdout
            .read_exact(&mut self.body)
            .map_err(|e| format!("reading from lake serve: {e}"))?;
        serde_json::from_slice(&self.body).map_err(|e| format!("a frame that is not JSON: {e}"))
    }

    /// `shutdown`, `exit`, and the process reaped (killed after 3 s).
    pub fn close(mut self) {
        let _ = self.request("shutdown", Value::Null);
        let _ = self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(3);
        while !matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.watch.stop.store(true, Ordering::Relaxed);
        if let Some(watchdog) = self.watchdog.take() {
            let _ = watchdog.join();
        }
    }
}
