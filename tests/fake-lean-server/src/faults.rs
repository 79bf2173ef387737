//! Faults of the `lake` process itself, applied before serving (README "Faults"): exiting at
//! once with a given code and stderr (`FAKE_LAKE_EXIT`, `FAKE_LAKE_STDERR`), Lake's
//! workspace-load log on stderr (`FAKE_LAKE_LOAD_LOG`, reference §1.10), the fallback warning
//! when the directory has no Lake configuration, a configuration that does not load (a
//! `lakefile.toml` that is not TOML: its load error, the fallback warning, and
//! `LAKE_INVALID_CONFIG` set for the server and its workers, LLS:79–82), and a stderr flood
//! written before the first message is read (`FAKE_LAKE_STDERR_FLOOD=<bytes>`), which blocks a
//! client that does not drain stderr; `FAKE_LAKE_STDERR_FLOOD=<bytes>:line` writes them as one
//! line, so a client that holds a whole line before keeping its tail must hold them all.
//!
//! `FAKE_LEAN_FAULTS_ONCE=<file>` makes every fault switch apply to one `lake` process only: the
//! first one started while `<file>` does not exist creates it and keeps its faults; later ones
//! start healthy. A fault is then transient, as a lock held by another build or an OOM kill
//! is, so a client's recovery on the next call can be seen.

use std::io::Write;
use std::path::Path;

/// The variable Lake sets, with the load log, when the configuration does not load (LLS:81).
pub const INVALID_CONFIG: &str = "LAKE_INVALID_CONFIG";

/// The load log of a configuration that does not load: a `lakefile.toml` that is not TOML
/// (a `lakefile.lean` is never elaborated here, so it always loads).
pub fn config_error(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("lakefile.toml")).ok()?;
    let error = text.parse::<toml::Table>().err()?;
    let at = error.span().map_or(0, |span| span.start);
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    Some(format!(
        "error: ./lakefile.toml:{line}:{column}: {}",
        error.message().trim_end()
    ))
}

/// The load log Lake left for the server and its workers, if the configuration did not load.
pub fn invalid_config() -> Option<String> {
    std::env::var(INVALID_CONFIG).ok()
}

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
    if let Some(log) = config_error(&root) {
        let _ = writeln!(err, "{log}");
        let _ = writeln!(
            err,
            "warning: package configuration has errors, falling back to plain `lean --server`"
        );
        // SAFETY: `lake serve` is still single-threaded here; the server and the workers it
        // starts read the variable as Lake's do.
        unsafe { std::env::set_var(INVALID_CONFIG, log) };
    } else if !root.join("lakefile.toml").exists() && !root.join("lakefile.lean").exists() {
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
