//! The report's section for the Lean host: per tool (one group each), our row, the peer rows
//! and the floor — the fake Lean server's own time per request, measured by `bench-lean-floor`
//! and read from its JSON (`--lean-floor`) — with calls/s, latency and LSP messages per call,
//! then the ratios ours/peer end to end and above the floor, and the targets on these rows.
//!
//! A group belongs here when one of its rows names a `floor`; the generic tables skip it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::config::{Config, Revision, ServerRow};
use crate::lsp_count::LspCount;
use crate::report::{REPORT_ONLY, Report, Summary, figure, ratio};

/// The floor file written by `bench-lean-floor`.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Floor {
    /// What was driven, for the report.
    #[serde(default)]
    pub label: Option<String>,
    /// Rounds the figures are medians of.
    pub rounds: usize,
    /// Figures by LSP method.
    pub requests: BTreeMap<String, FloorFigures>,
}

/// One request's direct round trip to the fake.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct FloorFigures {
    /// Calls per second by requests in flight.
    pub throughput: BTreeMap<u64, f64>,
    /// Latency at 1 in flight, µs.
    pub p50_us: Option<f64>,
    /// 99th percentile, µs.
    pub p99_us: Option<f64>,
}

impl Floor {
    /// Reads the file.
    pub fn load(path: &std::path::Path) -> Result<Floor, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The Lean host's groups, in table order.
pub fn groups(config: &Config) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for row in config.servers.iter().filter(|r| r.floor.is_some()) {
        if !out.contains(&row.group.as_str()) {
            out.push(&row.group);
        }
    }
    out
}

/// One line of a group's table: calls/s by level, p50, p99 (µs), server CPU per call.
struct Figures {
    throughput: BTreeMap<u64, f64>,
    p50: Option<f64>,
    p99: Option<f64>,
    cpu: Option<f64>,
}

impl Figures {
    fn of(s: &Summary) -> Figures {
        Figures {
            throughput: s.throughput.clone(),
            p50: s.p50_us,
            p99: s.p99_us,
            cpu: s.cpu_us_per_call,
        }
    }

    /// The floor's figures; its latencies are at 1 in flight, so they stand beside rows timed
    /// at `at` only when `at` is 1.
    fn of_floor(f: &FloorFigures, at: u64) -> Figures {
        Figures {
            throughput: f.throughput.clone(),
            p50: f.p50_us.filter(|_| at == 1),
            p99: f.p99_us.filter(|_| at == 1),
            cpu: None,
        }
    }

    /// The ratio columns, as time (below 1 is better): p50, p99, then µs/call at each level.
    fn times(&self, levels: &[u64]) -> Vec<Option<f64>> {
        let mut out = vec![self.p50, self.p99];
        out.extend(levels.iter().map(|n| {
            self.throughput
                .get(n)
                .filter(|v| **v > 0.0)
                .map(|v| 1e6 / v)
        }));
        out
    }
}

/// `1 (textDocument/hover)`, `2 (1 textDocument/didChange + 1 …)`, `0`.
fn messages(lsp: &LspCount) -> String {
    let per_call = |n: u64| n as f64 / lsp.calls.max(1) as f64;
    let number = |v: f64| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            figure(v)
        }
    };
    if lsp.messages == 0 {
        return "0".into();
    }
    let parts: Vec<String> = lsp
        .by_method
        .iter()
        .map(|(m, n)| {
            if lsp.by_method.len() == 1 {
                format!("`{m}`")
            } else {
                format!("{} `{m}`", number(per_call(*n)))
            }
        })
        .collect();
    format!("{} ({})", number(lsp.per_call()), parts.join(" + "))
}

