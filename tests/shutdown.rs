//! Bounded memory and a shutdown that cannot hang, against the test host over real pipes:
//! a client that stops reading stops being read (and the server's memory stays bounded), a
//! modest batch written before reading is still answered in full, SIGTERM ends a server whose
//! client never reads within the shutdown deadline, a host whose shutdown hangs is killed at the
//! deadline with its children, and a second SIGTERM ends the server at once.
//!
//! Events, not sleeps: "the server stopped reading" is the pipe to it being full, "the host
//! cleaned up" is a file it writes; exit statuses say which ending happened.

mod support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PATIENCE, call, peak_rss_kib, request, test_host_bin, wait_for_file};

/// A test host with piped stdio whose output this test reads only when it chooses to.
fn start(args: &[&str], gates: &std::path::Path) -> Child {
    Command::new(test_host_bin())
        .args(args)
        .env("LEAN_BEAM_MCP_TEST_GATES", gates)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the test host")
}

fn initialize(stdin: &mut ChildStdin, out: &mut impl BufRead) {
    let init = request(
        0,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "shutdown-suite", "version": "1.0"}
        }),
    );
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":0"#), "{line}");
}

fn echo_line(id: u64) -> String {
    request(id, "tools/call", call("echo", json!({"text": "x"}))).to_string() + "\n"
}

/// Bytes written to a pipe and not yet read by the other end.
fn unread_bytes(pipe: &impl AsRawFd) -> usize {
    let mut unread: libc::c_int = 0;
    // SAFETY: FIONREAD writes one c_int through the pointer, which is valid for the call.
    let rc = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut unread) };
    assert_eq!(rc, 0, "FIONREAD on the server's stdin");
    usize::try_from(unread).unwrap_or(0)
}

/// Waits until `done` holds, polling; a timeout only turns a hang into a failure.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        thread::sleep(Duration::from_millis(5));
    }
}

fn alive(pid: u32) -> bool {
    // Signal 0 only checks that the process exists (a zombie counts; its parent reaps it).
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
    exists
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| !stat.contains(") Z "))
            .unwrap_or(false)
}

fn sigterm(child: &Child) {
    // SAFETY: sending a signal to a child we own.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
}

const REQUESTS: u64 = 100_000;
/// Far below what buffering every unread answer costs (about 1 KiB each), far above what the
/// bounded queues hold (a few MiB) plus the server itself.
const PEAK_RSS_BOUND_KIB: u64 = 32 * 1024;

#[test]
fn a_client_that_stops_reading_stops_being_read_and_memory_stays_bounded() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(&["--status-delay-ms", "3600000"], gates.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out);
    let pipe = stdin.as_raw_fd();
    let writer = thread::spawn(move || {
        for id in 1..=REQUESTS {
            stdin.write_all(echo_line(id).as_bytes()).unwrap();
        }
        stdin
    });
    // The client reads nothing until the server has stopped reading it: the pipe to the server
    // fills up (a server that buffered instead would take every request, and the writer ends).
    let fd = BorrowedPipe(pipe);
    wait_until("the server stops reading or takes every request", || {
        writer.is_finished() || unread_bytes(&fd) >= 48 * 1024
    });
    assert!(
        !writer.is_finished(),
        "the server read all {REQUESTS} requests although its answers went unread"
    );
    let mut answers: HashMap<u64, u32> = HashMap::new();
    let mut line = String::new();
    while answers.len() < REQUESTS as usize {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "output ended early");
        let message: Value = serde_json::from_str(&line).unwrap();
        let id = message["id"].as_u64().expect("an answer");
        assert_eq!(
            message["result"]["structuredContent"]["text"], "x",
            "{line}"
        );
        *answers.entry(id).or_default() += 1;
        assert_eq!(answers[&id], 1, "answer {id} arrived twice");
    }
    let peak = peak_rss_kib(child.id());
    println!("peak RSS with {REQUESTS} requests written ahead of reading: {peak} KiB");
    assert!(
        peak < PEAK_RSS_BOUND_KIB,
        "peak RSS {peak} KiB: the server buffered what the client did not read"
    );
    drop(writer.join().unwrap());
    let mut rest = String::new();
    out.read_line(&mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the last answer");
    assert_eq!(wait_for_exit(&mut child).code(), Some(0));
}

/// A file descriptor borrowed from a `ChildStdin` another thread owns.
struct BorrowedPipe(std::os::fd::RawFd);

impl AsRawFd for BorrowedPipe {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0
    }
}

