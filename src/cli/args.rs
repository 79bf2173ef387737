//! The command line: every flag, the environment variable that can set it, and its default, in
//! one place, from which `--help` and CONTRIBUTING.md's flag table are both made.
//!
//! Contract: a flag that an environment variable can set says so (`env`), and every flag with a
//! default declares it here (`default_value_t`), never in code that reads the flag later; so
//! `--help` shows both, and `tests/readme.rs` holds CONTRIBUTING.md's table to this declaration.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::lean::{
    DEFAULT_CRASH_GRACE, DEFAULT_IDLE_TIMEOUT, DEFAULT_LEAN_TIMEOUT, DEFAULT_MAX_DOCUMENTS,
    DEFAULT_MAX_TWINS, DEFAULT_MAX_WORKSPACES, HostOptions,
};
use crate::mcp::transport::TapHandle;
use crate::mcp::{
    DEFAULT_HEARTBEAT, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RUNNING_CALLS, ServerOptions,
};
use crate::trace::{DEFAULT_TRACE_MAX_BYTES, TraceDir};

/// What `--help` says after the flags: the environment and the exit statuses.
const AFTER_HELP: &str = "\
Environment: every flag marked [env: NAME=] can also be set by that variable (the flag wins); \
RUST_LOG filters the operational logs on stderr (default: warn; e.g. RUST_LOG=debug).

Exit status, serving: 0 when stdin ends, stdout closes, or on SIGTERM/SIGINT, once running calls \
are cancelled and Lean is shut down; 3 when that took longer than --shutdown-timeout-ms (unwritten \
output is dropped and Lean killed); 130 or 143 when a SIGINT or SIGTERM arrived during that \
shutdown and ended it at once; 4 on an internal failure; 2 for a bad command line; 1 when the \
server could not start.
Exit status, --self-check: 0 when every phase passed, 1 when one failed or the check could not \
run. Exit status, config: 0, or 2 for a bad command line.";

/// What `--help` says after the flags: [`AFTER_HELP`], then what the receipts on Lean results
/// and lean_try_edit's verdicts mean, in the words of those tools' descriptions.
fn after_help() -> String {
    format!(
        "{AFTER_HELP}\n\nReceipts: every Lean result about a document carries a receipt, and \
         lean_check_receipt says, without Lean, whether it still describes the files. {}\n\n\
         lean_try_edit verdicts, one per candidate edit: {}.",
        crate::lean::tools::receipts::STATES_EXPLAINED,
        crate::lean::tools::try_edit::VERDICTS_EXPLAINED,
    )
}

/// A Model Context Protocol server for Lean 4 projects, on stdio.
///
/// Speaks MCP 2026-07-28 (stateless: start with server/discover, send _meta on every request)
/// and MCP 2025-11-25 (start with initialize). Reads newline-delimited JSON-RPC on stdin, writes
/// it on stdout, logs to stderr. It drives your own Lean: `lake serve` (as elan installs it),
/// started on first use in each project a call names.
///
/// Set-up: `lean-beam-mcp config <client>` prints what registers this binary with an MCP client;
/// `lean-beam-mcp --self-check <file.lean>` checks that Lean works through it on one file.
#[derive(Debug, Parser)]
#[command(name = "lean-beam-mcp", version, about, long_about, after_help = after_help())]
pub struct Cli {
    /// What to do instead of serving.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// How the server runs (also what the self-check runs with).
    #[command(flatten)]
    pub server: ServerArgs,

    /// Check the set-up on FILE (a .lean file of a Lake project) instead of serving: start Lean,
    /// sync the file, ask for hover and goals at its first tactic, run a speculative probe
    /// there, close it; print each phase's result and time, and what to do when one fails.
    #[arg(long, value_name = "FILE")]
    pub self_check: Option<PathBuf>,

    /// Milliseconds each self-check phase may take (it is also the Lean timeout during the
    /// check).
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_SELF_CHECK_TIMEOUT_MS",
          default_value_t = 120_000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub self_check_timeout_ms: u64,
}

