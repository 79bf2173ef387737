//! The one table of the Lean host's tool error codes and the data each carries.
//!
//! Contract: every failure a Lean tool reports is a [`HostError`] with a stable camelCase code
//! from this file, a message that says what was wrong and what to do, and structured data where
//! the code defines some. Lean's own JSON-RPC errors keep their meaning under the names the
//! original server used ([`HostError::from_lean`]). A failure is an `isError` tool result, never
//! a JSON-RPC error: the client can always read why.
//!
//! Errors are made only here: each constructor below is one row of the table, and fixes its
//! code and the shape of its data. `contentModified`, `runtimeSetup`, `leanTimeout`,
//! `syncBarrierIncomplete`, `importBuildFailed` and the save codes always carry `data.reason`;
//! every failure of Lean itself (`serverExited`, `workerExited`, `workerCrashed`, `leanTimeout`,
//! `runtimeSetup` once Lean ran, Lean's internal errors) carries Lean's stderr tail as
//! `data.stderrTail`; every save failure carries the save's `sync` result, and a failed or
//! timed-out build its log's tail as `data.logTail`. A typed error about a document (a crash,
//! a header or twin that could not be set up, out-of-date imports, a version that moved on, a
//! timeout, a cancellation) also carries the document's receipt as `data.receipt`, in the
//! error's non-complete state (`session/receipt.rs`; added by `tools/call.rs`).
//!
//! Lean's two crash codes keep Lean's names and meanings (`Lean.Server.Watchdog`; reference
//! `lean-language-server.md` §1.9 and Part 3 "Crash codes"): -32901 `workerExited` is a file's
//! worker that exited with an uncaught exception (exit code 1), -32902 `workerCrashed` a worker
//! that died any other way. Both are about one file's worker, which Lean restarts on the next
//! change; the whole `lake serve` (the watchdog) exiting is `serverExited`, ours.

use serde_json::{Value, json};

use crate::mcp::ToolError;

/// Tool error codes.
pub mod code {
    /// Arguments, or the workspace descriptor, are not acceptable.
    pub const INVALID_INPUT: &str = "invalidInput";
    /// The request is well formed but names something Lean cannot serve (a position outside the
    /// document, no goals there, a file that does not exist).
    pub const INVALID_PARAMS: &str = "invalidParams";
    /// The document changed: the caller's version is not the current one.
    pub const CONTENT_MODIFIED: &str = "contentModified";
    /// `lake serve` could not be started, or did not complete its handshake.
    pub const RUNTIME_SETUP: &str = "runtimeSetup";
    /// The whole Lean server (`lake serve`, Lean's watchdog) exited, or was shut down, while
    /// the call waited for it: every document it had open is gone. The next call starts it
    /// again. Data: `{reason, stderrTail}`.
    pub const SERVER_EXITED: &str = "serverExited";
    /// The file's Lean worker exited with an uncaught exception (Lean's -32901 `WorkerExited`:
    /// the worker's exit code was 1), and reviving it once did not help.
    pub const WORKER_EXITED: &str = "workerExited";
    /// The file's Lean worker crashed other than by an exception (Lean's -32902
    /// `WorkerCrashed`: a stack overflow, a signal, an out-of-memory kill), and reviving it
    /// once did not help.
    pub const WORKER_CRASHED: &str = "workerCrashed";
    /// Lean did not answer within the host's timeout.
    pub const LEAN_TIMEOUT: &str = "leanTimeout";
    /// Diagnostics are not final: the document's imports are out of date.
    pub const SYNC_BARRIER_INCOMPLETE: &str = "syncBarrierIncomplete";
    /// Lake could not build the document's imports (new Lake's `Failed to build module
    /// dependencies.`), so Lean checked nothing of it. Data: `{reason: "importBuildFailed",
    /// path, version, failedModules, lakeErrors, leanMessage, recoveryPlan}`.
    ///
    /// A code of its own, not `syncBarrierIncomplete`: that one says the diagnostics are not
    /// final *yet* and that its recovery plan (refresh, rebuild) completes them, so a client
    /// that follows it retries. Here Lean's verdict is final: Lake tried to build the imports
    /// and failed, and every rebuild fails the same way until the named import is fixed, so a
    /// retry without a fix would loop. What to do is different: fix the import, then reopen.
    pub const IMPORT_BUILD_FAILED: &str = "importBuildFailed";
    /// Lean cancelled the request.
    pub const REQUEST_CANCELLED: &str = "requestCancelled";
    /// A feedback bundle could not be written inside the workspace (nothing of it is left).
    pub const FEEDBACK_BUNDLE_FAILED: &str = "feedbackBundleFailed";
    /// The file to checkpoint is not a module the workspace's Lake package builds (under no
    /// library source directory, or unknown to Lake). Data: `{path, reason, candidates,
    /// sourceDirs, sync}`.
    pub const SAVE_TARGET_NOT_MODULE: &str = "saveTargetNotModule";
    /// `lake build +<Module>` failed, so no checkpoint was written. Data: `{path, module,
    /// exitStatus, failedTargets, logTail, sync}`.
    pub const SAVE_BUILD_FAILED: &str = "saveBuildFailed";
    /// Lake's setup is one a checkpoint cannot read: `lake env` failed, or the artifacts are
    /// not where Lake's `LEAN_PATH` says. Data: `{path, reason, sync, …}`.
    pub const SAVE_UNSUPPORTED_SETUP: &str = "saveUnsupportedSetup";
    /// Something failed inside the host.
    pub const INTERNAL_ERROR: &str = "internalError";
}

