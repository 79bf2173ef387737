//! The report's section for the Lean host at scale: the storm and the budget scenario as
//! `bench-lean-scenarios` measured them on the release build (its JSON, `--lean-scenarios`),
//! medians over rounds with the lowest and highest round beside them.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::measure::median;
use crate::report::figure;

/// The file `bench-lean-scenarios` writes.
#[derive(Debug, Clone, Deserialize)]
pub struct Scenarios {
    pub smoke: bool,
    pub rounds: Vec<Round>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Round {
    pub storm: Vec<Storm>,
    pub budget: Budget,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Storm {
    pub family: String,
    pub calls: usize,
    pub lean_calls: usize,
    pub cancelled: usize,
    pub calls_per_s: f64,
    pub peak_rss_kib: u64,
    pub peak_lean_processes: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Budget {
    pub workspaces: usize,
    pub documents: usize,
    pub max_workspaces: usize,
    pub max_documents: usize,
    pub calls_per_s: f64,
    pub peak_rss_kib: u64,
    pub peak_lean_processes: usize,
    pub allowed_lean_processes: usize,
}

impl Scenarios {
    /// Reads the file.
    pub fn load(path: &std::path::Path) -> Result<Scenarios, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The section's Markdown (empty without rounds).
    pub fn section(&self) -> String {
        let Some(first) = self.rounds.first() else {
            return String::new();
        };
        let mut md = String::new();
        let _ = writeln!(
            md,
            "\n## The Lean host at scale (against the fake Lean server)\n\n\
             Measured by `bench-lean-scenarios` (bench/src/bin/lean_scenarios) on the binary the \
             rest of this report measures (the release build in a full run){}. **Storm**: pipelined `tools/call`s on one connection, at most 256 \
             in flight, half `lean_hover` over three workspaces (each synced first) and half \
             `beam_version`, every tenth cancelled right after it is sent; every uncancelled \
             call answered exactly once and without error, a cancelled one at most once. \
             **Budget**: one `lean_sync` of each of {} documents in each of {} workspaces, one \
             after another, under `--max-workspaces {} --max-documents {}`; every sync succeeds \
             and, after each, the Lean processes alive stay within what the bounds allow. Lean \
             processes are the server's descendants (the fake's `lake serve` and its workers), \
             counted every 25 ms and after each budget call. Figures are medians over {} \
             round(s), lowest–highest beside them.\n",
            if self.smoke {
                " — a smoke run: small counts, a correctness check, the figures mean nothing"
            } else {
                ""
            },
            first.budget.documents / first.budget.workspaces.max(1),
            first.budget.workspaces,
            first.budget.max_workspaces,
            first.budget.max_documents,
            self.rounds.len()
        );
        let _ = writeln!(
            md,
            "| scenario | calls | calls/s | server peak RSS MiB | Lean processes alive at most |"
        );
        let _ = writeln!(md, "|---|---|---:|---:|---:|");
        let families: Vec<String> = first.storm.iter().map(|s| s.family.clone()).collect();
        for family in families {
            let storms: Vec<&Storm> = self
                .rounds
                .iter()
                .flat_map(|r| r.storm.iter().filter(|s| s.family == family))
                .collect();
            let one = storms[0];
            let _ = writeln!(
                md,
                "| storm, MCP {family} | {} ({} Lean, {} cancelled) | {} | {} | {} |",
                whole(one.calls),
                whole(one.lean_calls),
                whole(one.cancelled),
                spread(storms.iter().map(|s| s.calls_per_s)),
                spread(storms.iter().map(|s| mib(s.peak_rss_kib))),
                count_spread(storms.iter().map(|s| s.peak_lean_processes)),
            );
        }
        let budgets: Vec<&Budget> = self.rounds.iter().map(|r| &r.budget).collect();
        let one = budgets[0];
        let _ = writeln!(
            md,
            "| budget, MCP 2025-11-25 | {} syncs ({} workspaces) | {} | {} | {} (the bounds allow {}) |",
            whole(one.documents),
            one.workspaces,
            spread(budgets.iter().map(|b| b.calls_per_s)),
            spread(budgets.iter().map(|b| mib(b.peak_rss_kib))),
            count_spread(budgets.iter().map(|b| b.peak_lean_processes)),
            one.allowed_lean_processes
        );
        md
    }
}

/// A count as the tables write numbers (`25,000`), without a fraction.
fn whole(n: usize) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        figure(n as f64)
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `median (lowest–highest)`, or the one figure when the rounds agree.
fn spread(values: impl Iterator<Item = f64> + Clone) -> String {
    spread_as(values, figure)
}

/// [`spread`] of counts, written as whole numbers.
fn count_spread(values: impl Iterator<Item = usize> + Clone) -> String {
    spread_as(values.map(|n| n as f64), |v| format!("{v:.0}"))
}

fn spread_as(values: impl Iterator<Item = f64> + Clone, show: fn(f64) -> String) -> String {
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.clone().fold(f64::NEG_INFINITY, f64::max);
    match median(values) {
        None => "–".into(),
        Some(m) if lo == hi => show(m),
        Some(m) => format!("{} ({}–{})", show(m), show(lo), show(hi)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_gives_medians_and_spread() {
        let storm = |family: &str, rate: f64| {
            serde_json::json!({"family": family, "calls": 25000, "lean_calls": 12500,
                "cancelled": 2500, "cancelled_answered": 10, "seconds": 1.0,
                "calls_per_s": rate, "peak_rss_kib": 15360, "peak_lean_processes": 6})
        };
        let budget = serde_json::json!({"workspaces": 20, "documents": 200, "max_workspaces": 2,
            "max_documents": 3, "seconds": 0.5, "calls_per_s": 400.0, "peak_rss_kib": 8192,
            "peak_lean_processes": 8, "allowed_lean_processes": 12});
        let rounds: Vec<serde_json::Value> = [10_000.0, 12_000.0, 11_000.0]
            .iter()
            .map(|r| serde_json::json!({"storm": [storm("2025-11-25", *r), storm("2026-07-28", *r)], "budget": budget}))
            .collect();
        let scenarios: Scenarios =
            serde_json::from_value(serde_json::json!({"smoke": false, "rounds": rounds})).unwrap();
        let md = scenarios.section();
        assert!(
            md.contains("| storm, MCP 2025-11-25 | 25,000 (12,500 Lean, 2,500 cancelled) | 11,000 (10,000–12,000) | 15.0 | 6 |"),
            "{md}"
        );
        assert!(
            md.contains("| budget, MCP 2025-11-25 | 200 syncs (20 workspaces) | 400 | 8.00 | 8 (the bounds allow 12) |"),
            "{md}"
        );
    }
}
