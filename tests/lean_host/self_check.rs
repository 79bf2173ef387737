//! `lean-beam-mcp --self-check <file>`: one real cycle through the server on one file, its
//! report, its exit status, and the advice for what a new user meets first (no `lake`, a Lake
//! configuration that does not load, a Lean that never answers). The passing scenarios also run
//! in the real-Lean lane.

use std::path::Path;
use std::process::{Command, Output};

use crate::harness::{Project, fake_only, lake, snapshot};
use crate::support::contract::Contract;
use crate::support::{hide_times, server_bin};

/// Runs the self-check on `file` of `project` with the suite's `lake` (unless `args` names
/// one), the fake's switches `env`, and no trace; its output, once what Lean sent has passed the
/// Lean contract check.
fn self_check(project: &Project, file: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut contract = Contract::new(args);
    let (trace, at) = contract.fake_env();
    let mut command = Command::new(server_bin());
    if !args.contains(&"--lake") {
        command.arg("--lake").arg(lake());
    }
    command
        .args(args)
        .args(contract.server_args(args))
        .env(trace, at)
        .arg("--self-check")
        .arg(project.root().join(file))
        .env_remove("LEAN_BEAM_TRACE_DIR")
        .env_remove("LEAN_BEAM_SELF_CHECK_TIMEOUT_MS")
        .envs(env.iter().copied());
    let output = command.output().expect("the server runs");
    // Nothing the check started outlives it.
    project.wait_no_processes();
    contract.check();
    output
}

/// The report, with machine paths and times replaced by placeholders (a time keeps its
/// column, so the layout is pinned too).
fn report(project: &Project, output: &Output) -> String {
    let text = String::from_utf8(output.stdout.clone()).expect("utf-8");
    let text = text
        .replace(&project.root().display().to_string(), "[root]")
        .replace(&lake().display().to_string(), "[lake]");
    text.lines().map(hide_times).collect::<Vec<_>>().join("\n") + "\n"
}

fn status_of(output: &Output) -> Option<i32> {
    output.status.code()
}

#[test]
fn times_are_hidden_in_their_column() {
    assert_eq!(
        hide_times("  ok    a     12 ms  x 3 s"),
        "  ok    a       [t]  x [t]"
    );
    assert_eq!(hide_times("passed in 1.5 s."), "passed in [t].");
    assert_eq!(hide_times("line 19, character 2"), "line 19, character 2");
}

#[test]
fn the_self_check_passes_on_the_fixture_project() {
    let project = Project::fixture();
    let output = self_check(&project, "Fixture/Basic.lean", &[], &[]);
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(0), "{text}");
    assert_eq!(text.matches("\n  ok    ").count(), 6, "{text}");
    assert!(text.contains("All 6 phases passed"), "{text}");
    assert!(
        text.contains("goals at the first tactic (19:2, 0-based)"),
        "{text}"
    );
    snapshot("self_check_passes", text);
}

#[test]
fn a_file_without_a_proof_skips_the_position_phases_and_passes() {
    let project = Project::fixture();
    project.write("Fixture/NoProof.lean", "def answer : Nat := 42\n");
    let output = self_check(&project, "Fixture/NoProof.lean", &[], &[]);
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(0), "{text}");
    assert_eq!(text.matches("\n  skip  ").count(), 3, "{text}");
    assert!(text.contains("the file has no `by` proof"), "{text}");
}

#[test]
fn without_lake_the_self_check_says_how_to_install_lean() {
    let project = Project::fixture();
    let output = self_check(
        &project,
        "Fixture/Basic.lean",
        &["--lake", "/no/such/lake"],
        &[],
    );
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(1), "{text}");
    assert!(
        text.contains("  FAIL  start Lean (lake serve) and open the file"),
        "{text}"
    );
    assert!(
        text.contains("What to do: `/no/such/lake` cannot be run. Install Lean with elan"),
        "{text}"
    );
    assert_eq!(text.matches("\n  skip  ").count(), 4, "{text}");
    snapshot("self_check_no_lake", text);
}