/// What to do instead of serving.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a ready-to-paste configuration that registers this binary with an MCP client. Only
    /// the configuration goes to stdout (pipe or redirect it); where to put it goes to stderr.
    Config {
        /// The client: claude (Claude Code), codex (Codex), vscode (VS Code), cursor (Cursor),
        /// json (any client that reads an `mcpServers` JSON file).
        #[arg(value_enum)]
        client: Client,
        /// Merge the entry into the client's own configuration file instead of printing it:
        /// atomically, keeping every other entry (and a TOML file's comments and layout), with
        /// the old file kept as `<file>.bak`; running it again replaces the entry.
        #[arg(long)]
        write: bool,
        /// Whose configuration: `user` (every project of yours; the binary by its absolute
        /// path) or `project` (the file in the current directory, shared with whoever shares
        /// the project; the command `lean-beam-mcp` as found on PATH).
        #[arg(long, value_enum, default_value_t = Scope::User)]
        scope: Scope,
        /// Server flags to write into the configuration, after `--` (for example
        /// `-- --trace-dir /tmp/lean-beam-traces`); they are checked now.
        #[arg(last = true, value_name = "SERVER_FLAGS")]
        server_flags: Vec<String>,
    },
}

/// The clients `config` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// VS Code.
    Vscode,
    /// Cursor.
    Cursor,
    /// Any client that reads an `mcpServers` JSON file.
    Json,
}

/// Whose configuration `config` writes or prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// Yours, for every project.
    User,
    /// The project's, in the current directory.
    Project,
}

/// How the server runs.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// Longest input line accepted, in bytes (16 MiB by default); longer lines are discarded
    /// and answered with an error.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES as u64,
          value_parser = clap::value_parser!(u64).range(64..=(1u64 << 32)))]
    pub max_message_bytes: u64,

    /// Milliseconds before a slow call without a progress token gets its one beam.status notice.
    #[arg(
        long,
        value_name = "MS",
        env = "LEAN_BEAM_MCP_TEST_STATUS_DELAY_MS",
        default_value_t = 2000
    )]
    pub status_delay_ms: u64,

    /// Milliseconds a call with a progress token may go without a progress notification while
    /// it waits (on Lean, or for its turn) before the server sends one saying it is still
    /// working, so a client that resets its timeout on progress keeps waiting (the default
    /// keeps every gap under the 10 s such a client should hear within).
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_HEARTBEAT_MS",
          default_value_t = DEFAULT_HEARTBEAT.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub heartbeat_ms: u64,

    /// Tool calls that run at once; later calls wait their turn in order.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RUNNING_CALLS as u64,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_running_calls: u64,

    /// Milliseconds shutdown may take (cancelling calls, stopping Lean, writing what is queued)
    /// before the server kills Lean, drops unwritten output and exits with status 3.
    #[arg(long, value_name = "MS", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub shutdown_timeout_ms: u64,

    /// The `lake` executable that runs `lake serve` (by default `lake` on PATH, as elan
    /// installs it).
    #[arg(
        long,
        value_name = "PATH",
        env = "LEAN_BEAM_LAKE",
        default_value = "lake"
    )]
    pub lake: PathBuf,

    /// Milliseconds any single wait for Lean may take (a request, a diagnostics barrier, the
    /// server's start, a checkpoint's `lake build`) before the call fails with leanTimeout;
    /// calls can be cancelled sooner.
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_LEAN_TIMEOUT_MS",
          default_value_t = DEFAULT_LEAN_TIMEOUT.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub lean_timeout_ms: u64,

    /// Hidden twin documents (each one a Lean worker, as heavy as the file's imports) a
    /// workspace keeps open for speculative runs and lean_try_edit candidates, all files
    /// together (one file may have several, so its runs go side by side); the least recently
    /// used idle one is closed to make room, and a run that finds every twin in use waits for
    /// one.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_TWINS as u64,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub max_twins: u64,

    /// Workspaces that keep a Lean server running at once; starting one more shuts down the
    /// least recently used idle one (the next call to it starts it again).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_WORKSPACES as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub max_workspaces: u64,

    /// Documents (each one a Lean worker) a workspace keeps open, twins aside; opening one more
    /// closes the least recently used one no call is using (it reopens, at the same version,
    /// when next used), and a call that finds every one in use waits for one.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DOCUMENTS as u64,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_documents: u64,

    /// Milliseconds a fatal report from Lean waits for the error that explains it (a broken
    /// header) before the document's worker counts as crashed and is revived.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_CRASH_GRACE.as_millis() as u64,
          value_parser = clap::value_parser!(u64).range(0..=86_400_000))]
    pub crash_grace_ms: u64,

    /// Milliseconds a workspace's Lean server may sit unused before it is shut down (0: never);
    /// the next call starts it again.
    #[arg(long, value_name = "MS", env = "LEAN_BEAM_IDLE_TIMEOUT_MS",
          default_value_t = DEFAULT_IDLE_TIMEOUT.as_millis() as u64)]
    pub idle_timeout_ms: u64,

    /// Write the MCP traffic and each Lean server's LSP traffic, with timestamps, to files in
    /// DIR (created if needed) to attach to a bug report; beam_feedback_report names them. Off
    /// when unset.
    #[arg(long, value_name = "DIR", env = "LEAN_BEAM_TRACE_DIR")]
    pub trace_dir: Option<PathBuf>,

    /// Bytes the trace files in --trace-dir may hold (64 MiB by default): each file rotates at
    /// an eighth of it, and the oldest files no server is writing are deleted to stay within it.
    #[arg(long, value_name = "BYTES", env = "LEAN_BEAM_TRACE_MAX_BYTES",
          default_value_t = DEFAULT_TRACE_MAX_BYTES,
          value_parser = clap::value_parser!(u64).range(32 * 1024..))]
    pub trace_max_bytes: u64,

    /// Serve only these tools (comma-separated names; by default every tool). For a proving
    /// agent: lean_sync,lean_goals,lean_hover,lean_todo,lean_run_at,lean_try_edit. An unknown
    /// name stops the server at startup.
    #[arg(
        long,
        value_name = "NAMES",
        env = "LEAN_BEAM_TOOLS",
        value_delimiter = ','
    )]
    pub tools: Vec<String>,

    /// Make `diagnostics_in_result` default to true: lean_sync and lean_refresh return the
    /// diagnostics themselves, for clients that do not show the model log notifications
    /// (`config` sets it for Claude Code, Codex and Cursor).
    #[arg(long)]
    pub diagnostics_in_result: bool,

    /// The default `diagnostic_scope`: `errors`, or `all` to include warnings and information.
    #[arg(long, value_enum, value_name = "SCOPE", default_value_t = DiagnosticScope::Errors)]
    pub diagnostic_scope: DiagnosticScope,
}

