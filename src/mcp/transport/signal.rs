//! The other way a stdio server's life ends: a termination signal from whoever started it.
//!
//! MCP clients close stdin first and send SIGTERM only if the server lingers; an interactive user
//! presses Ctrl-C. Either is treated as end of input, so calls are cancelled, fences finish and
//! the host shuts its children down before the process exits.

/// Completes on the first SIGTERM or SIGINT (or never, where they cannot be watched).
pub async fn termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::debug!("SIGTERM received"),
                    _ = int.recv() => tracing::debug!("SIGINT received"),
                }
            }
            _ => {
                tracing::warn!(
                    "cannot watch termination signals; only end of input stops the server"
                );
                std::future::pending::<()>().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await
        }
    }
}
