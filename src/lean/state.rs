//! What every tool of the Lean host shares: the options, the runtimes, the statistics, and what
//! checkpoints of one workspace share.

use std::sync::Arc;

use super::checkpoint::Checkpoints;
use super::options::HostOptions;
use super::registry::Registry;
use super::stats::Stats;

/// The host's shared state.
#[derive(Debug)]
pub struct HostState {
    /// How the host was set up.
    pub options: HostOptions,
    /// One runtime per workspace.
    pub registry: Registry,
    /// Per workspace and per operation.
    pub stats: Arc<Stats>,
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
            checkpoints: Checkpoints::default(),
        }
    }
}