#[test]
fn a_modest_batch_written_before_reading_is_answered_in_full() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(&[], gates.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out);
    let batch: String = (1..=1000).map(echo_line).collect();
    let writer = thread::spawn(move || {
        stdin.write_all(batch.as_bytes()).unwrap();
        stdin
    });
    wait_until("the whole batch is written", || writer.is_finished());
    let stdin = writer.join().unwrap();
    let mut ids: Vec<u64> = (0..1000)
        .map(|_| {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            serde_json::from_str::<Value>(&line).unwrap()["id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=1000).collect::<Vec<_>>());
    drop(stdin);
    assert_eq!(wait_for_exit(&mut child).code(), Some(0));
}

#[test]
fn sigterm_ends_a_server_whose_client_never_reads_within_the_deadline() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(&["--shutdown-timeout-ms", "500"], gates.path());
    let mut stdin = child.stdin.take().unwrap();
    let out = child.stdout.take().unwrap(); // held open and never read
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "n", "version": "1"}}),
    );
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // First an answer larger than the pipe can hold, so the server's writer is certainly stuck
    // once it has begun writing it; then 20,000 more requests whose answers queue up behind it.
    let big = request(
        1,
        "tools/call",
        call("echo", json!({"text": "y".repeat(100_000)})),
    );
    writeln!(stdin, "{big}").unwrap();
    thread::spawn(move || {
        for id in 2..=20_000 {
            if stdin.write_all(echo_line(id).as_bytes()).is_err() {
                return; // the server is gone
            }
        }
        // Stdin stays open: only the signal may end the server.
        loop {
            thread::park();
        }
    });
    // Half a pipe of unread output can only be the big answer (the initialize answer is a few
    // hundred bytes): the writer has begun it, and cannot finish it.
    wait_until("the server's writer is stuck on the big answer", || {
        unread_bytes(&out) >= 32 * 1024
    });
    sigterm(&child);
    let status = wait_for_exit(&mut child);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.code(),
        Some(3),
        "the deadline passed with answers unwritten: {status:?}\n{stderr}"
    );
    assert!(stderr.contains("shutdown did not finish"), "{stderr}");
}

#[test]
fn a_host_whose_shutdown_hangs_is_killed_at_the_deadline_with_its_children() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(
        &["--hang-shutdown", "--shutdown-timeout-ms", "300"],
        gates.path(),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out);
    writeln!(
        stdin,
        "{}",
        request(1, "tools/call", call("spawn_child", json!({})))
    )
    .unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    let pid = answer["result"]["structuredContent"]["pid"]
        .as_u64()
        .expect("the child's pid") as u32;
    assert!(alive(pid));
    drop(stdin);
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(3), "{status:?}");
    assert!(!alive(pid), "the host's child outlived the server");
}

#[test]
fn a_second_sigterm_ends_the_server_at_once() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(
        &[
            "--shutdown-timeout-ms",
            "600000",
            "--status-delay-ms",
            "3600000",
        ],
        gates.path(),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out);
    // A running gate (cancelled by the first signal) and a fence behind it, which shutdown lets
    // finish and which never does.
    writeln!(
        stdin,
        "{}",
        request(1, "tools/call", call("gate", json!({"gate": "g"})))
    )
    .unwrap();
    // The fence carries a progress token so that its preparation, reported once the server has
    // admitted it, tells the test it is a call of the server's before the first signal: a
    // signal that came first would leave it unread, and the server would end at once, cleanly.
    let mut fence = call("fence", json!({"label": "f", "gate": "f"}));
    fence["_meta"] = json!({"progressToken": "fence"});
    writeln!(stdin, "{}", request(2, "tools/call", fence)).unwrap();
    let (mut entered, mut preparing) = (false, false);
    while !(entered && preparing) {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the server ended early"
        );
        entered |= line.contains(r#""gate":"g","state":"entered""#);
        preparing |= line.contains("fence f: preparing");
    }
    sigterm(&child);
    // The first signal was taken: the running gate was cancelled and cleaned up.
    wait_for_file(&gates.path().join("g.cancelled"));
    sigterm(&child);
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(128 + 15), "{status:?}");
}

/// The deadline covers ending the calls too: one SIGTERM, a fence that never ends, and the
/// server still exits at the deadline.
#[test]
fn a_call_that_never_ends_cannot_hold_shutdown_past_the_deadline() {
    let gates = tempfile::tempdir().unwrap();
    let mut child = start(&["--shutdown-timeout-ms", "300"], gates.path());
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out);
    writeln!(
        stdin,
        "{}",
        request(
            1,
            "tools/call",
            call("fence", json!({"label": "f", "gate": "never"}))
        )
    )
    .unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.contains(r#""fence":"f","state":"entered""#), "{line}");
    sigterm(&child);
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(3), "{status:?}");
}

#[test]
fn the_host_shutdown_hook_receives_the_deadline() {
    let gates = tempfile::tempdir().unwrap();
    let mark = gates.path().join("shutdown-mark");
    let mut child = Command::new(test_host_bin())
        .args(["--shutdown-timeout-ms", "4000"])
        .env("LEAN_BEAM_MCP_TEST_GATES", gates.path())
        .env("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK", &mark)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(wait_for_exit(&mut child).code(), Some(0));
    let text = std::fs::read_to_string(&mark).unwrap();
    let seconds: u64 = text
        .strip_prefix("shut down with ")
        .and_then(|rest| rest.strip_suffix(" s left"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(seconds <= 4, "{text}");
}
