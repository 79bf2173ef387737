//! What every workspace-bound Lean tool call does first and last: resolve its workspace and
//! runtime, its file, its document version and position; then give its result the canonical
//! workspace descriptor (and a note when Lean was restarted for it).
//!
//! Contract:
//! 1. The workspace descriptor is validated before anything is started ([`LeanCall::new`]);
//!    every other argument is read by its tool, into a type (`args`).
//! 2. Waiting for a runtime to start is cancellable, and reports a progress step.
//! 3. `path` is relative to the workspace root unless absolute; it must name an existing `.lean`
//!    file inside the workspace (`invalidParams` otherwise, naming the path), except that a file
//!    that was deleted may be closed (its path inside the workspace and a `.lean` file's).
//! 4. A snapshot-bound call's `version` must be the document's current version once the file
//!    has been re-read from disk; otherwise `contentModified` with
//!    `{reason: "documentVersionMismatch", expectedVersion, currentVersion, uri, path}`.
//! 5. A position must lie inside the document (`line` at most the last line, `character` at
//!    most the line's UTF-16 length); otherwise `invalidParams`.
//! 6. A call that uses a document holds its pin ([`LeanCall::document`]) for as long as it uses
//!    it, so the document budget never closes it under the call.
//! 7. A call remembers the last text of its document it read (and the runtime it read it in),
//!    so that a typed error about the document carries its receipt ([`LeanCall::with_receipt`],
//!    `session/receipt.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::args::Args;
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::session::barrier::{Follow, barrier};
use crate::lean::session::diagnostics;
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt;
use crate::lean::session::report::LiveDiagnostics;
use crate::lean::session::{Pin, Synced};
use crate::lean::speculation::trial::settle;
use crate::lean::speculation::twins::is_twin_uri;
use crate::lean::text::{Position, file_uri, outside};
use crate::lean::workspace::registry::{Acquired, InUse, Registry};
use crate::lean::workspace::root::{WorkspaceRoot, canonical, normalize};
use crate::lean::workspace::runtime::Runtime;
use crate::mcp::CallContext;

/// `invalidParams` about the `path` argument, which names `joined`.
fn bad_path(joined: &Path, why: String) -> HostError {
    HostError::invalid_params(why)
        .with_data(json!({"path": "/path", "file": joined.display().to_string()}))
}

/// Refuses a path that names a twin (a twin is a link to its real file, so the path as given
/// is what tells).
fn not_a_twin(given: &str, joined: &Path) -> Result<(), HostError> {
    if is_twin_uri(&normalize(joined).to_string_lossy()) {
        return Err(bad_path(
            joined,
            format!(
                "{given:?} is a hidden twin of Beam's speculative runs, not a file of the \
                 project; name the real file"
            ),
        ));
    }
    Ok(())
}

/// `file` if it is a Lean source of the project: no twin, a `.lean` file.
fn lean_source(given: &str, joined: &Path, file: PathBuf) -> Result<PathBuf, HostError> {
    not_a_twin(given, joined)?;
    if file.extension().is_none_or(|ext| ext != "lean") {
        return Err(bad_path(
            joined,
            format!("{given:?} is not a Lean source file (.lean); Lean serves only those"),
        ));
    }
    Ok(file)
}

/// One workspace-bound call, as its tool sees it.
pub struct LeanCall<'a> {
    /// The MCP call.
    pub ctx: &'a CallContext,
    /// Its arguments (already valid against the tool's schema).
    pub args: Args<'a>,
    /// Its workspace, canonical.
    pub root: WorkspaceRoot,
    /// Cancelled with the call.
    pub cancel: CancellationToken,
    /// The `path` argument as given (results echo it); empty for a tool without one.
    path: &'a str,
    note: Option<String>,
    /// The hold on the runtime for as long as the call lasts.
    in_use: Option<InUse>,
    /// The runtime, once the call has one.
    lean: Option<Arc<Runtime>>,
    /// The last text of the call's document it read (see the contract).
    read: std::sync::Mutex<Option<Document>>,
}

