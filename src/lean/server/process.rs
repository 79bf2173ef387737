//! The `lake serve` child process: started in its own process group, its stderr kept as a bounded
//! tail, and the whole group ended on every way out.
//!
//! Contract:
//! 1. [`LeanProcess::spawn`] runs `<lake> serve` with the workspace root as its cwd (Lean takes the
//!    project from the cwd, not from `rootUri`), stdin and stdout piped for LSP, stderr read into
//!    a [`StderrTail`] (the last [`TAIL_LINES`] lines, each at most [`TAIL_LINE_BYTES`], never
//!    holding more of a line than that while it arrives), and the child leading a process group
//!    of its own, so the watchdog and nested `lake` builds it starts can be ended with it (file
//!    workers lead groups of their own: see `orphans`). On Linux the child also dies if this
//!    process dies.
//! 2. [`LeanProcess::kill`] ends the whole group at once (SIGKILL), synchronously; it is safe to
//!    call at any time, any number of times. [`LeanProcess`] kills the group when dropped. When
//!    the child exits, for any reason, what it started is killed with it at once (its group, then
//!    the orphans it left), and the group is never signalled again (its id could be reused).
//! 3. A `lake` that cannot be started is a [`SpawnError`] that says what to do: install Lean with
//!    elan, or point `--lake` / `LEAN_BEAM_LAKE` at it.
//! 4. Every child the host starts, `lake serve` here and the one-shot `lake` commands
//!    (`lake_run`), is started by [`spawn_owned`] (its own process group, dying with this
//!    process, a leader for `orphans`) and ended by [`reap_owned`] (its group and its orphans
//!    killed when it exits, the group then never signalled again).
//! 5. With a trace stream, every stderr line of `lake serve` is also written to it
//!    (`lean-stderr`), cut as the tail cuts it.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::lean::tail::Tail;
use crate::trace::Stream;

/// Lines of stderr kept for error reports.
pub const TAIL_LINES: usize = 40;
/// The longest stderr line kept (longer ones are cut).
pub const TAIL_LINE_BYTES: usize = 1024;

/// The last lines a process wrote to stderr.
#[derive(Debug)]
pub struct StderrTail {
    lines: Mutex<Tail>,
    /// Set once stderr has ended (every line is in).
    ended: tokio::sync::watch::Sender<bool>,
}

impl Default for StderrTail {
    fn default() -> Self {
        StderrTail {
            lines: Mutex::new(Tail::new(TAIL_LINES, TAIL_LINE_BYTES)),
            ended: tokio::sync::watch::channel(false).0,
        }
    }
}

impl StderrTail {
    fn push(&self, line: &str) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.push(line);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.lines()
    }

    /// The kept lines once stderr has ended (the process is gone, so its last words are in),
    /// waiting at most `bound` for that.
    pub async fn final_lines(&self, bound: std::time::Duration) -> Vec<String> {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(bound, ended.wait_for(|ended| *ended)).await;
        self.lines()
    }
}

/// Why `lake serve` could not be started.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnError {
    /// What went wrong and what to do about it.
    pub message: String,
    /// Which way it went wrong: `lakeNotFound` (no such file, or not on PATH),
    /// `lakeNotExecutable`, or `spawnFailed`.
    pub reason: &'static str,
}

/// A running `lake serve` and its process group.
#[derive(Debug)]
pub struct LeanProcess {
    tail: Arc<StderrTail>,
    killer: GroupKiller,
    exited: watch::Receiver<Option<String>>,
}

/// Kills a process group; cheap to clone, so a host can end every runtime's group at once.
#[derive(Debug, Clone)]
pub struct GroupKiller {
    group: Option<i32>,
    /// Set once the group was killed after its leader exited: it is empty, and its id is free.
    gone: Arc<AtomicBool>,
}

impl GroupKiller {
    /// Whether the group's leader has exited (and the group was ended with it).
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::Acquire)
    }

    /// Sends SIGKILL to the whole group (no-op once it is gone).
    pub fn kill(&self) {
        #[cfg(unix)]
        if let Some(group) = self.group
            && !self.gone.load(Ordering::Acquire)
        {
            // SAFETY: killpg only sends a signal; a group that is gone makes it fail harmlessly.
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
    }
}

