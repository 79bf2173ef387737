//! A checkpoint of one module through Lake: what `lean_save` does once Lean has checked the
//! document and found it save-ready. Stock Lean cannot write artifacts from the language
//! server's state, so the module is built again, by `lake build +<Module>` (reference
//! `lean-stock-speculation.md` §C and "Recommended design" 8).
//!
//! Contract:
//! 1. Saves of one workspace run one at a time ([`Checkpoints`]): two `lake build`s over one
//!    build directory would race. A save waiting its turn says so and can be cancelled.
//! 2. The workspace's [`Layout`] comes from `lake env`, read once per Lake configuration (again
//!    when `lakefile.*`, `lake-manifest.json` or `lean-toolchain` changed). `lake env` failing
//!    is `saveUnsupportedSetup`.
//! 3. The module is the first candidate of [`Layout::modules_of`] that Lake builds: `lake build
//!    +M` runs for each in turn while Lake answers `unknown module` (before any job). No
//!    candidate (the file is under no library source directory), or none Lake knows, is
//!    `saveTargetNotModule`: Lake decides what its libraries contain, nothing here guesses.
//! 4. Every job line of the build is a progress step (`progress`); a build exiting non-zero is
//!    `saveBuildFailed` with the failed targets and the log's tail. Builds are bounded by the
//!    Lean timeout, cancellable, and their process group is killed on every way out (`lake_run`).
//! 5. After a build that succeeded, Lake says where the artifacts are (`query`: `lake query
//!    --no-build`, Lake's record of the build; the artifacts may be in Lake's artifact cache,
//!    with only the `.ilean` and `.trace` in `.lake/build`). A Lake without `lake query` is
//!    read through its `LEAN_PATH` (`artifacts::find`). A query that says the module is no longer
//!    up to date (the file unchanged: contract 7 comes first) means an import or the
//!    configuration changed since the build: `contentModified` (`importChangedDuringSave`). A
//!    query that fails otherwise or prints something else than the paths is
//!    `saveUnsupportedSetup` (`lakeQueryFailed`, with its output).
//! 6. When the build (or the query) rewrote the module's `.ilean` or `.trace` in the build
//!    directory, Lean is told (`DocumentSet::artifacts_rewritten`) however the build ended —
//!    succeeded, failed, timed out or cancelled mid-way — and whatever the save then finds: the
//!    files on disk changed. Lake writes both whether it built the module or fetched it from its
//!    cache; an up-to-date module rewrites neither and tells nothing, so importers are not sent
//!    to rebuild for nothing.
//! 7. The file is read again after the query: a text that is no longer the one Lean checked is
//!    `contentModified` (`reason: "sourceChangedDuringSave"`), as the artifacts may be of
//!    another text.
//! 8. The artifacts Lake named are checked to exist (`artifacts`); a required one missing is
//!    `saveUnsupportedSetup` (`artifactsNotFound`).
//!
//! The errors this module defines carry the save's `sync` result in their data; a `lake` run
//! that is cancelled, times out or cannot start fails as any wait on Lean does
//! (`requestCancelled`, `leanTimeout`, `runtimeSetup`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::artifacts::{self, Artifacts, Missing, Source};
use super::layout::Layout;
use super::output::{BuildLog, report_job};
use super::query::{self, Answer};
use super::run::{self as lake_run, Bounds};
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::text::file_uri;
use crate::lean::workspace::config::ConfigStamp;
use crate::lean::workspace::registry::Registry;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::lean::workspace::runtime::Runtime;

/// The layout last read for a workspace, with the configuration it was read under.
type Cached = Option<(ConfigStamp, Layout)>;

/// What the saves of each workspace share (see the contract).
#[derive(Debug, Default)]
pub struct Checkpoints {
    workspaces: Mutex<HashMap<WorkspaceRoot, Arc<tokio::sync::Mutex<Cached>>>>,
}

impl Checkpoints {
    fn workspace(&self, root: &WorkspaceRoot) -> Arc<tokio::sync::Mutex<Cached>> {
        let mut workspaces = self.workspaces.lock().unwrap_or_else(|p| p.into_inner());
        workspaces.entry(root.clone()).or_default().clone()
    }
}

