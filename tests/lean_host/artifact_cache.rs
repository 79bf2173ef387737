//! `lean_save` under Lake's artifact cache: a module Lake fetches from the cache keeps only its
//! `.ilean` and `.trace` in `.lake/build`, so the save asks Lake where the artifacts are (`lake
//! query`) and reports those paths; Lean is told of the rewritten `.ilean`; a Lake without
//! `lake query` is read through its `LEAN_PATH` as before.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_lake, fake_only};

const BASIC: &str = "Fixture/Basic.lean";
const LIB: &str = ".lake/build/lib/lean/Fixture/Basic";

/// Lake's artifact cache, on, in a directory of its own (`[cache]` in results).
struct Cache {
    dir: tempfile::TempDir,
}

impl Cache {
    fn new() -> Cache {
        Cache {
            dir: tempfile::tempdir().expect("a cache directory"),
        }
    }

    fn path(&self) -> String {
        self.dir.path().display().to_string()
    }

    /// A server whose Lake keeps artifacts in this cache: the fake restoring as `mode` says, a
    /// real Lake told by `LAKE_ARTIFACT_CACHE`, both by `LAKE_CACHE_DIR`.
    fn start(&self, project: &Project, mode: &str, more: &[(&str, &str)]) -> Lean {
        let dir = self.path();
        let mut env = vec![
            ("FAKE_LAKE_ARTIFACT_CACHE", mode),
            ("LAKE_ARTIFACT_CACHE", "true"),
            ("LAKE_CACHE_DIR", dir.as_str()),
        ];
        env.extend_from_slice(more);
        let mut lean = Lean::start(&[project], &[], &env);
        lean.server.replace(&dir, "[cache]");
        lean
    }
}

/// The path a result names, with the redacted roots put back.
fn on_disk(project: &Project, cache: &Cache, reported: &Value) -> PathBuf {
    let reported = reported.as_str().expect("a path");
    if let Some(relative) = reported.strip_prefix("[root]/") {
        return project.root().join(relative);
    }
    match reported.strip_prefix("[cache]/") {
        Some(relative) => cache.dir.path().join(relative),
        None => panic!("{reported} is neither in the project nor in the cache"),
    }
}

