//! The checker's answer about the text Lean checked: the module built from exactly that text
//! (`lean_save`'s checkpoint), the checker run on it (`runner`), and the answers kept so that an
//! unchanged file is not built or checked again.
//!
//! Contract:
//! 1. Only a text whose receipt is `complete` is asked about (the caller holds that). The build
//!    is the checkpoint's (`lake::checkpoint::write`: `lake build +M`, then the file read again:
//!    a text that is no longer the one Lean checked is refused, so the built source is the
//!    synced text). The checker is asked for `names` in the built module, replaying the module
//!    and the workspace's own modules it imports (the receipt's import files outside `.lake`).
//! 2. An answer is kept under a key of everything it was computed from: the receipt (the text's
//!    hash, the toolchain, the Lake configuration's hash, every imported file's hash; not its
//!    version), the file, the names asked, whether theorems were listed, and the checker's
//!    source hash. It is reused only while the module's `.trace` (Lake's record of the build's
//!    input hash) holds the bytes it held after the build; then nothing is built or run.
//! 3. At most [`KEPT`] answers are kept, the oldest dropped first. A failure is never kept.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::lock::canonical;
use super::runner::{self, PROTOCOL, Request, Response};
use crate::lean::error::HostError;
use crate::lean::lake::checkpoint::{self, Checkpoints, Lake};
use crate::lean::progress::Caller;
use crate::lean::session::fingerprint::sha256_hex;
use crate::lean::session::receipt::Receipt;
use crate::lean::workspace::runtime::Runtime;

/// The most answers kept.
pub const KEPT: usize = 32;

/// One kept answer.
#[derive(Debug)]
struct Kept {
    key: String,
    trace: PathBuf,
    trace_sha256: String,
    module: String,
    response: Arc<Response>,
}

/// The answers kept (see the contract, 2 and 3): the one owner of them.
#[derive(Debug, Default)]
pub struct Answers {
    kept: Mutex<VecDeque<Kept>>,
}

/// What a certification asks of the checker.
#[derive(Debug, Clone)]
pub struct Question<'a> {
    /// The file, on disk.
    pub file: &'a Path,
    /// The text Lean checked.
    pub text: &'a str,
    /// Its receipt, `complete`.
    pub receipt: &'a Receipt,
    /// The checkpoint's `sync` result, for its errors.
    pub sync: &'a Value,
    /// The names, as components.
    pub names: Vec<Vec<String>>,
    /// Whether to list the module's theorems.
    pub list_theorems: bool,
}

/// The checker's answer, and the module it was about.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The built module.
    pub module: String,
    /// What the checker said.
    pub response: Arc<Response>,
}

impl Answers {
    fn get(&self, key: &str) -> Option<Answered> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let found = kept.iter().find(|k| k.key == key)?;
        let trace = std::fs::read(&found.trace).ok()?;
        (sha256_hex(&trace) == found.trace_sha256).then(|| Answered {
            module: found.module.clone(),
            response: found.response.clone(),
        })
    }

    fn put(&self, key: String, trace: PathBuf, answered: &Answered) {
        let Some(bytes) = std::fs::read(&trace).ok() else {
            return;
        };
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|k| k.key != key);
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back(Kept {
            key,
            trace,
            trace_sha256: sha256_hex(&bytes),
            module: answered.module.clone(),
            response: answered.response.clone(),
        });
    }
}

/// The key of `question` (see the contract, 2).
fn key(question: &Question<'_>) -> String {
    let mut receipt = question.receipt.to_json();
    if let Some(fields) = receipt.as_object_mut() {
        fields.remove("version");
    }
    let key = json!({
        "receipt": receipt,
        "file": question.file.display().to_string(),
        "names": question.names,
        "list_theorems": question.list_theorems,
        "checker": sha256_hex(runner::SOURCE.as_bytes()),
    });
    sha256_hex(canonical(&key).as_bytes())
}

/// The checker's answer about `question`'s text (see the contract).
pub async fn ask(
    answers: &Answers,
    checkpoints: &Checkpoints,
    lake: Lake<'_>,
    runtime: &Runtime,
    question: Question<'_>,
    caller: &Caller<'_>,
) -> Result<Answered, HostError> {
    let key = key(&question);
    if let Some(answered) = answers.get(&key) {
        caller.step("the checker's answer about this exact text and build is reused");
        return Ok(answered);
    }
    let built = checkpoint::write(
        checkpoints,
        lake,
        runtime,
        question.file,
        question.text,
        question.sync,
        caller,
    )
    .await?;
    let mut replay_modules = vec![built.module.clone()];
    let own = question.receipt.imports.files.iter();
    replay_modules.extend(
        own.filter(|f| !f.path.starts_with(".lake/"))
            .map(|f| f.module.clone()),
    );
    let request = Request {
        checker: PROTOCOL,
        module: built.module.clone(),
        names: question.names,
        list_theorems: question.list_theorems,
        replay_modules,
    };
    let toolchain = question.receipt.toolchain.as_deref();
    let response = runner::run(lake, &request, toolchain, caller).await?;
    let answered = Answered {
        module: built.module,
        response: Arc::new(response),
    };
    answers.put(key, built.artifacts.trace, &answered);
    Ok(answered)
}