/// A written checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// The module Lake built.
    pub module: String,
    /// Its artifacts.
    pub artifacts: Artifacts,
}

/// How this host runs Lake.
#[derive(Clone, Copy)]
pub struct Lake<'a> {
    /// The `lake` executable.
    pub lake: &'a Path,
    /// The bound on one command.
    pub timeout: Duration,
    /// Where the commands' process groups are tracked (the host's end kills them).
    pub registry: &'a Registry,
    /// The workspace.
    pub root: &'a WorkspaceRoot,
}

/// Builds the checkpoint of `file`, whose text Lean checked was `text` (see the contract).
pub async fn write(
    checkpoints: &Checkpoints,
    lake: Lake<'_>,
    runtime: &Runtime,
    file: &Path,
    text: &str,
    sync: &Value,
    caller: &Caller<'_>,
) -> Result<Checkpoint, HostError> {
    let path = caller.path;
    let workspace = checkpoints.workspace(lake.root);
    let mut cached = match workspace.try_lock() {
        Ok(cached) => cached,
        Err(_) => {
            caller.step("waiting for another save in this workspace");
            tokio::select! {
                cached = workspace.lock() => cached,
                () = caller.cancel.cancelled() => return Err(HostError::cancelled(
                    "cancelled while waiting for another save in this workspace",
                )),
            }
        }
    };
    let stamp = ConfigStamp::read(lake.root.path());
    let layout = match &*cached {
        Some((read_under, layout)) if *read_under == stamp => layout.clone(),
        _ => {
            caller.step("asking Lake where the workspace's modules are (lake env)");
            let layout = read_layout(lake, sync, caller).await?;
            *cached = Some((stamp, layout.clone()));
            layout
        }
    };
    let dirs = layout.library_dirs();
    let candidates = layout.modules_of(file);
    let reason = if candidates.is_empty() {
        "notUnderSourceDir"
    } else {
        "unknownToLake"
    };
    caller.observer.status("saving", Some(path));
    for module in &candidates {
        let rewritten = Rewritten::watch(runtime, file, dirs, module);
        let (status, log) = build(lake, module, caller).await?;
        if !status.success() && log.unknown_module() && log.jobs() == 0 {
            continue;
        }
        if !status.success() {
            // Whatever else the save finds, Lean must know the artifacts on disk changed.
            drop(rewritten);
            let failed = log.failed_targets();
            return Err(
                HostError::save_build_failed(path, module, status.code(), failed, sync)
                    .with_log_tail(log.tail()),
            );
        }
        let located = locate(lake, dirs, module, sync, caller).await;
        drop(rewritten);
        let now = tokio::fs::read_to_string(file).await.ok();
        if now.as_deref() != Some(text) {
            return Err(HostError::source_changed_during_save(path, module, sync));
        }
        let artifacts = located?.map_err(|missing| not_found(path, module, &missing, sync))?;
        return Ok(Checkpoint {
            module: module.clone(),
            artifacts,
        });
    }
    let dirs: Vec<String> = layout
        .source_dirs()
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    Err(HostError::save_target_not_module(
        path,
        reason,
        &candidates,
        &dirs,
        sync,
    ))
}

/// `artifactsNotFound` for what `artifacts` missed.
fn not_found(path: &str, module: &str, missing: &Missing, sync: &Value) -> HostError {
    let shown = |paths: &[PathBuf]| -> Vec<String> {
        paths.iter().map(|p| p.display().to_string()).collect()
    };
    let (paths, looked_in) = (shown(&missing.missing), shown(&missing.looked_in));
    let from_query = missing.source == Source::LakeQuery;
    HostError::artifacts_not_found(path, module, &paths, &looked_in, from_query, sync)
}