impl LeanProcess {
    /// Starts `<lake> serve` in `root`, with `extra_args` passed on after `--` to the server,
    /// its stderr also written to `trace` if there is one.
    pub fn spawn(
        lake: &Path,
        root: &Path,
        extra_args: &[String],
        trace: Option<Stream>,
    ) -> Result<(LeanProcess, ChildStdin, ChildStdout), SpawnError> {
        let mut command = Command::new(lake);
        command.arg("serve");
        if !extra_args.is_empty() {
            command.arg("--").args(extra_args);
        }
        command
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child =
            spawn_owned(&mut command).map_err(|e| spawn_error(lake, root, "serve", &e))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let tail = Arc::new(StderrTail::default());
        tokio::spawn(keep_tail(BufReader::new(stderr), tail.clone(), trace));
        let killer = GroupKiller::of(&child);
        let (exited_tx, exited) = watch::channel(None);
        tokio::spawn(reap(child, killer.clone(), exited_tx));
        let process = LeanProcess {
            tail,
            killer,
            exited,
        };
        Ok((process, stdin, stdout))
    }

    /// The stderr tail so far.
    pub fn stderr_tail(&self) -> Arc<StderrTail> {
        self.tail.clone()
    }

    /// A handle that kills this process's group.
    pub fn killer(&self) -> GroupKiller {
        self.killer.clone()
    }

    /// Waits for the child to exit; its exit status, described.
    pub async fn wait(&self) -> String {
        let mut exited = self.exited.clone();
        match exited.wait_for(Option::is_some).await {
            Ok(status) => status.clone().unwrap_or_default(),
            Err(_) => "unknown (no longer watched)".into(),
        }
    }

    /// Ends the whole group now.
    pub fn kill(&self) {
        self.killer.kill();
    }
}

