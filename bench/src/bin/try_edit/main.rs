//! `bench-try-edit`: `lean_try_edit` measured (issue 17): 16 candidates at one position with a
//! pool of 4 twins, against one candidate, against 16 sequential `lean_run_at` calls, and
//! against lean-lsp-mcp's `lean_multi_attempt` with the same 16 snippets (its scratch pool also
//! at 4), all over the fake Lean with an elaboration delay (`-- fake: slow MS` on the proof):
//! wall time, LSP messages (from the fake's trace) and MCP round trips.
//!
//! Each round starts fresh servers on a fresh copy of the project, syncs the file, and warms
//! each side's pool (4 other candidates or snippets) before measuring, so what is measured is
//! warm; every text of a round is new to it (a round mark in a comment), so nothing is answered
//! from a cache except where that is what is measured (the 16 candidates asked again). Figures
//! are medians over rounds. The target, at most 5x one candidate's wall time for 16, is stated
//! met or missed, never asserted.

mod mcp;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde_json::{Value, json};

use mcp::{Mcp, Timed};

/// The benchmark's file, relative to the project root.
const FILE: &str = "Fixture/TryEditBench.lean";
/// The tactic the candidates replace (0-based), and the proof's end.
const FROM: (u64, u64) = (6, 2);
const TO: (u64, u64) = (8, 12);
/// The 16 snippets.
const SNIPPETS: [&str; 16] = [
    "exact ⟨hq, hp⟩",
    "constructor",
    "simp",
    "sorry",
    "skip",
    "exact hp",
    "trivial",
    "decide",
    "omega",
    "exact ⟨hp, hq⟩",
    "intro h",
    "left",
    "right",
    "assumption",
    "done",
    "rfl",
];
/// The target: 16 candidates within this many times one candidate's wall time.
const TARGET: f64 = 5.0;

/// Measures lean_try_edit against lean_run_at and lean-lsp-mcp's lean_multi_attempt.
#[derive(Debug, Parser)]
#[command(name = "bench-try-edit")]
struct Cli {
    /// The lean-beam-mcp binary.
    #[arg(long)]
    server: PathBuf,
    /// The fake `lake`.
    #[arg(long)]
    lake: PathBuf,
    /// lean-lsp-mcp's console script (the peer); left out when absent.
    #[arg(long)]
    lean_lsp_mcp: Option<PathBuf>,
    /// A directory whose `lake` is the fake (lean-lsp-mcp finds lake on PATH).
    #[arg(long)]
    fake_path: Option<PathBuf>,
    /// The fixture project to copy (tests/fixtures/lean-project).
    #[arg(long)]
    fixture: PathBuf,
    /// Where the copies, logs and traces go.
    #[arg(long)]
    work: PathBuf,
    /// Rounds; figures are medians over them.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The elaboration delay of the proof, in ms.
    #[arg(long, default_value_t = 200)]
    delay_ms: u64,
    /// Where to write the Markdown report.
    #[arg(long)]
    md: PathBuf,
    /// A note for the report (the commit measured).
    #[arg(long, default_value = "")]
    note: String,
}

/// One measurement: wall time, LSP messages, MCP round trips.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    wall: Duration,
    lsp: usize,
    trips: usize,
}

/// The rows of the report, in order.
const ROWS: [&str; 6] = [
    "lean_try_edit, 1 candidate",
    "lean_try_edit, 16 candidates, pool of 4 twins",
    "lean_try_edit, the same 16 candidates again",
    "16 sequential lean_run_at",
    "lean-lsp-mcp lean_multi_attempt, 1 snippet",
    "lean-lsp-mcp lean_multi_attempt, 16 snippets, scratch pool of 4",
];

fn file_text(delay_ms: u64) -> String {
    format!(
        "/-! lean_try_edit's benchmark: one proof whose elaboration takes the delay. -/\n\nnamespace \
         Fixture.TryEditBench\n\n-- fake: slow {delay_ms}\ntheorem swap (p q : Prop) (hp : p) (hq : q) : \
         q ∧ p := by\n  constructor\n  · exact hq\n  · exact hp\n\nend Fixture.TryEditBench\n"
    )
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Copies a directory tree, leaving out any `.lake` build directory.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries.flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            if entry.file_name() != ".lake" {
                copy_dir(&entry.path(), &target)?;
            }
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| format!("{e}"))?;
        }
    }
    Ok(())
}

/// A fresh copy of the project with the benchmark's file, under `dir`.
fn project(cli: &Cli, dir: &Path) -> Result<PathBuf, String> {
    let _ = std::fs::remove_dir_all(dir);
    let root = dir.join("project");
    copy_dir(&cli.fixture, &root)?;
    std::fs::write(root.join(FILE), file_text(cli.delay_ms)).map_err(|e| format!("{e}"))?;
    std::fs::canonicalize(&root).map_err(|e| format!("{e}"))
}

/// One call, with what it sent Lean.
fn measured(mcp: &mut Mcp, tool: &str, arguments: Value) -> Result<(Value, Cost), String> {
    let before = mcp.lean_received();
    let Timed { result, wall } = mcp.call(tool, arguments)?;
    let cost = Cost {
        wall,
        lsp: mcp.lean_received().saturating_sub(before),
        trips: 1,
    };
    Ok((result, cost))
}

