//! `lean-beam-bench`: the load generator and report writer of `scripts/bench.sh`.
//!
//! For every server × revision of the server table (`bench/servers.json`) and every round
//! (servers interleaved within a round), it spawns the server, speaks the revision's handshake
//! and measures cold start, closed-loop throughput at each concurrency, latency at 1 in flight,
//! peak RSS after a fixed number of calls, large-payload echo rate and, for the Lean host's
//! rows, LSP messages per call, checking every answer. Then it writes the Markdown report
//! (medians, ratios, targets, the Lean host's section with the floor `bench-lean-floor`
//! measured), an SVG chart and the raw JSON. A wrong answer from any server (or a Lean row
//! sending other LSP messages than its `expect_lsp`) makes it exit non-zero; performance never
//! does.

mod config;
mod conn;
mod lean_report;
mod load;
mod lsp_count;
mod measure;
mod proto;
mod report;
mod scenarios;
mod svg;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use serde_json::json;

use config::{Config, Revision};
use load::Limit;
use measure::{Sample, Settings};
use report::{MetricKey, Report, Summary};

/// Benchmarks MCP stdio servers side by side (see bench/README.md).
#[derive(Debug, Parser)]
#[command(name = "lean-beam-bench")]
struct Cli {
    /// The server table.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/servers.json"))]
    config: PathBuf,
    /// Rounds (each server runs once per round; figures are medians over rounds).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// A quick correctness pass: one round, a few hundred calls per server, one spawn, one
    /// large payload. Fails only on wrong answers.
    #[arg(long)]
    smoke: bool,
    /// Only these servers (repeatable).
    #[arg(long)]
    only: Vec<String>,
    /// Requests in flight for the throughput runs (of rows without their own `levels`).
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    concurrency: Vec<u64>,
    /// Length of each throughput run, in ms.
    #[arg(long, default_value_t = 2000)]
    level_ms: u64,
    /// Calls on one connection before peak RSS is read.
    #[arg(long, default_value_t = 20_000)]
    rss_calls: u64,
    /// Cold starts per server per round.
    #[arg(long, default_value_t = 5)]
    cold_spawns: usize,
    /// Size of the large payload, in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    big_bytes: usize,
    /// Length of the large-payload run, in ms.
    #[arg(long, default_value_t = 2000)]
    big_ms: u64,
    /// Markdown report.
    #[arg(long)]
    md: Option<PathBuf>,
    /// SVG chart (linked from the report by file name).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Raw figures, every round.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Directory for the servers' stderr.
    #[arg(long, default_value = "target/bench/logs")]
    logs: PathBuf,
    /// A line added to the report's preamble (e.g. the commit measured).
    #[arg(long)]
    note: Option<String>,
    /// Calls counted for LSP messages per call (rows with the `lsp_messages` metric).
    #[arg(long, default_value_t = 20)]
    lsp_calls: u64,
    /// The fake Lean server's own time per request, as `bench-lean-floor` wrote it: the floor of
    /// the Lean host's section.
    #[arg(long)]
    lean_floor: Option<PathBuf>,
    /// The Lean host's storm and budget scenarios, as `bench-lean-scenarios` wrote them.
    #[arg(long)]
    lean_scenarios: Option<PathBuf>,
}