/// The section's Markdown (empty without Lean groups).
pub fn section(report: &Report) -> String {
    let groups = groups(report.config);
    if groups.is_empty() {
        return String::new();
    }
    let mut md = String::new();
    let floor = report.floor.as_ref();
    let lsp_calls = report
        .summaries
        .iter()
        .filter_map(|s| s.lsp.as_ref().map(|l| l.calls))
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        md,
        "\n## The Lean host: overhead per tool against the fake Lean server\n\n\
         Each row drives `fake-lake serve` (tests/fake-lean-server) in a copy of \
         tests/fixtures/lean-project, with its document open and unchanged, at the levels shown. \
         The **floor** is the fake's own time per request: {} speaking LSP to the same fake \
         directly, the one request the tool needs{}. **LSP messages per call**: what the fake \
         received per tool call over {lsp_calls} calls at 1 in flight after a warm-up call \
         (its trace file). Latency is taken at the lowest level a row runs: 1 in flight for the \
         per-tool groups, 8 for the load groups (`lean-load-*`: 4 documents over 2 workspaces), \
         where the floor's, taken at 1, is left out. **Server CPU µs/call**: the server's own \
         user+system time (not its Lean's) over the run at the highest level, per call. Ratios \
         are ours / peer, every one below 1 better for ours: latency, and µs/call = \
         1/(calls/s) at each level; *above the floor* is (ours − floor) / (peer − floor), the \
         time each server adds to Lean's own.",
        floor
            .and_then(|f| f.label.clone())
            .unwrap_or_else(|| "`bench-lean-floor`".into()),
        floor
            .map(|f| match f.rounds {
                1 => ", one round".to_string(),
                n => format!(", medians over {n} rounds"),
            })
            .unwrap_or_else(|| " (not measured in this run)".into()),
    );
    for group in groups {
        let rows: Vec<&ServerRow> = report
            .config
            .servers
            .iter()
            .filter(|r| r.group == group)
            .collect();
        for revision in Revision::ALL {
            group_section(&mut md, report, &rows, revision);
        }
    }
    md
}

