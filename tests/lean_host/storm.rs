//! Storms: 50,000 pipelined tool calls over both families (25,000 each), half of them Lean
//! tools against the fake across three workspaces, with 10% cancelled right after they are sent
//! and ids reused once answered. Every call that was not cancelled gets exactly one answer; a
//! cancelled one gets at most one (none when its cancellation won); nothing else arrives; the
//! server's memory stays bounded; the throughput is printed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::harness::{Project, lake};
use crate::support::contract::Contract;
use crate::support::{modern_meta, peak_rss_kib, server_bin};

const CALLS_PER_FAMILY: usize = 25_000;
/// Calls in flight at most: a pipelining client, not an unbounded one.
const WINDOW: usize = 256;
/// Ids are drawn from this many values and reused once answered (fresh ones replace those a
/// cancellation retired).
const ID_POOL: i64 = 1024;

struct Tally {
    answered_once: usize,
    cancelled: usize,
    cancelled_answered: usize,
    lean_calls: usize,
    peak_rss_kib: u64,
    seconds: f64,
}

fn storm(modern: bool, projects: &[Project]) -> Tally {
    let mut contract = Contract::new(&[]);
    let (trace, at) = contract.fake_env();
    let mut child = Command::new(server_bin())
        .args([
            "--lake",
            lake().to_str().unwrap(),
            "--status-delay-ms",
            "3600000",
            "--heartbeat-ms",
            "3600000",
        ])
        .args(contract.server_args(&[]))
        .env(trace, at)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (lines_tx, lines) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if lines_tx
                .send(serde_json::from_str(&line).expect("JSON"))
                .is_err()
            {
                return;
            }
        }
    });
    let envelope = |id: &Value, method: &str, mut params: Value| {
        if modern {
            params["_meta"] = modern_meta(json!({}));
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    let mut send = |message: &Value| {
        writeln!(stdin, "{message}").expect("write");
    };
    let next_answer = |what: &str| {
        lines
            .recv_timeout(crate::support::PATIENCE)
            .unwrap_or_else(|_| panic!("no answer while waiting for {what}"))
    };
    if !modern {
        send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "storm", "version": "1"}}}),
        );
        assert_eq!(next_answer("initialize")["id"], "init");
        send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
    // Open one document in each workspace, so the storm's hovers find it.
    for (n, project) in projects.iter().enumerate() {
        let id = json!(format!("sync-{n}"));
        let arguments = json!({"workspace": project.descriptor(), "path": "Fixture/Basic.lean"});
        send(&envelope(
            &id,
            "tools/call",
            json!({"name": "lean_sync", "arguments": arguments}),
        ));
        let answer = next_answer("a sync");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let started = Instant::now();
    let mut free: Vec<i64> = (0..ID_POOL).rev().collect();
    let mut in_flight: HashMap<i64, bool> = HashMap::new();
    let mut tally = Tally {
        answered_once: 0,
        cancelled: 0,
        cancelled_answered: 0,
        lean_calls: 0,
        peak_rss_kib: 0,
        seconds: 0.0,
    };
    let mut sent = 0usize;
    let mut fresh = ID_POOL;
    let pending = |in_flight: &HashMap<i64, bool>| in_flight.values().filter(|c| !**c).count();
    while sent < CALLS_PER_FAMILY {
        while pending(&in_flight) >= WINDOW {
            let answer = next_answer("a storm answer");
            settle(&mut tally, answer, &mut in_flight, &mut free);
        }
        let id = free.pop().unwrap_or_else(|| {
            fresh += 1;
            fresh
        });
        let lean = sent.is_multiple_of(2);
        let (name, arguments) = if lean {
            let project = &projects[sent % projects.len()];
            tally.lean_calls += 1;
            (
                "lean_hover",
                json!({"workspace": project.descriptor(), "path": "Fixture/Basic.lean",
                       "version": 1, "line": 16, "character": 36}),
            )
        } else {
            ("beam_version", json!({}))
        };
        send(&envelope(
            &json!(id),
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        ));
        // Every tenth call is cancelled at once; its id is retired, never reused, since an
        // answer may still come if the call finished before the cancellation arrived.
        let cancel = sent % 10 == 3;
        if cancel {
            let mut params = json!({"requestId": id, "reason": "storm"});
            if modern {
                params["_meta"] = modern_meta(json!({}));
            }
            send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}));
            tally.cancelled += 1;
        }
        in_flight.insert(id, cancel);
        sent += 1;
    }
    // Everything uncancelled still owes its answer; then a last probe flushes late ones.
    while in_flight.values().any(|cancelled| !cancelled) {
        let answer = next_answer("the last storm answers");
        settle(&mut tally, answer, &mut in_flight, &mut free);
    }
    send(&envelope(
        &json!("last"),
        "tools/call",
        json!({"name": "beam_version", "arguments": {}}),
    ));
    loop {
        let answer = next_answer("the last probe");
        if answer["id"] == "last" {
            break;
        }
        settle(&mut tally, answer, &mut in_flight, &mut free);
    }
    tally.seconds = started.elapsed().as_secs_f64();
    tally.peak_rss_kib = peak_rss_kib(child.id());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
    contract.check();
    tally
}

/// Books one answer: a call answered twice, or one nobody sent, fails the storm.
fn settle(
    tally: &mut Tally,
    answer: Value,
    in_flight: &mut HashMap<i64, bool>,
    free: &mut Vec<i64>,
) {
    let id = answer["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("an answer nobody is waiting for: {answer}"));
    let cancelled = in_flight
        .remove(&id)
        .unwrap_or_else(|| panic!("a second answer to {id}: {answer}"));
    if cancelled {
        tally.cancelled_answered += 1;
    } else {
        assert!(
            answer.get("result").is_some(),
            "an uncancelled call failed: {answer}"
        );
        tally.answered_once += 1;
        free.push(id);
    }
}

#[test]
fn fifty_thousand_pipelined_calls_with_cancellations_each_answered_once() {
    let projects: Vec<Project> = (0..3).map(|_| Project::fixture()).collect();
    for modern in [false, true] {
        let tally = storm(modern, &projects);
        let family = if modern { "2026-07-28" } else { "2025-11-25" };
        println!(
            "storm {family}: {CALLS_PER_FAMILY} calls ({} Lean) in {:.1} s = {:.0} calls/s; \
             {} cancelled ({} answered before their cancellation); peak RSS {} KiB",
            tally.lean_calls,
            tally.seconds,
            CALLS_PER_FAMILY as f64 / tally.seconds,
            tally.cancelled,
            tally.cancelled_answered,
            tally.peak_rss_kib
        );
        assert_eq!(
            tally.answered_once + tally.cancelled,
            CALLS_PER_FAMILY,
            "every uncancelled call answered exactly once"
        );
        assert!(
            tally.peak_rss_kib < 256 * 1024,
            "the server's memory stays bounded: {} KiB",
            tally.peak_rss_kib
        );
    }
    for project in &projects {
        project.wait_no_processes();
    }
}
