//! `bench-lean-scenarios`: the Lean host at scale, on the build `scripts/bench.sh` measures
//! (release), against the fake `lake`:
//!
//! - the storm (`storm.rs`): 50,000 pipelined calls, 25,000 in each protocol family, half of
//!   them `lean_hover` over three workspaces, 10% cancelled;
//! - the budget (`budget.rs`): 200 documents over 20 workspaces synced one by one under
//!   `--max-workspaces 2 --max-documents 3`.
//!
//! For each: calls/s, the server's peak RSS, and the most Lean processes alive at once. Every
//! answer is checked; a wrong one fails the command. It writes JSON, every round (the format
//! `lean-beam-bench --lean-scenarios` reads for the report).

mod budget;
mod server;
mod storm;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Parser;
use serde_json::json;

/// Runs the Lean host's storm and budget scenarios.
#[derive(Debug, Parser)]
#[command(name = "bench-lean-scenarios")]
struct Cli {
    /// The server (`lean-beam-mcp`).
    #[arg(long)]
    server: PathBuf,
    /// The `lake` executable (the fake's `fake-lake`).
    #[arg(long)]
    lake: PathBuf,
    /// The Lake project copied for each workspace (tests/fixtures/lean-project).
    #[arg(long)]
    fixture: PathBuf,
    /// A directory for the workspaces (emptied first).
    #[arg(long)]
    work: PathBuf,
    /// Rounds, each on fresh servers.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// A correctness pass: one round, 1,000 calls per family, 4 workspaces of 5 documents.
    #[arg(long)]
    smoke: bool,
    /// Where to write the JSON (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where the servers' stderr goes.
    #[arg(long, default_value = "target/bench/logs")]
    logs: PathBuf,
}

/// Workspaces of the storm, and calls per family.
const STORM_WORKSPACES: usize = 3;
const STORM_CALLS: usize = 25_000;
/// Workspaces and documents per workspace of the budget.
const BUDGET_WORKSPACES: usize = 20;
const BUDGET_DOCUMENTS: usize = 10;

/// Fresh copies of the fixture named `{prefix}-{n}` under `work`, canonical.
fn workspaces(cli: &Cli, prefix: &str, count: usize) -> Result<Vec<PathBuf>, String> {
    (0..count)
        .map(|n| {
            let root = cli.work.join(format!("{prefix}-{n}"));
            let copied = Command::new("cp")
                .arg("-R")
                .arg(&cli.fixture)
                .arg(&root)
                .status()
                .map_err(|e| format!("cp: {e}"))?;
            if !copied.success() {
                return Err(format!("copying the fixture to {}", root.display()));
            }
            root.canonicalize()
                .map_err(|e| format!("{}: {e}", root.display()))
        })
        .collect()
}

fn round(cli: &Cli, n: usize) -> Result<serde_json::Value, String> {
    let (calls, budget_workspaces, budget_documents) = if cli.smoke {
        (1_000, 4, 5)
    } else {
        (STORM_CALLS, BUDGET_WORKSPACES, BUDGET_DOCUMENTS)
    };
    let log = |name: &str| cli.logs.join(format!("scenario-{name}-{n}.log"));
    let roots = workspaces(cli, &format!("storm{n}"), STORM_WORKSPACES)?;
    let mut storms = Vec::new();
    for modern in [false, true] {
        let family = if modern { "modern" } else { "legacy" };
        let figures = storm::run(
            &cli.server,
            &cli.lake,
            &roots,
            calls,
            modern,
            &log(&format!("storm-{family}")),
        )?;
        eprintln!(
            "round {} storm {}: {} calls in {:.1} s = {:.0} calls/s, peak RSS {} KiB, at most {} \
             Lean processes",
            n + 1,
            figures.family,
            figures.calls,
            figures.seconds,
            figures.calls_per_s,
            figures.peak_rss_kib,
            figures.peak_lean_processes
        );
        storms.push(figures);
    }
    let roots = workspaces(cli, &format!("budget{n}"), budget_workspaces)?;
    for root in &roots {
        budget::prepare(root, budget_documents)?;
    }
    let budget = budget::run(
        &cli.server,
        &cli.lake,
        &roots,
        budget_documents,
        &log("budget"),
    )?;
    eprintln!(
        "round {} budget: {} documents in {} workspaces in {:.1} s = {:.0} calls/s, peak RSS {} \
         KiB, at most {} Lean processes (the bounds allow {})",
        n + 1,
        budget.documents,
        budget.workspaces,
        budget.seconds,
        budget.calls_per_s,
        budget.peak_rss_kib,
        budget.peak_lean_processes,
        budget.allowed_lean_processes
    );
    Ok(json!({"storm": storms, "budget": budget}))
}

fn empty(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rounds = if cli.smoke { 1 } else { cli.rounds.max(1) };
    let run = || -> Result<serde_json::Value, String> {
        empty(&cli.work)?;
        std::fs::create_dir_all(&cli.logs).map_err(|e| format!("{}: {e}", cli.logs.display()))?;
        let rounds: Vec<_> = (0..rounds)
            .map(|n| round(&cli, n))
            .collect::<Result<_, _>>()?;
        Ok(json!({"smoke": cli.smoke, "rounds": rounds}))
    };
    let result = run();
    let _ = std::fs::remove_dir_all(&cli.work);
    match result {
        Ok(figures) => {
            let text = serde_json::to_string_pretty(&figures).expect("JSON values serialize");
            match &cli.out {
                Some(path) => {
                    if let Err(e) = std::fs::write(path, text) {
                        eprintln!("bench-lean-scenarios: writing {}: {e}", path.display());
                        return ExitCode::FAILURE;
                    }
                }
                None => println!("{text}"),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-lean-scenarios: {e}");
            ExitCode::FAILURE
        }
    }
}
