//! Receipts: what a Lean result is about, as a value a later call (or another agent) can check
//! without Lean (`lean_check_receipt`).
//!
//! Contract:
//! 1. A [`Receipt`] is `{version, text_sha256, state, toolchain, lake_config_sha256, imports}`,
//!    plus `includes` when the text reads files, `reason` when the state is `incomplete` and
//!    `paths` when it is `stale_imports`: `version` and `text_sha256` (lowercase hex) name
//!    exactly the text Lean checked ([`Document::text_sha256`], once per text); `toolchain` and
//!    `lake_config_sha256` what the runtime loaded ([`LakeConfig`], once per start); `imports`
//!    the files of the document's import closure (`closure`: its direct imports that are files
//!    of the workspace or its packages, and the workspace's modules they import, transitively),
//!    `{module, path, sha256}`, hashed when Lean set the document up (`set`: its open, or a
//!    change of the modules it imports); `includes` the files its text reads with
//!    `include_str`, `{path, sha256}` (`sha256` null for a file that was absent). Receipts are
//!    not signed.
//! 2. What Lean said of a document ([`lean_state`]), first rule first: a worker a request
//!    found dead (`Document::died`) is `crashed`; a fatal report Lean has not explained yet
//!    (`Document::crashed` without a death seen: the header error that explains it may still
//!    come) `incomplete` (`elaborating`); a header Lean could not process (a failed Lake setup,
//!    imports that do not build) `setup_failed`; Lean's stale-import notice `stale_imports`;
//!    `complete` only when Lean answered the barrier (`textDocument/waitForDiagnostics`) for that
//!    very LSP version (`Mirror::barrier_answered`) and its file progress is done; else
//!    `incomplete` (`elaborating`).
//! 3. [`receipt`] keeps `complete` only while the disk agrees with what Lean loaded: a Lake
//!    configuration file changed since the runtime read it is `incomplete`
//!    (`lake_config_changed`: Lean restarts on the next call); a file of the import closure or
//!    one the text reads whose contents differ from their recorded hash (or that is gone, or
//!    appeared) is `stale_imports` with those paths (Lean checked against the old one); a text
//!    that reads a file whose path is computed is `incomplete` (`unnamed_include`: no file can
//!    be named to check). A `stale_imports` from Lean's notice names those paths too.
//! 4. [`now`] is the receipt of a result about `document`, as the mirror has it when the result
//!    is made: `superseded` when Lean now has another version of the file; else what Lean said
//!    of that version, or of the snapshot once the document was closed; when a twin ran the
//!    text (`checked`, its state), the twin's state only if Lean said `complete` of the
//!    document's version: a twin holds the text up to a position, and the receipt names the
//!    whole text.
//! 5. A typed error about a document carries the receipt of its matching non-complete state
//!    ([`state_for_error`], [`for_error`]).
//!
//! The constructor tools use is [`now`]; [`receipt`] is the same without the mirror's view (its
//! caller knows the state); both read the runtime's [`LakeConfig`] (`DocumentSet::lake_config`,
//! `Runtime::lake_config`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::fingerprint::{Imports, LakeConfig};
use super::mirror::Document;
use super::set::DocumentSet;
use crate::lean::error::{HostError, code};
use crate::lean::json::object;

/// Why Lean's word on a text is not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Lean had not finished the version (or was not asked to wait for it).
    Elaborating,
    /// The call was cancelled before Lean finished.
    Cancelled,
    /// Lean did not finish in time.
    TimedOut,
    /// The call does not wait for Lean (`lean_update`, a run refused before Lean was asked).
    NotChecked,
    /// The Lake configuration changed since Lean loaded it.
    LakeConfigChanged,
    /// The text reads a file (`include_str`) whose path is computed: none can be checked.
    UnnamedInclude,
}

impl Reason {
    /// Its name in a receipt.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Elaborating => "elaborating",
            Reason::Cancelled => "cancelled",
            Reason::TimedOut => "timed_out",
            Reason::NotChecked => "not_checked",
            Reason::LakeConfigChanged => "lake_config_changed",
            Reason::UnnamedInclude => "unnamed_include",
        }
    }
}

/// What a receipt says of the text it names (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptState {
    /// Lean finished checking exactly this text, against the imports and configuration named.
    Complete,
    /// Lean's word on it is not final.
    Incomplete(Reason),
    /// Lean checked it against files that have changed since (their paths, relative to the
    /// root; empty when Lean's notice names none of the files the receipt names).
    StaleImports(Vec<String>),
    /// The file's worker crashed.
    Crashed,
    /// Lean could not set the file up (its header: Lake's setup, imports that do not build).
    SetupFailed,
    /// Lean has another version of the file now.
    Superseded,
}

