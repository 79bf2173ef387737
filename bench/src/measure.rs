//! One round of one server in one revision: LSP messages per call (Lean rows), cold starts,
//! then one session for throughput, latency, peak RSS and large payloads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{Metric, Revision, ServerRow};
use crate::conn::Conn;
use crate::load::{self, Limit, RunStats};
use crate::lsp_count::{self, LspCount};
use crate::proto::{self, CallTemplate, Line, Payload};

/// How much of everything to do.
#[derive(Debug, Clone)]
pub struct Settings {
    /// In-flight levels for throughput (latency is taken at 1), unless a row has its own.
    pub concurrency: Vec<u64>,
    /// Each throughput level.
    pub level: Limit,
    /// Before the levels, at 8 in flight.
    pub warmup: Limit,
    /// Peak RSS is read after this many calls (at the highest level) on a connection of its own.
    pub rss_calls: u64,
    /// The large payload size and its run (at 1 in flight).
    pub big_bytes: usize,
    /// The large-payload run.
    pub big: Limit,
    /// Cold starts per round.
    pub cold_spawns: usize,
    /// Calls counted for LSP messages per call (after one warm-up call).
    pub lsp_calls: u64,
    /// Where servers' stderr goes.
    pub logs: PathBuf,
}

/// What one round of one server measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sample {
    /// Calls per second by requests in flight.
    pub throughput: BTreeMap<u64, f64>,
    /// Latency percentiles at the row's lowest level (1 in flight unless the row's `levels`
    /// leave it out), in microseconds.
    pub p50_us: Option<f64>,
    /// 99th percentile.
    pub p99_us: Option<f64>,
    /// Maximum.
    pub max_us: Option<f64>,
    /// The requests in flight the latencies were taken at.
    pub latency_level: Option<u64>,
    /// Spawn to the opening's answer, per spawn, in ms.
    pub cold_ms: Vec<f64>,
    /// Spawn to the first tool call's answer, per spawn, in ms.
    pub first_call_ms: Vec<f64>,
    /// VmHWM in KiB after `rss_calls` calls.
    pub peak_rss_kib: Option<u64>,
    /// Calls made before VmHWM was read.
    pub rss_calls: u64,
    /// Large-payload echo rate, in MiB of payload per second.
    pub big_mib_s: Option<f64>,
    /// Server CPU time per call at the highest level, in microseconds.
    pub cpu_us_per_call: Option<f64>,
    /// Load-generator CPU time / wall time at the highest level (1.0 = one core busy).
    pub generator_cores: Option<f64>,
    /// LSP messages the server sent the fake Lean server over the counted calls.
    pub lsp: Option<LspCount>,
    /// Total calls answered (and checked) in this round.
    pub checked_calls: u64,
}

/// Runs one round.
pub fn round(row: &ServerRow, revision: Revision, settings: &Settings) -> Result<Sample, String> {
    let launch = row.expanded()?;
    let (command, env) = (&launch.command, &launch.env);
    let log = settings
        .logs
        .join(format!("{}-{}.log", row.name, revision.as_str()));
    let template = |payload| {
        CallTemplate::rotating(revision, &row.tool, &launch.arguments, row.check, payload)
            .containing(row.contains.as_deref())
    };
    let small = template(Payload::Tagged);
    let mut sample = Sample::default();

    if row.measures(Metric::LspMessages) {
        let counted = lsp_count::count(
            row,
            &launch,
            revision,
            &small,
            settings.lsp_calls,
            &settings.logs,
        )?;
        sample.checked_calls += counted.calls + 1;
        sample.lsp = Some(counted);
    }

    if row.measures(Metric::ColdStart) {
        for _ in 0..settings.cold_spawns {
            let (cold, first) = cold_start(command, env, &log, revision, &small)?;
            sample.cold_ms.push(ms(cold));
            sample.first_call_ms.push(ms(first));
            sample.checked_calls += 1;
        }
    }

    let levels = row.levels(&settings.concurrency);
    let top = levels.iter().copied().max().unwrap_or(1);
    let lowest = levels.iter().copied().min().unwrap_or(1);
    if row.measures(Metric::Rss) {
        // A connection of its own, so every server is read after the same number of calls.
        let mut session = Session::open(command, env, &log, revision, &row.tool)?;
        if settings.rss_calls > 0 {
            let limit = Limit {
                max_calls: settings.rss_calls,
                min_calls: settings.rss_calls,
                duration: Duration::ZERO,
            };
            session.run(&small, top, limit, false)?;
        }
        sample.peak_rss_kib = session.conn.peak_rss_kib();
        sample.rss_calls = session.total;
        sample.checked_calls += session.total;
        session.conn.close();
    }

    if !row.measures(Metric::Throughput) && !row.measures(Metric::Bytes) {
        return Ok(sample);
    }
    let mut session = Session::open(command, env, &log, revision, &row.tool)?;
    if row.measures(Metric::Throughput) {
        session.run(&small, 8, settings.warmup, false)?;
        for &concurrency in levels {
            let timed = concurrency == lowest;
            let stats = session.run(&small, concurrency, settings.level, timed)?;
            sample.throughput.insert(concurrency, stats.throughput());
            if timed {
                sample.latency_level = Some(concurrency);
                let mut lat: Vec<f64> = stats.latencies.iter().map(|d| us(*d)).collect();
                lat.sort_by(f64::total_cmp);
                sample.p50_us = percentile(&lat, 0.50);
                sample.p99_us = percentile(&lat, 0.99);
                sample.max_us = lat.last().copied();
            }
            if concurrency == top {
                sample.cpu_us_per_call = stats
                    .server_cpu
                    .map(|cpu| us(cpu) / stats.calls.max(1) as f64);
                sample.generator_cores =
                    Some(stats.own_cpu.as_secs_f64() / stats.elapsed.as_secs_f64().max(1e-9));
            }
        }
    }
    if row.measures(Metric::Bytes) {
        let big = template(Payload::fixed(settings.big_bytes));
        let stats = session.run(&big, 1, settings.big, false)?;
        let bytes = settings.big_bytes as f64 * stats.calls as f64;
        sample.big_mib_s = Some(bytes / (1024.0 * 1024.0) / stats.elapsed.as_secs_f64().max(1e-9));
    }
    sample.checked_calls += session.total;
    session.conn.close();
    Ok(sample)
}

