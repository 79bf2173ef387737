//! What every tool of the Lean host shares: the options, the runtimes, the statistics, the
//! proof handles, where Lean said positions are in a proof, and what checkpoints of one
//! workspace share.

use std::sync::Arc;

use crate::lean::lake::checkpoint::Checkpoints;
use crate::lean::options::HostOptions;
use crate::lean::speculation::handles::HandleBook;
use crate::lean::speculation::modes::ProofModes;
use crate::lean::stats::Stats;
use crate::lean::workspace::registry::Registry;

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
    /// What the saves of each workspace share.
    pub checkpoints: Checkpoints,
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
            checkpoints: Checkpoints::default(),
        }
    }
}
