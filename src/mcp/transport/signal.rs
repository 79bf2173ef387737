//! The other way a stdio server's life ends: termination signals from whoever started it.
//!
//! MCP clients close stdin first and send SIGTERM only if the server lingers; an interactive user
//! presses Ctrl-C. The first signal is treated as end of input (calls are cancelled, fences
//! finish, the host shuts its children down, all within the shutdown deadline); a signal once
//! shutdown has begun (a second one, or one after end of input) ends the process at once. [`termination_signals`] yields every signal as a [`Stop`].

use futures_util::Stream;

/// A request to stop, and the signal that carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}

impl Stop {
    /// The signal's number, as exit statuses report it (`128 + n`).
    pub fn signal_number(self) -> u8 {
        match self {
            Stop::Terminate => 15,
            Stop::Interrupt => 2,
        }
    }
}

/// Every SIGTERM and SIGINT this process receives from now on, in order (nothing where they
/// cannot be watched: then only end of input stops the server).
///
/// Must be called inside a Tokio runtime: the handlers are installed at once, before the server
/// reads anything, so no signal can arrive unwatched and take the default action.
pub fn termination_signals() -> impl Stream<Item = Stop> + Send + Unpin + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let watched = match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => Some((term, int)),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "cannot watch termination signals; only end of input stops the server");
                None
            }
        };
        Box::pin(futures_util::stream::unfold(
            watched,
            |watched| async move {
                let (mut term, mut int) = watched?;
                let stop = tokio::select! {
                    Some(()) = term.recv() => Stop::Terminate,
                    Some(()) = int.recv() => Stop::Interrupt,
                    else => return None,
                };
                tracing::debug!(?stop, "termination signal received");
                Some((stop, Some((term, int))))
            },
        ))
    }
    #[cfg(not(unix))]
    {
        Box::pin(futures_util::stream::unfold((), |()| async move {
            tokio::signal::ctrl_c().await.ok()?;
            Some((Stop::Interrupt, ()))
        }))
    }
}
