//! The server table (`bench/servers.json`): which servers to run, how to start them, which
//! revisions they speak, what to call, and the targets the report checks.
//!
//! A row is one server command. Rows are grouped (`group`, default `sdk`); each group has one
//! `baseline` row, and every ratio in the report is baseline/row within a group. The Lean host
//! adds its own group (per-tool rows against a fake Lean server) without touching this code.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

/// The placeholder that stands for the per-request payload in a row's `arguments`.
pub const PAYLOAD: &str = "$PAYLOAD";

/// The whole table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Free text, ignored.
    #[serde(default, rename = "//")]
    pub _comment: Option<Value>,
    /// The servers, in report order.
    pub servers: Vec<ServerRow>,
    /// Ratio targets checked in the report.
    #[serde(default)]
    pub targets: Vec<Target>,
}

/// A protocol revision the load generator can speak.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
pub enum Revision {
    /// `initialize` + `notifications/initialized`, then plain requests.
    #[serde(rename = "2025-11-25")]
    Legacy,
    /// `server/discover`, then every request carries `_meta` with the version.
    #[serde(rename = "2026-07-28")]
    Modern,
}

impl Revision {
    /// The revision's date string.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::Legacy => "2025-11-25",
            Revision::Modern => "2026-07-28",
        }
    }

    /// Both, in report order.
    pub const ALL: [Revision; 2] = [Revision::Legacy, Revision::Modern];
}

/// How each answer is checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// `structuredContent.text` is the payload, and the text content is the payload or the
    /// JSON of the structured content.
    #[default]
    Echo,
    /// A result that is not `isError: true` (for tools whose answer is not an echo).
    Success,
}

/// The measurements a row takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Closed-loop throughput at each concurrency, and latency percentiles at 1 in flight.
    Throughput,
    /// Spawn to first answered request (and to the first answered tool call).
    ColdStart,
    /// Peak RSS (VmHWM) after the configured number of calls.
    Rss,
    /// Echo throughput in bytes for a large payload.
    Bytes,
}

/// Environment variables to set, as (name, value).
pub type Env = Vec<(String, String)>;

/// One server command.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerRow {
    /// A short unique name (column and chart label).
    pub name: String,
    /// What it is, for the report (SDK and version).
    #[serde(default)]
    pub label: Option<String>,
    /// Program and arguments; `${VAR}` is expanded from the environment. The program must be
    /// the server process itself (exec, no wrapper), since RSS is read from its pid.
    pub command: Vec<String>,
    /// Extra environment (values expanded like `command`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Revisions to run it in.
    pub revisions: Vec<Revision>,
    /// Report group; ratios are computed within a group.
    #[serde(default = "default_group")]
    pub group: String,
    /// The row the group's ratios are relative to ("ours").
    #[serde(default)]
    pub baseline: bool,
    /// The tool to call.
    #[serde(default = "default_tool")]
    pub tool: String,
    /// Its arguments; a string equal to `$PAYLOAD` is replaced by the payload.
    #[serde(default = "default_arguments")]
    pub arguments: Value,
    /// How answers are checked.
    #[serde(default)]
    pub check: Check,
    /// Which measurements to take.
    #[serde(default = "all_metrics")]
    pub metrics: Vec<Metric>,
}

/// A ratio the report checks: baseline/peer on `metric`, in every revision both were run in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// A metric key (see `report::METRICS`), e.g. `throughput@64`, `p99`, `cold_start`.
    pub metric: String,
    /// The peer row's name.
    pub peer: String,
    /// For higher-is-better metrics: baseline/peer must be at least this.
    #[serde(default)]
    pub at_least: Option<f64>,
    /// For lower-is-better metrics: baseline/peer must be at most this.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// A stretch goal, reported beside the target.
    #[serde(default)]
    pub aim: Option<f64>,
}

fn default_group() -> String {
    "sdk".into()
}

fn default_tool() -> String {
    "echo".into()
}

fn default_arguments() -> Value {
    json!({ "text": PAYLOAD })
}

fn all_metrics() -> Vec<Metric> {
    vec![
        Metric::Throughput,
        Metric::ColdStart,
        Metric::Rss,
        Metric::Bytes,
    ]
}

impl ServerRow {
    /// Whether the row takes part in `metric`.
    pub fn measures(&self, metric: Metric) -> bool {
        self.metrics.contains(&metric)
    }

    /// The command and environment with `${VAR}` expanded.
    pub fn expanded(&self) -> Result<(Vec<String>, Env), String> {
        let command = self
            .command
            .iter()
            .map(|part| expand(part))
            .collect::<Result<Vec<_>, _>>()?;
        if command.is_empty() {
            return Err(format!("server {}: empty command", self.name));
        }
        let env = self
            .env
            .iter()
            .map(|(k, v)| Ok((k.clone(), expand(v)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok((command, env))
    }
}

/// Expands `${VAR}` from the environment; an unset variable is an error naming it.
pub fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let end = tail
            .find('}')
            .ok_or_else(|| format!("unclosed ${{ in {text:?}"))?;
        let name = &tail[..end];
        let value = std::env::var(name)
            .map_err(|_| format!("{text:?} needs the environment variable {name}"))?;
        out.push_str(&value);
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl Config {
    /// Reads and checks the table.
    pub fn load(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let config: Config =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut names = std::collections::HashSet::new();
        for row in &config.servers {
            if !names.insert(row.name.as_str()) {
                return Err(format!("server {} is listed twice", row.name));
            }
            if row.revisions.is_empty() {
                return Err(format!("server {}: no revisions", row.name));
            }
        }
        let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
        for row in &config.servers {
            *groups.entry(row.group.as_str()).or_default() += usize::from(row.baseline);
        }
        for (group, baselines) in groups {
            if baselines != 1 {
                return Err(format!(
                    "group {group} needs exactly one row with \"baseline\": true, has {baselines}"
                ));
            }
        }
        for target in &config.targets {
            if !config.servers.iter().any(|s| s.name == target.peer) {
                return Err(format!("target names an unknown server {}", target.peer));
            }
            if crate::report::metric(&target.metric).is_none() {
                return Err(format!("target names an unknown metric {}", target.metric));
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_variables_and_names_missing_ones() {
        // SAFETY: single-threaded test; the variable is unique to it.
        unsafe { std::env::set_var("LEAN_BEAM_BENCH_TEST_VAR", "/x") };
        assert_eq!(expand("${LEAN_BEAM_BENCH_TEST_VAR}/bin").unwrap(), "/x/bin");
        assert_eq!(expand("plain").unwrap(), "plain");
        let err = expand("${LEAN_BEAM_BENCH_UNSET_VAR}").unwrap_err();
        assert!(err.contains("LEAN_BEAM_BENCH_UNSET_VAR"), "{err}");
    }

    #[test]
    fn the_shipped_table_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers.json");
        let config = Config::load(&path).unwrap();
        assert!(
            config
                .servers
                .iter()
                .any(|s| s.baseline && s.group == "sdk")
        );
    }
}
