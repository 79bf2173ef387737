//! The `lean-beam-mcp-bridge` command line, kept in the library so tests can run it in-process
//! (the binary is a one-line wrapper around [`run`]).
//!
//! Contract:
//! 1. `lean-beam-mcp-bridge --mode legacy|modern [--port N] [--ready-file PATH] -- <server> [args...]`.
//!    Usage errors print clap's message and return 2.
//! 2. Termination signals (SIGTERM, SIGINT) are watched before anything is announced. Once the
//!    bridge listens, `{"url":"http://127.0.0.1:PORT/mcp"}` is written to the ready file
//!    atomically (a temporary file renamed into place) and printed on stdout.
//! 3. On a termination signal: stop listening, close the server's stdin, wait for it (killing it
//!    after 10 s) and return 0 if it exited successfully, 1 otherwise. If the server exits on its
//!    own, waiting requests have been answered 500 -32603; the bridge stops and returns 1.
//! 4. Logs go to stderr, filtered by `RUST_LOG` (default `warn`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;
use serde_json::json;

use crate::{Bridge, BridgeConfig, Mode};

/// A test-only Streamable HTTP bridge in front of a stdio MCP server.
///
/// Binds 127.0.0.1, serves POST /mcp, and forwards each JSON-RPC message to the server it spawns,
/// applying the Streamable HTTP rules of the chosen MCP era. Never a deployment.
#[derive(Debug, Parser)]
#[command(name = "lean-beam-mcp-bridge", version, about, long_about)]
struct Cli {
    /// Which MCP era's HTTP rules apply.
    #[arg(long, value_enum)]
    mode: Mode,

    /// The port to bind on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// Where to write {"url": ...} once listening.
    #[arg(long, value_name = "PATH")]
    ready_file: Option<PathBuf>,

    /// The stdio server command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "SERVER")]
    server: Vec<OsString>,
}

/// Runs the bridge with `args` (the first is the program name); returns the exit code.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("lean-beam-mcp-bridge: could not start the async runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(serve(cli))
}

async fn serve(cli: Cli) -> u8 {
    let termination = match Termination::watch() {
        Ok(termination) => termination,
        Err(e) => {
            eprintln!("lean-beam-mcp-bridge: cannot watch termination signals: {e}");
            return 1;
        }
    };
    let (program, args) = cli.server.split_first().expect("clap requires a command");
    let mut server = Command::new(program);
    server.args(args);
    let mut config = BridgeConfig::new(cli.mode, server);
    config.port = cli.port;
    let handle = match Bridge::start(config).await {
        Ok(handle) => handle,
        Err(e) => {
            eprintln!(
                "lean-beam-mcp-bridge: could not start ({}): {e}",
                Path::new(program).display()
            );
            return 1;
        }
    };
    let ready = json!({"url": handle.url()}).to_string();
    if let Some(path) = &cli.ready_file
        && let Err(e) = write_atomically(path, &ready)
    {
        eprintln!(
            "lean-beam-mcp-bridge: could not write the ready file {}: {e}",
            path.display()
        );
        return 1;
    }
    println!("{ready}");
    let signalled = tokio::select! {
        () = termination.recv() => true,
        _ = handle.server_exited() => false,
    };
    if signalled {
        tracing::info!("termination signal: closing the server's input");
        return match handle.shutdown().await {
            Some(status) if status.success() => 0,
            status => {
                eprintln!("lean-beam-mcp-bridge: the MCP server ended badly: {status:?}");
                1
            }
        };
    }
    let status = handle.shutdown().await;
    eprintln!(
        "lean-beam-mcp-bridge: the MCP server exited on its own ({}); stopping",
        status.map_or_else(|| "status unknown".to_string(), |s| s.to_string())
    );
    1
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    std::fs::write(&temporary, format!("{text}\n"))?;
    std::fs::rename(&temporary, path)
}

/// SIGTERM and SIGINT, registered up front so a signal sent after the ready file is never lost.
struct Termination {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
}

impl Termination {
    fn watch() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Termination {
                term: signal(SignalKind::terminate())?,
                int: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Termination {})
        }
    }

    async fn recv(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await
            }
        }
    }
}
