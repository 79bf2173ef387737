//! The `lean-beam-mcp` binary: parse flags, send operational logs to stderr, serve MCP on stdio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lean_beam_mcp::lean::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_LEAN_TIMEOUT, DEFAULT_MAX_DOCUMENTS, DEFAULT_MAX_TWINS,
    DEFAULT_MAX_WORKSPACES, HostOptions, LeanHost, server_identity,
};
use lean_beam_mcp::mcp::transport::{log_to_stderr, termination_signals};
use lean_beam_mcp::mcp::{
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RUNNING_CALLS, ServerOptions, serve_stdio_until,
};

/// A Model Context Protocol server for Lean 4 projects, on stdio.
///
/// Speaks MCP 2026-07-28 (stateless: start with server/discover, send _meta on every request)
/// and MCP 2025-11-25 (start with initialize). Reads newline-delimited JSON-RPC on stdin, writes
/// it on stdout, logs to stderr (filter with RUST_LOG, e.g. RUST_LOG=debug).
///
/// Exit status: 0 when stdin ends, stdout closes, or on SIGTERM/SIGINT, once running calls are
/// cancelled and Lean is shut down; 3 when that took longer than --shutdown-timeout-ms (unwritten
/// output is dropped and Lean killed); 130 or 143 when a SIGINT or SIGTERM arrived during that
/// shutdown and ended it at once; 4 on an internal failure; 2 for a bad command line; 1 when the
/// server could not start.
#[derive(Debug, Parser)]
#[command(name = "lean-beam-mcp", version, about, long_about)]
struct Cli {
    /// Longest input line accepted, in bytes; longer lines are discarded and answered with an error.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(64..=(1u64 << 32)))]
    max_message_bytes: u64,

    /// Milliseconds before a slow call without a progress token gets its one beam.status notice.
    #[arg(
        long,
        value_name = "MS",
        env = "LEAN_BEAM_MCP_TEST_STATUS_DELAY_MS",
        default_value_t = 2000
    )]
    status_delay_ms: u64,

    /// Tool calls that run at once; later calls wait their turn in order.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RUNNING_CALLS as u64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    max_running_calls: u64,

    /// Milliseconds shutdown may take (cancelling calls, stopping Lean, writing what is queued)
    /// before the server kills Lean, drops unwritten output and exits with status 3.
    #[arg(long, value_name = "MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    shutdown_timeout_ms: u64,

    /// The `lake` executable that runs `lake serve` (by default `lake` on PATH, as elan
    /// installs it).
    #[arg(
        long,
        value_name = "PATH",
        env = "LEAN_BEAM_LAKE",
        default_value = "lake"
    )]
    lake: PathBuf,

    /// Milliseconds any single wait for Lean may take (a request, a diagnostics barrier, the
    /// server's start, a checkpoint's `lake build`) before the call fails with leanTimeout;
    /// calls can be cancelled sooner.
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_LEAN_TIMEOUT_MS",
          default_value_t = DEFAULT_LEAN_TIMEOUT.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    lean_timeout_ms: u64,

    /// Hidden twin documents (each one a Lean worker, as heavy as the file's imports) a
    /// workspace keeps open for speculative runs; the least recently used idle one is closed
    /// to make room.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_TWINS as u64,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    max_twins: u64,

    /// Workspaces that keep a Lean server running at once; starting one more shuts down the
    /// least recently used idle one (the next call to it starts it again).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_WORKSPACES as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    max_workspaces: u64,

    /// Documents (each one a Lean worker) a workspace keeps open, twins aside; opening one more
    /// closes the least recently used (it reopens, at the same version, when next used).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DOCUMENTS as u64,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_documents: u64,

    /// Milliseconds a workspace's Lean server may sit unused before it is shut down (0: never);
    /// the next call starts it again.
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_IDLE_TIMEOUT_MS",
          default_value_t = DEFAULT_IDLE_TIMEOUT.as_millis() as u64)]
    idle_timeout_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    log_to_stderr();
    let options = ServerOptions {
        max_message_bytes: usize::try_from(cli.max_message_bytes).unwrap_or(usize::MAX),
        status_delay: Duration::from_millis(cli.status_delay_ms),
        max_running_calls: usize::try_from(cli.max_running_calls).unwrap_or(usize::MAX),
        shutdown_timeout: Duration::from_millis(cli.shutdown_timeout_ms),
        ..ServerOptions::new(server_identity())
    };
    // A relative path with a directory would otherwise be looked up from each workspace root
    // (`lake serve` starts there); a bare name is looked up on PATH.
    let lake = if cli.lake.is_relative() && cli.lake.components().count() > 1 {
        std::env::current_dir().map_or(cli.lake.clone(), |cwd| cwd.join(&cli.lake))
    } else {
        cli.lake
    };
    if let Err(e) = lean_beam_mcp::lean::adopt_orphans() {
        tracing::warn!("cannot adopt what a dead Lean server leaves behind: {e}");
    }
    let host_options = HostOptions {
        lake,
        lean_timeout: Duration::from_millis(cli.lean_timeout_ms),
        max_twins: usize::try_from(cli.max_twins).unwrap_or(usize::MAX),
        max_workspaces: usize::try_from(cli.max_workspaces).unwrap_or(usize::MAX),
        max_documents: usize::try_from(cli.max_documents).unwrap_or(usize::MAX),
        idle_timeout: (cli.idle_timeout_ms > 0).then(|| Duration::from_millis(cli.idle_timeout_ms)),
        ..HostOptions::default()
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("lean-beam-mcp: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        // Installed before anything is read: see `termination_signals`.
        let stops = termination_signals();
        serve_stdio_until(LeanHost::new(host_options), options, stops).await
    });
    // Whatever is still blocked (a writer facing a client that stopped reading) is abandoned.
    runtime.shutdown_background();
    match served {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            eprintln!("lean-beam-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