impl<'a> LeanCall<'a> {
    /// Validates the call's workspace descriptor.
    pub fn new(ctx: &'a CallContext, args: &'a Value) -> Result<Self, HostError> {
        let args = Args(args);
        let root = WorkspaceRoot::resolve(args.object("workspace")?)?;
        Ok(LeanCall {
            ctx,
            args,
            root,
            cancel: ctx.cancellation_token(),
            path: args.optional_text("path")?.unwrap_or_default(),
            note: None,
            in_use: None,
            lean: None,
            read: std::sync::Mutex::default(),
        })
    }

    /// The workspace's runtime, started if needed; a note is kept for the result when this
    /// call restarted Lean.
    pub async fn runtime(&mut self, registry: &Registry) -> Result<Arc<Runtime>, HostError> {
        let starting = || {
            self.ctx.progress(format!(
                "{}: starting Lean (lake serve) for the workspace",
                self.ctx.tool()
            ));
        };
        let acquired = tokio::select! {
            acquired = registry.runtime(&self.root, starting) => acquired?,
            () = self.cancel.cancelled() => {
                return Err(HostError::cancelled("cancelled while Lean started"));
            }
        };
        let Acquired {
            runtime,
            note,
            in_use,
        } = acquired;
        if note.is_some() {
            self.note = note;
        }
        self.in_use = Some(in_use);
        self.lean = Some(runtime.clone());
        Ok(runtime)
    }

    /// Remembers `document` as the last text of the call's document it read.
    fn remember(&self, document: &Document) {
        *self.read.lock().unwrap_or_else(|p| p.into_inner()) = Some(document.without_reports());
    }

    /// `error` with the receipt of the call's document in its state, when it is a typed error
    /// about the document the call read (see the contract).
    pub fn with_receipt(&self, error: HostError) -> HostError {
        let read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        let (Some(runtime), Some(document)) = (&self.lean, read.as_ref()) else {
            return error;
        };
        match receipt::for_error(runtime.documents(), document, &error) {
            Some(receipt) => error.with_receipt(receipt.to_json()),
            None => error,
        }
    }

    /// What a checkpoint calls its `sync` result, for `document` the call synced: `{path,
    /// version, diagnostics: {counts}, readiness}`.
    pub fn sync_result(&self, document: &Document) -> Value {
        json!({
            "path": self.path,
            "version": document.version,
            "diagnostics": {"counts": diagnostics::counts(&document.diagnostics)},
            "readiness": diagnostics::readiness(
                &document.diagnostics,
                document.header_error().is_some(),
            ),
        })
    }

