//! Imports Lake cannot build: new Lake's header error `Failed to build module dependencies.`
//! (reference `lean-language-server.md` Part 3) is `importBuildFailed`, naming the module that
//! failed and Lake's errors, for every call that waits on the document, in both ways Lake
//! reports it (the fake's `FAKE_LAKE_SETUP_BUILD`); fixing the import and refreshing recovers.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};

const BROKEN: &str = "Fixture/Broken.lean";
const IMPORTER: &str = "Fixture/UsesBroken.lean";

fn project() -> Project {
    let project = Project::fixture();
    project.write(
        BROKEN,
        "def broken : Nat := oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"\n",
    );
    project.write(
        IMPORTER,
        "import Fixture.Broken\n\ntheorem fine : 1 = 1 := by\n  rfl\n",
    );
    project
}

/// The import build failure `error` is: the module, Lake's error line, what to do.
fn names_the_import(error: &Value) {
    let data = &error["data"];
    assert_eq!(data["reason"], "importBuildFailed", "{error}");
    assert_eq!(data["path"], IMPORTER, "{error}");
    assert_eq!(data["failedModules"], json!(["Fixture.Broken"]), "{error}");
    let errors: Vec<&str> = data["lakeErrors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        errors
            .iter()
            .any(|l| l.contains("Broken.lean:1:") && l.contains("unknown identifier 'oops'")),
        "{error}"
    );
    let message = error["message"].as_str().unwrap();
    for words in [
        "Fixture.Broken",
        "unknown identifier 'oops'",
        "fix",
        "lean_refresh",
    ] {
        assert!(message.contains(words), "{words:?} in {message}");
    }
    assert!(
        data["leanMessage"]
            .as_str()
            .unwrap()
            .contains("Failed to build module dependencies."),
        "{error}"
    );
}

fn an_import_that_does_not_build_is_named(scenario: &str, era: &str) {
    let real = crate::harness::real_lake().is_some();
    if real && era != "new" {
        eprintln!("{scenario}: the fake's {era} Lake only; the real Lake runs the `new` scenario");
        return;
    }
    let project = project();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LAKE_SETUP_BUILD", era)]);
    let failed = lean.fails(
        "lean_sync",
        args(&project, IMPORTER, json!({})),
        "importBuildFailed",
    );
    names_the_import(&failed);
    let version = failed["data"]["version"].clone();
    // Not a stale-import notice: a refresh builds the imports again and fails the same way.
    let refreshed = lean.fails(
        "lean_refresh",
        args(&project, IMPORTER, json!({})),
        "importBuildFailed",
    );
    names_the_import(&refreshed);
    // Every call that waits on the document says the same.
    let todo = json!({"version": version, "start_line": 0, "start_character": 0,
                      "end_line": 3, "end_character": 0, "kinds": ["diagnostic"]});
    names_the_import(&lean.fails(
        "lean_todo",
        args(&project, IMPORTER, todo),
        "importBuildFailed",
    ));
    let run = json!({"version": version, "line": 3, "character": 2, "text": "rfl"});
    names_the_import(&lean.fails(
        "lean_run_at",
        args(&project, IMPORTER, run),
        "importBuildFailed",
    ));
    // Fixed, then refreshed: Lake builds the import, and Lean checks the file.
    project.write(BROKEN, "def broken : Nat := 1\n");
    let fixed = lean.ok("lean_refresh", args(&project, IMPORTER, json!({})));
    assert_eq!(fixed["diagnostics"]["counts"]["error"], 0, "{fixed}");
    assert_eq!(fixed["readiness"]["save_ready"], true, "{fixed}");
    lean.finish_without_violations();
}

#[test]
fn an_import_that_does_not_build_is_named_new_lake() {
    an_import_that_does_not_build_is_named(
        "an_import_that_does_not_build_is_named_new_lake",
        "new",
    );
}

#[test]
fn an_import_that_does_not_build_is_named_intermediate_lake() {
    an_import_that_does_not_build_is_named(
        "an_import_that_does_not_build_is_named_intermediate_lake",
        "intermediate",
    );
}

