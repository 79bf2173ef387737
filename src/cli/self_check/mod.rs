//! `lean-beam-mcp --self-check <file.lean>`: one real cycle on one file, through the server
//! itself, with a short report a person can act on.
//!
//! Contract:
//! 1. The file must be a `.lean` file inside a Lake project (a directory above it holding
//!    `lean-toolchain`, `lakefile.toml` or `lakefile.lean`; the nearest one is the workspace);
//!    otherwise the check says so and does not start.
//! 2. The check drives the real server in this process through an MCP session (`session`), with
//!    the same flags serving would use, except that the Lean timeout is the phase timeout
//!    (`--self-check-timeout-ms`). Tracing (`--trace-dir`) traces it as it would a client's.
//! 3. The report (`report`) goes to stdout: each phase's result, time and what Lean said, what to
//!    do under a failed one (`advice`), and a verdict; progress Lean reports while a phase runs
//!    goes to stderr. The exit status is 0 when every phase passed (skipped ones aside), else 1.

mod advice;
mod phases;
mod report;
mod session;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::args::ServerArgs;
use crate::lean::{LeanHost, PROJECT_MARKERS, server_identity};
use crate::mcp::transport::TapHandle;
use crate::trace::McpTraffic;
use phases::Plan;
use report::Status;

/// Runs the check on `file` (see the contract).
pub fn run(file: &Path, args: &ServerArgs, timeout: Duration) -> ExitCode {
    let (root, relative, text) = match target(file) {
        Ok(target) => target,
        Err(why) => {
            println!("lean-beam-mcp self-check: {why}");
            return ExitCode::FAILURE;
        }
    };
    let trace = match args.trace() {
        Ok(trace) => trace,
        Err(e) => {
            println!("lean-beam-mcp self-check: cannot use the trace directory: {e}");
            return ExitCode::FAILURE;
        }
    };
    let tap: TapHandle = trace
        .as_ref()
        .map(|trace| Arc::new(McpTraffic(trace.stream("mcp"))) as _);
    let options = args.server_options(server_identity(), tap);
    let mut host_options = args.host_options(trace);
    host_options.lean_timeout = timeout;
    let plan = Plan {
        root: root.clone(),
        path: relative,
        text,
        lake: host_options.lake.clone(),
        timeout,
        // The server's own deadline, and a little for its threads to wind down.
        shutdown: options.shutdown_timeout + Duration::from_secs(1),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            println!("lean-beam-mcp self-check: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let phases = runtime.block_on(async {
        let host = LeanHost::new(host_options);
        match session::Session::start(host, options).await {
            Ok(session) => Ok(phases::run(session, &plan).await),
            Err(e) => Err(e),
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let phases = match phases {
        Ok(phases) => phases,
        Err(e) => {
            println!("lean-beam-mcp self-check: the server did not start a session: {e}");
            return ExitCode::FAILURE;
        }
    };
    let file = root.join(&plan.path);
    print!(
        "{}",
        report::render(&file, &root, &plan.lake, &phases, started.elapsed())
    );
    if phases.iter().any(|p| p.status == Status::Failed) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The workspace root, the file's path relative to it, and the file's text.
fn target(file: &Path) -> Result<(PathBuf, String, String), String> {
    let file =
        std::fs::canonicalize(file).map_err(|e| format!("cannot find {}: {e}", file.display()))?;
    if file.extension().is_none_or(|e| e != "lean") || !file.is_file() {
        return Err(format!("{} is not a .lean file", file.display()));
    }
    let root = file
        .ancestors()
        .skip(1)
        .find(|dir| PROJECT_MARKERS.iter().any(|m| dir.join(m).is_file()))
        .ok_or_else(|| {
            format!(
                "{} is not inside a Lake project: no directory above it holds lean-toolchain, \
                 lakefile.toml or lakefile.lean (`lake new` makes one)",
                file.display()
            )
        })?
        .to_path_buf();
    let relative = file
        .strip_prefix(&root)
        .expect("an ancestor")
        .to_string_lossy()
        .into_owned();
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    Ok((root, relative, text))
}