/// How much of Lean's header error an `importBuildFailed` keeps.
pub const LEAN_MESSAGE_CHARS: usize = 8192;

/// A tool failure.
#[derive(Debug, Clone, PartialEq)]
pub struct HostError {
    /// One of [`code`].
    pub code: &'static str,
    /// What was wrong and what to do.
    pub message: String,
    /// Structured detail.
    pub data: Option<Value>,
}

impl HostError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        HostError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `invalidInput`.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        HostError::new(code::INVALID_INPUT, message)
    }

    /// `invalidParams`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        HostError::new(code::INVALID_PARAMS, message)
    }

    /// `invalidParams` with its `data.reason`.
    pub fn refused(reason: &'static str, message: impl Into<String>) -> Self {
        HostError::invalid_params(message).with_data(json!({ "reason": reason }))
    }

    /// `invalidParams` (`terminalCommand`): text the host would give Lean as a probe or a
    /// candidate writes `command` (`#exit`, or an `import` after the header) at `line` and
    /// `character` of that text (0-based). Lean stops reading a file at such a command
    /// (`Parser.isTerminalCommand`), so nothing after it would be checked and every later error
    /// would vanish: refused before Lean is asked. Data: `{reason, command, line, character}`.
    pub fn terminal_command(command: &str, line: u32, character: u32) -> Self {
        HostError::invalid_params(format!(
            "the text was refused: it writes `{command}` (line {} of the text), and Lean stops              reading a file at `{command}`, so nothing after it would be checked and no verdict              could be trusted; leave it out",
            line + 1
        ))
        .with_data(json!({
            "reason": "terminalCommand",
            "command": command,
            "line": line,
            "character": character,
        }))
    }

    /// `invalidParams` (`afterTerminalCommand`): the position a probe or candidate would be put at
    /// lies after the file's own `command` (`#exit`) at 0-based `line`: Lean stops reading the
    /// file there, so nothing at the position would be checked. Data: `{reason, command, line}`.
    pub fn after_terminal_command(command: &str, line: u32) -> Self {
        HostError::invalid_params(format!(
            "refused: the file stops at `{command}` on line {}, before this position, and Lean \
             checks nothing after it, so nothing here would be checked; remove the `{command}` \
             (then lean_sync) or work above it",
            line + 1
        ))
        .with_data(json!({"reason": "afterTerminalCommand", "command": command, "line": line}))
    }

    /// `invalidParams` (`twinPathUnsafe`): an on-disk twin would be written through `path`, a
    /// link or something else Beam does not make on the way to the twin inside `.lake`, so
    /// nothing was written (`session/twin_file.rs`).
    pub fn twin_path_unsafe(path: &std::path::Path, why: &str) -> Self {
        HostError::invalid_params(format!(
            "the speculative run was refused: its twin file would be written through {}, and \
             {why}. Beam writes twins only inside the workspace's .lake directory and never \
             through a link, since a project may hold links to anywhere; remove that entry \
             (Lake and Beam recreate what they need under .lake) and call again",
            path.display()
        ))
        .with_data(json!({"reason": "twinPathUnsafe", "path": path.display().to_string()}))
    }

    /// `contentModified` (`handleStale`): the handle was made at another version of the file.
    pub fn handle_stale(handle_version: i64, current: i64) -> Self {
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "the handle was made at version {handle_version} of the document, which is now at \
                 version {current}; run lean_run_at_handle at the current version"
            ),
        )
        .with_data(json!({
            "reason": "handleStale",
            "handleVersion": handle_version,
            "currentVersion": current,
        }))
    }

    /// `contentModified` (`handleSessionEnded`): the Lean that ran the handle's state is gone.
    pub fn handle_session_ended() -> Self {
        HostError::new(
            code::CONTENT_MODIFIED,
            "handle belongs to a stale backend session: the workspace's Lean server was \
             restarted or dropped since; run lean_run_at_handle again",
        )
        .with_data(json!({ "reason": "handleSessionEnded" }))
    }

    /// `feedbackBundleFailed`: nothing of the bundle was left.
    pub fn feedback_bundle_failed(why: &str) -> Self {
        HostError::new(
            code::FEEDBACK_BUNDLE_FAILED,
            format!("the feedback bundle was not written: {why}"),
        )
    }

    /// `invalidParams` (`checkerFailed`): the certification checker (`lake env lean --run`,
    /// `certify/runner.rs`) gave no answer to read: it did not compile or run on this
    /// toolchain, exited non-zero, printed no answer of its protocol, or timed out. `what` says
    /// which; `lean_output` is the tail of what Lean printed (bounded), `toolchain` the
    /// workspace's `lean-toolchain`. Nothing is certified on it. Data: `{reason, what,
    /// leanOutput, toolchain}`.
    pub fn checker_failed(what: &str, lean_output: Vec<String>, toolchain: Option<&str>) -> Self {
        let shown = toolchain.unwrap_or("(no lean-toolchain)");
        HostError::invalid_params(format!(
            "the certification checker failed on toolchain {shown}: {what}; nothing was \
             certified. Lean's last lines are in data.leanOutput"
        ))
        .with_data(json!({
            "reason": "checkerFailed",
            "what": what,
            "leanOutput": lean_output,
            "toolchain": toolchain,
        }))
    }

    /// The same error with the tail of a build's log (`data.logTail`).
    pub fn with_log_tail(mut self, tail: Vec<String>) -> Self {
        let data = self.data.get_or_insert_with(|| json!({}));
        data["logTail"] = json!(tail);
        self
    }

    /// The same error with the receipt of the document it is about (`data.receipt`: see
    /// `session/receipt.rs`).
    pub fn with_receipt(mut self, receipt: Value) -> Self {
        let data = self.data.get_or_insert_with(|| json!({}));
        data["receipt"] = receipt;
        self
    }

    /// The same error with structured data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The same error naming the argument it is about, as a JSON Pointer (like schema errors).
    pub fn with_path(self, pointer: &str) -> Self {
        self.with_data(json!({ "path": pointer }))
    }

    /// The Lean server is gone: `serverExited`, with what it last wrote to stderr.
    pub fn server_exited(reason: &str, stderr_tail: Vec<String>) -> Self {
        HostError::new(
            code::SERVER_EXITED,
            format!(
                "the Lean server (lake serve) exited: {reason}; the next call restarts it. \
                 Its last stderr lines are in data.stderrTail"
            ),
        )
        .with_data(json!({ "reason": reason, "stderrTail": stderr_tail }))
    }

    /// `runtimeSetup`: Lean could not be started; `reason` says which way, `stderr_tail` what
    /// it last wrote, once it ran.
    pub fn runtime_setup(
        reason: &'static str,
        message: impl Into<String>,
        stderr_tail: Vec<String>,
    ) -> Self {
        HostError::new(code::RUNTIME_SETUP, message)
            .with_data(json!({ "reason": reason, "stderrTail": stderr_tail }))
    }

    /// `runtimeSetup` (`twinSetupFailed`): Lean could not process the header of the hidden twin
    /// a run needs, so nothing of the run was checked. `lean_message` is Lean's own text. When
    /// the file's own header fails the same way, that is what to fix first.
    pub fn twin_setup_failed(path: &str, lean_message: &str) -> Self {
        HostError::new(
            code::RUNTIME_SETUP,
            format!(
                "Lean could not set up the hidden copy of {path} this run needs, so nothing was \
                 run: Lean said: {lean_message}. If lean_sync shows the same error on {path}, \
                 its header (imports, Lake configuration) is what to fix first; otherwise \
                 report it with beam_feedback_report"
            ),
        )
        .with_data(json!({
            "reason": "twinSetupFailed",
            "path": path,
            "leanMessage": lean_message,
        }))
    }

    /// `runtimeSetup` (`twinSetupFailed`) for a run whose text adds `added` imports to the
    /// header of `path`: Lean could not process the twin's header. A Lake that sets a module of
    /// the workspace up from its file on disk (mid-2025 Lake; reference `lean-language-server.md`
    /// Part 4) builds only the imports the file itself has, so an added one that was never
    /// built cannot be imported; or the name is wrong. Data: as [`HostError::twin_setup_failed`],
    /// with `addedImports` and a `recoveryPlan`.
    pub fn twin_imports_not_set_up(path: &str, lean_message: &str, added: &[String]) -> Self {
        let names = added.join(", ");
        let builds: Vec<String> = added.iter().map(|m| format!("+{m}")).collect();
        let mut error = HostError::new(
            code::RUNTIME_SETUP,
            format!(
                "Lean could not set up the hidden copy of {path} this run needs, so nothing was                  run: the run's text imports {names}, which {path} itself does not import, and                  Lean said: {lean_message}. Some Lake versions (mid-2025) set a module up with                  the imports of its file on disk, whatever the text Lean has, so an import only                  the run adds is found only if it was built before: build it (`lake build {}`)                  or add the import to {path} itself and lean_sync it, then run again; if the name                  is misspelt, fix it",
                builds.join(" ")
            ),
        );
        error.data = Some(json!({
            "reason": "twinSetupFailed",
            "path": path,
            "leanMessage": lean_message,
            "addedImports": added,
            "recoveryPlan": [
                format!("lake build {}", builds.join(" ")),
                format!("add the imports to {path}, then lean_sync {path}"),
            ],
        }));
        error
    }

    /// `internalError`: something failed inside the host.
    pub fn internal(message: impl Into<String>) -> Self {
        HostError::new(code::INTERNAL_ERROR, message)
    }

    /// `leanTimeout` (`placeTimeout`): the call waited the Lean timeout for a document or twin
    /// that other calls kept using.
    pub fn place_timeout(why: &str, waited: std::time::Duration) -> Self {
        HostError::new(
            code::LEAN_TIMEOUT,
            format!(
                "gave up after {waited:?} {why}; the calls using them are still running (cancel \
                 some, or raise --max-documents / --max-twins)"
            ),
        )
        .with_data(json!({ "reason": "placeTimeout" }))
    }

    /// `syncBarrierIncomplete` (`staleImports`): the document's imports are out of date, so its
    /// diagnostics are not final.
    pub fn stale_imports(path: &str, version: i64, notices: Vec<Value>) -> Self {
        let why = "Lean reports that its imports are out of date";
        HostError::stale(path, why, version, notices, &[])
    }

    /// `syncBarrierIncomplete` (`staleImports`), found on disk rather than said by Lean: files
    /// the document was checked against (its import closure, files it reads) changed since Lean
    /// set it up, so its diagnostics are not final; `changed` names them.
    pub fn inputs_changed(path: &str, version: i64, changed: &[String]) -> Self {
        let why = format!(
            "files it was checked against changed since Lean set it up ({})",
            changed.join(", ")
        );
        HostError::stale(path, &why, version, Vec::new(), changed)
    }

    fn stale(path: &str, why: &str, version: i64, notices: Vec<Value>, changed: &[String]) -> Self {
        let mut data = json!({
            "reason": "staleImports",
            "targetPath": path,
            "version": version,
            "staleDirectDeps": [],
            "completionBlockingDiagnostics": notices,
            "recoveryPlan": [
                format!("lean_refresh {path}"),
                format!("lake build, then lean_refresh {path}"),
            ],
        });
        if !changed.is_empty() {
            data["changedFiles"] = json!(changed);
        }
        HostError::new(
            code::SYNC_BARRIER_INCOMPLETE,
            format!(
                "{path}: {why}, so its diagnostics are not final. Call lean_refresh on {path} to \
                 reopen it and rebuild its imports (or run `lake build` in the workspace first)"
            ),
        )
        .with_data(data)
    }

    /// `importBuildFailed`: Lake could not build the imports of `path` (see
    /// [`code::IMPORT_BUILD_FAILED`]); `modules` are the modules that failed, `lake_errors` the
    /// failing lines of Lake's log, `lean_message` the header error as Lean published it (its
    /// first [`LEAN_MESSAGE_CHARS`] characters: a build log can be long).
    pub fn import_build_failed(
        path: &str,
        version: i64,
        modules: &[String],
        lake_errors: &[String],
        lean_message: &str,
    ) -> Self {
        let which = match modules {
            [] => "an import".to_owned(),
            [one] => one.clone(),
            many => many.join(", "),
        };
        let first = lake_errors
            .iter()
            .find(|line| line.starts_with("error:"))
            .or_else(|| lake_errors.first())
            .map(|line| format!(" ({line})"))
            .unwrap_or_default();
        HostError::new(
            code::IMPORT_BUILD_FAILED,
            format!(
                "{path}: Lake could not build its imports: {which} failed to build{first}, so \
                 Lean checked nothing of {path} (version {version}). Rebuilding fails the same \
                 way until the import is fixed: fix {which} (Lake's errors are in \
                 data.lakeErrors), then call lean_refresh on {path}, which reopens it and builds \
                 its imports again (Lean sets up a file's imports only when it opens it, so \
                 lean_sync alone reports this again)"
            ),
        )
        .with_data(json!({
            "reason": "importBuildFailed",
            "path": path,
            "version": version,
            "failedModules": modules,
            "lakeErrors": lake_errors,
            "leanMessage": lean_message.chars().take(LEAN_MESSAGE_CHARS).collect::<String>(),
            "recoveryPlan": [
                format!("fix {which}: see data.lakeErrors (`lake build {}` shows the same)",
                    modules.first().map(|m| format!("+{m}")).unwrap_or_default()),
                format!("lean_refresh {path}"),
            ],
        }))
    }

    /// `invalidParams` (`headerFailed`): Lean could not process the header of `path` (a Lake
    /// setup that failed, an import that does not exist), so it checked nothing of the file and
    /// has nothing to say about any position in it; `lean_message` is the header error as Lean
    /// published it.
    pub fn header_failed(path: &str, version: i64, lean_message: &str) -> Self {
        let first = lean_message.lines().next().unwrap_or_default();
        HostError::invalid_params(format!(
            "{path}: Lean could not process the file's header (its imports), so it checked \
             nothing of it (version {version}) and has no answer for any position in it; Lean \
             said: {first}. Fix the header (lean_sync on {path} lists Lean's error), then call \
             again"
        ))
        .with_data(json!({
            "reason": "headerFailed",
            "path": path,
            "version": version,
            "leanMessage": lean_message.chars().take(LEAN_MESSAGE_CHARS).collect::<String>(),
        }))
    }

    /// `invalidParams` (`leanLacksFeature`): this Lean's `initialize` result does not offer
    /// `capability`, which `method` needs, so it was not asked; `instead` is what else to try.
    pub fn lean_lacks_feature(
        method: &str,
        capability: &str,
        server_info: &Value,
        instead: Option<&str>,
    ) -> Self {
        let lean = match (
            server_info.get("name").and_then(Value::as_str),
            server_info.get("version").and_then(Value::as_str),
        ) {
            (Some(name), Some(version)) => format!("{name} {version}"),
            (Some(name), None) => name.to_owned(),
            _ => "this Lean".to_owned(),
        };
        let instead = instead.map(|i| format!("; {i}")).unwrap_or_default();
        HostError::invalid_params(format!(
            "this workspace's Lean ({lean}) does not offer {method}: its initialize result has no \
             {capability}, so it was not asked. A newer Lean toolchain (the workspace's \
             lean-toolchain file) may offer it{instead}"
        ))
        .with_data(json!({
            "reason": "leanLacksFeature",
            "method": method,
            "capability": capability,
            "serverInfo": server_info,
        }))
    }

    /// `requestCancelled`: the call was cancelled while it waited.
    pub fn cancelled(message: impl Into<String>) -> Self {
        HostError::new(code::REQUEST_CANCELLED, message)
    }

    /// `leanTimeout`: Lean did not answer in time, with what it last wrote to stderr.
    pub fn lean_timeout(message: impl Into<String>, stderr_tail: Vec<String>) -> Self {
        HostError::new(code::LEAN_TIMEOUT, message)
            .with_data(json!({ "reason": "leanTimeout", "stderrTail": stderr_tail }))
    }

    /// `contentModified` (`documentVersionMismatch`): the caller's version is not the
    /// document's current one.
    pub fn version_mismatch(path: &str, uri: &str, expected: i64, current: i64) -> Self {
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "{path} changed: you passed version {expected}, the current version is {current}; \
                 call lean_sync (or lean_update) and use the version it returns"
            ),
        )
        .with_data(json!({
            "reason": "documentVersionMismatch",
            "expectedVersion": expected,
            "currentVersion": current,
            "uri": uri,
            "path": path,
        }))
    }

    /// `contentModified` (`base_mismatch`): `lean_try_edit` was given the sha256 of a text the
    /// file no longer has (before the candidates ran, or after: another writer changed it), so
    /// no verdict on it would be about the file as it is. Data: `{reason, path,
    /// expected_sha256, current_sha256}`.
    pub fn base_mismatch(path: &str, expected: &str, current: &str) -> Self {
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "{path} is not the text you proposed edits to: its sha256 is {current}, not the \
                 base_sha256 {expected} you passed (it changed before or while the candidates \
                 ran). Read the file again and call lean_try_edit with its current sha256"
            ),
        )
        .with_data(json!({
            "reason": "base_mismatch",
            "path": path,
            "expected_sha256": expected,
            "current_sha256": current,
        }))
    }

    /// `contentModified` (`lakeConfigurationChanged`): the workspace's Lake configuration changed
    /// while the call used the Lean that had loaded the old one, which was restarted.
    pub fn lake_configuration_changed(changed: &[&str]) -> Self {
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "the workspace's Lake configuration changed ({}) while this call used Lean, so \
                 Lean was restarted to load it and this call's answer would have described the \
                 old configuration; call again",
                changed.join(", ")
            ),
        )
        .with_data(json!({ "reason": "lakeConfigurationChanged", "changed": changed }))
    }

    /// `saveTargetNotModule`: the file is no module the workspace's Lake package builds.
    pub fn save_target_not_module(
        path: &str,
        reason: &'static str,
        candidates: &[String],
        source_dirs: &[String],
        sync: &Value,
    ) -> Self {
        let why = match candidates.first() {
            None => "it lies under none of the libraries' source directories".to_owned(),
            Some(first) => format!(
                "Lake builds no module named {} (`lake build +{first}` answered `unknown \
                 module`)",
                candidates.join(" or ")
            ),
        };
        HostError::new(
            code::SAVE_TARGET_NOT_MODULE,
            format!(
                "{path} is not a module of this workspace's Lake package: {why}. lean_save \
                 checkpoints modules a library of the lakefile builds; move the file under a \
                 library's source directory or add it to the library's roots or globs"
            ),
        )
        .with_data(json!({
            "path": path,
            "reason": reason,
            "candidates": candidates,
            "sourceDirs": source_dirs,
            "sync": sync,
        }))
    }

    /// `saveBuildFailed`: `lake build +<module>` failed (add its log with
    /// [`HostError::with_log_tail`]).
    pub fn save_build_failed(
        path: &str,
        module: &str,
        exit: Option<i32>,
        failed: &[String],
        sync: &Value,
    ) -> Self {
        let what = if failed.is_empty() {
            String::new()
        } else {
            format!(" ({} failed)", failed.join(", "))
        };
        HostError::new(
            code::SAVE_BUILD_FAILED,
            format!(
                "`lake build +{module}` failed{what}, so no checkpoint of {path} was written. \
                 Lake builds from the files on disk, including the modules it imports, which may \
                 differ from what Lean showed; its last lines are in data.logTail"
            ),
        )
        .with_data(json!({
            "path": path,
            "reason": "buildFailed",
            "module": module,
            "exitStatus": exit,
            "failedTargets": failed,
            "sync": sync,
        }))
    }

    /// `saveUnsupportedSetup` (`lakeEnvFailed`): `lake env` failed, so no module can be located
    /// (add its output with [`HostError::with_log_tail`]).
    pub fn lake_env_failed(path: &str, status: &str, sync: &Value) -> Self {
        HostError::new(
            code::SAVE_UNSUPPORTED_SETUP,
            format!(
                "`lake env` failed ({status}) in the workspace, so its modules cannot be \
                 located; its output is in data.logTail (a broken lakefile?)"
            ),
        )
        .with_data(json!({"path": path, "reason": "lakeEnvFailed", "sync": sync}))
    }

    /// `saveUnsupportedSetup` (`artifactsNotFound`): the build succeeded, but its artifacts are
    /// not where Lake says: `lake query` (`source: "lakeQuery"`, the trace from `LEAN_PATH`), or
    /// `LEAN_PATH` alone for a Lake without `lake query` (`"leanPath"`).
    pub fn artifacts_not_found(
        path: &str,
        module: &str,
        missing: &[String],
        looked_in: &[String],
        from_query: bool,
        sync: &Value,
    ) -> Self {
        let message = if from_query {
            format!(
                "`lake build +{module}` succeeded, but {} does not exist, though Lake names it \
                 (`lake query`, or the build directory in LEAN_PATH for its .trace); save again \
                 if the build directory or Lake's cache was cleaned meanwhile",
                missing.join(", ")
            )
        } else {
            format!(
                "`lake build +{module}` succeeded, but {} is not where Lake's LEAN_PATH says its \
                 artifacts are; lean_save does not know this Lake layout",
                missing.join(", ")
            )
        };
        let source = if from_query { "lakeQuery" } else { "leanPath" };
        HostError::new(code::SAVE_UNSUPPORTED_SETUP, message).with_data(json!({
            "path": path,
            "module": module,
            "reason": "artifactsNotFound",
            "source": source,
            "missing": missing,
            "lookedIn": looked_in,
            "sync": sync,
        }))
    }

    /// `saveUnsupportedSetup` (`lakeQueryFailed`): the build succeeded, but `lake query` could
    /// not say where its artifacts are (add its output with [`HostError::with_log_tail`]).
    pub fn lake_query_failed(path: &str, module: &str, what: &str, sync: &Value) -> Self {
        HostError::new(
            code::SAVE_UNSUPPORTED_SETUP,
            format!(
                "`lake build +{module}` succeeded, but Lake did not say where its artifacts are: \
                 {what}; its output is in data.logTail"
            ),
        )
        .with_data(json!({
            "path": path,
            "module": module,
            "reason": "lakeQueryFailed",
            "sync": sync,
        }))
    }

    /// `contentModified` (`sourceChangedDuringSave`): the file changed while Lake built it.
    pub fn source_changed_during_save(path: &str, module: &str, sync: &Value) -> Self {
        let version = sync.get("version").cloned().unwrap_or(Value::Null);
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "{path} changed on disk while Lake built it, so the artifacts may not be those of \
                 the text Lean checked (version {version}); call lean_save again"
            ),
        )
        .with_data(json!({
            "reason": "sourceChangedDuringSave",
            "path": path,
            "module": module,
            "version": version,
            "sync": sync,
        }))
    }

    /// `contentModified` (`importChangedDuringSave`): after the build, Lake said the module is no
    /// longer up to date though the file is unchanged, so an import (or the Lake configuration)
    /// changed while Lake built it, and the artifacts may be of the old one.
    pub fn import_changed_during_save(path: &str, module: &str, sync: &Value) -> Self {
        let version = sync.get("version").cloned().unwrap_or(Value::Null);
        HostError::new(
            code::CONTENT_MODIFIED,
            format!(
                "an import of {path} changed on disk while Lake built {module} (Lake says the \
                 module is no longer up to date), so its artifacts may not be those of the text \
                 Lean checked (version {version}) against its imports as they are now; call \
                 lean_save again"
            ),
        )
        .with_data(json!({
            "reason": "importChangedDuringSave",
            "path": path,
            "module": module,
            "version": version,
            "sync": sync,
        }))
    }

    /// The file's Lean worker crashed while checking this text, and it is not revived again:
    /// reviving it once did not help, or the text has crashed on every elaboration since
    /// (`session/mirror.rs` bounds revivals). `workerExited` when Lean said the worker exited with
    /// an uncaught exception (-32901), else `workerCrashed`. Data: `{reason, leanCode, leanError,
    /// path, version, stoppedAt, revivals, stderrTail}`, `stoppedAt` the 0-based `(line, character)` of the
    /// command Lean was checking, when it said.
    pub fn worker_crashed(
        path: &str,
        version: i64,
        stopped_at: Option<(u32, u32)>,
        revivals: u32,
        exited: bool,
        stderr_tail: Vec<String>,
    ) -> Self {
        let (code, lean_code, lean_error, how) = if exited {
            let how = "exited with an uncaught exception (Lean's -32901)";
            (code::WORKER_EXITED, -32901, "workerExited", how)
        } else {
            let how = "crashed (Lean's -32902: likely a stack overflow or a bug)";
            (code::WORKER_CRASHED, -32902, "workerCrashed", how)
        };
        let reason = if revivals > 0 {
            "crashesOnEveryElaboration"
        } else {
            "crashed"
        };
        let at = stopped_at.map_or_else(String::new, |(line, character)| {
            format!(" at {line}:{character} (0-based)")
        });
        let again = if revivals > 0 {
            "; reviving it on this text did not help, so it is not revived again"
        } else {
            ""
        };
        let message = format!(
            "{path}: Lean's worker {how} while checking version {version}{at}{again}. Its stderr \
             is in data.stderrTail: change the text there, for instance split the declaration, \
             then call again"
        );
        let stopped_at =
            stopped_at.map(|(line, character)| json!({"line": line, "character": character}));
        HostError::new(code, message).with_data(json!({
            "reason": reason,
            "leanCode": lean_code,
            "leanError": lean_error,
            "path": path,
            "version": version,
            "stoppedAt": stopped_at,
            "revivals": revivals,
            "stderrTail": stderr_tail,
        }))
    }

    /// A JSON-RPC error Lean answered with, under the name of its code, with what Lean last
    /// wrote to stderr when the error is a failure of Lean's.
    pub fn from_lean(
        method: &str,
        lean_code: i64,
        message: &str,
        data: Option<Value>,
        stderr_tail: Vec<String>,
    ) -> Self {
        let (code, name) = match lean_code {
            -32700 => (code::INTERNAL_ERROR, "parseError"),
            -32600 => (code::INTERNAL_ERROR, "invalidRequest"),
            -32601 => (code::INTERNAL_ERROR, "methodNotFound"),
            -32602 => (code::INVALID_PARAMS, "invalidParams"),
            -32603 => (code::INTERNAL_ERROR, "internalError"),
            -32002 => (code::INTERNAL_ERROR, "serverNotInitialized"),
            -32800 => (code::REQUEST_CANCELLED, "requestCancelled"),
            -32801 => (code::CONTENT_MODIFIED, "contentModified"),
            -32900 => (code::INTERNAL_ERROR, "rpcNeedsReconnect"),
            -32901 => (code::WORKER_EXITED, "workerExited"),
            -32902 => (code::WORKER_CRASHED, "workerCrashed"),
            _ => (code::INTERNAL_ERROR, "unknownErrorCode"),
        };
        let mut message = if message.is_empty() {
            format!("Lean answered {method} with {name} ({lean_code})")
        } else {
            format!("Lean answered {method} with {name} ({lean_code}): {message}")
        };
        if let Some(meaning) = crash_meaning(lean_code) {
            message = format!("{}. {meaning}", message.trim_end_matches('.'));
        }
        let mut detail = json!({ "leanCode": lean_code, "leanError": name, "method": method });
        if let Some(data) = data {
            detail["leanData"] = data;
        }
        if !matches!(
            code,
            code::REQUEST_CANCELLED | code::CONTENT_MODIFIED | code::INVALID_PARAMS
        ) {
            detail["stderrTail"] = json!(stderr_tail);
        }
        HostError::new(code, message).with_data(detail)
    }
}

