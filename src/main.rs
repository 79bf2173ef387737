//! The `lean-beam-mcp` binary: parse flags, send operational logs to stderr, serve MCP on stdio.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use lean_beam_mcp::lean::{LeanHost, server_identity};
use lean_beam_mcp::mcp::transport::{log_to_stderr, termination};
use lean_beam_mcp::mcp::{DEFAULT_MAX_MESSAGE_BYTES, ServerOptions, serve_stdio_until};

/// A Model Context Protocol server for Lean 4 projects, on stdio.
///
/// Speaks MCP 2026-07-28 (stateless: start with server/discover, send _meta on every request)
/// and MCP 2025-11-25 (start with initialize). Reads newline-delimited JSON-RPC on stdin, writes
/// it on stdout, logs to stderr (filter with RUST_LOG, e.g. RUST_LOG=debug). Exits 0 when
/// stdin ends or on SIGTERM/SIGINT, after cancelling running calls.
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    log_to_stderr();
    let options = ServerOptions {
        identity: server_identity(),
        max_message_bytes: usize::try_from(cli.max_message_bytes).unwrap_or(usize::MAX),
        status_delay: Duration::from_millis(cli.status_delay_ms),
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
    let served = runtime.block_on(serve_stdio_until(LeanHost::new(), options, termination()));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lean-beam-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
