//! Traffic capture for bug reports: with `--trace-dir DIR` (or `LEAN_BEAM_TRACE_DIR`), the MCP
//! traffic and each Lean server's LSP traffic are written, with timestamps, to files in DIR that
//! a user can attach to a report.
//!
//! Contract:
//! 1. One file per stream, named `lean-beam-<pid>-<stream>.log`: the process's MCP traffic is
//!    the stream `mcp`; each start of a workspace's Lean server is a stream of its own (named by
//!    the host). A line is `<UTC time to the microsecond> <direction> <message>`, the message
//!    whole on one line (line breaks in it written as `\n`). Directions name who spoke to whom:
//!    `client→beam`, `beam→client` (MCP), `beam→lean`, `lean→beam`, `lean-stderr` (LSP).
//! 2. Bounded: a file that would grow past the rotation size (an eighth of the budget, at least
//!    4 KiB) is renamed `lean-beam-<pid>-<stream>.1.log`, replacing an older one, and a new file
//!    is begun; a line longer than the rotation size is cut to fit, with a marker saying how
//!    much was cut. Whenever a file is begun, the oldest `lean-beam-*.log` files in DIR that no
//!    stream of this process is writing, and whose `<pid>` is no live process (another server
//!    sharing DIR bounds its own), are deleted until DIR's trace files fit the budget. So DIR
//!    holds at most the budget plus what the streams in use hold (two rotation sizes each).
//!    A file is appended to, never truncated: one an earlier process with the same pid left is
//!    kept, and one someone else deleted does not stop the stream.
//! 3. Writing never fails a call: a stream that cannot write logs why once and stops. Each line
//!    is flushed as it is written, so a trace is complete up to the moment a process dies.

mod file;
mod mcp;

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use file::Stream;
pub use mcp::McpTraffic;

/// The default budget of a trace directory: 64 MiB.
pub const DEFAULT_TRACE_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The smallest rotation size.
const MIN_ROTATE_BYTES: u64 = 4 * 1024;
/// What every trace file's name starts with.
const PREFIX: &str = "lean-beam-";
/// What every trace file's name ends with.
const SUFFIX: &str = ".log";

/// A directory that traces are written to, shared by every stream of this process.
#[derive(Debug, Clone)]
pub struct TraceDir {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    budget: u64,
    rotate_at: u64,
    pid: u32,
    /// The files streams of this process are writing now: never pruned.
    active: Mutex<HashSet<PathBuf>>,
}

impl TraceDir {
    /// Creates `dir` if needed; traces in it will fit `budget` bytes (see the contract).
    pub fn open(dir: &Path, budget: u64) -> io::Result<TraceDir> {
        std::fs::create_dir_all(dir)?;
        let dir = std::fs::canonicalize(dir)?;
        Ok(TraceDir {
            inner: Arc::new(Inner {
                dir,
                budget,
                rotate_at: (budget / 8).max(MIN_ROTATE_BYTES),
                pid: std::process::id(),
                active: Mutex::default(),
            }),
        })
    }

    /// The directory, canonical.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// A new stream writing to `lean-beam-<pid>-<name>.log` (`name` is cleaned to letters,
    /// digits, `.`, `_` and `-`). Nothing is created until the first line.
    pub fn stream(&self, name: &str) -> Stream {
        Stream::new(self.clone(), self.file_stem(name))
    }

    /// The trace files of this process whose stream name starts with `name_prefix`, current
    /// and rotated, as they exist now, sorted.
    pub fn files(&self, name_prefix: &str) -> Vec<PathBuf> {
        let stem = self.file_stem(name_prefix);
        let mut files: Vec<PathBuf> = trace_files(&self.inner.dir)
            .into_iter()
            .map(|(path, _, _)| path)
            .filter(|path| {
                path.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&stem))
            })
            .collect();
        files.sort();
        files
    }

    fn file_stem(&self, name: &str) -> String {
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{PREFIX}{}-{clean}", self.inner.pid)
    }

    fn rotate_at(&self) -> u64 {
        self.inner.rotate_at
    }

    fn set_active(&self, path: &Path, active: bool) {
        let mut set = self.inner.active.lock().unwrap_or_else(|p| p.into_inner());
        if active {
            set.insert(path.to_path_buf());
        } else {
            set.remove(path);
        }
    }

    /// Deletes the oldest trace files no stream is writing until the directory fits the budget.
    fn prune(&self) {
        let mut files = trace_files(&self.inner.dir);
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total <= self.inner.budget {
            return;
        }
        files.sort_by_key(|(_, _, modified)| *modified);
        let active = self
            .inner
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (path, len, _) in files {
            if total <= self.inner.budget {
                return;
            }
            if active.contains(&path) || written_by_another_live_process(&path, self.inner.pid) {
                continue;
            }
            // Another process may have deleted it first: either way it no longer counts.
            let _ = std::fs::remove_file(&path);
            total = total.saturating_sub(len);
        }
    }
}

/// Whether the `<pid>` in a trace file's name is a live process other than `ours`.
#[cfg(unix)]
fn written_by_another_live_process(path: &Path, ours: u32) -> bool {
    let pid = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(PREFIX))
        .and_then(|n| n.split('-').next())
        .and_then(|pid| pid.parse::<u32>().ok())
        .filter(|&pid| pid != ours)
        .and_then(|pid| libc::pid_t::try_from(pid).ok())
        .filter(|&pid| pid > 0);
    let Some(pid) = pid else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let status = unsafe { libc::kill(pid, 0) };
    status == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Without a way to ask, every other file counts as finished.
#[cfg(not(unix))]
fn written_by_another_live_process(_path: &Path, _ours: u32) -> bool {
    false
}

/// Every trace file in `dir`: its path, length and modification time.
fn trace_files(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
        })
        .filter_map(|entry| {
            let meta = entry.metadata().ok().filter(|m| m.is_file())?;
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            Some((entry.path(), meta.len(), modified))
        })
        .collect()
}

#[cfg(test)]
mod tests;