impl Drop for LeanProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `command` as a child the host owns: leading a process group of its own (so it and
/// everything it starts can be ended together), killed if this process dies (Linux), and
/// recorded as a leader so orphan sweeps spare it (see `orphans`).
pub fn spawn_owned(command: &mut Command) -> std::io::Result<Child> {
    #[cfg(unix)]
    {
        command.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                // Tokio's worker threads live as long as the runtime, so "the parent thread
                // died" means the server is gone.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    crate::lean::server::orphans::spawn_leader(|| command.spawn(), Child::id)
}

impl GroupKiller {
    /// The killer of the group a child spawned by [`spawn_owned`] leads.
    pub fn of(child: &Child) -> GroupKiller {
        GroupKiller {
            group: child.id().and_then(|pid| i32::try_from(pid).ok()),
            gone: Arc::default(),
        }
    }
}

/// Waits for a child spawned by [`spawn_owned`]; when it exits, kills what it started (its
/// group, and the orphans that lead groups of their own) and marks the group gone. Its status.
pub async fn reap_owned(mut child: Child, killer: GroupKiller) -> std::io::Result<ExitStatus> {
    let pid = child.id();
    let status = child.wait().await;
    killer.kill();
    killer.gone.store(true, Ordering::Release);
    if let Some(pid) = pid {
        crate::lean::server::orphans::leader_exited(pid);
    }
    let _ = tokio::task::spawn_blocking(crate::lean::server::orphans::sweep).await;
    status
}

/// [`reap_owned`], publishing the status, described.
async fn reap(child: Child, killer: GroupKiller, exited: watch::Sender<Option<String>>) {
    let status = match reap_owned(child, killer).await {
        Ok(status) => status.to_string(),
        Err(e) => format!("could not wait for it: {e}"),
    };
    let _ = exited.send(Some(status));
}

/// Reads stderr to its end into `tail` (and `trace`). Of each line only what the tail keeps is
/// held (a few bytes more, so a cut line still shows it was cut): one endless line costs no
/// memory, and the trace gets each line as the tail keeps it.
async fn keep_tail(
    mut stderr: impl AsyncBufRead + Unpin,
    tail: Arc<StderrTail>,
    trace: Option<Stream>,
) {
    const HELD: usize = TAIL_LINE_BYTES + 4;
    let mut line = Vec::new();
    let mut pending = false;
    loop {
        let chunk = match stderr.fill_buf().await {
            Ok(chunk) if !chunk.is_empty() => chunk,
            _ => {
                if pending {
                    keep_line(&line, &tail, trace.as_ref());
                }
                tail.ended.send_replace(true);
                return;
            }
        };
        let (part, consumed, complete) = match memchr::memchr(b'\n', chunk) {
            Some(at) => (&chunk[..at], at + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = HELD.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        pending = true;
        stderr.consume(consumed);
        if complete {
            keep_line(&line, &tail, trace.as_ref());
            line.clear();
            pending = false;
        }
    }
}

fn keep_line(line: &[u8], tail: &StderrTail, trace: Option<&Stream>) {
    if let Some(trace) = trace {
        trace.write("lean-stderr", line);
    }
    let text = String::from_utf8_lossy(line).trim_end().to_string();
    tracing::debug!(target: "lean_beam_mcp::lean::stderr", "{text}");
    tail.push(&text);
}

/// Why `<lake> <subcommand>` could not be started, and what to do about it.
pub fn spawn_error(
    lake: &Path,
    root: &Path,
    subcommand: &str,
    error: &std::io::Error,
) -> SpawnError {
    let install = "Install Lean with elan (https://github.com/leanprover/elan: \
                   curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh), \
                   which puts `lake` on PATH, or point --lake (or LEAN_BEAM_LAKE) at a lake executable";
    let (reason, message) = match error.kind() {
        std::io::ErrorKind::NotFound if lake.components().count() == 1 => (
            "lakeNotFound",
            // A client starts its servers with an environment of its own, often without the
            // shell's PATH that elan extended: say which PATH was searched, and how to name lake.
            format!(
                "`{lake}` was not found on the PATH this server was started with ({path}). If \
                 `command -v {lake}` finds it in your shell, your MCP client started the server \
                 with another PATH: register it with the lake it should use, `lean-beam-mcp \
                 config <client> --write -- --lake \"$(command -v {lake})\"`. Otherwise: \
                 {install}.",
                lake = lake.display(),
                path = std::env::var("PATH").unwrap_or_else(|_| "PATH is not set".to_owned()),
            ),
        ),
        std::io::ErrorKind::NotFound => (
            "lakeNotFound",
            format!("{} does not exist. {install}.", lake.display()),
        ),
        std::io::ErrorKind::PermissionDenied => (
            "lakeNotExecutable",
            format!("{} is not executable ({error}). {install}.", lake.display()),
        ),
        _ => (
            "spawnFailed",
            format!(
                "could not start `{} {subcommand}` in {}: {error}",
                lake.display(),
                root.display()
            ),
        ),
    };
    SpawnError { message, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_and_cuts_long_ones() {
        let tail = StderrTail::default();
        for n in 0..(TAIL_LINES + 5) {
            tail.push(&format!("line {n}"));
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 5");
        tail.push(&"é".repeat(TAIL_LINE_BYTES));
        let last = tail.lines().pop().unwrap();
        assert!(last.len() <= TAIL_LINE_BYTES + " …".len() && last.ends_with(" …"));
    }

    #[tokio::test]
    async fn an_endless_line_is_cut_as_it_arrives_and_the_last_unterminated_line_kept() {
        let mut input = vec![b'x'; 10 * TAIL_LINE_BYTES];
        input.extend_from_slice(b"\nshort\nlast words");
        let tail = Arc::new(StderrTail::default());
        // A reader that hands out 7 bytes at a time, so lines arrive in pieces.
        let reader = BufReader::with_capacity(7, &input[..]);
        keep_tail(reader, tail.clone(), None).await;
        let lines = tail.final_lines(std::time::Duration::ZERO).await;
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[0], format!("{} …", "x".repeat(TAIL_LINE_BYTES)));
        assert_eq!(lines[1..], ["short", "last words"]);
    }

    #[tokio::test]
    async fn a_missing_lake_says_how_to_install_lean() {
        let err = LeanProcess::spawn(
            Path::new("lake-that-does-not-exist"),
            Path::new("/"),
            &[],
            None,
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("not found on the PATH this server was started with ("),
            "{}",
            err.message
        );
        assert!(err.message.contains("--write -- --lake"), "{}", err.message);
        assert_eq!(err.reason, "lakeNotFound");
        assert!(err.message.contains("elan"), "{}", err.message);
    }
}
