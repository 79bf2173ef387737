//! The Lean contract check itself (`support::contract`, `tests/lean-contract`): a Lean host test
//! whose Lean sends what Lean never sends fails, naming the rule and the message; and the same
//! check reads a host's own LSP trace, as the real-Lean lane does.

use std::path::Path;

use serde_json::json;

use crate::harness::{Lean, Project, args, fake_lake, fake_only};
use crate::support::contract::{Contract, fake_violations, host_violations};
use crate::support::{McpProcess, call, request};

/// A file whose Lake set-up fails: Lean reports a header error over the whole file.
const BROKEN: &str =
    "-- fake: setup-fail \"no such package\"\nimport Missing.Package\n\ndef a := 1\n";

/// The text of a panic.
fn said(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// A host test run against a fake that sends a header error with `range` = `fullRange`
/// (`FAKE_LEAN_CONTRACT_BREAK=header-range`) fails when it ends, though its own assertions
/// pass: the harness is run here in-process and its panic caught.
#[test]
fn a_host_test_whose_lean_breaks_the_contract_fails() {
    if fake_only("a_host_test_whose_lean_breaks_the_contract_fails") {
        return;
    }
    let outcome = std::panic::catch_unwind(|| {
        let project = Project::fixture();
        project.write("Fixture/Broken.lean", BROKEN);
        let env = [("FAKE_LEAN_CONTRACT_BREAK", "header-range")];
        let mut lean = Lean::start(&[&project], &[], &env);
        let sync = lean.call(
            "lean_sync",
            args(&project, "Fixture/Broken.lean", json!({})),
        );
        assert!(sync.get("result").is_some(), "{sync}");
        // The test's own end: the drop runs the check.
    });
    let panic = outcome.expect_err("the contract check fails the test");
    let said = said(panic.as_ref());
    assert!(
        said.contains("rule diagnostic.header-error broken"),
        "{said}"
    );
    assert!(said.contains("diagnosticsOfHeaderError"), "{said}");
    assert!(said.contains("Broken.lean"), "{said}");
}

/// The LSP trace the host writes (`--trace-dir`, as the real-Lean lane turns it on) goes
/// through the same checker: a session against the fake passes, and with the lane's own set-up
/// (`Contract::for_lane`) the broken header error is found in the host's record of it too, once
/// for each time the fake's own check found it.
#[test]
fn the_host_s_lsp_trace_goes_through_the_same_check() {
    if fake_only("the_host_s_lsp_trace_goes_through_the_same_check") {
        return;
    }
    let project = Project::fixture();
    project.write("Fixture/Broken.lean", BROKEN);
    let traces = tempfile::tempdir().unwrap();
    let plain = traces.path().join("plain");
    let mut lean = Lean::start(&[&project], &["--trace-dir", plain.to_str().unwrap()], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let hover = json!({"version": 1, "line": 16, "character": 36});
    lean.ok("lean_hover", args(&project, "Fixture/Basic.lean", hover));
    lean.finish_without_violations();
    assert_checked(&plain);
    assert_eq!(host_violations(&plain), Vec::<String>::new());

    // The real-Lean lane's own set-up, here against a fake that breaks the contract.
    let mut lane = Contract::for_lane(&[], true);
    let (trace, at) = lane.fake_env();
    let mut arguments = vec!["--lake".to_owned(), fake_lake().display().to_string()];
    arguments.extend(lane.server_args(&[]));
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let env = [
        (trace, at.as_str()),
        ("FAKE_LEAN_CONTRACT_BREAK", "header-range"),
    ];
    let mut server = McpProcess::server_with_env(&arguments, &env);
    server.initialize_legacy();
    let sync = call(
        "lean_sync",
        args(&project, "Fixture/Broken.lean", json!({})),
    );
    server.ask(request(2, "tools/call", sync));
    drop(server.finish());
    let found = lane.violations();
    lane.mark_checked();
    let by_fake = fake_violations(&lane.fake_trace());
    let by_host: Vec<&String> = found.iter().filter(|v| v.contains("-lsp-")).collect();
    assert!(!by_fake.is_empty());
    assert_eq!(by_host.len(), by_fake.len(), "{found:#?}");
    assert!(
        by_host
            .iter()
            .all(|v| v.contains("rule diagnostic.header-error broken")),
        "{by_host:#?}"
    );
}

/// The directory holds one LSP trace, and the checker read messages from it.
fn assert_checked(dir: &Path) {
    let lsp: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("-lsp-"))
        .collect();
    assert_eq!(lsp.len(), 1, "one Lean start, one LSP trace");
    let text = std::fs::read_to_string(lsp[0].path()).unwrap();
    let checked = lean_contract::check_host_trace(&text);
    assert!(checked.messages > 10, "{checked:?}");
    assert_eq!(checked.unreadable, 0, "{checked:?}");
}