fn tagged(snippet: &str, tag: &str) -> String {
    format!("{snippet} -- {tag}")
}

/// Our four rows in one round.
fn ours(cli: &Cli, round: usize, dir: &Path) -> Result<Vec<Cost>, String> {
    let root = project(cli, dir)?;
    let text = std::fs::read_to_string(root.join(FILE)).map_err(|e| format!("{e}"))?;
    let command = [
        cli.server.display().to_string(),
        "--lake".into(),
        cli.lake.display().to_string(),
        "--max-twins".into(),
        "4".into(),
        "--status-delay-ms".into(),
        "3600000".into(),
    ];
    let log = dir.join("lean-beam-mcp.log");
    let trace =
        std::path::absolute(dir.join("lean-beam-mcp-lsp.jsonl")).map_err(|e| e.to_string())?;
    let mut mcp = Mcp::start(&command, &[], &log, &trace)?;
    let workspace = json!({"root": root});
    let synced = mcp.call("lean_sync", json!({"workspace": workspace, "path": FILE}))?;
    let version = synced.result["version"].clone();
    let try_edit = |snippets: &[&str], tag: &str| {
        let candidates: Vec<Value> = snippets
            .iter()
            .map(|s| {
                json!({"range": {"start": {"line": FROM.0, "character": FROM.1},
                                 "end": {"line": TO.0, "character": TO.1}},
                       "text": tagged(s, tag)})
            })
            .collect();
        json!({"workspace": workspace, "path": FILE, "base_sha256": sha256(&text),
               "candidates": candidates})
    };
    let closes_first = |result: &Value, n: usize| -> Result<(), String> {
        let verdicts: Vec<&str> = result["candidates"]
            .as_array()
            .map(|c| c.iter().filter_map(|c| c["verdict"].as_str()).collect())
            .unwrap_or_default();
        match (verdicts.len() == n, verdicts.first()) {
            (true, Some(&"closed")) => Ok(()),
            _ => Err(format!("lean_try_edit answered {verdicts:?}: {result}")),
        }
    };
    mcp.call("lean_try_edit", try_edit(&SNIPPETS[1..5], "warm"))?;
    let (result, one) = measured(
        &mut mcp,
        "lean_try_edit",
        try_edit(&SNIPPETS[..1], &format!("r{round} one")),
    )?;
    closes_first(&result, 1)?;
    let sixteen_arguments = try_edit(&SNIPPETS, &format!("r{round}"));
    let (result, sixteen) = measured(&mut mcp, "lean_try_edit", sixteen_arguments.clone())?;
    closes_first(&result, 16)?;
    let (result, again) = measured(&mut mcp, "lean_try_edit", sixteen_arguments)?;
    closes_first(&result, 16)?;
    let mut runs = Cost::default();
    for snippet in SNIPPETS {
        let at = json!({"workspace": workspace, "path": FILE, "version": version,
                        "line": FROM.0, "character": FROM.1,
                        "text": tagged(snippet, &format!("r{round} run"))});
        let (_, cost) = measured(&mut mcp, "lean_run_at", at)?;
        runs.wall += cost.wall;
        runs.lsp += cost.lsp;
        runs.trips += 1;
    }
    mcp.finish();
    Ok(vec![one, sixteen, again, runs])
}

/// lean-lsp-mcp's two rows in one round.
fn peer(cli: &Cli, lean_lsp_mcp: &Path, round: usize, dir: &Path) -> Result<Vec<Cost>, String> {
    let root = project(cli, dir)?;
    let path = std::env::var("PATH").unwrap_or_default();
    let fake_path = cli
        .fake_path
        .as_ref()
        .ok_or("--fake-path is needed for the peer")?;
    let fake_path = std::path::absolute(fake_path).map_err(|e| e.to_string())?;
    let env = [
        ("PATH".to_owned(), format!("{}:{path}", fake_path.display())),
        ("LEAN_PROJECT_PATH".to_owned(), root.display().to_string()),
        ("LEAN_MCP_SCRATCH_SLOTS".to_owned(), "4".to_owned()),
    ];
    let log = dir.join("lean-lsp-mcp.log");
    let trace =
        std::path::absolute(dir.join("lean-lsp-mcp-lsp.jsonl")).map_err(|e| e.to_string())?;
    let mut mcp = Mcp::start(&[lean_lsp_mcp.display().to_string()], &env, &log, &trace)?;
    let file = root.join(FILE).display().to_string();
    let attempt = |snippets: &[&str], tag: &str| {
        let snippets: Vec<String> = snippets.iter().map(|s| tagged(s, tag)).collect();
        json!({"file_path": file, "line": FROM.0 + 1, "column": FROM.1 + 1, "snippets": snippets})
    };
    let answered = |result: &Value, n: usize| -> Result<(), String> {
        match result["items"].as_array().map(Vec::len) {
            Some(len) if len == n => Ok(()),
            _ => Err(format!("lean_multi_attempt answered {result}")),
        }
    };
    mcp.call("lean_multi_attempt", attempt(&SNIPPETS[1..5], "warm"))?;
    let (result, one) = measured(
        &mut mcp,
        "lean_multi_attempt",
        attempt(&SNIPPETS[..1], &format!("r{round} one")),
    )?;
    answered(&result, 1)?;
    let (result, sixteen) = measured(
        &mut mcp,
        "lean_multi_attempt",
        attempt(&SNIPPETS, &format!("r{round}")),
    )?;
    answered(&result, 16)?;
    mcp.finish();
    Ok(vec![one, sixteen])
}