impl ReceiptState {
    /// Its name in a receipt.
    pub fn name(&self) -> &'static str {
        match self {
            ReceiptState::Complete => "complete",
            ReceiptState::Incomplete(_) => "incomplete",
            ReceiptState::StaleImports(_) => "stale_imports",
            ReceiptState::Crashed => "crashed",
            ReceiptState::SetupFailed => "setup_failed",
            ReceiptState::Superseded => "superseded",
        }
    }
}

/// Every state's name, in the order the docs list them.
pub const STATES: [&str; 6] = [
    "complete",
    "incomplete",
    "stale_imports",
    "crashed",
    "setup_failed",
    "superseded",
];

/// Every reason's name.
pub const REASONS: [&str; 6] = [
    "elaborating",
    "cancelled",
    "timed_out",
    "not_checked",
    "lake_config_changed",
    "unnamed_include",
];

/// A receipt (see the contract).
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    /// The document version.
    pub version: i64,
    /// The SHA-256 of exactly the text Lean checked.
    pub text_sha256: Arc<str>,
    /// What Lean said of it.
    pub state: ReceiptState,
    /// The toolchain the runtime loaded.
    pub toolchain: Option<String>,
    /// The hash of the Lake configuration the runtime loaded.
    pub lake_config_sha256: String,
    /// What the document was checked against, as Lean set it up.
    pub imports: Arc<Imports>,
}

impl Receipt {
    /// The receipt as results carry it.
    pub fn to_json(&self) -> Value {
        let imports: Vec<Value> = self
            .imports
            .files
            .iter()
            .map(|i| json!({"module": i.module, "path": i.path, "sha256": &*i.sha256}))
            .collect();
        let mut receipt = object([
            ("version", self.version.into()),
            ("text_sha256", (*self.text_sha256).into()),
            ("state", self.state.name().into()),
            ("toolchain", self.toolchain.as_deref().into()),
            (
                "lake_config_sha256",
                self.lake_config_sha256.as_str().into(),
            ),
            ("imports", Value::Array(imports)),
        ]);
        if !self.imports.includes.is_empty() {
            let includes = self.imports.includes.iter();
            receipt["includes"] = includes
                .map(|i| json!({"path": i.path, "sha256": i.sha256.as_deref()}))
                .collect();
        }
        match &self.state {
            ReceiptState::Incomplete(reason) => receipt["reason"] = json!(reason.name()),
            ReceiptState::StaleImports(paths) => receipt["paths"] = json!(paths),
            _ => {}
        }
        receipt
    }
}

/// What Lean said of `document` (see the contract), from the mirror alone.
pub fn lean_state(document: &Document) -> ReceiptState {
    if document.died {
        ReceiptState::Crashed
    } else if document.crashed() {
        // A fatal report not explained yet: a header error may be on its way (Lean may report
        // fatal progress before it), and a crash is certain only once a request finds the
        // worker dead (`ask` waits the crash grace for it).
        ReceiptState::Incomplete(Reason::Elaborating)
    } else if document.header_error().is_some() {
        ReceiptState::SetupFailed
    } else if !document.stale.is_empty() {
        ReceiptState::StaleImports(Vec::new())
    } else if document.barrier && document.progress.done && !document.progress.fatal {
        ReceiptState::Complete
    } else {
        ReceiptState::Incomplete(Reason::Elaborating)
    }
}

/// The receipt of a result about `document` whose state is `state` ([`lean_state`] of
/// `document` when `None`), held to the disk (see the contract).
pub fn receipt(config: &LakeConfig, document: &Document, state: Option<ReceiptState>) -> Receipt {
    let state = match state.unwrap_or_else(|| lean_state(document)) {
        ReceiptState::Complete if config.moved() => {
            ReceiptState::Incomplete(Reason::LakeConfigChanged)
        }
        ReceiptState::Complete => {
            let changed = config.changed_imports(&document.imports);
            if !changed.is_empty() {
                ReceiptState::StaleImports(changed)
            } else if document.imports.unnamed_include {
                ReceiptState::Incomplete(Reason::UnnamedInclude)
            } else {
                ReceiptState::Complete
            }
        }
        ReceiptState::StaleImports(paths) if paths.is_empty() => {
            ReceiptState::StaleImports(config.changed_imports(&document.imports))
        }
        other => other,
    };
    Receipt {
        version: document.version,
        text_sha256: document.text_sha256(),
        state,
        toolchain: config.toolchain().map(str::to_owned),
        lake_config_sha256: config.sha256().to_owned(),
        imports: document.imports.clone(),
    }
}

