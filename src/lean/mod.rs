//! The Lean host: the tools lean-beam-mcp offers, behind the [`ToolHost`] seam of the MCP core,
//! driving the user's own Lean through stock `lake serve` (no plugin).
//!
//! Wings, from the top floor down; a wing imports only the wings below it (`tests/layout.rs`
//! holds this): `tools` (leaves: one file per tool family) · `state` (what every tool shares) ·
//! `certify` (locks, the certification checker) · `lake` (one-shot Lake commands, the
//! checkpoint behind `lean_save`) · `speculation` (twins, probes, runs, handles, proof modes) ·
//! `workspace` (descriptors, the registry of runtimes) ·
//! `session` (what Lean has open) · `server` (the `lake serve` child and its LSP client) ·
//! `feedback`, `syntax` · `options`, `progress`, `stats`, `tail`, `text` · `error`.
//!
//! Where each rule lives:
//!
//! | rule | file |
//! |---|---|
//! | what Lean has open: pins, twin leases (several twins per file, the idle one sharing the longest prefix), the document and twin bounds, waiting for a place, the generation verdicts are kept under; the only sender of `didOpen`/`didChange`/`didSave`/`didClose` | `session/set.rs` |
//! | versions (the caller's and Lean's), one allocator per workspace; applying Lean's reports; a header failure told by its shape (Lake's: an error from 0:0 whose extent covers the file; Lean's own: an error in the header of a fatal version), never a crash | `session/mirror.rs` |
//! | a diagnostic read into types, its extent (`fullRange`, else the cut `range`); what each is (setup lines, stale imports, silent); counts; readiness | `session/diagnostics.rs` |
//! | the diagnostics barrier: one complete version, strict for twins; stale imports, said by Lean or found on disk | `session/barrier.rs` |
//! | one request about a document; reviving a crashed worker; the crash grace | `session/ask.rs` |
//! | reading a source from disk: in place when small, on the blocking pool when large | `session/source.rs` |
//! | progress, the liveness notice and live logs while a call waits on a document | `session/report.rs` |
//! | goals in the goal shape | `session/goals.rs` |
//! | receipts: what a result is about (the text's hash, the configuration, the imports) and what Lean said of it; the state rules | `session/receipt.rs` |
//! | the files a result depends on, hashed through one cache: the Lake configuration a runtime loaded, what a document was checked against as Lean set it up | `session/fingerprint.rs` |
//! | which files a document is checked against: the workspace's source directories, the import closure among the workspace's files, the files its text reads (`include_str`), kept over a change that keeps the header | `session/closure.rs` |
//! | checking a receipt against the files, without Lean | `tools/receipts.rs` |
//! | a twin's link to its real file (so Lake sets the twin up as the real module): only inside `.lake`, created new, never made or removed through another link | `session/twin_file.rs` |
//! | keeping twins out of Lean's reference index (which takes a twin for its real file): twins' LSP versions below real documents', a twin given a text only while Lean holds its real file's entry, the real file reported again after a twin's close, navigation waiting for it | `session/index.rs` |
//! | starting `lake serve`, the handshake, bounded typed requests with the stderr tail, retirement, shutdown | `server/mod.rs` |
//! | what this Lean offers (its `initialize` capabilities), and which request needs which | `server/capabilities.rs` |
//! | the child's process group, its stderr tail, spawning owned children | `server/process.rs` |
//! | what a dead server leaves behind | `server/orphans.rs` |
//! | LSP correlation, cancel-on-drop, answering the server's requests | `server/lsp/client.rs` |
//! | the byte-bounded queue to Lean's stdin; a frame sent while nothing waits is written by its sender | `server/lsp/outbox.rs` |
//! | workspace descriptors and canonical roots; how any path given to the host is resolved (one walk) | `workspace/root.rs` |
//! | one runtime per root: single-flight starts, `--max-workspaces`, idle shutdown, restarts, drops | `workspace/registry.rs` |
//! | a runtime: a server, its documents, the configuration it loaded | `workspace/runtime.rs` |
//! | what counts as a Lake configuration change | `workspace/config.rs` |
//! | where twins live, and what a client may see of them | `speculation/twins.rs` |
//! | a twin's text, the one-command rule, what a verdict keeps, what a run touches, terminal commands refused | `speculation/probe.rs` |
//! | `sorry` known from axioms: `#print axioms` of what a run or edit touched, appended to its twin; its answer read back, or why it cannot confirm | `speculation/axioms.rs` |
//! | a run: its mode, its lease, its strict barrier, its verdict; a twin whose header fails (`twinSetupFailed`, naming the imports the run adds) | `speculation/run.rs` |
//! | verdicts Lean already gave: their key, what is kept, the bounds | `speculation/verdicts.rs` |
//! | one `lean_try_edit` candidate: its text, its declaration, its verdict, goals and gate from Lean's diagnostics, never `closed` with a statement changed unless allowed | `speculation/edit.rs` |
//! | one `lean_try_edit` call's candidates: the base, the pool, the deadline, `first_closed`, the patch | `speculation/trial.rs` |
//! | handles: binding, MAC, check, spend and release in one step | `speculation/handles.rs` |
//! | a position's proof mode, once per version | `speculation/modes.rs` |
//! | running `lake`, bounded and killed on every way out | `lake/run.rs` |
//! | a checkpoint: one save per workspace at a time, the module, Lean told of rewritten artifacts | `lake/checkpoint.rs` |
//! | where Lake says a module's artifacts are (`lake query`; perhaps its artifact cache), a Lake without it | `lake/query.rs` |
//! | the artifacts checked to exist, the module's `.trace` and `.ilean` in the build directory | `lake/artifacts.rs` |
//! | error codes and the data each carries | `error.rs` |
//! | reading a tool's arguments into types | `tools/args.rs` |
//! | resolving a call's workspace, file, version and position; its pin | `tools/call.rs` |
//! | the catalog's order; statistics; which tools never start Lean | `tools/mod.rs` |
//! | what a waiting call reports, and to whom | `progress.rs` |
//! | positions, offsets and URIs: the one form the host names a file by (Lean's `pathToUri`), every form Lean may have built, reading any form back | `text.rs` |
//! | bounded tails of output | `tail.rs` |
//! | reading Lean text: comments and strings, `sorry`s and holes, command starts, tactic boundaries, a declaration's statement and body, names and full names, the header's imports and where it stands, `include_str` paths, the declarations a range meets with their full names, terminal commands, what a text states and what an edit changes of it | `syntax/` |
//! | `lean_try_edit`'s arguments, `base_sha256` before and after, the candidates resolved | `tools/try_edit.rs` |
//! | a lock: what it holds (full names, closure hashes, the toolchain), canonical JSON, MAC | `certify/lock.rs` |
//! | names as Lean has them: `«»` only quotes, the candidates under the file's namespaces | `certify/names.rs` |
//! | the certification checker's run: its files under `.lake/beam/certify` (never through a link), `lake env lean --run`, its answer read into types, `checkerFailed` for anything else | `certify/runner.rs` |
//! | the checker's answer about exactly the text Lean checked (the checkpoint's build), kept while the build's `.trace` is unchanged | `certify/answers.rs` |
//! | the pre-filter; each certification reason, from the checker's answer alone | `certify/checks.rs` |
//! | the comparator bundle | `certify/bundle.rs` |
//! | `lean_lock` and `lean_certify`: arguments, the snapshot they judge, the result | `tools/lock.rs`, `tools/certify.rs` |
//! | the certification checker: the Lean program run as `lake env lean --run` on the built module, and its JSON contract | `certify/checker/` (`Checker.lean`, `CONTRACT.md`) |
//!
//! With tracing on (`HostOptions::trace`), each runtime writes its LSP traffic and Lean's stderr
//! to a trace stream of its own.

