//! Where a stdio server's operational logs go: stderr, never stdout (which carries only MCP
//! messages), filtered by `RUST_LOG` and at `warn` by default, so a well-behaved run writes
//! nothing there at all. Every binary that serves stdio calls [`log_to_stderr`] once at start.

/// Installs the process-wide `tracing` subscriber that writes to stderr without colours.
pub fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
}
