//! The budget: one `lean_sync` of each of `documents` files in each of many workspaces, one
//! after another, with small bounds (`--max-workspaces`, `--max-documents`), so Lean is shut
//! down and documents closed all along.
//!
//! Checked: every sync succeeds, and after each one the Lean processes alive stay within what
//! the bounds allow: per workspace its `lake serve` and a worker per open document, one more
//! workspace possibly still shutting down as the next starts.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use crate::server::Server;

/// The bounds the scenario runs under.
pub const MAX_WORKSPACES: usize = 2;
pub const MAX_DOCUMENTS: usize = 3;

/// What one budget run measured.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetFigures {
    pub workspaces: usize,
    pub documents: usize,
    pub max_workspaces: usize,
    pub max_documents: usize,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub peak_rss_kib: u64,
    pub peak_lean_processes: usize,
    /// The most the bounds allow.
    pub allowed_lean_processes: usize,
}

/// The files each workspace gets for the scenario (written once, by [`prepare`]).
pub fn files(documents: usize) -> Vec<String> {
    (0..documents)
        .map(|n| format!("Fixture/Doc{n}.lean"))
        .collect()
}

/// Writes the scenario's files into `root`.
pub fn prepare(root: &Path, documents: usize) -> Result<(), String> {
    for (n, name) in files(documents).iter().enumerate() {
        let path = root.join(name);
        std::fs::write(&path, format!("def doc{n} : Nat := {n}\n"))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Syncs every file of every root, in order.
pub fn run(
    server: &Path,
    lake: &Path,
    roots: &[PathBuf],
    documents: usize,
    log: &Path,
) -> Result<BudgetFigures, String> {
    let (workspaces, open) = (MAX_WORKSPACES.to_string(), MAX_DOCUMENTS.to_string());
    let flags = ["--max-workspaces", &workspaces, "--max-documents", &open];
    let mut lean = Server::start(server, lake, &flags, log, false)?;
    let allowed = (MAX_WORKSPACES + 1) * (1 + MAX_DOCUMENTS);
    let started = Instant::now();
    let mut id = 0;
    for root in roots {
        for file in files(documents) {
            id += 1;
            lean.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "lean_sync",
                "arguments": {"workspace": {"root": root}, "path": file}}}),
            )?;
            lean.flush()?;
            let answer = lean.next("a sync")?;
            if answer["id"] != id || answer["result"]["isError"] != false {
                return Err(format!("sync {id} of {file}: {answer}"));
            }
            let alive = lean.count_lean();
            if alive > allowed {
                return Err(format!(
                    "{alive} Lean processes alive after sync {id}, beyond the {allowed} the \
                     bounds allow"
                ));
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let calls = roots.len() * documents;
    let figures = BudgetFigures {
        workspaces: roots.len(),
        documents: calls,
        max_workspaces: MAX_WORKSPACES,
        max_documents: MAX_DOCUMENTS,
        seconds,
        calls_per_s: calls as f64 / seconds.max(1e-9),
        peak_rss_kib: lean.peak_rss_kib()?,
        peak_lean_processes: lean.peak_lean(),
        allowed_lean_processes: allowed,
    };
    lean.finish()?;
    Ok(figures)
}
