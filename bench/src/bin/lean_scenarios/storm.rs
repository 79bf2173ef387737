//! The storm: pipelined tool calls in one protocol family, half of them `lean_hover` on the
//! fixture's `Basic.lean` in several workspaces (each synced first) and half `beam_version`,
//! at most [`WINDOW`] in flight, every tenth cancelled right after it is sent.
//!
//! Checked: each call that was not cancelled is answered exactly once, with a result that is
//! not an error; a cancelled one is answered at most once; nothing else arrives. A failed check
//! fails the scenario (and the command), as a wrong answer does in the other rows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use crate::server::Server;

/// Calls in flight at most: a pipelining client, not an unbounded one.
pub const WINDOW: usize = 256;

/// What one storm measured.
#[derive(Debug, Clone, Serialize)]
pub struct StormFigures {
    pub family: &'static str,
    pub calls: usize,
    pub lean_calls: usize,
    pub cancelled: usize,
    /// Cancelled calls that were answered anyway (they finished first).
    pub cancelled_answered: usize,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub peak_rss_kib: u64,
    pub peak_lean_processes: usize,
}

/// The `_meta` every request of the modern family carries.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench-lean-scenarios", "version": "1"},
    })
}

struct Calls {
    modern: bool,
}

impl Calls {
    fn request(&self, id: Value, name: &str, arguments: Value) -> Value {
        let mut params = json!({"name": name, "arguments": arguments});
        if self.modern {
            params["_meta"] = modern_meta();
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    }

    fn cancel(&self, id: i64) -> Value {
        let mut params = json!({"requestId": id, "reason": "storm"});
        if self.modern {
            params["_meta"] = modern_meta();
        }
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    }
}

/// Runs `calls` calls against a server started with `server` and `lake`, over `roots`.
pub fn run(
    server: &Path,
    lake: &Path,
    roots: &[PathBuf],
    calls: usize,
    modern: bool,
    log: &Path,
) -> Result<StormFigures, String> {
    let family = if modern { "2026-07-28" } else { "2025-11-25" };
    let mut lean = Server::start(server, lake, &["--status-delay-ms", "3600000"], log, modern)?;
    let make = Calls { modern };
    let hover = |root: &Path| {
        json!({"workspace": {"root": root}, "path": "Fixture/Basic.lean", "version": 1,
               "line": 16, "character": 36})
    };
    for (n, root) in roots.iter().enumerate() {
        let arguments = json!({"workspace": {"root": root}, "path": "Fixture/Basic.lean"});
        lean.send(&make.request(json!(format!("sync-{n}")), "lean_sync", arguments))?;
        lean.flush()?;
        let answer = lean.next("a sync before the storm")?;
        if answer["result"]["isError"] != false {
            return Err(format!("the sync before the storm failed: {answer}"));
        }
    }
    // Id → whether it was cancelled; ids are never reused, so a late answer is never
    // mistaken for another call's.
    let mut open: HashMap<i64, bool> = HashMap::new();
    let (mut lean_calls, mut cancelled, mut cancelled_answered, mut answered) = (0, 0, 0, 0);
    let mut owed = 0usize;
    let started = Instant::now();
    let mut book = |answer: Value, open: &mut HashMap<i64, bool>, owed: &mut usize| {
        let id = answer["id"]
            .as_i64()
            .ok_or_else(|| format!("an answer nobody asked for: {answer}"))?;
        match open.remove(&id) {
            None => Err(format!("a second answer to {id}: {answer}")),
            Some(true) => {
                cancelled_answered += 1;
                Ok(())
            }
            Some(false) if answer["result"]["isError"] == false => {
                *owed -= 1;
                answered += 1;
                Ok(())
            }
            Some(false) => Err(format!("call {id} failed: {answer}")),
        }
    };
    for n in 0..calls {
        while owed >= WINDOW {
            lean.flush()?;
            let answer = lean.next("a storm answer")?;
            book(answer, &mut open, &mut owed)?;
        }
        let id = n as i64;
        let request = if n % 2 == 0 {
            lean_calls += 1;
            make.request(json!(id), "lean_hover", hover(&roots[n / 2 % roots.len()]))
        } else {
            make.request(json!(id), "beam_version", json!({}))
        };
        lean.send(&request)?;
        let cancel = n % 10 == 3;
        if cancel {
            lean.send(&make.cancel(id))?;
            cancelled += 1;
        } else {
            owed += 1;
        }
        open.insert(id, cancel);
    }
    lean.flush()?;
    while owed > 0 {
        let answer = lean.next("the last storm answers")?;
        book(answer, &mut open, &mut owed)?;
    }
    // A last call flushes the answers of cancelled calls that finished first.
    lean.send(&make.request(json!("last"), "beam_version", json!({})))?;
    lean.flush()?;
    loop {
        let answer = lean.next("the last probe")?;
        if answer["id"] == "last" {
            break;
        }
        book(answer, &mut open, &mut owed)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if answered + cancelled != calls {
        return Err(format!(
            "{answered} answered + {cancelled} cancelled ≠ {calls} calls"
        ));
    }
    let figures = StormFigures {
        family,
        calls,
        lean_calls,
        cancelled,
        cancelled_answered,
        seconds,
        calls_per_s: calls as f64 / seconds.max(1e-9),
        peak_rss_kib: lean.peak_rss_kib()?,
        peak_lean_processes: lean.peak_lean(),
    };
    lean.finish()?;
    Ok(figures)
}
