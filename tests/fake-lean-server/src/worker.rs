//! File-worker processes. For every opened document the server starts
//! `fake-lake worker <uri>` as a child leading a process group of its own (reference §1.1:
//! killing the watchdog's group does not reach the workers). The child blocks on its stdin and
//! exits at EOF; the server closes that pipe to terminate it, or writes `crash` or `exit N` to
//! make it die the way a crashing Lean worker does. Under `FAKE_LEAN_STUBBORN_WORKERS=1` a worker
//! ignores EOF (a worker busy in native code), so only a watchdog that ends it on purpose (`quit`)
//! or its host's clean-up removes it: a watchdog that dies leaves it behind. Worker stderr reaches the
//! server's stderr prefixed with `[<uri>] `, like the watchdog's pass-through. A waiter thread
//! reports each exit as an [`Event::WorkerExited`](crate::event::Event).

use crate::event::Event;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

pub struct Worker {
    pub pid: u32,
    pub generation: u64,
    stdin: Option<ChildStdin>,
    waiter: Option<JoinHandle<()>>,
}

impl Worker {
    pub fn spawn(uri: &str, generation: u64, events: Sender<Event>) -> std::io::Result<Worker> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg("worker")
            .arg(uri)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let pid = child.id();
        let stdin = child.stdin.take();
        if let Some(err) = child.stderr.take() {
            let uri = uri.to_owned();
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    eprintln!("[{uri}] {line}");
                }
            });
        }
        let uri = uri.to_owned();
        let waiter = std::thread::spawn(move || {
            use std::os::unix::process::ExitStatusExt;
            let status = child.wait().ok();
            let _ = events.send(Event::WorkerExited {
                uri,
                generation,
                code: status.and_then(|s| s.code()),
                signal: status.and_then(|s| s.signal()),
            });
        });
        Ok(Worker {
            pid,
            generation,
            stdin,
            waiter: Some(waiter),
        })
    }

    /// Makes the worker die: `exit1` with exit code 1, otherwise by a signal.
    pub fn crash(&mut self, exit1: bool) {
        if let Some(w) = self.stdin.as_mut() {
            let cmd: &[u8] = if exit1 { b"exit 1\n" } else { b"crash\n" };
            let _ = w.write_all(cmd).and_then(|_| w.flush());
        }
    }

    /// Closes the worker's stdin (it exits at EOF) and waits for it.
    pub fn terminate(mut self) {
        self.end();
        if let Some(w) = self.waiter.take() {
            let _ = w.join();
        }
    }

    /// Closes the worker's stdin without waiting.
    pub fn release(mut self) {
        self.end();
    }

    /// Asks the worker to quit (a stubborn one ignores EOF, not this) and closes its stdin.
    fn end(&mut self) {
        if let Some(mut w) = self.stdin.take() {
            let _ = w.write_all(b"quit\n").and_then(|_| w.flush());
        }
    }
}

fn stubborn() -> bool {
    std::env::var_os("FAKE_LEAN_STUBBORN_WORKERS").is_some_and(|v| v == "1")
}

/// `fake-lake worker <uri>`: waits on stdin; `crash` dies by SIGKILL after a stack-overflow
/// line, `exit N` exits with N after an uncaught-exception line, `quit` and EOF exit 0 (a
/// stubborn worker ignores EOF).
pub fn worker_main() -> ! {
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line == "crash" {
            eprintln!("Stack overflow detected. Aborting.");
            // SAFETY: sending a signal to our own process has no memory-safety preconditions.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        } else if line == "quit" {
            std::process::exit(0);
        } else if let Some(code) = line.strip_prefix("exit ") {
            eprintln!("uncaught exception: fake worker failure");
            std::process::exit(code.trim().parse().unwrap_or(1));
        }
    }
    if stubborn() {
        loop {
            std::thread::park();
        }
    }
    std::process::exit(0)
}