mod certify;
mod error;
mod feedback;
mod json;
mod lake;
mod options;
mod progress;
// Crate-visible so that the `fuzzing` feature can re-export the LSP frame reader and client.
pub(crate) mod server;
mod session;
mod speculation;
mod state;
mod stats;
mod syntax;
mod tail;
mod text;
pub mod tools;
mod workspace;

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::mcp::{CallContext, ServerIdentity, ToolHost, ToolResult, ToolSpec};

pub use options::{
    DEFAULT_CRASH_GRACE, DEFAULT_IDLE_TIMEOUT, DEFAULT_LEAN_TIMEOUT, DEFAULT_MAX_DOCUMENTS,
    DEFAULT_MAX_TWINS, DEFAULT_MAX_WORKSPACES, HostOptions,
};
pub use server::orphans::adopt_orphans;
use state::HostState;
pub use syntax::first_tactic;
pub use text::Position;
pub use workspace::root::PROJECT_MARKERS;

/// Instructions sent to clients in `initialize` and `server/discover`: what every tool shares,
/// said once here (and in the README) rather than in each description (`tools/schema.rs`).
pub const INSTRUCTIONS: &str = "Lean Beam runs the project's own Lean (lake serve). Every \
    workspace-bound tool takes workspace: {\"root\": \"<absolute path of the Lake project>\"}; \
    paths are relative to that root, or absolute. Positions (line, character) are 0-based, \
    characters in UTF-16 code units. Call lean_sync after each edit of a file: it returns the \
    version the position tools take, and complete diagnostic counts; pass diagnostics_in_result: \
    true (and diagnostic_scope: \"all\" for warnings) to get the messages in the result. Beam \
    never edits .lean files: edit them with your own tools, then call lean_sync. The run tools \
    (lean_run_at*, lean_run_with*, lean_try_edit) work in hidden copies and persist nothing. A \
    result that carries a receipt names the exact text Lean checked; its state \"complete\" \
    means Lean finished that text, and lean_check_receipt rechecks it later. For live progress, \
    pass _meta.progressToken on tools/call (a long wait then hears from the server at least \
    every 10 seconds); without one, a slow call sends one beam.status notice.";

