//! One-shot `lake` commands (`lake env`, `lake build`): run in the workspace, read as they go,
//! and ended on every way out.
//!
//! Contract:
//! 1. [`run`] starts `<lake> <args>` with the workspace root as its cwd and no stdin, through
//!    `process::spawn_owned` (a process group of its own, dying with this process, a leader for
//!    `orphans`); its group is handed to `track` at once (the registry, so the host's end kills
//!    it too).
//! 2. Its stdout and stderr are both read, line by line, and every line is handed to `on_line`
//!    as it arrives, with the [`Stream`] it came from: Lake writes build progress to stderr by
//!    default, but the stream is configurable, so both are read (reference
//!    `lean-stock-speculation.md` §C); `lake query` prints its results on stdout alone. A line
//!    longer than [`MAX_LINE`] bytes is cut there (a stdout line: [`Bounds::stdout_line`], for
//!    a command that answers in one long line); `\r\n` counts as `\n`.
//! 3. The run is bounded by `timeout` (`leanTimeout`) and cancellable (`requestCancelled`);
//!    either kills the whole group at once. A run that is dropped (a cancelled call the core
//!    stops polling) kills it too. The child is always reaped, its orphans swept.
//! 4. The answer is the exit status, once the child has exited and both streams have ended. A
//!    `lake` that cannot be started is `runtimeSetup`, saying how to install Lean.

use std::path::Path;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::lean::error::HostError;
use crate::lean::server::process::{GroupKiller, reap_owned, spawn_error, spawn_owned};

/// The longest output line kept whole.
pub const MAX_LINE: usize = 64 * 1024;
/// Lines read ahead of `on_line`.
const LINE_BACKLOG: usize = 256;

/// What bounds a run: its time, and the longest stdout line kept whole.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// The run is ended after this long.
    pub timeout: Duration,
    /// A longer stdout line is cut there.
    pub stdout_line: usize,
}

impl Bounds {
    /// A Lake command's bounds: `timeout`, and lines of at most [`MAX_LINE`] bytes.
    pub fn lake(timeout: Duration) -> Bounds {
        Bounds {
            timeout,
            stdout_line: MAX_LINE,
        }
    }
}

/// Which of the child's streams a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Kills the group when dropped, unless the child has been reaped.
struct KillOnDrop(Option<GroupKiller>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(killer) = &self.0 {
            killer.kill();
        }
    }
}

/// Runs `<lake> <args>` in `root` (see the contract).
pub async fn run(
    lake: &Path,
    root: &Path,
    args: &[String],
    track: impl FnOnce(GroupKiller),
    cancel: &CancellationToken,
    bounds: Bounds,
    mut on_line: impl FnMut(Stream, &str),
) -> Result<ExitStatus, HostError> {
    let timeout = bounds.timeout;
    let described = format!("`lake {}`", args.join(" "));
    let mut command = Command::new(lake);
    command
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let subcommand = args.first().map_or("", String::as_str);
    let mut child = spawn_owned(&mut command).map_err(|e| {
        let error = spawn_error(lake, root, subcommand, &e);
        HostError::runtime_setup(error.reason, error.message, Vec::new())
    })?;
    let killer = GroupKiller::of(&child);
    track(killer.clone());
    let mut guard = KillOnDrop(Some(killer.clone()));
    let (lines, mut received) = mpsc::channel(LINE_BACKLOG);
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let stdout_line = bounds.stdout_line;
    tokio::spawn(read_lines(
        stdout,
        Stream::Stdout,
        stdout_line,
        lines.clone(),
    ));
    tokio::spawn(read_lines(stderr, Stream::Stderr, MAX_LINE, lines));
    let reaped = tokio::spawn(reap_owned(child, killer.clone()));
    let mut reaped = pin!(reaped);
    let mut deadline = pin!(tokio::time::sleep(timeout));
    let mut streams_open = true;
    let mut status = None;
    while streams_open || status.is_none() {
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                killer.kill();
                return Err(HostError::cancelled(format!(
                    "{described} was cancelled; its processes were ended"
                )));
            }
            () = &mut deadline => {
                killer.kill();
                return Err(HostError::lean_timeout(
                    format!(
                        "{described} did not finish within {timeout:?}, so it was ended. Raise \
                         --lean-timeout-ms if this module needs longer"
                    ),
                    Vec::new(),
                ));
            }
            line = received.recv(), if streams_open => match line {
                Some((stream, line)) => on_line(stream, &line),
                None => streams_open = false,
            },
            exit = &mut reaped, if status.is_none() => {
                status = Some(match exit {
                    Ok(Ok(exit)) => exit,
                    Ok(Err(e)) => return Err(HostError::internal(
                        format!("could not wait for {described}: {e}"),
                    )),
                    Err(e) => return Err(HostError::internal(
                        format!("waiting for {described} failed inside lean-beam-mcp: {e}"),
                    )),
                });
                // Reaped: its group is gone, and its id may be reused.
                guard.0 = None;
            },
        }
    }
    Ok(status.expect("the loop ends with a status"))
}

