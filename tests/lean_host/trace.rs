//! `--trace-dir` (and `LEAN_BEAM_TRACE_DIR`): the MCP traffic and each Lean server's LSP traffic
//! and stderr, timestamped, in files of the trace directory, bounded by `--trace-max-bytes`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::harness::{Lean, Project, args, fake_only};

/// The trace files in `dir`, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

fn named(files: &[PathBuf], part: &str) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|f| f.file_name().unwrap().to_string_lossy().contains(part))
        .cloned()
        .collect()
}

/// Every line is `<time>Z <direction> <message>`.
fn lines_of(file: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| {
            let (time, rest) = line.split_once(' ').expect("a time");
            assert!(time.ends_with('Z') && time.len() == 27, "{line}");
            let (direction, message) = rest.split_once(' ').expect("a direction");
            (direction.to_owned(), message.to_owned())
        })
        .collect()
}

#[test]
fn the_trace_holds_the_mcp_and_lsp_traffic_of_a_session() {
    if fake_only("the_trace_holds_the_mcp_and_lsp_traffic_of_a_session") {
        return;
    }
    let project = Project::fixture();
    let traces = tempfile::tempdir().unwrap();
    let dir = traces.path().join("traces");
    let mut lean = Lean::start(
        &[&project],
        &["--trace-dir", dir.to_str().unwrap()],
        &[(
            "FAKE_LAKE_LOAD_LOG",
            "info: fixture: a line of Lake's load log",
        )],
    );
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    lean.server.finish_clean();
    project.wait_no_processes();
    let all = files(&dir);
    let mcp = named(&all, "-mcp.log");
    assert_eq!(mcp.len(), 1, "{all:?}");
    let mcp = lines_of(&mcp[0]);
    assert_eq!(mcp[0].0, "client→beam");
    assert!(mcp[0].1.contains(r#""method":"initialize""#), "{mcp:?}");
    assert!(
        mcp.iter()
            .any(|(d, m)| d == "beam→client" && m.contains(r#""save_ready":true"#)),
        "{mcp:?}"
    );
    let lsp = named(&all, "-lsp-project-");
    assert_eq!(lsp.len(), 1, "one Lean start, one stream: {all:?}");
    assert!(
        lsp[0].to_string_lossy().ends_with("-1.log"),
        "named by its epoch"
    );
    let lsp = lines_of(&lsp[0]);
    let said =
        |direction: &str, words: &str| lsp.iter().any(|(d, m)| d == direction && m.contains(words));
    assert!(said("beam→lean", r#""method":"initialize""#), "{lsp:?}");
    assert!(
        said("lean→beam", r#""method":"client/registerCapability""#),
        "{lsp:?}"
    );
    assert!(
        said("beam→lean", "textDocument/waitForDiagnostics"),
        "{lsp:?}"
    );
    assert!(said("lean-stderr", "a line of Lake's load log"), "{lsp:?}");
}

#[test]
fn the_environment_turns_tracing_on_and_the_budget_bounds_it() {
    let project = Project::fixture();
    let traces = tempfile::tempdir().unwrap();
    let budget = 32 * 1024;
    let mut lean = Lean::start(
        &[&project],
        &[],
        &[
            ("LEAN_BEAM_TRACE_DIR", traces.path().to_str().unwrap()),
            ("LEAN_BEAM_TRACE_MAX_BYTES", &budget.to_string()),
        ],
    );
    // Traffic well past the budget: every file rotates, the oldest are pruned.
    for _ in 0..60 {
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
        lean.ok(
            "lean_hover",
            args(
                &project,
                "Fixture/Basic.lean",
                json!({"version": 1, "line": 7, "character": 5}),
            ),
        );
    }
    lean.server.finish_clean();
    project.wait_no_processes();
    let all = files(traces.path());
    assert!(
        !named(&all, "-mcp.1.log").is_empty(),
        "the MCP trace rotated: {all:?}"
    );
    let total: u64 = all
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    // What rotation and pruning allow: the budget, plus the two streams in use (two files
    // each, an eighth of the budget per file, give or take a line).
    assert!(
        total <= budget + 4 * (budget / 8 + 2048),
        "{total} bytes: {all:?}"
    );
}
