//! Medians across rounds, the Markdown report with ratios and targets, and the raw JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::config::{Config, Revision, ServerRow};
use crate::lean_report::{self, Floor};
use crate::lsp_count::LspCount;
use crate::measure::{Sample, median};

/// One server in one revision, summarized over rounds (medians).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The row's name.
    pub server: String,
    /// Its group.
    pub group: String,
    /// The revision.
    pub revision: Option<Revision>,
    /// Rounds that completed.
    pub rounds: usize,
    /// Calls per second by requests in flight.
    pub throughput: BTreeMap<u64, f64>,
    /// Latency at 1 in flight, µs.
    pub p50_us: Option<f64>,
    /// 99th percentile, µs.
    pub p99_us: Option<f64>,
    /// Maximum, µs (median of the rounds' maxima).
    pub max_us: Option<f64>,
    /// The requests in flight the latencies were taken at (1 unless the row's levels leave
    /// it out).
    pub latency_level: Option<u64>,
    /// Median over every spawn, ms.
    pub cold_ms: Option<f64>,
    /// Median over every spawn, ms.
    pub first_call_ms: Option<f64>,
    /// MiB.
    pub peak_rss_mib: Option<f64>,
    /// Calls before the RSS reading.
    pub rss_calls: u64,
    /// MiB/s.
    pub big_mib_s: Option<f64>,
    /// µs of server CPU per call at the highest level.
    pub cpu_us_per_call: Option<f64>,
    /// Load-generator cores busy at the highest level.
    pub generator_cores: Option<f64>,
    /// LSP messages sent to the fake Lean server: the round that sent the most.
    pub lsp: Option<LspCount>,
    /// Calls whose answers were checked, over all rounds.
    pub checked_calls: u64,
    /// The lowest and highest per-round figure of the metrics that vary most between rounds
    /// (throughput, latency percentiles, CPU per call), keyed by column header.
    pub spread: BTreeMap<String, (f64, f64)>,
    /// Why a round failed, if one did.
    pub failure: Option<String>,
}

impl Summary {
    /// Medians of the samples.
    pub fn of(
        row: &ServerRow,
        revision: Revision,
        samples: &[Sample],
        failure: Option<String>,
    ) -> Summary {
        let pick = |f: &dyn Fn(&Sample) -> Option<f64>| median(samples.iter().filter_map(f));
        let mut throughput = BTreeMap::new();
        for level in samples.iter().flat_map(|s| s.throughput.keys()).copied() {
            if let Some(m) = median(
                samples
                    .iter()
                    .filter_map(|s| s.throughput.get(&level).copied()),
            ) {
                throughput.insert(level, m);
            }
        }
        Summary {
            server: row.name.clone(),
            group: row.group.clone(),
            revision: Some(revision),
            rounds: samples.len(),
            throughput,
            p50_us: pick(&|s| s.p50_us),
            latency_level: samples.iter().find_map(|s| s.latency_level),
            p99_us: pick(&|s| s.p99_us),
            max_us: pick(&|s| s.max_us),
            cold_ms: median(samples.iter().flat_map(|s| s.cold_ms.iter().copied())),
            first_call_ms: median(samples.iter().flat_map(|s| s.first_call_ms.iter().copied())),
            peak_rss_mib: pick(&|s| s.peak_rss_kib.map(|k| k as f64 / 1024.0)),
            rss_calls: samples.iter().map(|s| s.rss_calls).max().unwrap_or(0),
            big_mib_s: pick(&|s| s.big_mib_s),
            cpu_us_per_call: pick(&|s| s.cpu_us_per_call),
            generator_cores: pick(&|s| s.generator_cores),
            lsp: samples
                .iter()
                .filter_map(|s| s.lsp.clone())
                .max_by(|a, b| a.per_call().total_cmp(&b.per_call())),
            checked_calls: samples.iter().map(|s| s.checked_calls).sum(),
            spread: spread(samples),
            failure,
        }
    }
}

/// Min and max over rounds of each metric that has a per-round figure.
fn spread(samples: &[Sample]) -> BTreeMap<String, (f64, f64)> {
    let mut keys: Vec<MetricKey> = samples
        .iter()
        .flat_map(|s| s.throughput.keys())
        .map(|&n| MetricKey::Throughput(n))
        .collect();
    keys.extend([MetricKey::P50, MetricKey::P99, MetricKey::Cpu]);
    let mut out = BTreeMap::new();
    for key in keys {
        let values = samples.iter().filter_map(|s| key.of_round(s));
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if low.is_finite() {
            out.insert(key.header(), (low, high));
        }
    }
    out
}