/// One connection's runs, with ids that never repeat.
pub struct Session {
    /// The server.
    pub conn: Conn,
    next_id: u64,
    total: u64,
}

impl Session {
    /// Spawns the server, opens the revision and checks the listing.
    pub fn open(
        command: &[String],
        env: &[(String, String)],
        log: &std::path::Path,
        revision: Revision,
        tool: &str,
    ) -> Result<Session, String> {
        let mut conn = Conn::spawn(command, env, log)?;
        open(&mut conn, revision)?;
        check_listing(&mut conn, revision, tool)?;
        Ok(Session {
            conn,
            next_id: 10,
            total: 0,
        })
    }

    /// One closed-loop run on this connection.
    pub fn run(
        &mut self,
        template: &CallTemplate,
        concurrency: u64,
        limit: Limit,
        latency: bool,
    ) -> Result<RunStats, String> {
        let stats = load::run(
            &mut self.conn,
            template,
            self.next_id,
            concurrency,
            limit,
            latency,
        )?;
        self.next_id += stats.calls + 1;
        self.total += stats.calls;
        Ok(stats)
    }
}

/// The opening exchange (and `initialized`), checked.
fn open(conn: &mut Conn, revision: Revision) -> Result<(), String> {
    let result = conn.request(&proto::opening(revision, 0), 0)?;
    proto::check_opening(revision, &result)?;
    if let Some(line) = proto::after_opening(revision) {
        conn.send(&line)?;
    }
    Ok(())
}

/// `tools/list` names the tool.
fn check_listing(conn: &mut Conn, revision: Revision, tool: &str) -> Result<(), String> {
    let result = conn.request(
        &proto::request_line(revision, 1, "tools/list", json!({})),
        1,
    )?;
    let listed = result
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| tools.iter().any(|t| t.get("name") == Some(&json!(tool))));
    if listed {
        Ok(())
    } else {
        Err(format!("tools/list does not list {tool}"))
    }
}

/// Spawn → opening answered, and spawn → first tool call answered.
fn cold_start(
    command: &[String],
    env: &[(String, String)],
    log: &std::path::Path,
    revision: Revision,
    template: &CallTemplate,
) -> Result<(Duration, Duration), String> {
    let start = Instant::now();
    let mut conn = Conn::spawn(command, env, log)?;
    let result = conn.request(&proto::opening(revision, 0), 0)?;
    let opened = start.elapsed();
    proto::check_opening(revision, &result)?;
    if let Some(line) = proto::after_opening(revision) {
        conn.send(&line)?;
    }
    let mut line = Vec::new();
    template
        .write(&mut line, 1)
        .map_err(|e| format!("rendering: {e}"))?;
    conn.send(&line)?;
    conn.arm(true);
    let answer = loop {
        let raw = conn.read_line()?;
        match template.check_line(&raw)? {
            Line::Answer(1) => break Ok(start.elapsed()),
            Line::Answer(id) => break Err(format!("expected the answer to request 1, got {id}")),
            Line::Other => continue,
        }
    };
    conn.arm(false);
    let first = answer?;
    conn.close();
    Ok((opened, first))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Median (mean of the middle two for an even count).
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_medians() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(50.0));
        assert_eq!(percentile(&v, 0.99), Some(99.0));
        assert_eq!(percentile(&v, 1.0), Some(100.0));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(median([3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
