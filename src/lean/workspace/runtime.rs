//! One Lean runtime per workspace: a `lake serve` process, the LSP client over it, the document
//! mirror, and the operations the tools are built from.
//!
//! Contract:
//! 1. [`Runtime::start`] spawns `lake serve` in the root and completes the strict handshake
//!    (`initialize`, then `initialized`; Lean's `register_lean_watcher` is answered by the
//!    client) within the Lean timeout. A failure is `runtimeSetup` with `data.reason`
//!    (`lakeNotFound`, `lakeNotExecutable`, `spawnFailed`, `handshakeExited`,
//!    `handshakeRefused` or `handshakeTimeout`) and, once Lean ran, its stderr tail; it leaves
//!    no process behind. With tracing on, each start writes its LSP traffic and stderr to a
//!    trace stream of its own (see [`trace_prefix`]).
//! 2. Documents are read from disk on every use ([`Runtime::sync_document`]): the first use sends
//!    `didOpen` with an explicit `dependencyBuildMode` (`once`: out-of-date imports are built on
//!    open, and never again behind the caller's back), a changed text sends `didChange` (full
//!    text) then `didSave` (so Lean tells importers their imports are stale), and an unchanged
//!    text sends nothing. Updates (reading included) are serialized, so versions on the wire
//!    follow the mirror and the last text read is the one Lean keeps. Beyond `--max-documents`
//!    open files, the least recently synced one is closed (with its twin); it reopens, at the
//!    same version, when next used.
//! 3. [`Runtime::request`] waits for Lean within the Lean timeout and is cancellable: dropping it
//!    (a cancelled call) sends `$/cancelRequest`. Lean's errors keep their meaning
//!    (`HostError::from_lean`); a connection that closes is `workerExited` with the stderr tail,
//!    and the process group is killed as soon as the connection closes, for whatever reason.
//!    A document whose worker crashed (-32901/-32902, or a fatal `fileProgress` that no error
//!    explains) is revived with a version-bumped `didChange` of the same text, once, and only
//!    if nobody changed or revived it since, and the request is tried once more.
//! 4. [`Runtime::shutdown`] asks Lean to shut down and exit within the grace, then kills the
//!    process group; [`Runtime::kill`] kills it at once. Nothing of a runtime outlives it.
//! 5. Artifacts rewritten on disk ([`Runtime::artifacts_rewritten`]) are told to Lean in the
//!    serialized update order: `didSave` of the source, then the `.ilean` as a watched change.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio_util::sync::CancellationToken;

use crate::lean::error::{HostError, code};
use crate::lean::options::HostOptions;
use crate::lean::server::lsp::{LspClient, LspError};
use crate::lean::server::process::{GroupKiller, LeanProcess, StderrTail};
use crate::lean::session::mirror::{Document, Documents, VersionMemory};
use crate::lean::speculation::modes::ProofModes;
use crate::lean::speculation::twins::{TwinDocument, TwinPool};
use crate::lean::workspace::root::WorkspaceRoot;

/// How long an error report waits for a dead server's last stderr lines.
const STDERR_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The files whose change means the workspace must be reloaded.
pub const CONFIG_FILES: [&str; 4] = [
    "lakefile.toml",
    "lakefile.lean",
    "lake-manifest.json",
    "lean-toolchain",
];

/// What the configuration files looked like when a runtime started.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigStamp(Vec<(&'static str, Option<(SystemTime, u64)>)>);

impl ConfigStamp {
    /// Reads the stamp now (one `stat` per file).
    pub fn read(root: &Path) -> ConfigStamp {
        ConfigStamp(
            CONFIG_FILES
                .iter()
                .map(|name| {
                    let meta = std::fs::metadata(root.join(name)).ok();
                    let stamp = meta.and_then(|m| Some((m.modified().ok()?, m.len())));
                    (*name, stamp)
                })
                .collect(),
        )
    }

    /// The files that differ between two stamps.
    pub fn changed_since(&self, earlier: &ConfigStamp) -> Vec<&'static str> {
        self.0
            .iter()
            .zip(&earlier.0)
            .filter(|(now, then)| now.1 != then.1)
            .map(|(now, _)| now.0)
            .collect()
    }
}

