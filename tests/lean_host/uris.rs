//! Projects under paths a URI must escape — a space, reserved characters, non-ASCII — with
//! either era of Lean's `pathToUri` (`FAKE_LEAN_URI`): Lean finds a saved file's importers by
//! the exact URI it built, so a save or an edit must still reach them; and locations Lean writes
//! in its own form map back to the right file, named in the one form the host uses.

use serde_json::json;

use crate::harness::{Lean, Project, args, real_lake};

/// Each era of Lean's `pathToUri` the fake plays.
const ERAS: [&str; 2] = ["new", "old"];

/// A copy of the fixture project under a directory named `parent`, with the directory that
/// holds that one (kept for the project's life).
fn project_under(parent: &str) -> (tempfile::TempDir, Project) {
    let outer = tempfile::tempdir().expect("a temporary directory");
    let named = outer.path().join(parent);
    std::fs::create_dir(&named).expect("the named directory");
    let inner = tempfile::tempdir_in(&named).expect("a temporary directory in it");
    (outer, Project::fixture_in(inner))
}

/// The URI the host names `relative` of `project` by: Lean's newer `pathToUri` form, with
/// `parent` written as `escaped` (the rest of a temporary path needs no escape).
fn host_uri(project: &Project, parent: &str, escaped: &str, relative: &str) -> String {
    let path = project.root().join(relative).display().to_string();
    let (head, tail) = path
        .split_once(parent)
        .expect("the project is under its parent");
    for part in [head, tail] {
        assert!(
            part.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b)),
            "{part} would need escaping too"
        );
    }
    format!("file://{head}{escaped}{tail}")
}

/// Waits, against the fake, until it has read the last notification a save sends.
fn saved(lean: &Lean) {
    if real_lake().is_none() {
        lean.wait_received("the .ilean change", |t| {
            t["method"] == "workspace/didChangeWatchedFiles"
        });
    }
}

/// Saving an import, and editing it, each give the open importer its stale-imports result.
fn stale_imports_reach_the_importer(parent: &str) {
    for era in ERAS {
        let (_outer, project) = project_under(parent);
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_URI", era)]);
        lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
        lean.ok("lean_save", args(&project, "Fixture/Basic.lean", json!({})));
        saved(&lean);
        let error = lean.fails(
            "lean_sync",
            args(&project, "Fixture/Uses.lean", json!({})),
            "syncBarrierIncomplete",
        );
        assert_eq!(
            error["data"]["reason"], "staleImports",
            "a save under {parent}/ with Lean's {era} URIs: {error}"
        );
        lean.finish_without_violations();

        let (_outer, project) = project_under(parent);
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_URI", era)]);
        lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
        let basic = project.read("Fixture/Basic.lean");
        project.write("Fixture/Basic.lean", &format!("{basic}\n-- edited\n"));
        lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
        let error = lean.fails(
            "lean_sync",
            args(&project, "Fixture/Uses.lean", json!({})),
            "syncBarrierIncomplete",
        );
        assert_eq!(
            error["data"]["reason"], "staleImports",
            "an edit under {parent}/ with Lean's {era} URIs: {error}"
        );
        lean.finish_without_violations();
    }
}

#[test]
fn a_save_reaches_importers_under_a_path_with_a_space() {
    stale_imports_reach_the_importer("My Proofs");
}

#[test]
fn a_save_reaches_importers_under_a_path_with_reserved_characters() {
    stale_imports_reach_the_importer("proofs+(v2)@x");
}

#[test]
fn a_save_reaches_importers_under_a_non_ascii_path() {
    stale_imports_reach_the_importer("Beweise-ü");
}

/// A definition in another file and references in both, from Lean in its own form: each names
/// the right path and the host's one URI for it; the host opened the file by that URI too.
fn locations_map_back(parent: &str, escaped: &str) {
    for era in ERAS {
        let (_outer, project) = project_under(parent);
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_URI", era)]);
        let uses = "Fixture/Uses.lean";
        let version = lean.ok("lean_sync", args(&project, uses, json!({})))["version"].clone();
        let uri_of = |relative: &str| host_uri(&project, parent, escaped, relative);
        if real_lake().is_none() {
            let opened =
                lean.wait_received("the didOpen", |t| t["method"] == "textDocument/didOpen");
            assert_eq!(opened["uri"], uri_of(uses), "Lean's form, {era} era");
        }
        // `double` in `def quadruple (n : Nat) : Nat := double (double n)`.
        let at = json!({"version": version, "line": 8, "character": 33});
        let found = lean.ok("lean_definition", args(&project, uses, at.clone()));
        let basic = "Fixture/Basic.lean";
        assert_eq!(
            found["result"][0]["path"], basic,
            "{parent}/, {era} era: {found}"
        );
        assert_eq!(
            found["result"][0]["uri"],
            uri_of(basic),
            "{parent}/, {era} era: {found}"
        );
        let referenced = lean.ok("lean_references", args(&project, uses, at));
        let locations = referenced["result"].as_array().expect("locations");
        let mut paths: Vec<&str> = Vec::new();
        for location in locations {
            let path = location["path"].as_str().expect("a path");
            assert_eq!(
                location["uri"],
                uri_of(path),
                "{parent}/, {era} era: {referenced}"
            );
            paths.push(path);
        }
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths, [basic, uses], "{parent}/, {era} era: {referenced}");
        lean.finish_without_violations();
    }
}

#[test]
fn locations_map_back_under_a_path_with_a_space() {
    locations_map_back("My Proofs", "My%20Proofs");
}

#[test]
fn locations_map_back_under_a_path_with_reserved_characters() {
    locations_map_back("proofs+(v2)@x", "proofs%2B%28v2%29%40x");
}

#[test]
fn locations_map_back_under_a_non_ascii_path() {
    locations_map_back("Beweise-ü", "Beweise-%C3%BC");
}
