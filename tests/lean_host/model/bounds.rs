//! What Lean was asked to hold, from the fake's traces, and what was left when the server
//! ended.
//!
//! Contract: each `lake` process traces to a file of its own (`lake-<pid>.jsonl`, see
//! `driver::lake_wrapper`), so its `didOpen`s and `didClose`s replay in the order that
//! `lake serve` received them; a `{"event": "start"}` begins a server's life (a file holds one,
//! or none for `lake build`/`lake env`). At no point may a server hold more real documents than
//! `--max-documents`, or more twins (URIs with `beam-twin` or `/.lake/beam/`) than
//! `--max-twins`. Every violation the fake recorded is one of the suite's, and so is every
//! message it sent that Lean never sends (the Lean contract, `support::contract`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use super::Violation;
use super::driver::ANSWER_BOUND;
use crate::harness::{is_twin_uri, replay_open};

/// The traces in `dir` of the `lake` processes of each workspace, by the workspace's prefix
/// (`driver::trace_prefix`): file name, workspace, entries.
pub fn read_traces(dir: &Path, prefixes: &[String]) -> Vec<(String, usize, Vec<Value>)> {
    let mut traces: Vec<(String, usize, Vec<Value>)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ws = prefixes.iter().position(|p| name.starts_with(p.as_str()))?;
            let text = std::fs::read_to_string(entry.path()).ok()?;
            let entries = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            Some((name, ws, entries))
        })
        .collect();
    traces.sort_by(|a, b| a.0.cmp(&b.0));
    traces
}

/// The bound and protocol violations in `traces`.
pub fn check(
    traces: &[(String, usize, Vec<Value>)],
    max_documents: usize,
    max_twins: usize,
) -> Vec<Violation> {
    let mut found = Vec::new();
    for (name, _, entries) in traces {
        for entry in entries {
            if let Some(violation) = entry.get("violation") {
                found.push(Violation::new(
                    "fake-violation",
                    None,
                    format!("{name}: the fake recorded {violation}: {}", entry["detail"]),
                ));
            }
            if let Some(report) = crate::support::contract::report(entry) {
                found.push(Violation::new(
                    "lean-contract",
                    None,
                    format!("{name}: {report}"),
                ));
            }
        }
        let (mut over_documents, mut over_twins) = (false, false);
        replay_open(entries, |open| {
            let twins: Vec<&String> = open.iter().filter(|u| is_twin_uri(u)).collect();
            let documents: Vec<&String> = open.iter().filter(|u| !is_twin_uri(u)).collect();
            if documents.len() > max_documents && !over_documents {
                over_documents = true;
                found.push(Violation::new(
                    "document-bound",
                    None,
                    format!(
                        "one lake serve ({name}) had {} documents open, over --max-documents \
                         {max_documents}: {}",
                        documents.len(),
                        short(&documents)
                    ),
                ));
            }
            if twins.len() > max_twins && !over_twins {
                over_twins = true;
                found.push(Violation::new(
                    "twin-bound",
                    None,
                    format!(
                        "one lake serve ({name}) had {} twins open, over --max-twins \
                         {max_twins}: {}",
                        twins.len(),
                        short(&twins)
                    ),
                ));
            }
        });
    }
    found
}

/// URIs without the temporary directories that make them unreadable.
fn short(uris: &[&String]) -> String {
    let names: Vec<&str> = uris
        .iter()
        .map(|u| u.split("/project/").nth(1).unwrap_or(u))
        .collect();
    names.join(", ")
}

/// Waits until no process lives in `root`; those still there after [`ANSWER_BOUND`].
pub fn wait_no_processes(root: &Path) -> Vec<u32> {
    let deadline = Instant::now() + ANSWER_BOUND;
    loop {
        let left = crate::harness::processes_in(root);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        // Process exits have no event a test can block on: look again shortly.
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Every file under `dir` (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}
