//! The server table (`bench/servers.json`): which servers to run, how to start them, which
//! revisions they speak, what to call, and the targets the report checks.
//!
//! A row is one server command. Rows are grouped (`group`, default `sdk`); each group has one
//! `baseline` row, and every ratio in the report is baseline/row within a group. `${VAR}` in a
//! row's command, environment and argument strings is expanded from the environment. The Lean
//! host's rows (one group per tool: ours against lean-lsp-mcp, both on the fake Lean server)
//! add a few fields: their own in-flight `levels`, the `floor` request they are set against,
//! a `contains` check on each answer, and LSP messages per call (`lsp_messages`, `expect_lsp`).

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
    /// LSP messages the row's server sends the fake Lean server per call (its trace file).
    LspMessages,
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
    /// Its arguments; `${VAR}` is expanded in every string (like `command`), and a string equal
    /// to `$PAYLOAD` is replaced by the payload.
    #[serde(default = "default_arguments")]
    pub arguments: Value,
    /// Arguments to rotate through instead of `arguments`: request `id` uses
    /// `rotate[id % len]` (expanded the same way), so calls in flight spread over several
    /// documents.
    #[serde(default)]
    pub rotate: Option<Vec<Value>>,
    /// How answers are checked.
    #[serde(default)]
    pub check: Check,
    /// With `check: success`: text each answer line must contain, as the server writes it.
    #[serde(default)]
    pub contains: Option<String>,
    /// Which measurements to take.
    #[serde(default = "all_metrics")]
    pub metrics: Vec<Metric>,
    /// Requests in flight for this row's throughput runs (default: the command line's).
    #[serde(default)]
    pub levels: Option<Vec<u64>>,
    /// The Lean host's rows: the LSP method whose direct round trip to the fake Lean server
    /// (`bench-lean-floor`) is this row's floor. Such groups get the Lean host's section.
    #[serde(default)]
    pub floor: Option<String>,
    /// With `lsp_messages`: the exact LSP messages, by method, each call must send Lean
    /// (a different count fails the row like a wrong answer).
    #[serde(default)]
    pub expect_lsp: Option<BTreeMap<String, u64>>,
    /// With `floor`: a target on the time the row adds to Lean's own, its p50 minus the
    /// floor's, at most this many µs (at 1 in flight).
    #[serde(default)]
    pub above_floor_at_most_us: Option<f64>,
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

    /// The in-flight levels of the throughput runs: the row's own, else `default`.
    pub fn levels<'a>(&'a self, default: &'a [u64]) -> &'a [u64] {
        self.levels.as_deref().unwrap_or(default)
    }

    /// The command, environment and arguments with `${VAR}` expanded.
    pub fn expanded(&self) -> Result<Launch, String> {
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
        let arguments = match &self.rotate {
            Some(variants) if !variants.is_empty() => variants.clone(),
            Some(_) => return Err(format!("server {}: rotate is empty", self.name)),
            None => vec![self.arguments.clone()],
        };
        let arguments = arguments
            .iter()
            .map(expand_value)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("server {}: arguments: {e}", self.name))?;
        Ok(Launch {
            command,
            env,
            arguments,
        })
    }
}

/// A row ready to run: everything `${VAR}` expanded.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Program and arguments.
    pub command: Vec<String>,
    /// Extra environment.
    pub env: Env,
    /// The tool's arguments, one per variant (`$PAYLOAD` holes kept).
    pub arguments: Vec<Value>,
}