/// The receipt of a result about `document` as the mirror has it now (see the contract);
/// `checked` is the state of what ran the text when that was not the document itself (a twin).
pub fn now(set: &DocumentSet, document: &Document, checked: Option<ReceiptState>) -> Receipt {
    let seen = {
        let state = set.mirror().lock();
        let current = state.entries.get(&document.uri);
        current
            .and_then(|e| e.document.as_ref())
            .map(|d| (d.version == document.version).then(|| lean_state(d)))
    };
    let state = match seen {
        Some(Some(said)) => ran(said, checked),
        Some(None) => ReceiptState::Superseded,
        None => ran(lean_state(document), checked),
    };
    receipt(set.lake_config(), document, Some(state))
}

/// The state of a result about a document Lean said `said` of, whose text a twin ran in
/// state `checked`: the receipt names the document's text, so it is the twin's state only
/// while Lean finished that text too (a twin holds the text up to a position: a crash after
/// it is the document's alone).
fn ran(said: ReceiptState, checked: Option<ReceiptState>) -> ReceiptState {
    match checked {
        Some(checked) if said == ReceiptState::Complete => checked,
        _ => said,
    }
}

/// The state a receipt carries on `error`, when it is a typed error about a document (see the
/// contract).
pub fn state_for_error(error: &HostError) -> Option<ReceiptState> {
    let reason = error
        .data
        .as_ref()
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str);
    Some(match (error.code, reason) {
        (code::WORKER_CRASHED | code::WORKER_EXITED, _) => ReceiptState::Crashed,
        (code::IMPORT_BUILD_FAILED, _)
        | (code::INVALID_PARAMS, Some("headerFailed"))
        | (code::RUNTIME_SETUP, Some("twinSetupFailed")) => ReceiptState::SetupFailed,
        (code::SYNC_BARRIER_INCOMPLETE, _) => ReceiptState::StaleImports(Vec::new()),
        (code::CONTENT_MODIFIED, Some("documentVersionMismatch")) => ReceiptState::Superseded,
        (code::CONTENT_MODIFIED, Some("lakeConfigurationChanged")) => {
            ReceiptState::Incomplete(Reason::LakeConfigChanged)
        }
        (code::LEAN_TIMEOUT, _) => ReceiptState::Incomplete(Reason::TimedOut),
        (code::REQUEST_CANCELLED, _) => ReceiptState::Incomplete(Reason::Cancelled),
        _ => return None,
    })
}

