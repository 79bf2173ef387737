//! `lean-beam-mcp-test-host`: the MCP core served over stdio with the test host's tools.
//! Built only with `--features test-host`; the suites drive it like the real binary.
//!
//! Flags: `--max-message-bytes N`, `--status-delay-ms N`, `--max-running-calls N`,
//! `--max-waiting-calls N`,
//! `--shutdown-timeout-ms N`, `--cancel-grace-ms N`, `--hang-shutdown` (the host's shutdown never
//! returns). Gates: `LEAN_BEAM_MCP_TEST_GATES`. When `LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK` names a
//! file, the host's `shutdown` creates it, so a suite can see that end of input reached the host.
//! Exits with the status the real binary uses for the same ending.

mod host;

use std::process::ExitCode;
use std::time::Duration;

use lean_beam_mcp::mcp::transport::{log_to_stderr, termination_signals};
use lean_beam_mcp::mcp::{ServerIdentity, ServerOptions, serve_stdio_until};

fn flag(args: &[String], name: &str) -> Option<u64> {
    let at = args.iter().position(|a| a == name)?;
    Some(args.get(at + 1)?.parse().expect("numeric flag value"))
}

fn main() -> ExitCode {
    log_to_stderr();
    let args: Vec<String> = std::env::args().collect();
    let defaults = ServerOptions::new(ServerIdentity {
        name: "lean-beam-mcp-test-host".into(),
        version: "0.0.0-test".into(),
        instructions: None,
    });
    let millis = |name, default: Duration| flag(&args, name).map_or(default, Duration::from_millis);
    let options = ServerOptions {
        max_message_bytes: flag(&args, "--max-message-bytes")
            .map_or(defaults.max_message_bytes, |n| n as usize),
        status_delay: millis("--status-delay-ms", defaults.status_delay),
        max_running_calls: flag(&args, "--max-running-calls")
            .map_or(defaults.max_running_calls, |n| n as usize),
        max_waiting_calls: flag(&args, "--max-waiting-calls")
            .map_or(defaults.max_waiting_calls, |n| n as usize),
        shutdown_timeout: millis("--shutdown-timeout-ms", defaults.shutdown_timeout),
        cancel_grace: millis("--cancel-grace-ms", defaults.cancel_grace),
        // No heartbeats unless a test asks: a slow machine would add them to transcripts.
        heartbeat: millis("--heartbeat-ms", Duration::from_secs(3600)),
        ..defaults
    };
    let gates = std::env::var_os(host::GATE_DIR_ENV)
        .map(Into::into)
        .unwrap_or_else(std::env::temp_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mark = std::env::var_os("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK").map(Into::into);
    let mut host = host::TestHost::new(gates, mark);
    if args.iter().any(|a| a == "--hang-shutdown") {
        host = host.hanging_shutdown();
    }
    let exit = runtime
        .block_on(async {
            let stops = termination_signals();
            serve_stdio_until(host, options, stops).await
        })
        .expect("serve");
    runtime.shutdown_background();
    ExitCode::from(exit.code())
}
