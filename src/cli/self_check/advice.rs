//! What to do when a self-check phase fails, read from the failure's structured error.
//!
//! Contract: advice is chosen from the error's `code` and `data.reason` (and, for a failed
//! setup, from what Lean and Lake said), never from timing. The cases a user meets first each
//! get their own: no `lake` ([`NO_LAKE`]), a Lake configuration that does not load or a
//! dependency that does not build ([`Advice::LakeSetup`]), stale imports, a timeout, and Lean
//! exiting or crashing. Anything else says how to report it.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// What a failure means for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// `lake` cannot be run.
    NoLake,
    /// Lake could not set the file up: its configuration does not load, or a dependency does
    /// not build.
    LakeSetup,
    /// The file's imports are out of date.
    StaleImports,
    /// Lean did not answer in time.
    Timeout,
    /// The Lean server exited or crashed.
    LeanExited,
    /// Something else.
    Unexpected,
}

/// The advice for a structured tool error `{code, message, data?}`.
pub fn for_error(error: &Value) -> Advice {
    let reason = error["data"]["reason"].as_str().unwrap_or_default();
    let stderr_says = |words: &str| {
        error["data"]["stderrTail"].as_array().is_some_and(|lines| {
            lines
                .iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains(words)))
        })
    };
    match (error["code"].as_str().unwrap_or_default(), reason) {
        ("runtimeSetup", "lakeNotFound" | "lakeNotExecutable") => Advice::NoLake,
        ("runtimeSetup", "handshakeTimeout") | ("leanTimeout", _) => Advice::Timeout,
        ("runtimeSetup", _) if stderr_says("configuration has errors") => Advice::LakeSetup,
        ("importBuildFailed", _) => Advice::LakeSetup,
        ("runtimeSetup" | "serverExited" | "workerExited" | "workerCrashed", _) => {
            Advice::LeanExited
        }
        ("syncBarrierIncomplete", _) => Advice::StaleImports,
        _ => Advice::Unexpected,
    }
}

/// What to do, in a few sentences, for a project at `root` checked with `lake`, each phase
/// allowed `timeout`.
pub fn text(advice: Advice, root: &Path, lake: &Path, timeout: Duration) -> String {
    let root = root.display();
    match advice {
        Advice::NoLake => format!(
            "`{}` cannot be run. Install Lean with elan (curl \
             https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh), \
             open a new shell and check that `lake --version` works; or pass --lake (or set \
             LEAN_BEAM_LAKE) to a lake executable. An MCP client starts the server with its own \
             PATH: if `lake` is only on your shell's, register the server with \
             `lean-beam-mcp config <client> --write -- --lake \"$(command -v lake)\"`.",
            lake.display()
        ),
        Advice::LakeSetup => format!(
            "Lake could not set the file up: the project's Lake configuration does not load, or \
             a dependency does not build (Lake's own words are above). Run `lake build` in {root} \
             to see the error, fix lakefile.toml or lakefile.lean (or the dependency), then run \
             the self-check again."
        ),
        Advice::StaleImports => format!(
            "The file's imports are out of date, so Lean's diagnostics for it are not final. Run \
             `lake build` in {root} (for a project that uses Mathlib, `lake exe cache get` first \
             fetches it prebuilt), then run the self-check again. From an agent, lean_refresh on \
             the file rebuilds its imports."
        ),
        Advice::Timeout => format!(
            "Lean did not answer within {}. A first open may be building the project's \
             dependencies: run `lake build` in {root} first (for a project that uses Mathlib, \
             `lake exe cache get` fetches it prebuilt), then run the self-check again; or allow \
             more time with --self-check-timeout-ms. If Lean never answers even for a small file, \
             check that `lake serve` starts in {root}.",
            seconds(timeout)
        ),
        Advice::LeanExited => format!(
            "Lean's server exited or crashed (its last stderr lines, when it wrote any, are \
             above). Check that `lake env lean <file>` works in {root}, and run `lake build` \
             there to see errors in the project or its toolchain."
        ),
        Advice::Unexpected => "This is not a set-up problem the self-check knows. Please report \
             it, with the output above and a trace (run the self-check again with --trace-dir \
             DIR and attach the files in DIR)."
            .to_owned(),
    }
}

/// A duration as people read it.
pub fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{secs:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_failure_a_user_meets_first_has_its_own_advice() {
        let setup = |reason: &str| json!({"code": "runtimeSetup", "message": "m", "data": {"reason": reason}});
        assert_eq!(for_error(&setup("lakeNotFound")), Advice::NoLake);
        assert_eq!(for_error(&setup("lakeNotExecutable")), Advice::NoLake);
        assert_eq!(for_error(&setup("handshakeTimeout")), Advice::Timeout);
        assert_eq!(for_error(&setup("handshakeExited")), Advice::LeanExited);
        let config = json!({"code": "runtimeSetup", "message": "m", "data": {
            "reason": "handshakeExited",
            "stderrTail": ["warning: package configuration has errors, falling back to plain `lean --server`"]
        }});
        assert_eq!(for_error(&config), Advice::LakeSetup);
        assert_eq!(
            for_error(&json!({"code": "leanTimeout", "message": "m"})),
            Advice::Timeout
        );
        assert_eq!(
            for_error(
                &json!({"code": "syncBarrierIncomplete", "message": "m", "data": {"reason": "staleImports"}})
            ),
            Advice::StaleImports
        );
        assert_eq!(
            for_error(&json!({"code": "workerCrashed", "message": "m"})),
            Advice::LeanExited
        );
        assert_eq!(
            for_error(&json!({"code": "serverExited", "message": "m"})),
            Advice::LeanExited
        );
        assert_eq!(
            for_error(
                &json!({"code": "importBuildFailed", "message": "m", "data": {"reason": "importBuildFailed"}})
            ),
            Advice::LakeSetup
        );
        assert_eq!(
            for_error(&json!({"code": "invalidParams", "message": "m"})),
            Advice::Unexpected
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
        assert_eq!(seconds(Duration::from_millis(120_000)), "120.0 s");
    }
}