/// What Lean's crash codes mean, and what to do (`Lean.Server.Watchdog`: the exit code of the
/// file's worker decides the code; the watchdog itself goes on serving the other files).
fn crash_meaning(lean_code: i64) -> Option<String> {
    let how = match lean_code {
        -32901 => "exited with an uncaught exception (exit code 1)",
        -32902 => {
            "crashed (not by an exception: a stack overflow, a signal or an out-of-memory kill)"
        }
        _ => return None,
    };
    Some(format!(
        "The file's Lean worker {how}. Lean restarts a worker on the file's next change, and \
         lean-beam-mcp revives it that way once per call, so it failed again: change the text \
         that makes it fail (its last stderr lines are in data.stderrTail), then call again"
    ))
}

impl From<HostError> for ToolError {
    fn from(error: HostError) -> ToolError {
        let tool_error = ToolError::new(error.code, error.message);
        match error.data {
            Some(data) => tool_error.with_data(data),
            None => tool_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lean_errors_keep_their_meaning() {
        let tail = vec!["Stack overflow detected. Aborting.".to_owned()];
        let crashed = HostError::from_lean("textDocument/hover", -32902, "crashed", None, tail);
        assert_eq!(crashed.code, code::WORKER_CRASHED);
        let data = crashed.data.unwrap();
        assert_eq!(data["leanError"], "workerCrashed");
        assert_eq!(data["stderrTail"][0], "Stack overflow detected. Aborting.");
        let closed = HostError::from_lean("x", -32801, "", None, vec!["noise".into()]);
        assert!(closed.data.as_ref().unwrap().get("stderrTail").is_none());
        assert_eq!(closed.code, code::CONTENT_MODIFIED);
        assert!(closed.message.contains("contentModified (-32801)"));
        let exited = HostError::from_lean(
            "textDocument/hover",
            -32901,
            "Server process for file:///p/A.lean crashed, see stderr for exception.",
            None,
            Vec::new(),
        );
        assert_eq!(exited.code, code::WORKER_EXITED);
        assert!(
            exited
                .message
                .contains("exception. The file's Lean worker exited with an uncaught exception"),
            "{}",
            exited.message
        );
    }
}