// Receipts over the whole import closure (issue 25, defect 6): what Lean checked a file against
// is its import closure as Lake built it when Lean set the file up, and the files its text reads
// with `include_str`. A change of any of them since is a stale import, whatever Lean says: the
// 2022 watchdog never sends a stale-import notice, and nothing is sent at all for a change Lean
// is not told of.

const TOP: &str = "Fixture/Deep/A.lean";
const MIDDLE: &str = "Fixture/Deep/B.lean";
const BOTTOM: &str = "Fixture/Deep/C.lean";
const READS: &str = "Fixture/Reads.lean";
const GREETING: &str = "Fixture/Data/greeting.txt";

/// A importing B importing C, all of the project; a file whose text reads another.
fn deep_project() -> Project {
    let project = Project::fixture();
    project.write(BOTTOM, "def Deep.c : Nat := 1\n");
    project.write(
        MIDDLE,
        "import Fixture.Deep.C\n\ndef Deep.b : Nat := Deep.c\n",
    );
    project.write(
        TOP,
        "import Fixture.Deep.B\n\ntheorem Deep.a : Deep.b = Deep.b := rfl\n",
    );
    project.write(GREETING, "hello\n");
    project.write(
        READS,
        "def greeting : String := include_str \"Data/greeting.txt\"\n\n\
         theorem greeting_ok : greeting = greeting := rfl\n",
    );
    project
}

/// How a file changes.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// Written on disk, nobody told.
    Disk,
    /// Written, then synced (Lean is told: `didChange` and `didSave`).
    Synced,
    /// Written, synced, then built (`lean_save`: Lake rewrites its artifacts, Lean is told).
    Built,
}

fn change(lean: &mut Lean, project: &Project, path: &str, text: &str, how: Change) {
    project.write(path, text);
    match how {
        Change::Disk => {}
        Change::Synced => {
            lean.ok("lean_sync", args(project, path, json!({})));
        }
        Change::Built => {
            lean.ok("lean_save", args(project, path, json!({})));
        }
    }
}

/// `error` is the stale-import error about `path`, naming `changed`, with the recovery plan.
#[track_caller]
fn stale(error: &Value, path: &str, changed: &str) {
    let data = &error["data"];
    assert_eq!(data["reason"], "staleImports", "{error}");
    assert_eq!(data["receipt"]["state"], "stale_imports", "{error}");
    assert_eq!(data["receipt"]["paths"], json!([changed]), "{error}");
    assert_eq!(
        data["recoveryPlan"][0],
        format!("lean_refresh {path}"),
        "{error}"
    );
}

