//! The Lean contract check of one test that starts Lean (`tests/lean-contract`; the fake's
//! README, "Lean contract"): every message Lean sent during the test is held to rules read from
//! Lean's source, and a violation fails the test that caused it, naming the rule and the
//! message.
//!
//! Contract: a [`Contract`] owns the test's scratch directory. Against the fake, the fake checks
//! as it writes and records each violation in its trace (`FAKE_LEAN_TRACE`, here
//! `trace.jsonl`); in the real-Lean lane (`LEAN_BEAM_TEST_LAKE` set) the host traces its LSP
//! traffic (`--trace-dir`, here `host-trace/`, unless the test names its own) and the same
//! checker reads it. The check runs when the test ends: [`Contract::check`], or the drop, which
//! does nothing while the thread is already panicking (a failing test keeps its own message) or
//! once the check ran.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A trace budget no test reaches: a rotated trace would lose the start of a server's life.
const HOST_TRACE_BYTES: &str = "1073741824";

/// The scratch directory of one test and the contract check over what Lean sent in it.
pub struct Contract {
    dir: tempfile::TempDir,
    /// Where the host traces its LSP traffic (the real-Lean lane).
    host_trace: Option<PathBuf>,
    checked: bool,
}

impl Contract {
    /// A check for a server started with `args`, in this lane.
    pub fn new(args: &[&str]) -> Contract {
        Contract::for_lane(args, std::env::var_os("LEAN_BEAM_TEST_LAKE").is_some())
    }

    /// A check for a server started with `args`, in the real-Lean lane or not.
    pub fn for_lane(args: &[&str], real_lean: bool) -> Contract {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let named = args
            .iter()
            .position(|a| *a == "--trace-dir")
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from);
        let host_trace = real_lean.then(|| named.unwrap_or_else(|| dir.path().join("host-trace")));
        Contract {
            dir,
            host_trace,
            checked: false,
        }
    }

    /// The test's scratch directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The fake's trace file.
    pub fn fake_trace(&self) -> PathBuf {
        self.dir().join("trace.jsonl")
    }

    /// `FAKE_LEAN_TRACE` for the fake.
    pub fn fake_env(&self) -> (&'static str, String) {
        ("FAKE_LEAN_TRACE", self.fake_trace().display().to_string())
    }

    /// What the server needs besides `args` for the check: in the real-Lean lane, a trace of
    /// its LSP traffic.
    pub fn server_args(&self, args: &[&str]) -> Vec<String> {
        match &self.host_trace {
            Some(dir) if !args.contains(&"--trace-dir") => vec![
                "--trace-dir".into(),
                dir.display().to_string(),
                "--trace-max-bytes".into(),
                HOST_TRACE_BYTES.into(),
            ],
            _ => Vec::new(),
        }
    }

    /// Every violation so far, one report each.
    pub fn violations(&self) -> Vec<String> {
        let mut found = fake_violations(&self.fake_trace());
        if let Some(dir) = &self.host_trace {
            found.extend(host_violations(dir));
        }
        found
    }

    /// The test judges the violations itself: the drop does not check.
    pub fn mark_checked(&mut self) {
        self.checked = true;
    }

    /// Fails the test on any violation.
    #[track_caller]
    pub fn check(&mut self) {
        self.checked = true;
        let found = self.violations();
        assert!(
            found.is_empty(),
            "Lean sent what Lean never sends ({} Lean contract violation(s)):\n{}",
            found.len(),
            found.join("\n")
        );
    }
}

impl Drop for Contract {
    fn drop(&mut self) {
        if !self.checked && !std::thread::panicking() {
            self.check();
        }
    }
}

/// The violations the fake recorded in the trace at `path` (none if there is none).
pub fn fake_violations(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| report(&entry))
        .collect()
}

/// The violations the fake recorded in the trace files under `dir` whose names start with
/// `prefix` (one file per `lake` process, as the model suite's wrapper writes them).
pub fn fake_violations_in(dir: &Path, prefix: &str) -> Vec<String> {
    let files = files_in(dir, |name| name.starts_with(prefix));
    files.iter().flat_map(|f| fake_violations(f)).collect()
}

/// A trace line's report, if it is a contract violation.
pub fn report(entry: &Value) -> Option<String> {
    lean_contract::Violation::from_json(entry).map(|v| v.to_string())
}

/// The files in `dir` whose names `keep`, sorted.
fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    files.sort();
    files
}

/// The violations in a host's LSP traces under `dir` (`lean-beam-<pid>-lsp-….log`, each a
/// server's life; a rotated `.1.log` is its beginning).
pub fn host_violations(dir: &Path) -> Vec<String> {
    let streams = files_in(dir, |n| {
        n.contains("-lsp-") && n.ends_with(".log") && !n.ends_with(".1.log")
    });
    let mut found = Vec::new();
    for stream in streams {
        let rotated = stream.with_extension("1.log");
        let text = std::fs::read_to_string(&rotated).unwrap_or_default()
            + &std::fs::read_to_string(&stream).unwrap_or_default();
        let name = stream
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let checked = lean_contract::check_host_trace(&text);
        found.extend(checked.violations.iter().map(|v| format!("{name}: {v}")));
    }
    found
}