/// The server identity the binary announces.
pub fn server_identity() -> ServerIdentity {
    ServerIdentity {
        name: state::SERVER_NAME.into(),
        version: state::SERVER_VERSION.into(),
        instructions: Some(INSTRUCTIONS.into()),
    }
}

/// The host the binary serves.
#[derive(Debug, Clone)]
pub struct LeanHost {
    state: Arc<HostState>,
    /// The tools served, as listed (with the argument defaults in force).
    catalog: Arc<Vec<ToolSpec>>,
}

impl LeanHost {
    /// A host with no Lean runtime started; inside a Tokio runtime it also shuts down the
    /// runtimes that sit unused for the idle timeout.
    pub fn new(options: HostOptions) -> Self {
        let idle = options.idle_timeout;
        // The command line checked the names (`tools::served`): an unknown one never gets here.
        let mut catalog =
            tools::served(options.tools.as_deref()).unwrap_or_else(|_| tools::catalog());
        tools::defaults::advertise(&mut catalog, &options);
        let state = Arc::new(HostState::new(options));
        if let (Some(idle), Ok(tokio)) = (idle, tokio::runtime::Handle::try_current()) {
            tokio.spawn(shut_down_idle(Arc::downgrade(&state), idle));
        }
        LeanHost {
            state,
            catalog: Arc::new(catalog),
        }
    }
}

/// Looks for idle runtimes a few times per idle timeout, for as long as the host lives.
async fn shut_down_idle(state: std::sync::Weak<HostState>, idle: std::time::Duration) {
    let tick = (idle / 4).clamp(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_secs(60),
    );
    loop {
        tokio::time::sleep(tick).await;
        let Some(state) = state.upgrade() else {
            return;
        };
        state.registry.shut_down_idle(idle);
    }
}

impl ToolHost for LeanHost {
    fn tools(&self) -> Vec<ToolSpec> {
        self.catalog.to_vec()
    }

    fn admitted(&self, tool: &str, arguments: &Value, ctx: &CallContext) {
        if tools::is_quiet(tool) {
            return;
        }
        if tool == tools::feedback::NAME {
            tools::feedback::admitted(arguments, ctx);
            return;
        }
        if tool == tools::admin::DROP
            && let Ok(root) = workspace::root::WorkspaceRoot::for_eviction(
                arguments.get("workspace").unwrap_or(&Value::Null),
            )
        {
            // Before the fence waits for the calls before it: none of them may wait for a Lean
            // that this drop will end anyway.
            self.state.registry.drop_requested(&root);
        }
        let path = arguments.get("path").and_then(Value::as_str);
        if let Some(path) = path {
            ctx.set_status("running", Some(path));
        }
        ctx.progress(match (tool, path) {
            (tools::admin::DROP, _) => "lean_drop_workspace: preparing workspace eviction".into(),
            (_, Some(path)) => format!("{tool} on {path}: preparing the Lean workspace"),
            (_, None) => format!("{tool}: preparing the Lean workspace"),
        });
    }

    async fn call(&self, tool: &str, mut arguments: Value, ctx: CallContext) -> ToolResult {
        if let Some(spec) = self.catalog.iter().find(|spec| spec.name == tool) {
            tools::defaults::fill(spec, &mut arguments, &self.state.options);
        }
        tools::dispatch(&self.state, tool, arguments, &ctx)
            .await
            .map_err(Into::into)
    }

    async fn shutdown(&self, deadline: Instant) {
        let _ = tokio::time::timeout_at(deadline.into(), self.state.registry.shutdown_all()).await;
        self.state.registry.kill_all();
    }

    fn kill(&self) {
        self.state.registry.kill_all();
    }
}