fn a_changed_transitive_import_is_stale(era: &str, how: Change) {
    if crate::harness::fake_only(&format!(
        "a_changed_transitive_import_is_stale {era} {how:?}"
    )) {
        return;
    }
    let project = deep_project();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_STALE_NOTICE", era)]);
    let synced = lean.ok("lean_sync", args(&project, TOP, json!({})));
    let receipt = synced["receipt"].clone();
    assert_eq!(receipt["state"], "complete", "{synced}");
    let named: Vec<&str> = receipt["imports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["path"].as_str())
        .collect();
    assert_eq!(named, [MIDDLE, BOTTOM], "{receipt}");
    change(&mut lean, &project, BOTTOM, "def Deep.c : Nat := 2\n", how);
    let checked = lean.ok(
        "lean_check_receipt",
        args(&project, TOP, json!({"receipt": receipt})),
    );
    assert_eq!(checked["holds"], false, "{checked}");
    assert_eq!(
        checked["changed"],
        json!(["import:Fixture.Deep.C"]),
        "{checked}"
    );
    let updated = lean.ok("lean_update", args(&project, TOP, json!({})));
    assert_eq!(updated["receipt"]["state"], "stale_imports", "{updated}");
    assert_eq!(updated["receipt"]["paths"], json!([BOTTOM]), "{updated}");
    let failed = lean.fails(
        "lean_sync",
        args(&project, TOP, json!({})),
        "syncBarrierIncomplete",
    );
    stale(&failed, TOP, BOTTOM);
    // The recovery the plan names: Lean sets the file up again, against the new closure.
    let refreshed = lean.ok("lean_refresh", args(&project, TOP, json!({})));
    assert_eq!(refreshed["receipt"]["state"], "complete", "{refreshed}");
    let again = lean.ok("lean_sync", args(&project, TOP, json!({})));
    assert_eq!(again["receipt"]["state"], "complete", "{again}");
    lean.finish_without_violations();
}

const CHANGES: [Change; 3] = [Change::Disk, Change::Synced, Change::Built];

#[test]
fn a_changed_transitive_import_is_stale_newest_watchdog() {
    for how in CHANGES {
        a_changed_transitive_import_is_stale("closure", how);
    }
}

#[test]
fn a_changed_transitive_import_is_stale_2022_watchdog() {
    for how in CHANGES {
        a_changed_transitive_import_is_stale("none", how);
    }
}

fn a_changed_included_file_is_stale(era: &str) {
    if crate::harness::fake_only(&format!("a_changed_included_file_is_stale {era}")) {
        return;
    }
    let project = deep_project();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_STALE_NOTICE", era)]);
    let synced = lean.ok("lean_sync", args(&project, READS, json!({})));
    assert_eq!(synced["receipt"]["state"], "complete", "{synced}");
    assert_eq!(synced["diagnostics"]["counts"]["error"], 0, "{synced}");
    let receipt = synced["receipt"].clone();
    // What the file reads decides what Lean reports: this text makes the fake report an error
    // where it is read.
    project.write(GREETING, "-- fake: error \"a bad greeting\"\n");
    let checked = lean.ok(
        "lean_check_receipt",
        args(&project, READS, json!({"receipt": receipt})),
    );
    assert_eq!(checked["holds"], false, "{checked}");
    assert_eq!(
        checked["changed"],
        json!([format!("include:{GREETING}")]),
        "{checked}"
    );
    let failed = lean.fails(
        "lean_sync",
        args(&project, READS, json!({})),
        "syncBarrierIncomplete",
    );
    stale(&failed, READS, GREETING);
    // An edit after the command that reads it: Lean may reuse what it read, still stale.
    let text = project.read(READS) + "\n-- a comment after\n";
    project.write(READS, &text);
    let failed = lean.fails(
        "lean_sync",
        args(&project, READS, json!({})),
        "syncBarrierIncomplete",
    );
    stale(&failed, READS, GREETING);
    let refreshed = lean.ok("lean_refresh", args(&project, READS, json!({})));
    assert_eq!(refreshed["receipt"]["state"], "complete", "{refreshed}");
    assert_eq!(
        refreshed["diagnostics"]["counts"]["error"], 1,
        "Lean read the new contents: {refreshed}"
    );
    lean.finish_without_violations();
}

#[test]
fn a_changed_included_file_is_stale_newest_watchdog() {
    a_changed_included_file_is_stale("closure");
}

#[test]
fn a_changed_included_file_is_stale_2022_watchdog() {
    a_changed_included_file_is_stale("none");
}

#[test]
fn unchanged_inputs_keep_complete_at_one_message_per_sync() {
    if crate::harness::fake_only("unchanged_inputs_keep_complete_at_one_message_per_sync") {
        return;
    }
    let project = deep_project();
    let mut lean = Lean::start(&[&project], &[], &[]);
    for path in [TOP, READS] {
        let first = lean.ok("lean_sync", args(&project, path, json!({})));
        assert_eq!(first["receipt"]["state"], "complete", "{first}");
    }
    let before = lean.received_after_handshake();
    for path in [TOP, READS] {
        let again = lean.ok("lean_sync", args(&project, path, json!({})));
        assert_eq!(again["receipt"]["state"], "complete", "{again}");
    }
    let sent: Vec<String> = lean.received()[before.len()..].to_vec();
    assert_eq!(
        sent,
        [
            "textDocument/waitForDiagnostics",
            "textDocument/waitForDiagnostics"
        ],
        "an unchanged document costs its barrier alone"
    );
    lean.finish_without_violations();
}