/// The first 300 characters of a text, for error messages.
pub fn short(text: &str) -> String {
    let mut cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// As [`short`], for raw bytes.
pub fn short_bytes(bytes: &[u8]) -> String {
    short(String::from_utf8_lossy(&bytes[..bytes.len().min(1200)]).trim_end())
}

fn settings(cli: &Cli) -> Settings {
    if cli.smoke {
        let count = |n| Limit {
            max_calls: n,
            min_calls: n,
            duration: Duration::ZERO,
        };
        return Settings {
            concurrency: cli.concurrency.clone(),
            level: count(200),
            warmup: count(50),
            rss_calls: 200,
            big_bytes: cli.big_bytes,
            big: count(1),
            cold_spawns: 1,
            lsp_calls: cli.lsp_calls,
            logs: cli.logs.clone(),
        };
    }
    Settings {
        concurrency: cli.concurrency.clone(),
        level: Limit {
            max_calls: 10_000_000,
            min_calls: 200,
            duration: Duration::from_millis(cli.level_ms),
        },
        warmup: Limit {
            max_calls: 10_000_000,
            min_calls: 200,
            duration: Duration::from_millis(500),
        },
        rss_calls: cli.rss_calls,
        big_bytes: cli.big_bytes,
        big: Limit {
            max_calls: 10_000,
            min_calls: 3,
            duration: Duration::from_millis(cli.big_ms),
        },
        cold_spawns: cli.cold_spawns,
        lsp_calls: cli.lsp_calls,
        logs: cli.logs.clone(),
    }
}

fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, Linux {kernel}")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(&cli.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("lean-beam-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    for name in &cli.only {
        if !config.servers.iter().any(|s| &s.name == name) {
            eprintln!("lean-beam-bench: --only {name}: no such server in the table");
            return ExitCode::FAILURE;
        }
    }
    let floor = match cli.lean_floor.as_deref().map(lean_report::Floor::load) {
        None => None,
        Some(Ok(floor)) => Some(floor),
        Some(Err(e)) => {
            eprintln!("lean-beam-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let scenarios = match cli
        .lean_scenarios
        .as_deref()
        .map(scenarios::Scenarios::load)
    {
        None => None,
        Some(Ok(scenarios)) => Some(scenarios),
        Some(Err(e)) => {
            eprintln!("lean-beam-bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let settings = settings(&cli);
    let rounds = if cli.smoke { 1 } else { cli.rounds.max(1) };
    if let Err(e) = std::fs::create_dir_all(&settings.logs) {
        eprintln!("lean-beam-bench: creating {}: {e}", settings.logs.display());
        return ExitCode::FAILURE;
    }
    let combos: Vec<(usize, Revision)> = config
        .servers
        .iter()
        .enumerate()
        .filter(|(_, row)| cli.only.is_empty() || cli.only.contains(&row.name))
        .flat_map(|(i, row)| row.revisions.iter().map(move |r| (i, *r)))
        .collect();
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); combos.len()];
    let mut failures: Vec<Option<String>> = vec![None; combos.len()];
    let started = Instant::now();
    for round in 0..rounds {
        // Interleaved: every server once per round, the starting server rotating.
        for k in 0..combos.len() {
            let c = (k + round) % combos.len();
            if failures[c].is_some() {
                continue;
            }
            let (i, revision) = combos[c];
            let row = &config.servers[i];
            let t = Instant::now();
            match measure::round(row, revision, &settings) {
                Ok(sample) => {
                    let (level, rate) = sample
                        .throughput
                        .iter()
                        .last()
                        .map_or(("–".into(), "–".into()), |(n, v)| {
                            (n.to_string(), report::figure(*v))
                        });
                    eprintln!(
                        "round {}/{rounds} {:<24} {}  {:>6.1} s  @{level:<2} {rate:>9} calls/s  p99 {:>8} µs  {}{} answers checked",
                        round + 1,
                        row.name,
                        revision.as_str(),
                        t.elapsed().as_secs_f64(),
                        sample.p99_us.map_or("–".into(), report::figure),
                        sample.lsp.as_ref().map_or(String::new(), |l| format!(
                            "LSP messages/call {} ({}), ",
                            report::figure(l.per_call()),
                            lsp_count::describe(l.by_method.iter().map(|(m, n)| (m.as_str(), *n)))
                        )),
                        sample.checked_calls,
                    );
                    samples[c].push(sample);
                }
                Err(e) => {
                    eprintln!(
                        "round {}/{rounds} {} {}: FAILED: {e} (stderr: {})",
                        round + 1,
                        row.name,
                        revision.as_str(),
                        settings
                            .logs
                            .join(format!("{}-{}.log", row.name, revision.as_str()))
                            .display()
                    );
                    failures[c] = Some(e);
                }
            }
        }
    }
    let summaries: Vec<Summary> = combos
        .iter()
        .enumerate()
        .map(|(c, (i, revision))| {
            Summary::of(
                &config.servers[*i],
                *revision,
                &samples[c],
                failures[c].clone(),
            )
        })
        .collect();

    let mut levels: Vec<u64> = settings.concurrency.clone();
    for row in &config.servers {
        levels.extend(row.levels(&[]));
    }
    levels.sort_unstable();
    levels.dedup();
    let mut columns: Vec<MetricKey> = levels.iter().map(|n| MetricKey::Throughput(*n)).collect();
    columns.extend([
        MetricKey::P50,
        MetricKey::P99,
        MetricKey::Max,
        MetricKey::ColdStart,
        MetricKey::FirstCall,
        MetricKey::PeakRss,
        MetricKey::Bytes,
        MetricKey::Cpu,
    ]);
    let mode = if cli.smoke {
        format!(
            "in smoke mode (one round of a few hundred calls per server, {} build): a correctness \
             check, so the figures mean nothing",
            if cfg!(debug_assertions) {
                "a debug"
            } else {
                "a release"
            }
        )
    } else {
        format!(
            "{rounds} rounds, medians; {} s per throughput level; {} cold starts per server per round",
            cli.level_ms as f64 / 1000.0,
            settings.cold_spawns
        )
    };
    let mut preamble = format!(
        "Generated by `scripts/bench.sh` on {}, {mode}, in {:.0} s on {}.",
        today(),
        started.elapsed().as_secs_f64(),
        machine()
    );
    if let Some(note) = &cli.note {
        preamble.push(' ');
        preamble.push_str(note);
    }
    let chart_name = cli
        .svg
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let report = Report {
        config: &config,
        summaries: &summaries,
        columns,
        preamble,
        chart: chart_name,
        floor,
        scenarios,
    };
    let mut ok = true;
    let mut write = |path: &Option<PathBuf>, text: String| {
        if let Some(path) = path {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            match std::fs::write(path, text) {
                Ok(()) => eprintln!("wrote {}", path.display()),
                Err(e) => {
                    eprintln!("lean-beam-bench: writing {}: {e}", path.display());
                    ok = false;
                }
            }
        }
    };
    let markdown = report.markdown();
    write(&cli.md, markdown.clone());
    let first_group = config
        .servers
        .first()
        .map(|r| r.group.clone())
        .unwrap_or_default();
    let order: Vec<String> = config.servers.iter().map(|r| r.name.clone()).collect();
    let charted: Vec<&Summary> = summaries
        .iter()
        .filter(|s| s.group == first_group)
        .collect();
    write(
        &cli.svg,
        svg::chart(
            &charted,
            &order,
            &settings.concurrency,
            &format!("lean-beam-mcp benchmark, {} ({})", today(), machine()),
        ),
    );
    let raw = json!({
        "summaries": summaries,
        "lean_floor": report.floor,
        "samples": combos.iter().enumerate().map(|(c, (i, revision))| json!({
            "server": config.servers[*i].name,
            "revision": revision,
            "rounds": samples[c],
        })).collect::<Vec<_>>(),
    });
    write(
        &cli.json,
        serde_json::to_string_pretty(&raw).expect("JSON values serialize"),
    );
    if cli.md.is_none() {
        println!("{markdown}");
    }
    for (what, revision, _, met, _) in report.targets() {
        if !met && !cli.smoke {
            eprintln!("target missed: {what} ({})", revision.as_str());
        }
    }
    let failed: Vec<String> = combos
        .iter()
        .zip(&failures)
        .filter_map(|((i, r), f)| {
            f.as_ref()
                .map(|f| format!("{} {}: {f}", config.servers[*i].name, r.as_str()))
        })
        .collect();
    if !failed.is_empty() {
        eprintln!("lean-beam-bench: {} server run(s) failed:", failed.len());
        for f in &failed {
            eprintln!("  {f}");
        }
        return ExitCode::FAILURE;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
