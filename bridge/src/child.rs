//! The spawned stdio server: one writer task feeding its stdin, one reader task routing its
//! stdout, one supervisor task owning the process.
//!
//! Contract:
//! 1. The server gets piped stdin and stdout and inherits the bridge's stderr. Lines queued by
//!    [`Routing`] are written in queue order, each flushed; the first write error fails every
//!    waiting request.
//! 2. Every stdout line is handed to [`Routing::dispatch`]; a line that is not JSON is logged
//!    and skipped. End of output fails every waiting request.
//! 3. Closing stdin ([`Spawned::close_stdin`]) is how the server is asked to stop; the kill
//!    switch ([`Spawned::kill`], also fired when its sender is dropped) kills it outright. Once
//!    the process has exited, and its output has been read to the end (or for at most two
//!    seconds more, in case a grandchild holds the pipe open), every waiting request is failed
//!    and the exit status is published on [`Spawned::exit`].

use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};

use crate::routing::Routing;

/// How long the output may stay open after the process has exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// The handles on a spawned server.
pub(crate) struct Spawned {
    /// The operating-system process id.
    pub(crate) pid: Option<u32>,
    /// Send (or drop) to close the server's stdin.
    pub(crate) close_stdin: oneshot::Sender<()>,
    /// Send (or drop) to kill the server.
    pub(crate) kill: oneshot::Sender<()>,
    /// `Some(status)` once the server has exited (`Some(None)` if the status was unreadable).
    pub(crate) exit: watch::Receiver<Option<Option<ExitStatus>>>,
}

/// Spawns `command` and starts the tasks that serve it.
pub(crate) fn spawn(
    command: Command,
    routing: Arc<Routing>,
    lines: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<Spawned> {
    let mut command = tokio::process::Command::from(command);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let pid = child.id();
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (close_stdin, close_rx) = oneshot::channel();
    let (kill, kill_rx) = oneshot::channel();
    let (exit_tx, exit) = watch::channel(None);
    tokio::spawn(write_lines(stdin, lines, close_rx, routing.clone()));
    let reader = tokio::spawn(read_lines(stdout, routing.clone()));
    tokio::spawn(supervise(child, reader, kill_rx, routing, exit_tx));
    Ok(Spawned {
        pid,
        close_stdin,
        kill,
        exit,
    })
}

async fn write_lines(
    mut stdin: ChildStdin,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    mut close: oneshot::Receiver<()>,
    routing: Arc<Routing>,
) {
    loop {
        let line = tokio::select! {
            biased;
            _ = &mut close => break,
            line = lines.recv() => match line {
                Some(line) => line,
                None => break,
            },
        };
        let written = async {
            stdin.write_all(&line).await?;
            stdin.flush().await
        };
        if let Err(e) = written.await {
            routing.fail_all(format!("could not write to the MCP server: {e}"));
            break;
        }
    }
    tracing::debug!("closing the server's stdin");
    // Dropping `stdin` closes the pipe: end of input for the server.
}

async fn read_lines(stdout: ChildStdout, routing: Arc<Routing>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => match serde_json::from_slice(&line) {
                Ok(message) => routing.dispatch(message),
                Err(e) => tracing::warn!(
                    "skipping a server output line that is not JSON ({e}): {:?}",
                    String::from_utf8_lossy(&line)
                ),
            },
            Err(e) => {
                tracing::warn!("could not read the server's output: {e}");
                break;
            }
        }
    }
    routing.fail_all("the MCP server closed its output".into());
}

async fn supervise(
    mut child: Child,
    reader: tokio::task::JoinHandle<()>,
    kill: oneshot::Receiver<()>,
    routing: Arc<Routing>,
    exit: watch::Sender<Option<Option<ExitStatus>>>,
) {
    let waited = tokio::select! {
        status = child.wait() => status,
        _ = kill => {
            tracing::debug!("killing the MCP server");
            let _ = child.start_kill();
            child.wait().await
        }
    };
    let status = match waited {
        Ok(status) => Some(status),
        Err(e) => {
            tracing::warn!("could not wait for the MCP server: {e}");
            None
        }
    };
    if tokio::time::timeout(DRAIN_AFTER_EXIT, reader)
        .await
        .is_err()
    {
        tracing::warn!("the server's output stayed open after it exited");
    }
    let reason = match status {
        Some(status) => format!("the MCP server exited ({status})"),
        None => "the MCP server exited".to_string(),
    };
    routing.fail_all(reason);
    let _ = exit.send(Some(status));
}