/// The receipt a typed `error` about `document` carries (see the contract): the document as
/// Lean now has it (the snapshot once it is closed), in the error's state.
pub fn for_error(set: &DocumentSet, document: &Document, error: &HostError) -> Option<Receipt> {
    let state = state_for_error(error)?;
    let current = set.mirror().get(&document.uri);
    let about = current.as_ref().unwrap_or(document);
    Some(receipt(set.lake_config(), about, Some(state)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::session::fingerprint::sha256_hex;

    const URI: &str = "file:///p/A.lean";
    const FILES: [&str; 2] = ["lakefile.toml", "lean-toolchain"];

    fn config() -> (tempfile::TempDir, LakeConfig) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lean-toolchain"),
            "leanprover/lean4:v4.24.0\n",
        )
        .unwrap();
        let config = LakeConfig::read(dir.path(), &FILES);
        (dir, config)
    }

    fn checked(text: &str) -> Document {
        let mut document = Document::for_tests(URI, text, 1, 1);
        document.barrier = true;
        document.progress.done = true;
        document
    }

    fn publish(document: &mut Document, diagnostics: Value) {
        document.publish(&json!({"uri": URI, "version": document.lsp_version,
                                 "diagnostics": diagnostics}));
    }

    #[test]
    fn complete_needs_the_barrier_and_progress_done() {
        let (_dir, config) = config();
        let mut document = Document::for_tests(URI, "def a := 1\n", 1, 1);
        let state = |d: &Document| receipt(&config, d, None).state;
        assert_eq!(
            state(&document),
            ReceiptState::Incomplete(Reason::Elaborating)
        );
        document.progress.done = true;
        assert_eq!(
            state(&document),
            ReceiptState::Incomplete(Reason::Elaborating),
            "progress done without the barrier's answer is not complete"
        );
        document.progress.done = false;
        document.barrier = true;
        assert_eq!(
            state(&document),
            ReceiptState::Incomplete(Reason::Elaborating),
            "the barrier's answer without progress done is not complete"
        );
        document.progress.done = true;
        assert_eq!(state(&document), ReceiptState::Complete);
        let revived = document.revived(&Default::default());
        assert_eq!(
            state(&revived),
            ReceiptState::Incomplete(Reason::Elaborating),
            "an answer for an earlier LSP version says nothing of this one"
        );
        assert_eq!(&*revived.text_sha256(), sha256_hex(b"def a := 1\n"));
    }

    #[test]
    fn crash_setup_failure_and_stale_notices_come_first() {
        let (_dir, config) = config();
        let state = |d: &Document| receipt(&config, d, None).state;
        let mut crashed = checked("def a := 1\n");
        crashed.progress.fatal = true;
        assert_eq!(
            state(&crashed),
            ReceiptState::Incomplete(Reason::Elaborating),
            "fatal progress alone may yet be explained by a header error"
        );
        crashed.died = true;
        assert_eq!(state(&crashed), ReceiptState::Crashed);
        let mut header = checked("import Missing\ndef a := 1\n");
        header.progress.fatal = true;
        publish(
            &mut header,
            json!([{"severity": 1, "message": "unknown module prefix 'Missing'",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}}]),
        );
        assert_eq!(state(&header), ReceiptState::SetupFailed);
        let mut stale = checked("def a := 1\n");
        publish(
            &mut stale,
            json!([{"severity": 3, "message": "Imports are out of date and should be rebuilt; \
                use the \"Restart File\" command in your editor.",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}]),
        );
        assert_eq!(state(&stale), ReceiptState::StaleImports(Vec::new()));
        let json = receipt(&config, &stale, None).to_json();
        assert_eq!(json["state"], "stale_imports");
        assert_eq!(json["paths"], json!([]));
        assert!(json.get("reason").is_none());
    }

    #[test]
    fn a_twins_state_stands_only_where_lean_finished_the_text() {
        let timed_out = ReceiptState::Incomplete(Reason::TimedOut);
        assert_eq!(
            ran(ReceiptState::Complete, Some(timed_out.clone())),
            timed_out
        );
        assert_eq!(
            ran(ReceiptState::Crashed, Some(ReceiptState::Complete)),
            ReceiptState::Crashed,
            "a twin holds the text up to a position: the crash after it is the text's"
        );
        assert_eq!(
            ran(ReceiptState::SetupFailed, Some(ReceiptState::Complete)),
            ReceiptState::SetupFailed
        );
        assert_eq!(ran(ReceiptState::Complete, None), ReceiptState::Complete);
    }

    #[test]
    fn the_disk_must_still_agree_for_complete() {
        let (dir, config) = config();
        std::fs::write(dir.path().join("B.lean"), "def b := 1\n").unwrap();
        let mut document = checked("import B\ndef a := b\n");
        let file = dir.path().join("A.lean");
        document.imports = Arc::new(config.imports(vec!["B".into()], &document.text, &file));
        let made = receipt(&config, &document, None);
        assert_eq!(made.state, ReceiptState::Complete);
        let json = made.to_json();
        assert_eq!(
            json["imports"],
            json!([{"module": "B", "path": "B.lean", "sha256": sha256_hex(b"def b := 1\n")}])
        );
        assert_eq!(json["toolchain"], "leanprover/lean4:v4.24.0");
        assert_eq!(json["lake_config_sha256"], config.sha256());
        std::fs::write(dir.path().join("B.lean"), "def b := 2\n").unwrap();
        assert_eq!(
            receipt(&config, &document, None).state,
            ReceiptState::StaleImports(vec!["B.lean".into()])
        );
        std::fs::write(dir.path().join("B.lean"), "def b := 1\n").unwrap();
        assert_eq!(
            receipt(&config, &document, None).state,
            ReceiptState::Complete
        );
        std::fs::write(dir.path().join("lakefile.toml"), "name = \"p\"\n").unwrap();
        let moved = receipt(&config, &document, None).to_json();
        assert_eq!(moved["state"], "incomplete");
        assert_eq!(moved["reason"], "lake_config_changed");
    }

    #[test]
    fn typed_errors_map_to_their_states() {
        let crash = HostError::worker_crashed("A.lean", 1, None, 0, false, Vec::new());
        assert_eq!(state_for_error(&crash), Some(ReceiptState::Crashed));
        let header = HostError::header_failed("A.lean", 1, "bad header");
        assert_eq!(state_for_error(&header), Some(ReceiptState::SetupFailed));
        let twin = HostError::twin_setup_failed("A.lean", "bad");
        assert_eq!(state_for_error(&twin), Some(ReceiptState::SetupFailed));
        let stale = HostError::stale_imports("A.lean", 1, Vec::new());
        assert_eq!(
            state_for_error(&stale),
            Some(ReceiptState::StaleImports(Vec::new()))
        );
        let moved = HostError::version_mismatch("A.lean", URI, 1, 2);
        assert_eq!(state_for_error(&moved), Some(ReceiptState::Superseded));
        let late = HostError::lean_timeout("late", Vec::new());
        assert_eq!(
            state_for_error(&late),
            Some(ReceiptState::Incomplete(Reason::TimedOut))
        );
        assert_eq!(state_for_error(&HostError::invalid_params("x")), None);
    }
}