/// A document after [`Runtime::sync_document`].
#[derive(Debug, Clone)]
pub struct Synced {
    /// The document as Lean now has it.
    pub document: Document,
    /// Whether the text changed (or the document was opened).
    pub changed: bool,
}

/// A running `lake serve` for one workspace.
#[derive(Debug)]
pub struct Runtime {
    root: WorkspaceRoot,
    epoch: u64,
    options: HostOptions,
    client: LspClient,
    documents: Arc<Documents>,
    process: LeanProcess,
    tail: Arc<StderrTail>,
    /// Serializes what changes Lean's documents, so versions on the wire follow the mirror.
    updates: tokio::sync::Mutex<()>,
    /// The configuration once the handshake completed.
    config: Option<ConfigStamp>,
    twins: TwinPool,
    modes: ProofModes,
    closed_for_budget: AtomicU64,
}

/// The name every trace stream of `root`'s Lean servers starts with: `lsp-<directory
/// name>-<8 hex digits of the root's hash>-`, then the start's epoch.
pub fn trace_prefix(root: &WorkspaceRoot) -> String {
    use sha2::Digest;
    let name = root
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = name.chars().take(40).collect();
    let digest = sha2::Sha256::digest(root.path().as_os_str().as_encoded_bytes());
    let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("lsp-{name}-{hash}-")
}

impl Runtime {
    /// Starts `lake serve` in `root` and completes the handshake; documents continue the
    /// versions in `memory`. `on_spawn` gets the process group's killer as soon as the process
    /// exists, so a host that must kill everything can reach a runtime still in its handshake.
    pub async fn start(
        root: WorkspaceRoot,
        epoch: u64,
        options: HostOptions,
        memory: Arc<VersionMemory>,
        on_spawn: impl FnOnce(GroupKiller),
    ) -> Result<Runtime, HostError> {
        let trace = options
            .trace
            .as_ref()
            .map(|dir| dir.stream(&format!("{}{epoch}", trace_prefix(&root))));
        let (process, stdin, stdout) = LeanProcess::spawn(
            &options.lake,
            root.path(),
            &options.serve_args,
            trace.clone(),
        )
        .map_err(|e| {
            HostError::new(code::RUNTIME_SETUP, e.message).with_data(json!({ "reason": e.reason }))
        })?;
        on_spawn(process.killer());
        let documents = Arc::new(Documents::new(memory));
        let twins = TwinPool::new(root.path(), options.max_twins);
        let client = LspClient::start(BufReader::new(stdout), stdin, documents.clone(), trace);
        // A stream that breaks while `lake serve` runs (a frame out of step, a length beyond any
        // message) leaves a server nobody can talk to: it is ended at once, not at the next call.
        let closed = client.closed();
        let killer = process.killer();
        tokio::spawn(async move {
            closed.await;
            killer.kill();
        });
        let mut runtime = Runtime {
            tail: process.stderr_tail(),
            process,
            root,
            epoch,
            client,
            documents,
            updates: tokio::sync::Mutex::new(()),
            config: None,
            twins,
            modes: ProofModes::default(),
            closed_for_budget: AtomicU64::new(0),
            options,
        };
        let handshake = runtime
            .client
            .request("initialize", runtime.initialize_params());
        let outcome = tokio::time::timeout(runtime.options.lean_timeout, handshake).await;
        let failure = match outcome {
            Ok(Ok(_capabilities)) => None,
            Ok(Err(LspError::Closed(reason))) => Some((
                "handshakeExited",
                format!(
                    "`{} serve` ended before completing the LSP handshake ({reason})",
                    runtime.options.lake.display()
                ),
            )),
            Ok(Err(LspError::Response { code, message, .. })) => Some((
                "handshakeRefused",
                format!("Lean refused initialize with {code}: {message}"),
            )),
            Err(_) => Some((
                "handshakeTimeout",
                format!(
                    "Lean did not answer initialize within {:?}",
                    runtime.options.lean_timeout
                ),
            )),
        };
        if let Some((reason, failure)) = failure {
            runtime.kill();
            runtime.wait_exit().await;
            let tail = runtime.tail.final_lines(STDERR_DRAIN).await;
            return Err(HostError::new(
                code::RUNTIME_SETUP,
                format!(
                    "could not start Lean for {}: {failure}. Check that `lake serve` works in that \
                     directory (its last stderr lines are in data.stderrTail)",
                    runtime.root.path().display()
                ),
            )
            .with_data(json!({ "reason": reason, "stderrTail": tail })));
        }
        runtime.client.notify("initialized", json!({}));
        // Lake may write its manifest while it loads the workspace: what counts as a change is
        // what happens after that.
        runtime.config = Some(ConfigStamp::read(runtime.root.path()));
        Ok(runtime)
    }

