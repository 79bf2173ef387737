//! `bench-echo-rmcp`: the same `echo` tool on rmcp 3.11 (the official Rust MCP SDK), written the
//! way its documentation shows: `#[tool_router]` + `#[tool_handler]`, `Parameters<T>` in,
//! `Json<T>` out (structured content plus the same JSON as text), served on stdio with
//! `stdio_pipes()` (rmcp's non-blocking pipe transport, its fastest stdio path). rmcp serves both
//! revisions: `initialize` selects 2025-11-25, a `server/discover` opening or per-request
//! `_meta` selects 2026-07-28. With `BENCH_ECHO_YIELD=1` the tool awaits once (a yield) before
//! answering, like the `lean-beam-mcp` echo's variant.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Echo {
    text: String,
}

#[derive(Clone)]
struct EchoServer {
    tool_router: ToolRouter<Self>,
    yields: bool,
}

#[tool_router]
impl EchoServer {
    fn new() -> Self {
        EchoServer {
            tool_router: Self::tool_router(),
            yields: std::env::var_os("BENCH_ECHO_YIELD").is_some_and(|v| v == "1"),
        }
    }

    #[tool(
        description = "Returns its text argument.",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(echo): Parameters<Echo>) -> Json<Echo> {
        if self.yields {
            tokio::task::yield_now().await;
        }
        Json(echo)
    }
}

// The router built once in `new` (the macro's default, `Self::tool_router()`, rebuilds it on
// every call; the stored one is rmcp's faster, documented runtime-router form).
#[tool_handler(router = self.tool_router)]
impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let service = EchoServer::new()
        .serve(rmcp::transport::io::stdio_pipes())
        .await?;
    service.waiting().await?;
    Ok(())
}