fn group_section(md: &mut String, report: &Report, rows: &[&ServerRow], revision: Revision) {
    let present: Vec<(&ServerRow, &Summary)> = rows
        .iter()
        .filter_map(|r| report.find(&r.name, revision).map(|s| (*r, s)))
        .collect();
    let Some(base_row) = rows.iter().find(|r| r.baseline) else {
        return;
    };
    if present.is_empty() {
        return;
    }
    let method = rows
        .iter()
        .find_map(|r| r.floor.clone())
        .unwrap_or_default();
    // The level the rows' latencies were taken at (1 unless their levels leave it out).
    let at = present
        .iter()
        .find_map(|(_, s)| s.latency_level)
        .unwrap_or(1);
    let floor = report
        .floor
        .as_ref()
        .and_then(|f| f.requests.get(&method))
        .map(|f| Figures::of_floor(f, at));
    let mut levels: Vec<u64> = present
        .iter()
        .flat_map(|(_, s)| s.throughput.keys().copied())
        .chain(floor.iter().flat_map(|f| f.throughput.keys().copied()))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let _ = writeln!(
        md,
        "\n### `{}` — group {} (MCP {})\n",
        base_row.tool,
        base_row.group,
        revision.as_str()
    );
    let top = levels.last().copied().unwrap_or(1);
    let mut headers: Vec<String> = levels.iter().map(|n| format!("calls/s @{n}")).collect();
    headers.extend([
        format!("p50 µs @{at}"),
        format!("p99 µs @{at}"),
        format!("server CPU µs/call @{top}"),
    ]);
    let _ = writeln!(
        md,
        "| server | tool | {} | LSP messages/call |",
        headers.join(" | ")
    );
    let _ = writeln!(md, "|---|---|{}---|", "---:|".repeat(headers.len()));
    let cells = |f: &Figures| -> String {
        let mut cells: Vec<String> = levels
            .iter()
            .map(|n| f.throughput.get(n).map_or("–".into(), |v| figure(*v)))
            .collect();
        cells.push(f.p50.map_or("–".into(), figure));
        cells.push(f.p99.map_or("–".into(), figure));
        cells.push(f.cpu.map_or("–".into(), figure));
        cells.join(" | ")
    };
    for (row, s) in &present {
        let name = if row.baseline {
            format!("**{}**", row.name)
        } else {
            row.name.clone()
        };
        let _ = writeln!(
            md,
            "| {name} | `{}` | {} | {} |",
            row.tool,
            cells(&Figures::of(s)),
            s.lsp.as_ref().map_or("–".into(), messages)
        );
    }
    match &floor {
        Some(f) => {
            let _ = writeln!(
                md,
                "| floor | `{method}` direct | {} | 1 (`{method}`) |",
                cells(f)
            );
        }
        None => {
            let _ = writeln!(
                md,
                "| floor | `{method}` direct | not measured in this run |{}",
                " |".repeat(headers.len())
            );
        }
    }
    spread_table(md, &present, &levels, at);
    for (row, s) in &present {
        if let Some(failure) = &s.failure {
            let _ = writeln!(
                md,
                "\n**{} failed:** {}",
                row.name,
                failure.replace('\n', " ")
            );
        }
        if s.lsp.as_ref().is_some_and(|l| l.messages == 0) {
            let _ = writeln!(
                md,
                "\n{} sends Lean nothing per call: it answers from what it already holds, so the \
                 floor is no part of its time, and its overhead above the floor is understated \
                 (the ratio above the floor is conservative for ours).",
                row.name
            );
        }
        if let (Some(expected), Some(lsp)) = (&row.expect_lsp, &s.lsp) {
            let sent: Vec<String> = expected
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(method, n)| format!("{n} `{method}`"))
                .collect();
            let sent = if sent.is_empty() {
                "nothing at all".to_owned()
            } else {
                format!("exactly {} and nothing else", sent.join(" + "))
            };
            let _ = writeln!(
                md,
                "\nChecked: each `{}` call of {} sent Lean {sent} ({} messages over {} calls); \
                 any other count fails the run.",
                row.tool, row.name, lsp.messages, lsp.calls
            );
        }
    }
    let ours = present
        .iter()
        .find(|(r, _)| r.baseline)
        .map(|(_, s)| Figures::of(s));
    let peers: Vec<&(&ServerRow, &Summary)> = present.iter().filter(|(r, _)| !r.baseline).collect();
    if let Some(ours) = ours.filter(|_| !peers.is_empty()) {
        let mut headers = vec![format!("p50 @{at}"), format!("p99 @{at}")];
        headers.extend(levels.iter().map(|n| format!("µs/call @{n}")));
        let _ = writeln!(md, "\nRatios {} / peer:\n", base_row.name);
        let _ = writeln!(md, "| peer | {} |", headers.join(" | "));
        let _ = writeln!(md, "|---|{}", "---:|".repeat(headers.len()));
        let ours_t = ours.times(&levels);
        let floor_t = floor.as_ref().map(|f| f.times(&levels));
        for (peer_row, peer) in peers {
            let peer_t = Figures::of(peer).times(&levels);
            let end: Vec<String> = ours_t
                .iter()
                .zip(&peer_t)
                .map(|(a, b)| match (a, b) {
                    (Some(a), Some(b)) if *b > 0.0 => ratio(a / b),
                    _ => "–".into(),
                })
                .collect();
            let _ = writeln!(
                md,
                "| {}, end to end | {} |",
                peer_row.name,
                end.join(" | ")
            );
            let above: Vec<String> = (0..ours_t.len())
                .map(|i| {
                    let f = floor_t.as_ref().and_then(|f| f[i]);
                    match (ours_t[i], peer_t[i], f) {
                        (Some(a), Some(b), Some(f)) if b > f => ratio((a - f).max(0.0) / (b - f)),
                        _ => "–".into(),
                    }
                })
                .collect();
            let _ = writeln!(
                md,
                "| {}, above the floor | {} |",
                peer_row.name,
                above.join(" | ")
            );
        }
    }
    if let Some((what, above, met)) = above_floor(report, base_row, revision) {
        let _ = writeln!(
            md,
            "\nTarget {what}: {} µs — {}.",
            figure(above),
            if met { "met" } else { "**missed**" }
        );
    }
    for (what, target_revision, r, met, aim) in report.targets_in(&base_row.group) {
        // Report-only targets are the ratios above; the section states the bounds.
        if target_revision == revision && !what.ends_with(REPORT_ONLY) {
            let _ = writeln!(
                md,
                "\nTarget {what}: {} — {}{aim}.",
                r.map(ratio).unwrap_or_else(|| "–".into()),
                if met { "met" } else { "**missed**" }
            );
        }
    }
}