fn median<T: Copy + PartialOrd>(mut values: Vec<T>) -> Option<(T, T, T)> {
    values.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    let (first, last) = (*values.first()?, *values.last()?);
    Some((values[values.len() / 2], first, last))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(cli: &Cli, rounds: &[Vec<Option<Cost>>]) -> (String, bool) {
    let column = |row: usize| -> Vec<Cost> { rounds.iter().filter_map(|r| r[row]).collect() };
    let wall = |row: usize| median(column(row).iter().map(|c| ms(c.wall)).collect());
    let mut md = format!(
        "# `lean_try_edit` benchmark\n\n{}Generated by `scripts/bench.sh` (`bench-try-edit`, \
         bench/src/bin/try_edit/). Both servers drive the fake Lean (`fake-lake serve`), whose \
         elaboration of the proof takes {} ms (`-- fake: slow {}`); lean-beam-mcp runs with \
         `--max-twins 4`, lean-lsp-mcp 0.32.0 with `LEAN_MCP_SCRATCH_SLOTS=4`. Each of {} \
         rounds starts fresh servers on a fresh copy of the project, syncs the file and warms \
         each pool with 4 other candidates first; every text of a round is new to it except \
         the 16 candidates asked again. Wall time is the median over rounds (lowest–highest); \
         LSP messages are what the fake received from the server during the call(s).\n\n\
         | measurement | wall ms | LSP messages | MCP round trips |\n|---|---:|---:|---:|\n",
        if cli.note.is_empty() {
            String::new()
        } else {
            format!("{}\n\n", cli.note)
        },
        cli.delay_ms,
        cli.delay_ms,
        rounds.len()
    );
    for (row, name) in ROWS.iter().enumerate() {
        let costs = column(row);
        let Some((mid, low, high)) = wall(row) else {
            md.push_str(&format!("| {name} | not run | | |\n"));
            continue;
        };
        let lsp = median(costs.iter().map(|c| c.lsp).collect()).map_or(0, |m| m.0);
        let trips = costs.first().map_or(0, |c| c.trips);
        md.push_str(&format!(
            "| {name} | {mid:.0} ({low:.0}–{high:.0}) | {lsp} | {trips} |\n"
        ));
    }
    let ratio = |a: usize, b: usize| Some(wall(a)?.0 / wall(b)?.0);
    let mut met = true;
    if let Some(r) = ratio(1, 0) {
        met = r <= TARGET;
        md.push_str(&format!(
            "\nTarget: 16 candidates in at most {TARGET}× one candidate's wall time: {r:.2}× — {}.\n",
            if met { "met" } else { "missed" }
        ));
    }
    if let Some(r) = ratio(1, 3) {
        md.push_str(&format!(
            "16 candidates take {r:.2}× the wall time of 16 sequential `lean_run_at` calls.\n"
        ));
    }
    if let Some(r) = ratio(1, 5) {
        md.push_str(&format!(
            "16 candidates take {r:.2}× the wall time of lean-lsp-mcp's `lean_multi_attempt` \
             with the same 16 snippets.\n"
        ));
    }
    (md, met)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut rounds = Vec::new();
    for round in 0..cli.rounds {
        let mut costs: Vec<Option<Cost>> = vec![None; ROWS.len()];
        match ours(&cli, round, &cli.work.join(format!("ours-{round}"))) {
            Ok(ours) => {
                for (n, cost) in ours.into_iter().enumerate() {
                    costs[n] = Some(cost);
                }
            }
            Err(e) => {
                eprintln!("bench-try-edit: lean-beam-mcp, round {round}: {e}");
                return ExitCode::FAILURE;
            }
        }
        if let Some(peer_bin) = &cli.lean_lsp_mcp {
            match peer(
                &cli,
                peer_bin,
                round,
                &cli.work.join(format!("peer-{round}")),
            ) {
                Ok(peer) => {
                    for (n, cost) in peer.into_iter().enumerate() {
                        costs[4 + n] = Some(cost);
                    }
                }
                Err(e) => eprintln!("bench-try-edit: lean-lsp-mcp, round {round}: {e}"),
            }
        }
        rounds.push(costs);
    }
    let (md, met) = report(&cli, &rounds);
    if let Err(e) = std::fs::write(&cli.md, &md) {
        eprintln!("bench-try-edit: writing {}: {e}", cli.md.display());
        return ExitCode::FAILURE;
    }
    print!("{md}");
    eprintln!(
        "bench-try-edit: target {}",
        if met { "met" } else { "missed" }
    );
    ExitCode::SUCCESS
}