/// Sends the stream's lines until it ends (or nobody listens).
async fn read_lines(
    stream: impl AsyncRead + Unpin,
    which: Stream,
    cap: usize,
    lines: mpsc::Sender<(Stream, String)>,
) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line_capped(&mut reader, &mut line, cap).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches('\n').trim_end_matches('\r');
                if lines.send((which, text.to_owned())).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Reads one line (through its `\n`) into `out`, keeping at most `cap` bytes of it;
/// the bytes consumed (0 at the end of the stream).
async fn read_line_capped(
    reader: &mut (impl AsyncBufRead + Unpin),
    out: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let mut consumed = 0;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(consumed);
        }
        let (used, ended) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let room = cap.saturating_sub(out.len());
        out.extend_from_slice(&buffer[..used.min(room)]);
        reader.consume(used);
        consumed += used;
        if ended {
            return Ok(consumed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::error::code;

    #[tokio::test]
    async fn long_lines_are_cut_and_line_ends_dropped() {
        let long = "x".repeat(MAX_LINE + 10);
        let input = format!("a\r\n{long}\nlast");
        let (tx, mut rx) = mpsc::channel(8);
        read_lines(input.as_bytes(), Stream::Stdout, MAX_LINE, tx).await;
        assert_eq!(rx.recv().await.unwrap(), (Stream::Stdout, "a".to_owned()));
        assert_eq!(rx.recv().await.unwrap().1.len(), MAX_LINE);
        assert_eq!(rx.recv().await.unwrap().1, "last");
        assert!(rx.recv().await.is_none());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn both_streams_are_read_and_the_status_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut seen = Vec::new();
        let status = run(
            Path::new("sh"),
            dir.path(),
            &["-c".into(), "echo out; echo err >&2; exit 3".into()],
            |_| {},
            &CancellationToken::new(),
            Bounds::lake(Duration::from_secs(30)),
            |stream, line| seen.push((line.to_owned(), stream)),
        )
        .await
        .unwrap();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            seen,
            [
                ("err".to_owned(), Stream::Stderr),
                ("out".to_owned(), Stream::Stdout)
            ]
        );
        assert_eq!(status.code(), Some(3));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_stdout_line_is_kept_whole_up_to_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let script = "head -c 100000 /dev/zero | tr '\\0' x; echo; head -c 100000 /dev/zero >&2";
        let mut seen = Vec::new();
        let bounds = Bounds {
            timeout: Duration::from_secs(30),
            stdout_line: 1 << 20,
        };
        run(
            Path::new("sh"),
            dir.path(),
            &["-c".into(), script.into()],
            |_| {},
            &CancellationToken::new(),
            bounds,
            |stream, line| seen.push((stream, line.len())),
        )
        .await
        .unwrap();
        seen.sort_by_key(|(stream, _)| *stream == Stream::Stderr);
        assert_eq!(
            seen,
            [(Stream::Stdout, 100_000), (Stream::Stderr, MAX_LINE)]
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_cancelled_run_is_ended_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        cancel.cancel();
        let error = run(
            Path::new("sleep"),
            dir.path(),
            &["600".into()],
            |_| {},
            &cancel,
            Bounds::lake(Duration::from_secs(30)),
            |_, _| {},
        )
        .await
        .unwrap_err();
        assert_eq!(error.code, code::REQUEST_CANCELLED);
        let error = run(
            Path::new("sleep"),
            dir.path(),
            &["600".into()],
            |_| {},
            &CancellationToken::new(),
            Bounds::lake(Duration::from_millis(1)),
            |_, _| {},
        )
        .await
        .unwrap_err();
        assert_eq!(error.code, code::LEAN_TIMEOUT);
    }
}
