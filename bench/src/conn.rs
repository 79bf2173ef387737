//! One spawned server: its pipes, a stall watchdog, sequential requests, and /proc readings.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// No answer for this long while waiting for one kills the server (the run then fails).
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Shared between the pipes' users and the watchdog thread.
pub struct Watch {
    pid: i32,
    /// Bumped on every line read.
    pub progress: AtomicU64,
    armed: AtomicBool,
    stop: AtomicBool,
    fired: AtomicBool,
}

impl Watch {
    /// Kills the server (used on errors and stalls).
    pub fn kill(&self) {
        // SAFETY: kill(2) on a pid we spawned and have not yet reaped.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
    }
}

/// A running server.
pub struct Conn {
    child: Child,
    /// Its pid.
    pub pid: u32,
    /// Its stdin (taken at close).
    pub stdin: Option<BufWriter<ChildStdin>>,
    /// Its stdout.
    pub stdout: BufReader<ChildStdout>,
    /// The watchdog's state.
    pub watch: Arc<Watch>,
    watchdog: Option<thread::JoinHandle<()>>,
    line: Vec<u8>,
}

impl Conn {
    /// Starts `command` with piped stdin/stdout and stderr appended to `log`.
    pub fn spawn(command: &[String], env: &[(String, String)], log: &Path) -> Result<Conn, String> {
        let stderr = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("opening {}: {e}", log.display()))?;
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", command.join(" ")))?;
        let stdin = BufWriter::with_capacity(64 * 1024, child.stdin.take().expect("piped"));
        let stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().expect("piped"));
        let pid = child.id();
        let watch = Arc::new(Watch {
            pid: pid as i32,
            progress: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            fired: AtomicBool::new(false),
        });
        let watchdog = {
            let watch = watch.clone();
            thread::Builder::new()
                .name("bench-watchdog".into())
                .spawn(move || {
                    let mut seen = 0;
                    let mut since = Instant::now();
                    while !watch.stop.load(Ordering::Relaxed) {
                        thread::sleep(Duration::from_millis(100));
                        let now = watch.progress.load(Ordering::Relaxed);
                        if now != seen || !watch.armed.load(Ordering::Relaxed) {
                            seen = now;
                            since = Instant::now();
                        } else if since.elapsed() > STALL_TIMEOUT {
                            watch.fired.store(true, Ordering::Relaxed);
                            watch.kill();
                            return;
                        }
                    }
                })
                .map_err(|e| format!("starting the watchdog: {e}"))?
        };
        Ok(Conn {
            child,
            pid,
            stdin: Some(stdin),
            stdout,
            watch,
            watchdog: Some(watchdog),
            line: Vec::new(),
        })
    }

    /// Arms (or disarms) the stall watchdog.
    pub fn arm(&self, armed: bool) {
        self.watch.progress.fetch_add(1, Ordering::Relaxed);
        self.watch.armed.store(armed, Ordering::Relaxed);
    }

    /// Why reading failed: a stall the watchdog ended, or the server's own exit.
    pub fn ended(&self, what: &str) -> String {
        if self.watch.fired.load(Ordering::Relaxed) {
            format!(
                "{what}: no answer for {} s; the server was killed",
                STALL_TIMEOUT.as_secs()
            )
        } else {
            format!("{what}: the server closed its output (exited?)")
        }
    }

    /// Writes raw lines and flushes.
    pub fn send(&mut self, line: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        stdin
            .write_all(line)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to the server: {e}"))
    }

    /// Sends one request and waits for its answer (skipping other messages): the result, or
    /// the error object as text.
    pub fn request(&mut self, line: &[u8], id: u64) -> Result<Value, String> {
        self.send(line)?;
        self.arm(true);
        let answer = self.wait_for(id);
        self.arm(false);
        answer
    }

    /// Reads one line (the watchdog should be armed).
    pub fn read_line(&mut self) -> Result<Vec<u8>, String> {
        self.line.clear();
        match self.stdout.read_until(b'\n', &mut self.line) {
            Ok(0) => Err(self.ended("waiting for an answer")),
            Ok(_) => {
                self.watch.progress.fetch_add(1, Ordering::Relaxed);
                Ok(self.line.clone())
            }
            Err(e) => Err(format!("reading from the server: {e}")),
        }
    }

    fn wait_for(&mut self, id: u64) -> Result<Value, String> {
        loop {
            self.read_line()?;
            let message: Value = serde_json::from_slice(&self.line)
                .map_err(|e| format!("{e} in {}", crate::short_bytes(&self.line)))?;
            if message.get("method").is_some() {
                continue;
            }
            if message.get("id").and_then(Value::as_u64) != Some(id) {
                return Err(format!(
                    "expected the answer to request {id}, got {}",
                    crate::short_bytes(&self.line)
                ));
            }
            if let Some(error) = message.get("error") {
                return Err(format!("request {id} failed: {error}"));
            }
            return message
                .get("result")
                .cloned()
                .ok_or_else(|| format!("request {id}: neither result nor error"));
        }
    }

    /// Peak resident set (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// CPU time (user + system, all threads) used so far.
    pub fn cpu_time(&self) -> Option<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        // Fields after the parenthesized command; utime and stime are fields 14 and 15.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(ticks_to_duration(ticks))
    }

    /// Closes stdin and waits (briefly) for the server to exit; kills it otherwise.
    pub fn close(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
            }
        }
        self.watch.stop.store(true, Ordering::Relaxed);
        if let Some(watchdog) = self.watchdog.take() {
            let _ = watchdog.join();
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.watchdog.is_some() {
            // Dropped on an error path: do not wait for a server that may be wedged.
            self.watch.kill();
            self.shutdown();
        }
    }
}

fn ticks_to_duration(ticks: u64) -> Duration {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_nanos(ticks * 1_000_000_000 / hz)
}

/// CPU time used by this process (all threads) so far.
pub fn own_cpu_time() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
