//! Faults of the `lake` process itself, applied before serving (README "Faults"): exiting at
//! once with a given code and stderr (`FAKE_LAKE_EXIT`, `FAKE_LAKE_STDERR`), Lake's
//! workspace-load log on stderr (`FAKE_LAKE_LOAD_LOG`, reference §1.10), the fallback warning
//! when the directory has no Lake configuration, and a stderr flood written before the first
//! message is read (`FAKE_LAKE_STDERR_FLOOD=<bytes>`), which blocks a client that does not
//! drain stderr.

use std::io::Write;

/// Runs the startup faults; returns an exit code when `lake` must stop here.
pub fn startup() -> Option<i32> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let mut err = std::io::stderr().lock();
    if let Some(code) = var("FAKE_LAKE_EXIT") {
        if let Some(text) = var("FAKE_LAKE_STDERR") {
            let _ = writeln!(err, "{}", text.replace("\\n", "\n"));
        }
        return Some(code.parse().unwrap_or(1));
    }
    if let Some(log) = var("FAKE_LAKE_LOAD_LOG") {
        let _ = writeln!(err, "{}", log.replace("\\n", "\n"));
    }
    let root = std::env::current_dir().unwrap_or_default();
    if !root.join("lakefile.toml").exists() && !root.join("lakefile.lean").exists() {
        let _ = writeln!(
            err,
            "warning: package configuration has errors, falling back to plain `lean --server`"
        );
    }
    if let Some(n) = var("FAKE_LAKE_STDERR_FLOOD").and_then(|v| v.parse::<usize>().ok()) {
        let line = "info: fake lake flooding stderr ........................................\n";
        let mut written = 0;
        while written < n {
            if err.write_all(line.as_bytes()).is_err() {
                break;
            }
            written += line.len();
        }
        let _ = err.flush();
    }
    None
}