/// Expands `${VAR}` in every string of a JSON value (object keys are left alone).
pub fn expand_value(value: &Value) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) => Value::String(expand(text)?),
        Value::Array(items) => {
            Value::Array(items.iter().map(expand_value).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), expand_value(v)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
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
        Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks the table's text.
    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut names = std::collections::HashSet::new();
        for row in &config.servers {
            if !names.insert(row.name.as_str()) {
                return Err(format!("server {} is listed twice", row.name));
            }
            if row.revisions.is_empty() {
                return Err(format!("server {}: no revisions", row.name));
            }
            if row
                .levels
                .as_ref()
                .is_some_and(|l| l.is_empty() || l.contains(&0))
            {
                return Err(format!(
                    "server {}: levels must be a non-empty list of positive numbers",
                    row.name
                ));
            }
            if row.contains.is_some() && row.check != Check::Success {
                return Err(format!(
                    "server {}: contains needs \"check\": \"success\"",
                    row.name
                ));
            }
            if row.expect_lsp.is_some() && !row.measures(Metric::LspMessages) {
                return Err(format!(
                    "server {}: expect_lsp needs the lsp_messages metric",
                    row.name
                ));
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
    fn expands_variables_in_argument_strings() {
        // SAFETY: single-threaded test; the variable is unique to it.
        unsafe { std::env::set_var("LEAN_BEAM_BENCH_TEST_ROOT", "/p") };
        let config = Config::parse(
            r#"{"servers": [{"name": "a", "command": ["x"], "revisions": ["2025-11-25"],
                "baseline": true, "check": "success",
                "arguments": {"workspace": {"root": "${LEAN_BEAM_BENCH_TEST_ROOT}"},
                              "file": "${LEAN_BEAM_BENCH_TEST_ROOT}/A.lean", "line": 3,
                              "tags": ["${LEAN_BEAM_BENCH_TEST_ROOT}", "$PAYLOAD"]}}]}"#,
        )
        .unwrap();
        let launch = config.servers[0].expanded().unwrap();
        assert_eq!(
            launch.arguments,
            [
                json!({"workspace": {"root": "/p"}, "file": "/p/A.lean", "line": 3,
                    "tags": ["/p", PAYLOAD]})
            ]
        );
        let missing = Config::parse(
            r#"{"servers": [{"name": "a", "command": ["x"], "revisions": ["2025-11-25"],
                "baseline": true, "arguments": {"f": "${LEAN_BEAM_BENCH_UNSET_ARG}"}}]}"#,
        )
        .unwrap();
        let err = missing.servers[0].expanded().unwrap_err();
        assert!(err.contains("LEAN_BEAM_BENCH_UNSET_ARG"), "{err}");
    }

    #[test]
    fn rows_may_choose_their_own_levels() {
        let config = Config::parse(
            r#"{"servers": [
                {"name": "a", "command": ["x"], "revisions": ["2025-11-25"], "baseline": true},
                {"name": "b", "command": ["x"], "revisions": ["2025-11-25"], "levels": [1, 8]}]}"#,
        )
        .unwrap();
        let default = [1, 8, 64];
        assert_eq!(config.servers[0].levels(&default), &[1, 8, 64]);
        assert_eq!(config.servers[1].levels(&default), &[1, 8]);
        for bad in ["[]", "[0, 8]"] {
            let text = format!(
                r#"{{"servers": [{{"name": "a", "command": ["x"], "revisions": ["2025-11-25"],
                    "baseline": true, "levels": {bad}}}]}}"#
            );
            let err = Config::parse(&text).unwrap_err();
            assert!(err.contains("levels"), "{err}");
        }
    }

    #[test]
    fn lean_fields_are_checked() {
        let contains_on_echo = r#"{"servers": [{"name": "a", "command": ["x"],
            "revisions": ["2025-11-25"], "baseline": true, "contains": "y"}]}"#;
        assert!(
            Config::parse(contains_on_echo)
                .unwrap_err()
                .contains("contains")
        );
        let expect_without_metric = r#"{"servers": [{"name": "a", "command": ["x"],
            "revisions": ["2025-11-25"], "baseline": true,
            "expect_lsp": {"textDocument/waitForDiagnostics": 1}}]}"#;
        assert!(
            Config::parse(expect_without_metric)
                .unwrap_err()
                .contains("lsp_messages")
        );
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
        // The Lean host's groups: ours as baseline, at 1 and 8 in flight, against a floor, and
        // an unchanged lean_sync must send Lean its barrier request only; the load groups at 8
        // in flight, over two workspaces.
        let lean: Vec<&ServerRow> = config
            .servers
            .iter()
            .filter(|s| s.floor.is_some())
            .collect();
        assert!(!lean.is_empty());
        for row in &lean {
            if row.group.starts_with("lean-load-") {
                assert_eq!(row.levels.as_deref(), Some(&[8][..]), "{}", row.name);
                let text = serde_json::to_string(&row.rotate).unwrap();
                assert!(text.contains("BENCH_LEAN_ROOT2"), "{}", row.name);
            } else {
                assert_eq!(row.levels.as_deref(), Some(&[1, 8][..]), "{}", row.name);
                assert!(row.measures(Metric::LspMessages), "{}", row.name);
            }
        }
        let sync = lean
            .iter()
            .find(|s| s.baseline && s.tool == "lean_sync" && s.group == "lean-sync")
            .expect("our lean_sync row");
        assert_eq!(
            sync.expect_lsp,
            Some(BTreeMap::from([(
                "textDocument/waitForDiagnostics".to_string(),
                1
            )]))
        );
    }
}