    fn initialize_params(&self) -> Value {
        let uri = file_uri(self.root.path());
        let name = self
            .root
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "lean-beam-mcp", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": name}],
            "capabilities": {
                "textDocument": {
                    "publishDiagnostics": {"relatedInformation": true},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "definition": {"linkSupport": true},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                    "completion": {"completionItem": {"insertReplaceSupport": true}}
                },
                "window": {"workDoneProgress": false},
                "workspace": {"applyEdit": false, "workspaceFolders": true},
                "lean": {"incrementalDiagnosticSupport": true}
            },
            "initializationOptions": {"hasWidgets": false}
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

    /// The document mirror.
    pub fn documents(&self) -> &Arc<Documents> {
        &self.documents
    }

    /// Messages sent to Lean so far.
    pub fn messages_sent(&self) -> u64 {
        self.client.messages_sent()
    }

    /// Whether the server is still there.
    pub fn is_alive(&self) -> bool {
        self.client.closed_reason().is_none()
    }

    /// The configuration files that changed since it started.
    pub fn config_changes(&self) -> Vec<&'static str> {
        self.config.as_ref().map_or_else(Vec::new, |config| {
            ConfigStamp::read(self.root.path()).changed_since(config)
        })
    }

    /// The last lines the server wrote to stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    /// Reads `path` from disk and brings Lean's copy up to date (see the contract).
    pub async fn sync_document(&self, path: &Path) -> Result<Synced, HostError> {
        let uri: Arc<str> = file_uri(path).into();
        let _serialized = self.updates.lock().await;
        // Read under the lock: two syncs of one file send Lean the texts in the order they were
        // read, so the last text read is the one Lean keeps.
        let text: Arc<str> = tokio::fs::read_to_string(path)
            .await
            .map_err(|e| HostError::invalid_params(format!("cannot read {}: {e}", path.display())))?
            .into();
        let synced = self.apply_text(uri.clone(), text, true);
        self.documents.touch(&uri);
        for extra in self.documents.over_budget(self.options.max_documents) {
            tracing::debug!(uri = %extra, "closing the least recently used document (budget)");
            if let Some(twin) = self.twins.remove(&extra) {
                self.close_twin_locked(&twin).await;
            }
            self.close_locked(&extra);
            self.closed_for_budget.fetch_add(1, Ordering::Relaxed);
        }
        Ok(synced)
    }

    /// Documents closed to stay within `--max-documents` so far.
    pub fn closed_for_budget(&self) -> u64 {
        self.closed_for_budget.load(Ordering::Relaxed)
    }

    /// Gives Lean `text` as the whole of the document `uri`, a twin (see `twins`): opened on
    /// first use, changed when it differs, untouched otherwise, never saved.
    pub async fn set_text(&self, uri: Arc<str>, text: Arc<str>) -> Synced {
        let _serialized = self.updates.lock().await;
        self.apply_text(uri, text, false)
    }

