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
