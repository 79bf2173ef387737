//! `bench-lean-floor`: the fake Lean server's own time per request, the floor of the Lean
//! host's section of the benchmark report.
//!
//! Each round starts `lake serve` (the fake, `fake-lake serve`) in the project, speaks LSP to
//! it directly — `initialize`/`initialized` (its `client/registerCapability` answered `null`),
//! `didOpen` of the fixture file (version 1, `dependencyBuildMode: "once"`), its
//! `waitForDiagnostics` — then runs each request the benchmarked tools need, closed-loop at each
//! level of requests in flight after a warm-up: `textDocument/hover` at 16:36,
//! `$/lean/plainGoal` at 28:3 and `textDocument/waitForDiagnostics` for version 1 (the same
//! positions as the rows of bench/servers.json). Every answer is checked; a wrong one fails the
//! command. It writes JSON: calls/s by level and latency p50/p99/max at 1 in flight per method,
//! medians over rounds (the format `lean-beam-bench --lean-floor` reads).

mod lsp;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

use lsp::{Incoming, Lsp};

/// The file the rows open, relative to the project root.
const FILE: &str = "Fixture/Basic.lean";

/// Measures the fake Lean server's own time per request over direct LSP.
#[derive(Debug, Parser)]
#[command(name = "bench-lean-floor")]
struct Cli {
    /// The `lake` executable (the fake's `fake-lake`).
    #[arg(long)]
    lake: PathBuf,
    /// The Lake project root (a copy of tests/fixtures/lean-project).
    #[arg(long)]
    root: PathBuf,
    /// Rounds, each on a fresh server; figures are medians over rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Requests in flight.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    levels: Vec<u64>,
    /// Length of each level, in ms.
    #[arg(long, default_value_t = 2000)]
    level_ms: u64,
    /// A correctness pass: one round, 200 calls per level after 50 warm-up calls.
    #[arg(long)]
    smoke: bool,
    /// Where to write the JSON (default: stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where lake serve's stderr goes (default: discarded).
    #[arg(long)]
    log: Option<PathBuf>,
}

/// When a run stops issuing requests.
#[derive(Clone, Copy)]
struct Limit {
    min_calls: u64,
    max_calls: u64,
    duration: Duration,
}

/// One request kind: its method, params and answer check.
struct Probe {
    method: &'static str,
    params: Value,
    check: fn(&Value) -> bool,
}

fn probes(uri: &str) -> Vec<Probe> {
    let at = |line: u32, character: u32| json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
    vec![
        Probe {
            method: "textDocument/hover",
            params: at(16, 36),
            check: |v| {
                v.pointer("/contents/value")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.contains("Fixture.add"))
            },
        },
        Probe {
            method: "$/lean/plainGoal",
            params: at(28, 3),
            check: |v| {
                v.get("goals")
                    .and_then(Value::as_array)
                    .is_some_and(|g| !g.is_empty())
            },
        },
        Probe {
            method: "textDocument/waitForDiagnostics",
            params: json!({"uri": uri, "version": 1}),
            check: Value::is_object,
        },
    ]
}

/// What one level measured.
struct Run {
    calls: u64,
    elapsed: Duration,
    latencies_us: Vec<f64>,
}

/// Keeps `concurrency` requests of `probe` in flight until `limit`; checks every answer.
fn run(lsp: &mut Lsp, probe: &Probe, concurrency: u64, limit: Limit) -> Result<Run, String> {
    let mut sent: BTreeMap<u64, Instant> = BTreeMap::new();
    let mut planned = concurrency.min(limit.max_calls).max(1);
    let start = Instant::now();
    for _ in 0..planned {
        let id = lsp.send_request(probe.method, &probe.params)?;
        sent.insert(id, Instant::now());
    }
    lsp.flush()?;
    let (mut answered, mut latencies_us, mut last) = (0u64, Vec::new(), start);
    while answered < planned {
        let Incoming::Answer(id, result) = lsp.read()? else {
            continue;
        };
        let now = Instant::now();
        let at = sent
            .remove(&id)
            .ok_or_else(|| format!("an answer to {id}, which is not pending"))?;
        let result = result.map_err(|e| format!("{} {id} failed: {e}", probe.method))?;
        if !(probe.check)(&result) {
            return Err(format!("{} {id}: unexpected answer {result}", probe.method));
        }
        answered += 1;
        last = now;
        latencies_us.push(now.duration_since(at).as_secs_f64() * 1e6);
        if planned < limit.max_calls
            && (planned < limit.min_calls || now.duration_since(start) < limit.duration)
        {
            planned += 1;
            let id = lsp.send_request(probe.method, &probe.params)?;
            sent.insert(id, Instant::now());
            lsp.flush()?;
        }
    }
    Ok(Run {
        calls: answered,
        elapsed: last.duration_since(start),
        latencies_us,
    })
}

