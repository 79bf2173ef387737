//! `lean-beam-mcp-test-host`: the MCP core served over stdio with the test host's tools.
//! Built only with `--features test-host`; the suites drive it like the real binary.
//!
//! Flags: `--max-message-bytes N`, `--status-delay-ms N`. Gates: `LEAN_BEAM_MCP_TEST_GATES`.
//! When `LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK` names a file, the host's `shutdown` creates it,
//! so a suite can see that end of input reached the host.

mod host;

use std::time::Duration;

use lean_beam_mcp::mcp::transport::{log_to_stderr, termination};
use lean_beam_mcp::mcp::{
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_STATUS_DELAY, ServerIdentity, ServerOptions,
    serve_stdio_until,
};

fn flag(args: &[String], name: &str) -> Option<u64> {
    let at = args.iter().position(|a| a == name)?;
    Some(args.get(at + 1)?.parse().expect("numeric flag value"))
}

fn main() {
    log_to_stderr();
    let args: Vec<String> = std::env::args().collect();
    let options = ServerOptions {
        identity: ServerIdentity {
            name: "lean-beam-mcp-test-host".into(),
            version: "0.0.0-test".into(),
            instructions: None,
        },
        max_message_bytes: flag(&args, "--max-message-bytes")
            .map_or(DEFAULT_MAX_MESSAGE_BYTES, |n| n as usize),
        status_delay: flag(&args, "--status-delay-ms")
            .map_or(DEFAULT_STATUS_DELAY, Duration::from_millis),
    };
    let gates = std::env::var_os(host::GATE_DIR_ENV)
        .map(Into::into)
        .unwrap_or_else(std::env::temp_dir);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mark = std::env::var_os("LEAN_BEAM_MCP_TEST_SHUTDOWN_MARK").map(Into::into);
    let host = host::TestHost::new(gates, mark);
    runtime
        .block_on(serve_stdio_until(host, options, termination()))
        .expect("serve");
}
