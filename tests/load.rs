//! Load: 10,000 pipelined `tools/call echo` requests against the test-host binary, in each
//! protocol family. One thread writes every request while the test thread reads the answers, so
//! the server holds many calls at once. Each answer must arrive exactly once, with its own id
//! and its own text; the server's peak resident memory (VmHWM) must stay under a generous bound.
//! Throughput and peak memory are printed (see them with `--nocapture`); time is never asserted.

mod support;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PATIENCE, call, modern, notification, request, test_host_bin};

/// How many echo calls each run pipelines.
const REQUESTS: usize = 10_000;
/// The bound on the server's peak resident set: bounded memory is the acceptance criterion.
const PEAK_RSS_BOUND_KIB: u64 = 64 * 1024;

/// Runs one load at a time, so the printed throughput is not shared with the other family.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Modern,
    Legacy,
}

/// A distinct text per request, with characters that need escaping.
fn text(i: usize) -> String {
    format!("echo #{i} \"quoted\" \\ tab\t ∀ε {}", "x".repeat(i % 61))
}

/// Modern ids are integers, legacy ids strings.
fn id(family: Family, i: usize) -> Value {
    match family {
        Family::Modern => json!(i),
        Family::Legacy => json!(format!("req-{i}")),
    }
}

fn index_of(family: Family, id: &Value) -> Option<usize> {
    match family {
        Family::Modern => id.as_u64().map(|n| n as usize),
        Family::Legacy => id.as_str()?.strip_prefix("req-")?.parse().ok(),
    }
    .filter(|i| (1..=REQUESTS).contains(i))
}

fn echo_request(family: Family, i: usize) -> Value {
    let params = call("echo", json!({ "text": text(i) }));
    match family {
        Family::Modern => modern(id(family, i), "tools/call", params),
        Family::Legacy => request(id(family, i), "tools/call", params),
    }
}

/// A `/proc/<pid>/status` field in KiB, where the platform has one.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit within {PATIENCE:?}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the server if the test fails before it exits.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(family: Family) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let gates = tempfile::tempdir().expect("gate directory");
    let mut child = Guard(
        Command::new(test_host_bin())
            .env("LEAN_BEAM_MCP_TEST_GATES", gates.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the test host"),
    );
    let pid = child.0.id();
    let mut stdin: ChildStdin = child.0.stdin.take().expect("stdin");
    let stdout = child.0.stdout.take().expect("stdout");
    let (tx, lines) = channel::<String>();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let recv = || -> Value {
        let line = lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("{family:?}: no message from the server: {e:?}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    };

    if family == Family::Legacy {
        let init = request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "load", "version": "1.0"}
            }),
        );
        writeln!(stdin, "{init}").expect("write initialize");
        let answer = recv();
        assert_eq!(answer["id"], 0, "{answer}");
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
        let initialized = notification("notifications/initialized", Value::Null);
        writeln!(stdin, "{initialized}").expect("write initialized");
    }

    let started = Instant::now();
    let writer = thread::spawn(move || {
        let mut out = BufWriter::new(stdin);
        for i in 1..=REQUESTS {
            serde_json::to_writer(&mut out, &echo_request(family, i)).expect("write a request");
            out.write_all(b"\n").expect("write a request");
        }
        out.flush().expect("flush the requests");
        out.into_inner().expect("flushed")
    });

    let mut seen = vec![false; REQUESTS + 1];
    for _ in 0..REQUESTS {
        let answer = recv();
        assert!(
            answer.get("method").is_none(),
            "unexpected notification: {answer}"
        );
        let i = index_of(family, &answer["id"])
            .unwrap_or_else(|| panic!("an answer with an unknown id: {answer}"));
        assert!(
            !seen[i],
            "a second answer for id {}: {answer}",
            answer["id"]
        );
        seen[i] = true;
        assert_eq!(answer["id"], id(family, i), "the id's JSON type changed");
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        assert_eq!(result["structuredContent"]["text"], text(i), "{answer}");
        assert_eq!(result["content"][0]["type"], "text", "{answer}");
        let mirrored: Value = result["content"][0]["text"]
            .as_str()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_else(|| panic!("content[0].text is not JSON: {answer}"));
        assert_eq!(mirrored["text"], text(i), "{answer}");
        assert_eq!(mirrored, result["structuredContent"], "{answer}");
        match family {
            Family::Modern => assert_eq!(result["resultType"], "complete", "{answer}"),
            Family::Legacy => assert!(result.get("resultType").is_none(), "{answer}"),
        }
    }
    let elapsed = started.elapsed();
    let stdin = writer.join().expect("the writer thread");

    // Peak memory, read while the server is still running (before end of input).
    let peak = status_kib(pid, "VmHWM:");
    let resident = status_kib(pid, "VmRSS:");
    drop(stdin);
    match lines.recv_timeout(PATIENCE) {
        Err(RecvTimeoutError::Disconnected) => {}
        Ok(line) => panic!("{family:?}: unexpected output after the last answer: {line}"),
        Err(RecvTimeoutError::Timeout) => panic!("{family:?}: output did not end"),
    }
    let status = wait_for_exit(&mut child.0);
    assert!(
        status.success(),
        "{family:?}: the server exited with {status}"
    );

    let rate = REQUESTS as f64 / elapsed.as_secs_f64();
    let show = |kib: Option<u64>| {
        kib.map_or("unavailable".into(), |k| {
            format!("{:.1} MiB", k as f64 / 1024.0)
        })
    };
    println!(
        "load {family:?} ({} build): {REQUESTS} pipelined echo calls in {:.3} s = {rate:.0} requests/s; \
         server peak RSS (VmHWM) {}, RSS at the end {}",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        elapsed.as_secs_f64(),
        show(peak),
        show(resident),
    );
    if let Some(peak) = peak {
        assert!(
            peak < PEAK_RSS_BOUND_KIB,
            "{family:?}: the server's peak RSS {peak} KiB exceeds {PEAK_RSS_BOUND_KIB} KiB"
        );
    }
}

#[test]
fn load_modern_pipelined_echo() {
    run(Family::Modern);
}

#[test]
fn load_legacy_pipelined_echo() {
    run(Family::Legacy);
}