/// The `.ilean` changes Lean was told of: `(uri, type)`.
fn ilean_changes(lean: &Lean) -> Vec<(String, u64)> {
    lean.trace()
        .iter()
        .filter(|t| t["dir"] == "in" && t["method"] == "workspace/didChangeWatchedFiles")
        .flat_map(|t| t["changes"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["uri"].as_str().unwrap().to_owned(),
                c["type"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn ilean_uri(project: &Project) -> String {
    format!("file://{}/{LIB}.ilean", project.root().display())
}

/// Removes what the module's builds left in `.lake/build`, as a fresh checkout has none.
fn clear_build_dir(project: &Project) {
    let lib = project.root().join(LIB);
    for ext in [
        "olean",
        "ilean",
        "trace",
        "olean.hash",
        "ilean.hash",
        "trace.hash",
    ] {
        let _ = std::fs::remove_file(lib.with_extension(ext));
    }
    let c = project.root().join(".lake/build/ir/Fixture/Basic.c");
    let _ = std::fs::remove_file(c);
}

fn under(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

#[test]
fn a_module_fetched_from_the_cache_is_saved_with_the_paths_lake_reports() {
    let project = Project::fixture();
    let cache = Cache::new();
    let mut lean = cache.start(&project, "fetch", &[]);
    let artifacts = cache.dir.path().join("artifacts");
    let saved = lean.ok("lean_save", args(&project, BASIC, json!({})));
    assert_eq!(saved["module"], "Fixture.Basic");
    for artifact in ["olean", "ilean", "c", "trace"] {
        assert!(
            on_disk(&project, &cache, &saved[artifact]).is_file(),
            "{artifact}: {saved}"
        );
    }
    // Lake's record of the module is always in the build directory.
    assert_eq!(saved["trace"], format!("[root]/{LIB}.trace"));
    if !fake_only("a first build that fetches from the cache") {
        assert!(
            under(&on_disk(&project, &cache, &saved["olean"]), &artifacts),
            "{saved}"
        );
        assert!(
            under(&on_disk(&project, &cache, &saved["c"]), &artifacts),
            "{saved}"
        );
        assert_eq!(saved["ilean"], format!("[root]/{LIB}.ilean"));
        assert!(!project.root().join(format!("{LIB}.olean")).exists());
        assert!(saved.get("olean_server").is_none(), "{saved}");
        lean.wait_received("the new .ilean", |t| {
            t["method"] == "workspace/didChangeWatchedFiles"
        });
        assert_eq!(ilean_changes(&lean), [(ilean_uri(&project), 1)]);
        // Fetched again, up to date: nothing was rewritten, Lean is told nothing.
        let again = lean.ok("lean_save", args(&project, BASIC, json!({})));
        assert_eq!(again["olean"], saved["olean"]);
        assert_eq!(ilean_changes(&lean).len(), 1);
    }
    // A checkout whose build directory never held the module: Lake fetches it (a real Lake
    // after the build above, which put the module in the cache).
    clear_build_dir(&project);
    let fetched = lean.ok("lean_save", args(&project, BASIC, json!({})));
    let olean = on_disk(&project, &cache, &fetched["olean"]);
    assert!(olean.is_file(), "{fetched}");
    assert!(on_disk(&project, &cache, &fetched["ilean"]).is_file());
    assert_eq!(fetched["trace"], format!("[root]/{LIB}.trace"));
    if !fake_only("Lean told of the fetched .ilean") {
        assert!(under(&olean, &artifacts), "{fetched}");
        lean.wait_received_count("two .ilean changes", 2, |t| {
            t["method"] == "workspace/didChangeWatchedFiles"
        });
        assert_eq!(ilean_changes(&lean)[1], (ilean_uri(&project), 1));
    }
    lean.finish_without_violations();
}

#[test]
fn restoring_every_artifact_saves_the_build_directorys_files() {
    if fake_only("restoreAllArtifacts, a package option of the fake's lakefile") {
        return;
    }
    let project = Project::fixture();
    let cache = Cache::new();
    let mut lean = cache.start(&project, "restore-all", &[]);
    let saved = lean.ok("lean_save", args(&project, BASIC, json!({})));
    assert_eq!(saved["olean"], format!("[root]/{LIB}.olean"));
    assert_eq!(saved["ilean"], format!("[root]/{LIB}.ilean"));
    assert_eq!(saved["c"], "[root]/.lake/build/ir/Fixture/Basic.c");
    assert_eq!(saved["trace"], format!("[root]/{LIB}.trace"));
    lean.finish_without_violations();
}

#[test]
fn a_module_built_before_the_cache_was_on_is_fetched_and_lean_told_its_ilean_changed() {
    if fake_only("a module built by the fake before the server starts") {
        return;
    }
    let project = Project::fixture();
    let built = std::process::Command::new(fake_lake())
        .args(["build", "+Fixture.Basic"])
        .current_dir(project.root())
        .env_remove("FAKE_LAKE_ARTIFACT_CACHE")
        .output()
        .expect("the fake lake runs");
    assert!(built.status.success(), "{built:?}");
    assert!(project.root().join(format!("{LIB}.olean")).is_file());
    let cache = Cache::new();
    let mut lean = cache.start(&project, "fetch", &[]);
    // Another text: Lake fetches it, clearing the local .olean and rewriting the .ilean.
    project.write(BASIC, &(project.read(BASIC) + "\n-- edited\n"));
    let saved = lean.ok("lean_save", args(&project, BASIC, json!({})));
    assert!(
        saved["olean"]
            .as_str()
            .unwrap()
            .starts_with("[cache]/artifacts/")
    );
    assert!(!project.root().join(format!("{LIB}.olean")).exists());
    lean.wait_received("the changed .ilean", |t| {
        t["method"] == "workspace/didChangeWatchedFiles"
    });
    assert_eq!(ilean_changes(&lean), [(ilean_uri(&project), 2)]);
    lean.finish_without_violations();
}

#[test]
fn a_lake_without_query_is_read_through_its_lean_path() {
    if fake_only("a Lake without `lake query`") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[("FAKE_LAKE_QUERY", "0")]);
    let saved = lean.ok("lean_save", args(&project, BASIC, json!({})));
    assert_eq!(saved["olean"], format!("[root]/{LIB}.olean"));
    assert_eq!(saved["c"], "[root]/.lake/build/ir/Fixture/Basic.c");
    let queries = lean
        .trace()
        .iter()
        .filter(|t| t["event"] == "lake-query")
        .count();
    assert_eq!(
        queries, 1,
        "Lake was asked, and said it has no such command"
    );
    lean.finish_without_violations();
}

/// An import changed while Lake built the module: the build succeeded on the old import, and
/// Lake's own record (`lake query --no-build`, exit 3: a target needs a build) says the module
/// is no longer up to date, so the save is `contentModified`, never artifacts of another input.
#[test]
fn an_import_changed_during_the_build_is_content_modified() {
    if fake_only("a build held at the fake's gate after its module's job") {
        return;
    }
    let project = Project::fixture();
    let uses = "Fixture/Uses.lean";
    let text = project.read(uses);
    project.write(uses, &format!("-- fake: build-gate-after held\n{text}"));
    let mut lean = Lean::start(&[&project], &[], &[]);
    let id = lean.id();
    let save = args(&project, uses, json!({}));
    lean.server.send(&crate::support::request(
        id,
        "tools/call",
        crate::support::call("lean_save", save),
    ));
    lean.gate_entered("held");
    project.write(
        BASIC,
        &(project.read(BASIC) + "\n-- edited during the build\n"),
    );
    lean.open_gate("held");
    let answer = lean.server.response(&json!(id))["result"].clone();
    let error = &answer["structuredContent"];
    assert_eq!(error["code"], "contentModified", "{answer}");
    assert_eq!(
        error["data"]["reason"], "importChangedDuringSave",
        "{answer}"
    );
    assert_eq!(error["data"]["module"], "Fixture.Uses");
    lean.finish_without_violations();
}