/// One method's figures in one round.
struct Figures {
    /// Calls/s by level.
    throughput: BTreeMap<u64, f64>,
    /// p50, p99 and max at 1 in flight, µs.
    latency: Option<[f64; 3]>,
}

/// Every method's figures in one round.
type Round = BTreeMap<&'static str, Figures>;

fn round(cli: &Cli, warmup: Limit, level: Limit) -> Result<Round, String> {
    let root = std::fs::canonicalize(&cli.root)
        .map_err(|e| format!("project root {}: {e}", cli.root.display()))?;
    let path = root.join(FILE);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let uri = format!("file://{}", path.display());
    let mut lsp = Lsp::spawn(&cli.lake, &root, cli.log.as_deref())?;
    lsp.request(
        "initialize",
        json!({"processId": std::process::id(), "rootUri": format!("file://{}", root.display()),
               "capabilities": {}}),
    )?;
    lsp.notify("initialized", json!({}))?;
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "lean", "version": 1, "text": text},
               "dependencyBuildMode": "once"}),
    )?;
    lsp.request(
        "textDocument/waitForDiagnostics",
        json!({"uri": uri, "version": 1}),
    )?;
    let mut out = Round::new();
    for probe in probes(&uri) {
        run(&mut lsp, &probe, 8, warmup)?;
        let mut throughput = BTreeMap::new();
        let mut latency = None;
        for &n in &cli.levels {
            let r = run(&mut lsp, &probe, n, level)?;
            throughput.insert(n, r.calls as f64 / r.elapsed.as_secs_f64().max(1e-9));
            if n == 1 {
                let mut l = r.latencies_us;
                l.sort_by(f64::total_cmp);
                latency = Some([percentile(&l, 0.5), percentile(&l, 0.99), l[l.len() - 1]]);
            }
        }
        out.insert(
            probe.method,
            Figures {
                throughput,
                latency,
            },
        );
    }
    lsp.close();
    Ok(out)
}

/// Nearest-rank percentile of sorted, non-empty values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (n > 0).then(|| {
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    })
}

fn summary(cli: &Cli, rounds: &[Round]) -> Value {
    let mut requests = serde_json::Map::new();
    for method in rounds
        .first()
        .map(|r| r.keys().copied())
        .into_iter()
        .flatten()
    {
        let per = |f: &dyn Fn(&Figures) -> Option<f64>| {
            median(rounds.iter().filter_map(|r| f(&r[method])).collect())
        };
        let throughput: BTreeMap<String, f64> = cli
            .levels
            .iter()
            .filter_map(|n| Some((n.to_string(), per(&|r| r.throughput.get(n).copied())?)))
            .collect();
        requests.insert(
            method.to_string(),
            json!({
                "throughput": throughput,
                "p50_us": per(&|r| r.latency.map(|l| l[0])),
                "p99_us": per(&|r| r.latency.map(|l| l[1])),
                "max_us": per(&|r| r.latency.map(|l| l[2])),
            }),
        );
    }
    json!({
        "label": "`bench-lean-floor` (bench/src/bin/lean_floor)",
        "lake": cli.lake,
        "rounds": rounds.len(),
        "levels": cli.levels,
        "requests": requests,
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let count = |n| Limit {
        min_calls: n,
        max_calls: n,
        duration: Duration::ZERO,
    };
    let (rounds, warmup, level) = if cli.smoke {
        (1, count(50), count(200))
    } else {
        let timed = |ms| Limit {
            min_calls: 200,
            max_calls: 10_000_000,
            duration: Duration::from_millis(ms),
        };
        (cli.rounds.max(1), timed(500), timed(cli.level_ms))
    };
    let mut done = Vec::new();
    for i in 0..rounds {
        match round(&cli, warmup, level) {
            Ok(r) => {
                for (method, figures) in &r {
                    eprintln!(
                        "floor round {}/{rounds} {method:<32} calls/s {:?}  p50 {:.0} µs",
                        i + 1,
                        figures
                            .throughput
                            .values()
                            .map(|v| v.round())
                            .collect::<Vec<_>>(),
                        figures.latency.map_or(f64::NAN, |l| l[0]),
                    );
                }
                done.push(r);
            }
            Err(e) => {
                eprintln!("bench-lean-floor: round {}: {e}", i + 1);
                return ExitCode::FAILURE;
            }
        }
    }
    let text = serde_json::to_string_pretty(&summary(&cli, &done)).expect("JSON serializes");
    match &cli.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text + "\n") {
                eprintln!("bench-lean-floor: writing {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
        None => println!("{text}"),
    }
    ExitCode::SUCCESS
}