#[test]
fn a_lake_configuration_that_does_not_load_is_named_with_lakes_words() {
    let project = Project::fixture();
    project.write(
        "lakefile.toml",
        "name = \"fixture\"\n[[lean_lib]\nname = \"Fixture\"\n",
    );
    let output = self_check(&project, "Fixture/Basic.lean", &[], &[]);
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(1), "{text}");
    assert!(
        text.contains("  FAIL  lean_sync: Lean checks the file"),
        "{text}"
    );
    assert!(text.contains("setup-file"), "{text}");
    assert!(
        text.contains("What to do: Lake could not set the file up"),
        "{text}"
    );
    assert!(
        text.contains("  ok    close the file and stop Lean"),
        "{text}"
    );
    snapshot("self_check_broken_lakefile", text);
}

/// Newer workers write Lake's own error with no command (`lean-language-server.md` Part 3):
/// the self-check tells the failure by its shape, not by the words `lake setup-file`.
#[test]
fn a_configuration_that_does_not_load_is_named_in_every_workers_words() {
    if fake_only("a newer worker's setup failure text") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "lakefile.toml",
        "name = \"fixture\"\n[[lean_lib]\nname = \"Fixture\"\n",
    );
    let env = [("FAKE_LEAN_SETUP_TEXT", "bare")];
    let output = self_check(&project, "Fixture/Basic.lean", &[], &env);
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(1), "{text}");
    assert!(!text.contains("setup-file"), "{text}");
    assert!(text.contains("error: ./lakefile.toml:2:"), "{text}");
    assert!(
        text.contains("What to do: Lake could not set the file up"),
        "{text}"
    );
}

#[test]
fn a_lean_that_never_answers_times_out_with_advice() {
    if fake_only("a_lean_that_never_answers_times_out_with_advice") {
        return;
    }
    let project = Project::fixture();
    let output = self_check(
        &project,
        "Fixture/Basic.lean",
        &["--self-check-timeout-ms", "300"],
        &[("FAKE_LEAN_NO_INIT", "1")],
    );
    let text = report(&project, &output);
    assert_eq!(status_of(&output), Some(1), "{text}");
    assert!(
        text.contains("did not answer initialize within 300ms"),
        "{text}"
    );
    assert!(
        text.contains("What to do: Lean did not answer within [t]. A first open"),
        "{text}"
    );
    snapshot("self_check_hung", text);
}

#[test]
fn a_file_outside_a_project_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("Lone.lean");
    std::fs::write(&file, "def x := 1\n").unwrap();
    let output = Command::new(server_bin())
        .args(["--lake", "/no/such/lake", "--self-check"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert!(text.contains("is not inside a Lake project"), "{text}");
    assert!(Path::new(&file).exists());
    let not_lean = Command::new(server_bin())
        .arg("--self-check")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(not_lean.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&not_lean.stdout).contains("is not a .lean file"));
}

#[test]
fn a_traced_self_check_leaves_its_mcp_and_lsp_traffic_behind() {
    let project = Project::fixture();
    let traces = tempfile::tempdir().unwrap();
    let output = self_check(
        &project,
        "Fixture/Basic.lean",
        &["--trace-dir", traces.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(status_of(&output), Some(0), "{}", report(&project, &output));
    let names: Vec<String> = std::fs::read_dir(traces.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mcp = names
        .iter()
        .find(|n| n.ends_with("-mcp.log"))
        .expect("an MCP trace");
    assert!(
        names.iter().any(|n| n.contains("-lsp-project-")),
        "an LSP trace: {names:?}"
    );
    let text = std::fs::read_to_string(traces.path().join(mcp)).unwrap();
    assert!(text.contains(r#""name":"lean_run_at""#), "{text}");
}