    /// Brings Lean's copy of `uri` to `text` (call with updates serialized); a changed text is
    /// also saved when `save` (so importers learn their imports are stale).
    fn apply_text(&self, uri: Arc<str>, text: Arc<str>, save: bool) -> Synced {
        match self.documents.get(&uri) {
            None => {
                let document = self.documents.opened(uri.clone(), text.clone());
                self.client.notify(
                    "textDocument/didOpen",
                    json!({
                        "textDocument": {
                            "uri": &*uri, "languageId": "lean",
                            "version": document.lsp_version, "text": &*text
                        },
                        "dependencyBuildMode": "once"
                    }),
                );
                Synced {
                    document,
                    changed: true,
                }
            }
            Some(document) if document.hash != crate::lean::session::mirror::text_hash(&text) => {
                let document = self
                    .documents
                    .changed(&uri, text.clone())
                    .expect("the document is open");
                self.client.notify(
                    "textDocument/didChange",
                    json!({
                        "textDocument": {"uri": &*uri, "version": document.lsp_version},
                        "contentChanges": [{"text": &*text}]
                    }),
                );
                if save {
                    self.client.notify(
                        "textDocument/didSave",
                        json!({"textDocument": {"uri": &*uri}}),
                    );
                }
                Synced {
                    document,
                    changed: true,
                }
            }
            Some(document) if document.crashed() => Synced {
                document: self.revive(&uri).unwrap_or(document),
                changed: false,
            },
            Some(document) => Synced {
                document,
                changed: false,
            },
        }
    }

