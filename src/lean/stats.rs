//! Process-wide debug statistics: per workspace, runtime starts and restarts, and per operation
//! counts by outcome and latencies. `beam_stats` renders them.
//!
//! Contract: every Lean tool call that names a valid workspace is recorded once, with its
//! outcome (success, an error by code, or cancelled) and its latency; a workspace's record lives
//! as long as its runtime is cached (an eviction forgets it). Reading never starts a runtime.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::lean::error::code;

/// The key `beam_stats` shows a workspace under: `local:<canonical root>`.
pub fn workspace_key(root: &Path) -> String {
    format!("local:{}", root.display())
}

/// How one call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Success,
    /// An error result with this code.
    Error(&'static str),
    /// Cancelled before it answered.
    Cancelled,
}

#[derive(Debug, Default, Clone)]
struct Counts {
    count: u64,
    success: u64,
    error: u64,
    cancelled: u64,
    /// Calls Lean failed by exiting: a file's worker (`workerExited`, `workerCrashed`) or the
    /// whole server (`serverExited`); `workerExitedCount`, the original server's name for it.
    worker_exited: u64,
    invalid_params: u64,
}

impl Counts {
    fn add(&mut self, outcome: Outcome) {
        self.count += 1;
        match outcome {
            Outcome::Success => self.success += 1,
            Outcome::Cancelled => self.cancelled += 1,
            Outcome::Error(error) => {
                self.error += 1;
                match error {
                    code::SERVER_EXITED | code::WORKER_EXITED | code::WORKER_CRASHED => {
                        self.worker_exited += 1
                    }
                    code::INVALID_PARAMS => self.invalid_params += 1,
                    _ => {}
                }
            }
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Operation {
    counts: Counts,
    total: Duration,
    max: Duration,
    last: Duration,
}

#[derive(Debug, Default, Clone)]
struct Workspace {
    root: String,
    session_starts: u64,
    session_restarts: u64,
    budget_shutdowns: u64,
    idle_shutdowns: u64,
    requests: Counts,
    ops: BTreeMap<String, Operation>,
}

/// The statistics of this process.
#[derive(Debug, Default)]
pub struct Stats {
    workspaces: Mutex<BTreeMap<String, Workspace>>,
}

fn ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

impl Stats {
    fn with(&self, root: &Path, update: impl FnOnce(&mut Workspace)) {
        let mut workspaces = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        let workspace = workspaces
            .entry(workspace_key(root))
            .or_insert_with(|| Workspace {
                root: root.display().to_string(),
                ..Workspace::default()
            });
        update(workspace);
    }

    /// A runtime started for `root` (a restart if it replaced one).
    pub fn session_started(&self, root: &Path, restart: bool) {
        self.with(root, |w| {
            w.session_starts += 1;
            w.session_restarts += u64::from(restart);
        });
    }

    /// The runtime was shut down to make room for another workspace (`--max-workspaces`).
    pub fn budget_shutdown(&self, root: &Path) {
        self.with(root, |w| w.budget_shutdowns += 1);
    }

    /// The runtime was shut down after sitting unused (`--idle-timeout-ms`).
    pub fn idle_shutdown(&self, root: &Path) {
        self.with(root, |w| w.idle_shutdowns += 1);
    }

    /// One call of `op` on `root` ended.
    pub fn record(&self, root: &Path, op: &str, outcome: Outcome, latency: Duration) {
        self.with(root, |w| {
            w.requests.add(outcome);
            let op = w.ops.entry(op.to_owned()).or_default();
            op.counts.add(outcome);
            op.total += latency;
            op.max = op.max.max(latency);
            op.last = latency;
        });
    }

    /// Forgets an evicted workspace.
    pub fn forget(&self, root: &Path) {
        let mut workspaces = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        workspaces.remove(&workspace_key(root));
    }

    /// The `workspaces` object of `beam_stats`; `session` describes each workspace's runtime now.
    pub fn render(&self, session: impl Fn(&str) -> Value) -> Value {
        let workspaces = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = serde_json::Map::new();
        for (key, w) in workspaces.iter() {
            let ops: serde_json::Map<String, Value> = w
                .ops
                .iter()
                .map(|(name, op)| {
                    let mut entry = counts_json(&op.counts);
                    let avg = op.total / u32::try_from(op.counts.count.max(1)).unwrap_or(u32::MAX);
                    entry["avgLatencyMs"] = json!(ms(avg));
                    entry["maxLatencyMs"] = json!(ms(op.max));
                    entry["lastLatencyMs"] = json!(ms(op.last));
                    (name.clone(), entry)
                })
                .collect();
            let mut lean = json!({
                "sessionStarts": w.session_starts,
                "sessionRestarts": w.session_restarts,
                "budgetShutdowns": w.budget_shutdowns,
                "idleShutdowns": w.idle_shutdowns,
            });
            let requests = counts_json(&w.requests);
            lean["requestCount"] = requests["count"].clone();
            for field in [
                "successCount",
                "errorCount",
                "cancelledCount",
                "workerExitedCount",
                "invalidParamsCount",
            ] {
                lean[field] = requests[field].clone();
            }
            lean["ops"] = Value::Object(ops);
            out.insert(
                key.clone(),
                json!({
                    "id": key,
                    "root": w.root,
                    "sessions": {"lean": session(key)},
                    "byBackend": {"lean": lean},
                }),
            );
        }
        Value::Object(out)
    }
}

fn counts_json(c: &Counts) -> Value {
    json!({
        "count": c.count,
        "successCount": c.success,
        "errorCount": c.error,
        "cancelledCount": c.cancelled,
        "workerExitedCount": c.worker_exited,
        "invalidParamsCount": c.invalid_params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_by_outcome_with_latencies() {
        let stats = Stats::default();
        let root = Path::new("/w");
        stats.session_started(root, false);
        stats.record(root, "sync", Outcome::Success, Duration::from_millis(4));
        stats.record(
            root,
            "sync",
            Outcome::Error(code::WORKER_EXITED),
            Duration::from_millis(2),
        );
        stats.record(root, "hover", Outcome::Cancelled, Duration::from_millis(1));
        let rendered = stats.render(|_| json!({"active": true}));
        let lean = &rendered["local:/w"]["byBackend"]["lean"];
        assert_eq!(lean["requestCount"], 3);
        assert_eq!(lean["workerExitedCount"], 1);
        assert_eq!(lean["ops"]["sync"]["avgLatencyMs"], 3.0);
        assert_eq!(lean["ops"]["sync"]["maxLatencyMs"], 4.0);
        assert_eq!(lean["ops"]["hover"]["cancelledCount"], 1);
        assert_eq!(rendered["local:/w"]["sessions"]["lean"]["active"], true);
        stats.forget(root);
        assert_eq!(stats.render(|_| Value::Null), json!({}));
    }
}