/// Which diagnostics results and live logs include by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticScope {
    /// Errors only.
    Errors,
    /// Every severity.
    All,
}

impl ServerArgs {
    /// The MCP core's options, for a server that calls itself `identity`, with `tap` shown the
    /// traffic.
    pub fn server_options(
        &self,
        identity: crate::mcp::ServerIdentity,
        tap: TapHandle,
    ) -> ServerOptions {
        ServerOptions {
            max_message_bytes: usize::try_from(self.max_message_bytes).unwrap_or(usize::MAX),
            status_delay: Duration::from_millis(self.status_delay_ms),
            heartbeat: Duration::from_millis(self.heartbeat_ms),
            max_running_calls: usize::try_from(self.max_running_calls).unwrap_or(usize::MAX),
            shutdown_timeout: Duration::from_millis(self.shutdown_timeout_ms),
            tap,
            ..ServerOptions::new(identity)
        }
    }

    /// The tools `--tools` names, if it names any.
    pub fn tool_selection(&self) -> Option<&[String]> {
        (!self.tools.is_empty()).then_some(self.tools.as_slice())
    }

    /// The Lean host's options, tracing to `trace` if given.
    pub fn host_options(&self, trace: Option<TraceDir>) -> HostOptions {
        // A relative path with a directory would otherwise be looked up from each workspace root
        // (`lake serve` starts there); a bare name is looked up on PATH.
        let lake = if self.lake.is_relative() && self.lake.components().count() > 1 {
            std::env::current_dir().map_or(self.lake.clone(), |cwd| cwd.join(&self.lake))
        } else {
            self.lake.clone()
        };
        HostOptions {
            lake,
            lean_timeout: Duration::from_millis(self.lean_timeout_ms),
            max_twins: usize::try_from(self.max_twins).unwrap_or(usize::MAX),
            max_workspaces: usize::try_from(self.max_workspaces).unwrap_or(usize::MAX),
            max_documents: usize::try_from(self.max_documents).unwrap_or(usize::MAX),
            crash_grace: Duration::from_millis(self.crash_grace_ms),
            idle_timeout: (self.idle_timeout_ms > 0)
                .then(|| Duration::from_millis(self.idle_timeout_ms)),
            trace,
            tools: self.tool_selection().map(<[String]>::to_vec),
            diagnostics_in_result: self.diagnostics_in_result,
            diagnostic_scope: match self.diagnostic_scope {
                DiagnosticScope::Errors => "errors",
                DiagnosticScope::All => "all",
            },
            ..HostOptions::default()
        }
    }

    /// The trace directory, opened, when tracing is on.
    pub fn trace(&self) -> std::io::Result<Option<TraceDir>> {
        self.trace_dir
            .as_deref()
            .map(|dir| TraceDir::open(dir, self.trace_max_bytes))
            .transpose()
    }
}
