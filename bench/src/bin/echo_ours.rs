//! `bench-echo-ours`: lean-beam-mcp's MCP core serving one `echo` tool, for the benchmark.
//!
//! The tool is injected through the public [`ToolHost`] seam and served with
//! [`serve_stdio_until`] exactly as `src/main.rs` serves the Lean host: the same options (16 MiB
//! line cap, 2 s status delay), the same multi-threaded runtime, stderr logging at `warn`, stdio
//! (pipes on the runtime), and the same termination signal. So the benchmark measures the core,
//! not a special path.

use std::process::ExitCode;

use lean_beam_mcp::lean::server_identity;
use lean_beam_mcp::mcp::transport::{log_to_stderr, termination_signals};
use lean_beam_mcp::mcp::{
    CallContext, Execution, ServerOptions, StatusNotice, ToolAnnotations, ToolError, ToolHost,
    ToolResult, ToolSpec, serve_stdio_until,
};
use serde_json::{Value, json};

/// One tool: `echo {text}` answers `{text}` (as `structuredContent` and as JSON text). With
/// `BENCH_ECHO_YIELD=1` the tool awaits once (a yield) before answering, as every real tool
/// awaits something: the call then takes the core's task path, not its answer-on-first-poll one.
struct EchoHost {
    yields: bool,
}

impl ToolHost for EchoHost {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "echo".into(),
            description: "Returns its text argument.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "text": { "type": "string" } },
                "required": ["text"],
                "additionalProperties": false,
            }),
            annotations: ToolAnnotations {
                read_only_hint: Some(true),
                ..ToolAnnotations::default()
            },
            execution: Execution::Concurrent,
            status: StatusNotice::Quiet,
        }]
    }

    async fn call(&self, _tool: &str, mut arguments: Value, _ctx: CallContext) -> ToolResult {
        if self.yields {
            tokio::task::yield_now().await;
        }
        // The schema guarantees an object with a string `text`.
        match arguments.get_mut("text").map(Value::take) {
            Some(text @ Value::String(_)) => Ok(json!({ "text": text })),
            _ => Err(ToolError::new("invalidInput", "text must be a string")),
        }
    }
}

fn main() -> ExitCode {
    log_to_stderr();
    let options = ServerOptions::new(server_identity());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bench-echo-ours: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let served = runtime.block_on(async {
        // Installed before anything is read: see `termination_signals`.
        let stops = termination_signals();
        let host = EchoHost {
            yields: std::env::var_os("BENCH_ECHO_YIELD").is_some_and(|v| v == "1"),
        };
        serve_stdio_until(host, options, stops).await
    });
    runtime.shutdown_background();
    match served {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            eprintln!("bench-echo-ours: {e}");
            ExitCode::FAILURE
        }
    }
}
