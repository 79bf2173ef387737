//! Serving MCP on this process's stdin and stdout: the default way the binary runs.
//!
//! Contract: operational logs go to stderr only; what a dead Lean server left behind is adopted
//! before anything is read; with tracing on, the MCP traffic is written to the stream `mcp` of
//! the trace directory and each Lean server's to a stream of its own. Started on a terminal
//! (stdin is a TTY), it says on stderr, in one line, that it speaks MCP and how to register it,
//! then serves as ever. The exit status is the server's ending (see `--help`), or 1 when it
//! could not start.

use std::process::ExitCode;
use std::sync::Arc;

use super::args::ServerArgs;
use crate::lean::{LeanHost, server_identity};
use crate::mcp::serve_stdio_until;
use crate::mcp::transport::{TapHandle, termination_signals};
use crate::trace::McpTraffic;

/// What a person who started the server in a terminal reads: it is waiting for a client.
pub const ON_A_TERMINAL: &str = "lean-beam-mcp speaks MCP on stdio and is waiting for a \
client's JSON-RPC here. To use it, register it with your client: `lean-beam-mcp config \
<claude|codex|vscode|cursor> --write`; to check Lean through it: `lean-beam-mcp --self-check \
FILE.lean`. Ctrl-D ends it.";

/// Serves until the client is done (see the contract).
pub fn serve(args: &ServerArgs) -> ExitCode {
    if let Err(e) = crate::lean::tools::served(args.tool_selection()) {
        eprintln!("lean-beam-mcp: {e}");
        return ExitCode::from(2);
    }
    // A client never gives the server a terminal: a person started it by hand. It keeps serving
    // (a person may type JSON-RPC), but says once what it is.
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{ON_A_TERMINAL}");
    }
    let trace = match args.trace() {
        Ok(trace) => trace,
        Err(e) => {
            eprintln!("lean-beam-mcp: cannot use the trace directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let tap: TapHandle = trace
        .as_ref()
        .map(|trace| Arc::new(McpTraffic(trace.stream("mcp"))) as _);
    let options = args.server_options(server_identity(), tap);
    if let Err(e) = crate::lean::adopt_orphans() {
        tracing::warn!("cannot adopt what a dead Lean server leaves behind: {e}");
    }
    let host_options = args.host_options(trace);
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
