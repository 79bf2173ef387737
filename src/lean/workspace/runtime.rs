//! One Lean runtime per workspace: its `lake serve` (`server`), the documents it has open
//! (`session`), and the configuration it loaded.
//!
//! Contract:
//! 1. [`Runtime::start`] starts the server (see `server`) with a mirror of its own whose
//!    versions continue the workspace's [`VersionMemory`], then records the Lake configuration
//!    as it stands after the handshake (Lake may write its manifest while it loads the
//!    workspace: what counts as a change is what happens after that): its stamp, and in the same
//!    read its hash and toolchain for receipts ([`Runtime::lake_config`]). With tracing on, each
//!    start writes its LSP traffic and stderr to a trace stream of its own (`trace_prefix`,
//!    then the epoch).
//! 2. [`Runtime::retire`] ends it for a reason that is not Lean's failure: work in flight
//!    gets that reason as its error (see `server`).
//! 3. [`Runtime::shutdown`] ends its documents first (`DocumentSet::end`: calls still using them
//!    get the runtime's end, and its twin files are removed), then the server; [`Runtime::end`]
//!    does the first part alone, without waiting, for a host that is killing everything. Nothing
//!    of a runtime outlives it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::config::{CONFIG_FILES, ConfigStamp};
use super::root::WorkspaceRoot;
use crate::lean::error::HostError;
use crate::lean::options::HostOptions;
use crate::lean::server::process::GroupKiller;
use crate::lean::server::{LeanServer, trace_prefix};
use crate::lean::session::fingerprint::LakeConfig;
use crate::lean::session::mirror::{Mirror, VersionMemory};
use crate::lean::session::{DocumentSet, Limits};

/// A running `lake serve` for one workspace.
#[derive(Debug)]
pub struct Runtime {
    root: WorkspaceRoot,
    epoch: u64,
    server: Arc<LeanServer>,
    documents: DocumentSet,
    config: ConfigStamp,
}

impl Runtime {
    /// Starts `lake serve` in `root` (see the contract). `on_spawn` gets the process group's
    /// killer as soon as the process exists; `abort` stops a start still in its handshake.
    pub async fn start(
        root: WorkspaceRoot,
        epoch: u64,
        options: &HostOptions,
        memory: Arc<VersionMemory>,
        on_spawn: impl FnOnce(GroupKiller),
        abort: &CancellationToken,
    ) -> Result<Runtime, HostError> {
        let trace = options
            .trace
            .as_ref()
            .map(|dir| dir.stream(&format!("{}{epoch}", trace_prefix(root.path()))));
        let mirror = Arc::new(Mirror::new(memory));
        let server =
            LeanServer::start(root.path(), options, trace, mirror.clone(), on_spawn, abort).await?;
        let server = Arc::new(server);
        let limits = Limits {
            documents: options.max_documents,
            twins: options.max_twins,
            wait: options.lean_timeout,
            crash_grace: options.crash_grace,
        };
        let lake_config = LakeConfig::read(root.path(), &CONFIG_FILES);
        let config = ConfigStamp::of(&lake_config);
        let documents = DocumentSet::new(mirror, server.clone(), limits, lake_config);
        Ok(Runtime {
            root,
            epoch,
            server,
            documents,
            config,
        })
    }

    /// The workspace.
    pub fn root(&self) -> &WorkspaceRoot {
        &self.root
    }

    /// Which start of this workspace's runtime this is (1 for the first).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// What Lean has open.
    pub fn documents(&self) -> &DocumentSet {
        &self.documents
    }

    /// The Lake configuration it loaded, as receipts name it.
    pub fn lake_config(&self) -> &LakeConfig {
        self.documents.lake_config()
    }

    /// The server.
    pub fn server(&self) -> &LeanServer {
        &self.server
    }

    /// Whether the server is still there.
    pub fn is_alive(&self) -> bool {
        self.server.is_alive()
    }

    /// The configuration files that changed since it started.
    pub fn config_changes(&self) -> Vec<&'static str> {
        ConfigStamp::read(self.root.path()).changed_since(&self.config)
    }

    /// Ends it for `why`, which work in flight gets as its error (see the contract).
    pub fn retire(&self, why: HostError) {
        self.server.retire(why);
    }

    /// Ends the documents, then asks Lean to shut down within the grace and kills what is left.
    pub async fn shutdown(&self) {
        self.end();
        self.server.shutdown().await;
    }

    /// Ends the documents (see the contract), never waiting.
    pub fn end(&self) {
        let why = self.server.retirement().cloned().unwrap_or_else(|| {
            HostError::server_exited("the workspace's Lean server was shut down", Vec::new())
        });
        self.documents.end(why);
    }

    /// Kills the process group now.
    pub fn kill(&self) {
        self.server.kill();
    }
}