/// A reported metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MetricKey {
    /// Calls/s at N in flight.
    Throughput(u64),
    /// Median latency at 1 in flight.
    P50,
    /// 99th-percentile latency at 1 in flight.
    P99,
    /// Maximum latency at 1 in flight.
    Max,
    /// Spawn to the opening's answer.
    ColdStart,
    /// Spawn to the first tool call's answer.
    FirstCall,
    /// VmHWM after the RSS calls.
    PeakRss,
    /// Large-payload echo rate.
    Bytes,
    /// Server CPU per call.
    Cpu,
}

/// Parses a metric key: `throughput@N`, `p50`, `p99`, `max`, `cold_start`, `first_call`,
/// `peak_rss`, `bytes`, `cpu`.
pub fn metric(key: &str) -> Option<MetricKey> {
    Some(match key {
        "p50" => MetricKey::P50,
        "p99" => MetricKey::P99,
        "max" => MetricKey::Max,
        "cold_start" => MetricKey::ColdStart,
        "first_call" => MetricKey::FirstCall,
        "peak_rss" => MetricKey::PeakRss,
        "bytes" => MetricKey::Bytes,
        "cpu" => MetricKey::Cpu,
        other => MetricKey::Throughput(other.strip_prefix("throughput@")?.parse().ok()?),
    })
}

impl MetricKey {
    fn header(self) -> String {
        match self {
            MetricKey::Throughput(n) => format!("calls/s @{n}"),
            MetricKey::P50 => "p50 µs @1".into(),
            MetricKey::P99 => "p99 µs @1".into(),
            MetricKey::Max => "max µs @1".into(),
            MetricKey::ColdStart => "cold start ms".into(),
            MetricKey::FirstCall => "first call ms".into(),
            MetricKey::PeakRss => "peak RSS MiB".into(),
            MetricKey::Bytes => "1 MiB echo MiB/s".into(),
            MetricKey::Cpu => "server CPU µs/call".into(),
        }
    }

    fn short(self) -> String {
        match self {
            MetricKey::Throughput(n) => format!("calls/s @{n}"),
            MetricKey::P50 => "p50".into(),
            MetricKey::P99 => "p99".into(),
            MetricKey::Max => "max".into(),
            MetricKey::ColdStart => "cold start".into(),
            MetricKey::FirstCall => "first call".into(),
            MetricKey::PeakRss => "peak RSS".into(),
            MetricKey::Bytes => "MiB/s".into(),
            MetricKey::Cpu => "CPU/call".into(),
        }
    }

    /// Whether more is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, MetricKey::Throughput(_) | MetricKey::Bytes)
    }

    /// One round's figure, for the metrics that have one per round.
    fn of_round(self, s: &Sample) -> Option<f64> {
        match self {
            MetricKey::Throughput(n) => s.throughput.get(&n).copied(),
            MetricKey::P50 => s.p50_us,
            MetricKey::P99 => s.p99_us,
            MetricKey::Cpu => s.cpu_us_per_call,
            _ => None,
        }
    }

    /// The summary's value.
    pub fn value(self, s: &Summary) -> Option<f64> {
        match self {
            MetricKey::Throughput(n) => s.throughput.get(&n).copied(),
            MetricKey::P50 => s.p50_us,
            MetricKey::P99 => s.p99_us,
            MetricKey::Max => s.max_us,
            MetricKey::ColdStart => s.cold_ms,
            MetricKey::FirstCall => s.first_call_ms,
            MetricKey::PeakRss => s.peak_rss_mib,
            MetricKey::Bytes => s.big_mib_s,
            MetricKey::Cpu => s.cpu_us_per_call,
        }
    }
}

/// Formats a figure with 3 significant digits (thousands separated).
pub fn figure(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v >= 1000.0 {
        let n = v.round() as u64;
        let digits = n.to_string();
        let keep = 3.min(digits.len());
        let rounded: u64 =
            digits[..keep].parse::<u64>().unwrap_or(0) * 10u64.pow((digits.len() - keep) as u32);
        let s = rounded.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Formats a ratio: `0.05×`, `1.27×`, `13×`.
pub fn ratio(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}×")
    } else {
        format!("{v:.2}×")
    }
}

