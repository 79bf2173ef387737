//! LSP messages per call: how many messages a Lean row's server sends the fake Lean server for
//! one tool call, read from the fake's trace file (`FAKE_LEAN_TRACE`, one JSON line per message
//! it receives), which both servers pass on to `lake serve` with the rest of their environment.
//!
//! On a connection of its own: the handshake, one warm-up call (it opens the document and
//! starts Lean), a pause for stragglers, then `calls` calls at 1 in flight and another pause;
//! every message the fake received after the warm-up is counted, by method (answers to the
//! fake's own requests count as `response`). With the row's `expect_lsp`, anything other than
//! exactly those messages per call fails the row, like a wrong answer; a row that expects none
//! may leave no trace at all (its tool never starts Lean).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::config::{Launch, Revision, ServerRow};
use crate::load::Limit;
use crate::measure::Session;
use crate::proto::CallTemplate;

/// Long enough for a server's messages that trail its answer (an answer to the fake's own
/// request, a cancel) to reach the trace before it is read.
const SETTLE: Duration = Duration::from_millis(200);

/// What the fake received over the counted calls.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LspCount {
    /// Tool calls counted (after the warm-up).
    pub calls: u64,
    /// Messages the fake received during them.
    pub messages: u64,
    /// The same, by method (`response` for answers to the fake's requests).
    pub by_method: BTreeMap<String, u64>,
}

impl LspCount {
    /// Messages per call.
    pub fn per_call(&self) -> f64 {
        self.messages as f64 / self.calls.max(1) as f64
    }
}

/// Counts the messages `calls` calls of `template` send Lean; checks `expect_lsp`.
pub fn count(
    row: &ServerRow,
    launch: &Launch,
    revision: Revision,
    template: &CallTemplate,
    calls: u64,
    logs: &Path,
) -> Result<LspCount, String> {
    // Absolute: lake serve runs in the project root.
    let trace = std::path::absolute(logs)
        .map_err(|e| format!("{}: {e}", logs.display()))?
        .join(format!("{}-{}-lsp.jsonl", row.name, revision.as_str()));
    let _ = std::fs::remove_file(&trace);
    let mut env = launch.env.clone();
    env.push(("FAKE_LEAN_TRACE".into(), trace.display().to_string()));
    let log = logs.join(format!("{}-{}.log", row.name, revision.as_str()));
    let mut session = Session::open(&launch.command, &env, &log, revision, &row.tool)?;
    let exactly = |n| Limit {
        max_calls: n,
        min_calls: n,
        duration: Duration::ZERO,
    };
    session.run(template, 1, exactly(1), false)?;
    std::thread::sleep(SETTLE);
    // A row that expects Lean to hear nothing may never start it: then there is no trace.
    let silent = row
        .expect_lsp
        .as_ref()
        .is_some_and(|e| e.values().all(|n| *n == 0));
    let before = received(&trace, silent)?.len();
    session.run(template, 1, exactly(calls), false)?;
    std::thread::sleep(SETTLE);
    let after = received(&trace, silent)?;
    session.conn.close();
    let mut counted = LspCount {
        calls,
        ..LspCount::default()
    };
    for method in &after[before.min(after.len())..] {
        counted.messages += 1;
        *counted.by_method.entry(method.clone()).or_default() += 1;
    }
    if let Some(expected) = &row.expect_lsp {
        check(&counted, expected)?;
    }
    Ok(counted)
}

/// The method of every message the fake received so far, in order; nothing when there is no
/// trace and `may_be_absent` (no Lean was started).
fn received(trace: &Path, may_be_absent: bool) -> Result<Vec<String>, String> {
    if may_be_absent && !trace.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(trace).map_err(|e| {
        format!(
            "reading the fake's trace {}: {e} (does the server pass FAKE_LEAN_TRACE on to lake?)",
            trace.display()
        )
    })?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|v| v.get("dir").and_then(Value::as_str) == Some("in"))
        .map(|v| match v.get("method").and_then(Value::as_str) {
            Some(method) => method.to_string(),
            None => "response".to_string(),
        })
        .collect())
}

/// Exactly `expected` messages per call, by method, and nothing else.
pub fn check(counted: &LspCount, expected: &BTreeMap<String, u64>) -> Result<(), String> {
    let wanted: BTreeMap<&str, u64> = expected
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(m, n)| (m.as_str(), n * counted.calls))
        .collect();
    let got: BTreeMap<&str, u64> = counted
        .by_method
        .iter()
        .map(|(m, n)| (m.as_str(), *n))
        .collect();
    if wanted == got {
        return Ok(());
    }
    Err(format!(
        "each call must send Lean exactly {}; {} calls sent {}",
        describe(expected.iter().map(|(m, n)| (m.as_str(), *n))),
        counted.calls,
        describe(got.into_iter()),
    ))
}

/// `1 textDocument/hover + 2 response`, or `nothing`.
pub fn describe<'a>(counts: impl Iterator<Item = (&'a str, u64)>) -> String {
    let parts: Vec<String> = counts
        .filter(|(_, n)| *n > 0)
        .map(|(m, n)| format!("{n} {m}"))
        .collect();
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(calls: u64, by_method: &[(&str, u64)]) -> LspCount {
        LspCount {
            calls,
            messages: by_method.iter().map(|(_, n)| n).sum(),
            by_method: by_method.iter().map(|(m, n)| (m.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn expectations_are_exact_per_call() {
        let barrier = BTreeMap::from([("textDocument/waitForDiagnostics".to_string(), 1)]);
        let good = counted(20, &[("textDocument/waitForDiagnostics", 20)]);
        assert!(check(&good, &barrier).is_ok());
        assert_eq!(good.per_call(), 1.0);
        let extra = counted(
            20,
            &[
                ("textDocument/didChange", 20),
                ("textDocument/waitForDiagnostics", 20),
            ],
        );
        let err = check(&extra, &barrier).unwrap_err();
        assert!(err.contains("20 textDocument/didChange"), "{err}");
        let none = counted(20, &[]);
        assert!(
            check(&none, &barrier)
                .unwrap_err()
                .ends_with("sent nothing")
        );
    }

    #[test]
    fn the_trace_counts_what_the_fake_received() {
        let dir = std::env::temp_dir().join(format!("lean-beam-bench-lsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("trace.jsonl");
        std::fs::write(
            &trace,
            concat!(
                "{\"event\":\"start\"}\n",
                "{\"dir\":\"in\",\"id\":1,\"method\":\"textDocument/hover\"}\n",
                "{\"dir\":\"out\",\"id\":1}\n",
                "{\"dir\":\"in\",\"id\":\"register_lean_watcher\",\"response\":true}\n",
            ),
        )
        .unwrap();
        assert_eq!(
            received(&trace, false).unwrap(),
            vec!["textDocument/hover".to_string(), "response".to_string()]
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            received(&trace, false).is_err(),
            "a missing trace is a mistake"
        );
        assert_eq!(received(&trace, true).unwrap(), Vec::<String>::new());
    }
}
