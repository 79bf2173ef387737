//! Faults of the `lake` process itself, applied before serving (README "Faults"): exiting at
//! once with a given code and stderr (`FAKE_LAKE_EXIT`, `FAKE_LAKE_STDERR`), Lake's
//! workspace-load log on stderr (`FAKE_LAKE_LOAD_LOG`, reference §1.10), the fallback warning
//! when the directory has no Lake configuration, and a stderr flood written before the first
//! message is read (`FAKE_LAKE_STDERR_FLOOD=<bytes>`), which blocks a client that does not
//! drain stderr; `FAKE_LAKE_STDERR_FLOOD=<bytes>:line` writes them as one line, so a client
//! that holds a whole line before keeping its tail must hold them all.
//!
//! `FAKE_LEAN_FAULTS_ONCE=<file>` makes every fault switch apply to one `lake` process only: the
//! first one started while `<file>` does not exist creates it and keeps its faults; later ones
//! start healthy. A fault is then transient, as a lock held by another build or an OOM kill
//! is, so a client's recovery on the next call can be seen.

use std::io::Write;

/// The switches [`once`] turns off.
const FAULT_SWITCHES: [&str; 7] = [
    "FAKE_LAKE_EXIT",
    "FAKE_LAKE_STDERR",
    "FAKE_LAKE_STDERR_FLOOD",
    "FAKE_LEAN_NO_INIT",
    "FAKE_LEAN_GARBAGE",
    "FAKE_LEAN_WATCHDOG_EXIT",
    "FAKE_LEAN_HANG",
];

/// Applies `FAKE_LEAN_FAULTS_ONCE`: unless this process is the first of its marker, its fault
/// switches are removed from the environment (its workers' included). Must run before any
/// thread is started.
pub fn once() {
    let Some(marker) = std::env::var_os("FAKE_LEAN_FAULTS_ONCE").filter(|m| !m.is_empty()) else {
        return;
    };
    let first = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&marker)
        .is_ok();
    if !first {
        for switch in FAULT_SWITCHES {
            // SAFETY: called first thing in `main`, while this process has one thread.
            unsafe { std::env::remove_var(switch) };
        }
    }
}

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
    let flood = var("FAKE_LAKE_STDERR_FLOOD");
    if let Some(n) = flood
        .as_deref()
        .and_then(|v| v.strip_suffix(":line"))
        .and_then(|v| v.parse::<usize>().ok())
    {
        let chunk = [b'x'; 64 * 1024];
        let mut written = 0;
        while written < n {
            let part = &chunk[..chunk.len().min(n - written)];
            if err.write_all(part).is_err() {
                break;
            }
            written += part.len();
        }
        let _ = err.write_all(b"\n");
        let _ = err.flush();
    }
    if let Some(n) = flood.and_then(|v| v.parse::<usize>().ok()) {
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