/// How a target without a bound is described (it is always met).
pub const REPORT_ONLY: &str = "report only";

/// A target's verdict: (description, revision, ratio, met, aim text).
pub type Verdict = (String, Revision, Option<f64>, bool, String);

/// Everything the report needs.
pub struct Report<'a> {
    /// The table.
    pub config: &'a Config,
    /// Every server × revision run.
    pub summaries: &'a [Summary],
    /// Metric columns in order.
    pub columns: Vec<MetricKey>,
    /// Description of the run (rounds, mode, machine).
    pub preamble: String,
    /// Chart file name, linked when set.
    pub chart: Option<String>,
    /// The fake Lean server's own time per request (`bench-lean-floor`), when measured.
    pub floor: Option<Floor>,
    /// The Lean host's storm and budget (`bench-lean-scenarios`), when measured.
    pub scenarios: Option<crate::scenarios::Scenarios>,
}

impl Report<'_> {
    /// The summary of `server` in `revision`, if it ran.
    pub fn find(&self, server: &str, revision: Revision) -> Option<&Summary> {
        self.summaries
            .iter()
            .find(|s| s.server == server && s.revision == Some(revision))
    }

    fn label(&self, name: &str) -> String {
        self.config
            .servers
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.label.clone())
            .unwrap_or_else(|| name.to_string())
    }

    /// Target verdicts: (description, revision, ratio, met, aim text).
    pub fn targets(&self) -> Vec<Verdict> {
        self.targets_where(|_| true)
    }

    /// The verdicts of the targets whose peer is in `group`.
    pub fn targets_in(&self, group: &str) -> Vec<Verdict> {
        self.targets_where(|peer| peer.group == group)
    }

    fn targets_where(&self, keep: impl Fn(&ServerRow) -> bool) -> Vec<Verdict> {
        let mut out = Vec::new();
        for target in &self.config.targets {
            let Some(key) = metric(&target.metric) else {
                continue;
            };
            let Some(peer_row) = self.config.servers.iter().find(|r| r.name == target.peer) else {
                continue;
            };
            if !keep(peer_row) {
                continue;
            }
            let Some(base) = self
                .config
                .servers
                .iter()
                .find(|r| r.baseline && r.group == peer_row.group)
            else {
                continue;
            };
            for revision in Revision::ALL {
                let (Some(ours), Some(peer)) = (
                    self.find(&base.name, revision),
                    self.find(&peer_row.name, revision),
                ) else {
                    continue;
                };
                let r = match (key.value(ours), key.value(peer)) {
                    (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                    _ => None,
                };
                let (bound, met) = match (target.at_least, target.at_most) {
                    (Some(min), _) => (format!("≥ {min}×"), r.is_some_and(|r| r >= min)),
                    (None, Some(max)) => (format!("≤ {max}×"), r.is_some_and(|r| r <= max)),
                    (None, None) => (REPORT_ONLY.into(), true),
                };
                let aim = target
                    .aim
                    .map(|a| {
                        let reached = r.is_some_and(|r| {
                            if key.higher_is_better() {
                                r >= a
                            } else {
                                r <= a
                            }
                        });
                        format!(
                            " (aim {a}×: {})",
                            if reached { "reached" } else { "not yet" }
                        )
                    })
                    .unwrap_or_default();
                out.push((
                    format!(
                        "{} {} / {} {}",
                        base.name,
                        key.short(),
                        peer_row.name,
                        bound
                    ),
                    revision,
                    r,
                    met,
                    aim,
                ));
            }
        }
        out
    }

    /// The Markdown text.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(
            md,
            "# Benchmark results: lean-beam-mcp and the peer MCP SDKs\n"
        );
        let _ = writeln!(md, "{}\n", self.preamble);
        let _ = writeln!(md, "| server | what |\n|---|---|");
        for row in &self.config.servers {
            let revisions: Vec<&str> = row.revisions.iter().map(|r| r.as_str()).collect();
            let _ = writeln!(
                md,
                "| {} | {}; {} |",
                row.name,
                self.label(&row.name),
                revisions.join(", ")
            );
        }
        let mut groups: Vec<&str> = Vec::new();
        for row in &self.config.servers {
            if !groups.contains(&row.group.as_str()) {
                groups.push(&row.group);
            }
        }
        for group in groups {
            let rows: Vec<&ServerRow> = self
                .config
                .servers
                .iter()
                .filter(|r| r.group == group)
                .collect();
            if rows.iter().any(|r| r.floor.is_some()) {
                // The Lean host's groups have a section of their own, below.
                continue;
            }
            let base = rows
                .iter()
                .find(|r| r.baseline)
                .map(|r| r.name.clone())
                .unwrap_or_default();
            for revision in Revision::ALL {
                let present: Vec<&Summary> = rows
                    .iter()
                    .filter_map(|r| self.find(&r.name, revision))
                    .collect();
                if present.is_empty() {
                    continue;
                }
                let title = match revision {
                    Revision::Legacy => "legacy: initialize, then plain requests",
                    Revision::Modern => "modern: server/discover, then _meta on every request",
                };
                let group_note = if group == "sdk" {
                    String::new()
                } else {
                    format!(" — group {group}")
                };
                let _ = writeln!(md, "\n## MCP {} ({title}){group_note}\n", revision.as_str());
                let headers: Vec<String> = self.columns.iter().map(|c| c.header()).collect();
                let _ = writeln!(md, "| server | {} |", headers.join(" | "));
                let _ = writeln!(md, "|---|{}", "---:|".repeat(headers.len()));
                for s in &present {
                    let cells: Vec<String> = self
                        .columns
                        .iter()
                        .map(|c| c.value(s).map(figure).unwrap_or_else(|| "–".into()))
                        .collect();
                    let name = if s.server == base {
                        format!("**{}**", s.server)
                    } else {
                        s.server.clone()
                    };
                    let _ = writeln!(md, "| {name} | {} |", cells.join(" | "));
                }
                if present.iter().any(|s| s.rounds > 1) {
                    let varying: Vec<&MetricKey> = self
                        .columns
                        .iter()
                        .filter(|c| present.iter().any(|s| s.spread.contains_key(&c.header())))
                        .collect();
                    let headers: Vec<String> = varying.iter().map(|c| c.header()).collect();
                    let _ = writeln!(
                        md,
                        "\nSpread across rounds (lowest–highest of the per-round figures):\n"
                    );
                    let _ = writeln!(md, "| server | {} |", headers.join(" | "));
                    let _ = writeln!(md, "|---|{}", "---:|".repeat(headers.len()));
                    for s in &present {
                        let cells: Vec<String> = headers
                            .iter()
                            .map(|h| match s.spread.get(h) {
                                Some((lo, hi)) => format!("{}–{}", figure(*lo), figure(*hi)),
                                None => "–".into(),
                            })
                            .collect();
                        let _ = writeln!(md, "| {} | {} |", s.server, cells.join(" | "));
                    }
                }
                for s in &present {
                    if let Some(failure) = &s.failure {
                        let _ = writeln!(
                            md,
                            "\n**{} failed:** {}",
                            s.server,
                            failure.replace('\n', " ")
                        );
                    }
                }
                let Some(ours) = present.iter().find(|s| s.server == base) else {
                    continue;
                };
                let peers: Vec<&&Summary> = present.iter().filter(|s| s.server != base).collect();
                if peers.is_empty() {
                    continue;
                }
                let _ = writeln!(
                    md,
                    "\nRatios {base} / peer (throughput and MiB/s: above 1 is better for {base}; \
                     latency, cold start, RSS and CPU: below 1 is better for {base}):\n"
                );
                let _ = writeln!(md, "| peer | {} |", headers.join(" | "));
                let _ = writeln!(md, "|---|{}", "---:|".repeat(headers.len()));
                for peer in peers {
                    let cells: Vec<String> = self
                        .columns
                        .iter()
                        .map(|c| match (c.value(ours), c.value(peer)) {
                            (Some(a), Some(b)) if b > 0.0 => ratio(a / b),
                            _ => "–".into(),
                        })
                        .collect();
                    let _ = writeln!(md, "| {} | {} |", peer.server, cells.join(" | "));
                }
            }
        }
        md.push_str(&lean_report::section(self));
        if let Some(scenarios) = &self.scenarios {
            md.push_str(&scenarios.section());
        }
        let targets = self.targets();
        let above: Vec<(String, Revision, f64, bool)> = self
            .config
            .servers
            .iter()
            .flat_map(|row| {
                Revision::ALL.into_iter().filter_map(move |revision| {
                    lean_report::above_floor(self, row, revision)
                        .map(|(what, above, met)| (what, revision, above, met))
                })
            })
            .collect();
        if !targets.is_empty() || !above.is_empty() {
            let _ = writeln!(
                md,
                "\n## Targets\n\n| target | revision | ratio | verdict |\n|---|---|---:|---|"
            );
            for (what, revision, r, met, aim) in targets {
                let _ = writeln!(
                    md,
                    "| {what} | {} | {} | {}{aim} |",
                    revision.as_str(),
                    r.map(ratio).unwrap_or_else(|| "–".into()),
                    if met { "met" } else { "**missed**" }
                );
            }
            for (what, revision, above, met) in above {
                let _ = writeln!(
                    md,
                    "| {what} | {} | {} µs | {} |",
                    revision.as_str(),
                    figure(above),
                    if met { "met" } else { "**missed**" }
                );
            }
        }
        if let Some(chart) = &self.chart {
            let _ = writeln!(
                md,
                "\n## Chart\n\n![Throughput by requests in flight and latency percentiles]({chart})"
            );
        }
        let generator = self
            .summaries
            .iter()
            .filter_map(|s| s.generator_cores)
            .fold(0.0f64, f64::max);
        let checked: u64 = self.summaries.iter().map(|s| s.checked_calls).sum();
        let wrong = if self.summaries.iter().any(|s| s.failure.is_some()) {
            ", and the failures named above stopped those servers' runs"
        } else {
            " and none was wrong"
        };
        let (scope, lean) = if lean_report::groups(self.config).is_empty() {
            ("", "")
        } else {
            (
                "outside the Lean host's section ",
                "\n- The Lean host's rows call real tools against the fake Lean server instead; each \
                 answer is checked (not an error, and containing the row's `contains` text).",
            )
        };
        let _ = writeln!(
            md,
            "\n## Method\n\n\
             - Every server {scope}serves the same `echo` tool over stdio: `{{\"text\": s}}` in, `structuredContent` \
             `{{\"text\": s}}` and the same JSON as one text block out. Each payload is `echo-<id>`; every \
             answer is checked (id answered once, structured and text content equal to that request's \
             payload); {checked} answers were checked in this run{wrong}.\n\
             - Throughput is closed-loop: N requests are kept in flight (a new one is written as each \
             answer arrives), on one connection, after a warm-up; calls/s = answers / (first write to last \
             answer). Latency percentiles come from the run at 1 in flight (write to answer, per call).\n\
             - Cold start: spawn to the answer of the opening request (`initialize` or \
             `server/discover`), median over every spawn; first call: spawn to the first `tools/call` answer.\n\
             - Peak RSS: the server process's VmHWM after {} calls at the highest level, on a connection \
             of its own. 1 MiB echo: one 1,048,576-byte argument at a time, on the throughput connection \
             after its runs; MiB/s of argument echoed.\n\
             - Server CPU µs/call: the server's user+system time over the run at the highest level, per call.\n\
             - The load generator (one writer and one reader thread, pre-serialized requests) used at most \
             {generator:.2} of a core during any run; the machine has 2, so the server had at least the other.\n\
             - Figures are medians over the rounds, with the lowest and highest round beside them; \
             servers are interleaved within each round.{lean}",
            self.summaries
                .iter()
                .map(|s| s.rss_calls)
                .max()
                .unwrap_or(0)
        );
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_keep_three_digits() {
        assert_eq!(figure(123456.7), "123,000");
        assert_eq!(figure(1234.0), "1,230");
        assert_eq!(figure(999.4), "999");
        assert_eq!(figure(12.345), "12.3");
        assert_eq!(figure(1.2345), "1.23");
    }

    #[test]
    fn metric_keys_parse() {
        assert_eq!(metric("throughput@64"), Some(MetricKey::Throughput(64)));
        assert_eq!(metric("p99"), Some(MetricKey::P99));
        assert_eq!(metric("nonsense"), None);
    }
}
