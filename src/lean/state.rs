//! What every tool of the Lean host shares: the options, the runtimes, the statistics, the
//! proof handles, where Lean said positions are in a proof, the verdicts Lean already gave,
//! what checkpoints of one workspace share, and the certification checker's answers kept; and
//! what the process-wide tools read of them, so no tool reads another's: the server's identity (`beam_version`, the feedback report) and the
//! statistics with each workspace's runtime (`beam_stats`, the feedback report). Reading never
//! starts Lean.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::lean::certify::answers::Answers;
use crate::lean::lake::checkpoint::{Checkpoints, Lake};
use crate::lean::options::HostOptions;
use crate::lean::speculation::handles::HandleBook;
use crate::lean::speculation::modes::ProofModes;
use crate::lean::speculation::verdicts::VerdictCache;
use crate::lean::stats::Stats;
use crate::lean::workspace::registry::Registry;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::mcp::MODERN_REVISION;

/// The server's implementation name.
pub const SERVER_NAME: &str = "lean-beam-mcp";

/// The server's version.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The host's shared state.
#[derive(Debug)]
pub struct HostState {
    /// How the host was set up.
    pub options: HostOptions,
    /// One runtime per workspace.
    pub registry: Registry,
    /// Per workspace and per operation.
    pub stats: Arc<Stats>,
    /// The proof handles this process made.
    pub handles: HandleBook,
    /// Where Lean said positions are in a proof, per document version.
    pub modes: ProofModes,
    /// The verdicts Lean already gave to speculative runs and edits.
    pub verdicts: VerdictCache,
    /// What the saves of each workspace share.
    pub checkpoints: Checkpoints,
    /// The certification checker's answers kept.
    pub answers: Answers,
}

impl HostState {
    /// A host with no runtime started.
    pub fn new(options: HostOptions) -> Self {
        let stats = Arc::new(Stats::default());
        HostState {
            registry: Registry::new(options.clone(), stats.clone()),
            stats,
            options,
            handles: HandleBook::new(),
            modes: ProofModes::default(),
            verdicts: VerdictCache::default(),
            checkpoints: Checkpoints::default(),
            answers: Answers::default(),
        }
    }

    /// How this host runs Lake in the workspace at `root`.
    pub fn lake<'a>(&'a self, root: &'a WorkspaceRoot) -> Lake<'a> {
        Lake {
            lake: &self.options.lake,
            timeout: self.options.lean_timeout,
            registry: &self.registry,
            root,
        }
    }

    /// The server's identity, as structured content.
    pub fn identity(&self) -> Value {
        let runtime_active = self.registry.is_active();
        let mut identity = json!({
            "name": SERVER_NAME,
            "version": SERVER_VERSION,
            "mcp_protocol": MODERN_REVISION,
            "runtime_active": runtime_active,
            "build": {
                "target": env!("LEAN_BEAM_MCP_TARGET"),
                "profile": env!("LEAN_BEAM_MCP_PROFILE"),
                "rustc": option_env!("LEAN_BEAM_MCP_RUSTC"),
            },
        });
        if let Ok(binary) = std::env::current_exe() {
            identity["server_binary"] = json!(binary.display().to_string());
        }
        if let Some(commit) = option_env!("LEAN_BEAM_MCP_SOURCE_COMMIT") {
            identity["source_commit"] = json!(commit);
            identity["source_dirty"] =
                json!(option_env!("LEAN_BEAM_MCP_SOURCE_DIRTY") == Some("true"));
        }
        identity
    }

    /// The statistics, each workspace with its runtime's state (`beam_stats`).
    pub fn stats_report(&self) -> Value {
        let uptime = self
            .registry
            .first_start()
            .map_or(0, |start| start.elapsed().as_millis() as u64);
        // Taken before the statistics are locked: the registry reports to them under its own lock.
        let running = self.registry.running();
        let session = |key: &str| match running.iter().find(|r| r.root().key() == key) {
            Some(runtime) => {
                let (documents, twins) = runtime.documents().mirror().open_counts();
                json!({
                    "active": runtime.is_alive(),
                    "workspaceId": key,
                    "root": runtime.root().path().display().to_string(),
                    "epoch": runtime.epoch(),
                    "openDocCount": documents,
                    "twinCount": twins,
                    "documentsClosedForBudget": runtime.documents().closed_for_budget(),
                    "lspMessagesSent": runtime.server().messages_sent(),
                })
            }
            None => json!({"active": false}),
        };
        let workspaces = self.stats.render(session);
        json!({"uptimeMs": uptime, "workspaces": workspaces})
    }
}