/// Asks Lake where the module's artifacts are, and finds them (see the contract): the
/// artifacts, or what is missing; a query that failed is an error.
async fn locate(
    lake: Lake<'_>,
    dirs: &[PathBuf],
    module: &str,
    sync: &Value,
    caller: &Caller<'_>,
) -> Result<Result<Artifacts, Missing>, HostError> {
    caller.step(&format!(
        "lake query +{module} (where Lake keeps its artifacts, perhaps its cache)"
    ));
    let mut lines = Vec::new();
    let mut log = BuildLog::default();
    let status = lake_run::run(
        lake.lake,
        lake.root.path(),
        &query::args(module),
        |killer| lake.registry.track(lake.root, killer),
        caller.cancel,
        Bounds::lake(lake.timeout),
        |stream, line| {
            log.push(line);
            // Progress and replayed logs are only the log's: what `query::read` reads is kept.
            if query::is_answer(stream, line) && lines.len() < query::ANSWER_LINES {
                lines.push((stream, line.to_owned()));
            }
        },
    )
    .await;
    let status = status.map_err(|e| e.with_log_tail(log.tail()))?;
    match query::read(lake.root.path(), status, &lines) {
        Answer::Named(named) => Ok(artifacts::from_query(named, dirs, module)),
        Answer::NoQuery => Ok(artifacts::find(dirs, module)),
        Answer::OutOfDate => Err(HostError::import_changed_during_save(
            caller.path,
            module,
            sync,
        )),
        Answer::Unreadable(what) => {
            Err(
                HostError::lake_query_failed(caller.path, module, &what, sync)
                    .with_log_tail(log.tail()),
            )
        }
    }
}

/// Tells Lean of a module's rewritten artifacts when dropped, however the build ended (see the
/// contract): the check runs in `drop`, which a cancelled call reaches too, and telling Lean
/// never waits.
struct Rewritten<'a> {
    runtime: &'a Runtime,
    source: String,
    dirs: &'a [PathBuf],
    module: &'a str,
    before: artifacts::Stamp,
}

impl<'a> Rewritten<'a> {
    fn watch(runtime: &'a Runtime, file: &Path, dirs: &'a [PathBuf], module: &'a str) -> Self {
        Rewritten {
            runtime,
            source: file_uri(file),
            dirs,
            module,
            before: artifacts::stamp(dirs, module),
        }
    }
}

impl Drop for Rewritten<'_> {
    fn drop(&mut self) {
        if artifacts::stamp(self.dirs, self.module) == self.before {
            return;
        }
        if let Some(ilean) = artifacts::ilean(self.dirs, self.module) {
            let created = !self.before.has_ilean();
            let documents = self.runtime.documents();
            documents.artifacts_rewritten(&self.source, &file_uri(&ilean), created);
        }
    }
}

/// Runs `lake build +<module>`, forwarding its job lines; its status and what it said.
async fn build(
    lake: Lake<'_>,
    module: &str,
    caller: &Caller<'_>,
) -> Result<(ExitStatus, BuildLog), HostError> {
    caller.step(&format!(
        "lake build +{module} (Lake re-elaborates the module to write its artifacts)"
    ));
    let mut log = BuildLog::default();
    let mut reported = 0;
    let status = lake_run::run(
        lake.lake,
        lake.root.path(),
        &["build".to_owned(), format!("+{module}")],
        |killer| lake.registry.track(lake.root, killer),
        caller.cancel,
        Bounds::lake(lake.timeout),
        |_, line| {
            log.push(line);
            report_job(caller, line, &mut reported);
        },
    )
    .await;
    // A build that timed out still said something worth reading.
    let status = status.map_err(|e| e.with_log_tail(log.tail()))?;
    Ok((status, log))
}

/// Runs `lake env` and reads the layout from it.
async fn read_layout(
    lake: Lake<'_>,
    sync: &Value,
    caller: &Caller<'_>,
) -> Result<Layout, HostError> {
    let mut output = String::new();
    let mut log = BuildLog::default();
    let status = lake_run::run(
        lake.lake,
        lake.root.path(),
        &["env".to_owned()],
        |killer| lake.registry.track(lake.root, killer),
        caller.cancel,
        Bounds::lake(lake.timeout),
        |_, line| {
            log.push(line);
            output.push_str(line);
            output.push('\n');
        },
    )
    .await?;
    if !status.success() {
        return Err(
            HostError::lake_env_failed(caller.path, &status.to_string(), sync)
                .with_log_tail(log.tail()),
        );
    }
    Ok(Layout::parse(lake.root.path(), &output))
}