    /// The `path` argument as given (results echo it).
    pub fn path_argument(&self) -> &'a str {
        self.path
    }

    /// The file the `path` argument names, canonical.
    pub fn file(&self) -> Result<PathBuf, HostError> {
        let given = self.args.text("path")?;
        let joined = self.root.path().join(given);
        not_a_twin(given, &joined)?;
        let (file, meta) = canonical(&joined).map_err(|e| {
            bad_path(
                &joined,
                format!("cannot open {given:?} in the workspace: {e}"),
            )
        })?;
        self.within(given, &joined, &file)?;
        if !meta.is_file() {
            return Err(bad_path(&joined, format!("{given:?} is not a file")));
        }
        lean_source(given, &joined, file)
    }

    /// Fails unless `file` (what `given`, joined to the root as `joined`, names) is inside the
    /// workspace.
    fn within(&self, given: &str, joined: &Path, file: &Path) -> Result<(), HostError> {
        if file.starts_with(self.root.path()) {
            return Ok(());
        }
        Err(bad_path(
            joined,
            format!(
                "{given:?} is outside the workspace {}: name a file of this workspace (or use \
                 the workspace the file belongs to)",
                self.root.path().display()
            ),
        ))
    }

    /// The file to close: [`LeanCall::file`], or, for a file that no longer exists, its path
    /// normalized lexically (Lean may still have it open), held to the same rules.
    pub fn file_to_close(&self) -> Result<PathBuf, HostError> {
        self.file().or_else(|error| {
            let given = self.args.text("path")?;
            let joined = self.root.path().join(given);
            match joined.try_exists() {
                Ok(false) => {
                    let file = normalize(&joined);
                    self.within(given, &joined, &file)?;
                    lean_source(given, &joined, file)
                }
                _ => Err(error),
            }
        })
    }

    /// The call as the wings below the tools see it.
    pub fn caller(&self) -> Caller<'_> {
        Caller {
            observer: self.ctx,
            tool: self.ctx.tool(),
            path: self.path,
            cancel: &self.cancel,
        }
    }

    /// A pin on the document of `file`, for as long as the call uses it.
    pub async fn pin(&self, runtime: &Runtime, file: &std::path::Path) -> Result<Pin, HostError> {
        let uri: Arc<str> = file_uri(file).into();
        runtime.documents().pin(uri, &self.caller()).await
    }

    /// The call's file, pinned, re-read from disk and brought up to date in Lean.
    pub async fn document(&self, runtime: &Runtime) -> Result<(Pin, Synced), HostError> {
        let file = self.file()?;
        let pin = self.pin(runtime, &file).await?;
        let synced = pin.sync(&file, &self.caller()).await?;
        self.remember(&synced.document);
        Ok((pin, synced))
    }

    /// The call's file, pinned, synced and past its strict barrier (unless Lean already
    /// finished that version), streaming nothing: the pin and the document.
    pub async fn finished(&self, runtime: &Runtime) -> Result<(Pin, Document), HostError> {
        let (pin, synced) = self.document(runtime).await?;
        let document = settle(runtime, synced.document, &self.caller()).await?;
        self.remember(&document);
        Ok((pin, document))
    }

    /// The call's file, pinned, synced and past its diagnostics barrier (`session/barrier.rs`),
    /// streaming live diagnostics as its `diagnostic_scope` says: the pin, the document as the
    /// barrier left it, and whether the scope is `all`.
    pub async fn settled(&self, runtime: &Runtime) -> Result<(Pin, Document, bool), HostError> {
        let scope = self
            .args
            .choice("diagnostic_scope", &["errors", "all"], Some("errors"))?;
        let all = scope == "all";
        let live = if all {
            LiveDiagnostics::All
        } else {
            LiveDiagnostics::Errors
        };
        let set = runtime.documents();
        let mut events = set.mirror().subscribe();
        let (pin, synced) = self.document(runtime).await?;
        let caller = self.caller();
        let document = barrier(
            set,
            synced.document,
            &caller,
            live,
            &mut events,
            Follow::AnyText,
        );
        let document = document.await?;
        self.remember(&document);
        Ok((pin, document, all))
    }

    /// Checks the caller's `version` against the document's current one.
    pub fn check_version(&self, document: &Document, expected: i64) -> Result<(), HostError> {
        if expected == document.version {
            return Ok(());
        }
        Err(HostError::version_mismatch(
            self.path,
            &document.uri,
            expected,
            document.version,
        ))
    }

    /// `at`, checked to lie inside the document.
    pub fn inside(&self, document: &Document, at: Position) -> Result<Position, HostError> {
        match outside(&document.text, at) {
            None => Ok(at),
            Some((why, lines)) => Err(HostError::invalid_params(format!(
                "position {}:{} is outside the document: {why}",
                at.line, at.character
            ))
            .with_data(json!({"line": at.line, "character": at.character, "lines": lines}))),
        }
    }

    /// The result with the canonical workspace descriptor (and the restart note, if any).
    pub fn finish(&self, mut result: Value) -> Value {
        if !result.is_object() {
            result = json!({ "result": result });
        }
        result["workspace"] = self.root.descriptor();
        if let Some(note) = &self.note {
            result["note"] = json!(note);
        }
        result
    }
}