    /// Sends the version-bumped `didChange` that restarts a crashed worker (call with updates
    /// serialized).
    fn revive(&self, uri: &str) -> Option<Document> {
        let document = self.documents.revived(uri)?;
        tracing::debug!(%uri, lsp_version = document.lsp_version, "reviving a crashed Lean worker");
        self.client.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": document.lsp_version},
                "contentChanges": [{"text": &*document.text}]
            }),
        );
        Some(document)
    }

    /// Revives the document's worker if Lean still has the LSP version `seen` of it (nobody
    /// changed or revived it since) and, unless `known_dead`, the mirror says it crashed.
    /// Whether a revival was sent.
    pub async fn revive_if_still(&self, uri: &str, seen: i64, known_dead: bool) -> bool {
        let _serialized = self.updates.lock().await;
        let current = self.documents.get(uri);
        let due = current.is_some_and(|d| d.lsp_version == seen && (known_dead || d.crashed()));
        due && self.revive(uri).is_some()
    }

    /// Tells Lean that a module's artifacts were rewritten on disk (a checkpoint): `didSave` of
    /// its source (a `.lean` change when it is not open), so open importers learn their imports
    /// are out of date, then the `.ilean` change (`created` when it is new), so the reference
    /// index reloads it (`lean-stock-speculation.md` §C, "After saving").
    pub async fn artifacts_rewritten(&self, source: &Path, ilean: &Path, created: bool) {
        const CREATED: u8 = 1;
        const CHANGED: u8 = 2;
        let uri = file_uri(source);
        let _serialized = self.updates.lock().await;
        let mut changes = Vec::new();
        if self.documents.get(&uri).is_some() {
            self.client.notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": &uri}}),
            );
        } else {
            changes.push(json!({"uri": &uri, "type": CHANGED}));
        }
        let kind = if created { CREATED } else { CHANGED };
        changes.push(json!({"uri": file_uri(ilean), "type": kind}));
        self.client.notify(
            "workspace/didChangeWatchedFiles",
            json!({ "changes": changes }),
        );
    }

    /// Closes a tracked document, and its twin if it has one; `false` when it was not open.
    pub async fn close_document(&self, path: &Path) -> bool {
        let uri = file_uri(path);
        if let Some(twin) = self.twins.remove(&uri) {
            self.close_twin(&twin).await;
        }
        self.close_uri(&uri).await
    }

    /// Closes a twin in Lean and removes it from disk if it was written there.
    pub async fn close_twin(&self, twin: &TwinDocument) {
        let _serialized = self.updates.lock().await;
        self.close_twin_locked(twin).await;
    }

    async fn close_twin_locked(&self, twin: &TwinDocument) {
        self.close_locked(&twin.uri);
        if let Some(path) = &twin.written {
            let _ = tokio::fs::remove_file(path).await;
        }
    }

    async fn close_uri(&self, uri: &str) -> bool {
        let _serialized = self.updates.lock().await;
        self.close_locked(uri)
    }

    /// Closes a document (call with updates serialized).
    fn close_locked(&self, uri: &str) -> bool {
        let closed = self.documents.closed(uri);
        if closed {
            self.client.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
        closed
    }

    /// Where this Lean said positions are in a proof (see `modes`).
    pub fn proof_modes(&self) -> &ProofModes {
        &self.modes
    }

    /// The twins of this runtime's documents.
    pub fn twins(&self) -> &TwinPool {
        &self.twins
    }

    /// Sends a request about `uri` whose params `params` builds from the document as it stands,
    /// waits for it (bounded, cancellable), and revives a crashed worker once. The answer, and
    /// the LSP version of the document it was asked about.
    pub async fn document_request(
        &self,
        uri: &str,
        method: &str,
        params: impl Fn(&Document) -> Value,
        cancel: &CancellationToken,
    ) -> Result<(Value, i64), HostError> {
        let mut retried = false;
        loop {
            let document = self.documents.get(uri).ok_or_else(|| {
                HostError::invalid_params(format!("{uri} is not open in Lean; sync it first"))
            })?;
            let outcome = self.request(method, params(&document), cancel).await;
            match outcome {
                Err(error)
                    if !retried
                        && matches!(error.code, code::WORKER_EXITED | code::WORKER_CRASHED)
                        && self.is_alive() =>
                {
                    // Someone else may have revived or changed it meanwhile: then only retry.
                    self.revive_if_still(uri, document.lsp_version, true).await;
                    retried = true;
                }
                other => return other.map(|answer| (answer, document.lsp_version)),
            }
        }
    }

    /// Sends a request and waits for its answer, within the Lean timeout, unless `cancel` fires
    /// first (then the request is cancelled on the server too).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, HostError> {
        let pending = self.client.request(method, params);
        let answer = tokio::select! {
            answer = pending => answer,
            () = cancel.cancelled() => return Err(HostError::new(
                code::REQUEST_CANCELLED,
                format!("{method} was cancelled"),
            )),
            () = tokio::time::sleep(self.options.lean_timeout) => return Err(HostError::new(
                code::LEAN_TIMEOUT,
                format!(
                    "Lean did not answer {method} within {:?}; the request was cancelled. Raise \
                     --lean-timeout-ms if this file needs longer",
                    self.options.lean_timeout
                ),
            )),
        };
        match answer {
            Ok(result) => Ok(result),
            Err(LspError::Response {
                code,
                message,
                data,
            }) => Err(HostError::from_lean(method, code, &message, data)),
            Err(LspError::Closed(reason)) => Err(HostError::server_exited(
                &reason,
                self.tail.final_lines(STDERR_DRAIN).await,
            )),
        }
    }

    /// Asks Lean to shut down and exit within the grace, then kills the process group.
    pub async fn shutdown(&self) {
        let grace = self.options.shutdown_grace;
        if self.is_alive() {
            let polite = async {
                let _ = self.client.request("shutdown", Value::Null).await;
                self.client.notify("exit", Value::Null);
                self.wait_exit().await;
            };
            let _ = tokio::time::timeout(grace, polite).await;
        }
        self.kill();
        self.client.close("the workspace was shut down");
        for twin in self.twins.drain() {
            if let Some(path) = &twin.written {
                let _ = tokio::fs::remove_file(path).await;
            }
        }
    }

    async fn wait_exit(&self) {
        let status = self.process.wait().await;
        tracing::debug!(root = %self.root.path().display(), %status, "lake serve exited");
    }

    /// Kills the process group now.
    pub fn kill(&self) {
        self.process.kill();
    }
}

/// The `file://` URI of a path.
pub fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file://` URI, if it is one.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_with_escapes() {
        let path = Path::new("/tmp/a b/Ünïcode#1.lean");
        let uri = file_uri(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%9Cn%C3%AFcode%231.lean");
        assert_eq!(uri_path(&uri).as_deref(), Some(path));
    }

    #[test]
    fn a_config_change_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lakefile.toml"), "name = \"a\"\n").unwrap();
        let before = ConfigStamp::read(dir.path());
        assert!(
            ConfigStamp::read(dir.path())
                .changed_since(&before)
                .is_empty()
        );
        std::fs::write(dir.path().join("lakefile.toml"), "name = \"ab\"\n").unwrap();
        std::fs::write(dir.path().join("lean-toolchain"), "x\n").unwrap();
        assert_eq!(
            ConfigStamp::read(dir.path()).changed_since(&before),
            ["lakefile.toml", "lean-toolchain"]
        );
    }
}