/// The verdict on `row`'s `above_floor_at_most_us` in `revision`: what it says, the row's p50
/// minus the floor's (µs), and whether that is within the bound.
pub fn above_floor(
    report: &Report,
    row: &ServerRow,
    revision: Revision,
) -> Option<(String, f64, bool)> {
    let bound = row.above_floor_at_most_us?;
    let ours = report.find(&row.name, revision)?;
    let floor = report
        .floor
        .as_ref()?
        .requests
        .get(row.floor.as_ref()?)?
        .p50_us?;
    let above = ours.p50_us? - floor;
    let what = format!(
        "{} p50 above the floor ({} direct) ≤ {bound} µs",
        row.name,
        row.floor.as_deref().unwrap_or_default(),
    );
    Some((what, above, above <= bound))
}

/// Lowest–highest per-round figures of the rows, when they ran more than one round.
fn spread_table(md: &mut String, present: &[(&ServerRow, &Summary)], levels: &[u64], at: u64) {
    if present.iter().all(|(_, s)| s.rounds < 2) {
        return;
    }
    // The summaries key their spread by the generic columns' headers.
    let mut keys: Vec<(String, String)> = levels
        .iter()
        .map(|n| (format!("calls/s @{n}"), format!("calls/s @{n}")))
        .collect();
    keys.push(("p50 µs @1".into(), format!("p50 µs @{at}")));
    keys.push(("p99 µs @1".into(), format!("p99 µs @{at}")));
    keys.push(("server CPU µs/call".into(), "server CPU µs/call".into()));
    let _ = writeln!(
        md,
        "\nSpread across rounds (lowest–highest of the per-round figures):\n"
    );
    let shown: Vec<&str> = keys.iter().map(|(_, h)| h.as_str()).collect();
    let _ = writeln!(md, "| server | {} |", shown.join(" | "));
    let _ = writeln!(md, "|---|{}", "---:|".repeat(keys.len()));
    for (row, s) in present {
        let cells: Vec<String> = keys
            .iter()
            .map(|(key, _)| match s.spread.get(key) {
                Some((lo, hi)) => format!("{}–{}", figure(*lo), figure(*hi)),
                None => "–".into(),
            })
            .collect();
        let _ = writeln!(md, "| {} | {} |", row.name, cells.join(" | "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_per_call_read_plainly() {
        let one = LspCount {
            calls: 20,
            messages: 20,
            by_method: BTreeMap::from([("textDocument/hover".into(), 20)]),
        };
        assert_eq!(messages(&one), "1 (`textDocument/hover`)");
        let two = LspCount {
            calls: 20,
            messages: 30,
            by_method: BTreeMap::from([
                ("textDocument/didChange".into(), 10),
                ("textDocument/waitForDiagnostics".into(), 20),
            ]),
        };
        assert_eq!(
            messages(&two),
            "1.50 (0.50 `textDocument/didChange` + 1 `textDocument/waitForDiagnostics`)"
        );
        assert_eq!(messages(&LspCount::default()), "0");
    }

    #[test]
    fn the_section_sets_ours_against_the_peer_and_the_floor() {
        let config = Config::parse(
            r#"{"servers": [
                {"name": "echo", "command": ["x"], "revisions": ["2025-11-25"], "baseline": true},
                {"name": "ours", "command": ["x"], "revisions": ["2025-11-25"], "group": "lean-hover",
                 "baseline": true, "tool": "lean_hover", "check": "success", "levels": [1, 8],
                 "metrics": ["throughput", "lsp_messages"], "floor": "textDocument/hover",
                 "above_floor_at_most_us": 50},
                {"name": "peer", "command": ["x"], "revisions": ["2025-11-25"], "group": "lean-hover",
                 "tool": "lean_hover_info", "check": "success", "levels": [1, 8],
                 "metrics": ["throughput", "lsp_messages"], "floor": "textDocument/hover"}],
              "targets": [{"metric": "p50", "peer": "peer", "at_most": 0.2}]}"#,
        )
        .unwrap();
        let summary = |name: &str, p50: f64, at8: f64| Summary {
            server: name.into(),
            group: "lean-hover".into(),
            revision: Some(Revision::Legacy),
            rounds: 1,
            throughput: BTreeMap::from([(1, 1e6 / p50), (8, at8)]),
            p50_us: Some(p50),
            p99_us: Some(2.0 * p50),
            lsp: Some(LspCount {
                calls: 20,
                messages: 20,
                by_method: BTreeMap::from([("textDocument/hover".into(), 20)]),
            }),
            ..Summary::default()
        };
        let summaries = [
            summary("ours", 200.0, 10_000.0),
            summary("peer", 2100.0, 500.0),
        ];
        let floor: Floor = serde_json::from_str(
            r#"{"rounds": 1, "requests": {"textDocument/hover":
                {"throughput": {"1": 10000, "8": 25000}, "p50_us": 100.0, "p99_us": 200.0}}}"#,
        )
        .unwrap();
        let report = Report {
            config: &config,
            summaries: &summaries,
            columns: Vec::new(),
            preamble: String::new(),
            chart: None,
            floor: Some(floor),
            scenarios: None,
        };
        let md = section(&report);
        assert!(md.contains("### `lean_hover` — group lean-hover"), "{md}");
        assert!(md.contains("| **ours** | `lean_hover` | 5,000 | 10,000 | 200 | 400 | – | 1 (`textDocument/hover`) |"), "{md}");
        assert!(
            md.contains(
                "| floor | `textDocument/hover` direct | 10,000 | 25,000 | 100 | 200 | – |"
            ),
            "{md}"
        );
        // End to end 200/2100; above the floor (200 − 100)/(2100 − 100).
        assert!(md.contains("| peer, end to end | 0.10× |"), "{md}");
        assert!(md.contains("| peer, above the floor | 0.05× |"), "{md}");
        assert!(
            md.contains("Target ours p50 / peer ≤ 0.2×: 0.10× — met."),
            "{md}"
        );
        assert!(
            md.contains(
                "Target ours p50 above the floor (textDocument/hover direct) ≤ 50 µs: 100 µs — \
                 **missed**."
            ),
            "{md}"
        );
        // The generic tables leave the Lean group to this section.
        assert!(
            !report
                .markdown()
                .contains("— group lean-hover\n\n| server | calls/s")
        );
    }

    #[test]
    fn floor_files_parse() {
        let floor: Floor = serde_json::from_str(
            r#"{"rounds": 3, "requests": {"textDocument/hover":
                {"throughput": {"1": 9000.5, "8": 30000}, "p50_us": 100.0, "p99_us": 200.0}}}"#,
        )
        .unwrap();
        let hover = &floor.requests["textDocument/hover"];
        assert_eq!(hover.throughput[&8], 30000.0);
        let times = Figures::of_floor(hover, 1).times(&[1, 8, 64]);
        assert_eq!(times[0], Some(100.0));
        assert!((times[3].unwrap() - 1e6 / 30000.0).abs() < 1e-9);
        assert_eq!(times[4], None);
    }
}
