//! `lean_save` and `lean_close_save`: a checkpoint through `lake build +<Module>` after the
//! barrier; the refusal of a document with errors; files that are no module; Lake's job lines
//! as progress; a failed build; a source that changes during the build; cancellation that ends
//! the build; Lean told about rewritten artifacts.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, notification, request};

const OLEAN: &str = ".lake/build/lib/lean/Fixture/Basic.olean";

/// The `lake build` processes running in the project.
fn builds_running(project: &Project) -> Vec<u32> {
    project
        .processes()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .split('\0')
                        .any(|a| a == "build")
                })
                .unwrap_or(false)
        })
        .collect()
}

/// The path a result names, with the redacted root put back.
fn on_disk(project: &Project, reported: &Value) -> std::path::PathBuf {
    let reported = reported.as_str().expect("a path");
    let relative = reported
        .strip_prefix("[root]/")
        .unwrap_or_else(|| panic!("{reported} is not in the project"));
    project.root().join(relative)
}

/// The fake's record of `lake <command>` runs.
fn lake_runs(lean: &Lean, command: &str) -> usize {
    let event = format!("lake-{command}");
    lean.trace().iter().filter(|t| t["event"] == event).count()
}

fn save_with(lean: &mut Lean, id: i64, tool: &str, arguments: Value, meta: Value) -> Vec<Value> {
    let mut params = call(tool, arguments);
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    lean.server.send(&request(id, "tools/call", params));
    lean.server.until_response(&json!(id))
}

#[test]
fn save_writes_the_artifacts_lake_keeps_and_a_second_save_rebuilds_nothing() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let saved = lean.ok("lean_save", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(saved["path"], "Fixture/Basic.lean");
    assert_eq!(saved["module"], "Fixture.Basic");
    assert_eq!(saved["version"], 1);
    assert_eq!(saved["olean"], format!("[root]/{OLEAN}"));
    assert_eq!(
        saved["c"], "[root]/.lake/build/ir/Fixture/Basic.c",
        "{saved}"
    );
    for artifact in ["olean", "ilean", "c", "trace"] {
        assert!(
            on_disk(&project, &saved[artifact]).is_file(),
            "{artifact}: {saved}"
        );
    }
    assert_eq!(saved["source_hash"].as_str().unwrap().len(), 16);
    assert_eq!(saved["sync"]["path"], "Fixture/Basic.lean");
    assert_eq!(saved["sync"]["version"], 1);
    assert_eq!(saved["sync"]["readiness"]["save_ready"], true);
    assert!(saved["sync"]["diagnostics"].get("items").is_none());
    assert_eq!(saved["document_progress"]["done"], true);
    assert_eq!(saved["workspace"]["root"], "[root]");
    let written = std::fs::metadata(project.root().join(OLEAN))
        .and_then(|m| m.modified())
        .unwrap();
    let again = lean.ok("lean_save", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(again["olean"], saved["olean"]);
    assert_eq!(
        std::fs::metadata(project.root().join(OLEAN))
            .and_then(|m| m.modified())
            .unwrap(),
        written,
        "an up-to-date module is not rebuilt"
    );
    if !crate::harness::fake_only("how often Lake and Lean were asked") {
        assert_eq!(lake_runs(&lean, "env"), 1, "the layout is read once");
        assert_eq!(lake_runs(&lean, "build"), 2);
        let told = lean
            .received()
            .iter()
            .filter(|m| *m == "workspace/didChangeWatchedFiles")
            .count();
        assert_eq!(told, 1, "the up-to-date second save tells Lean nothing");
    }
    assert!(lean.violations().is_empty(), "{:?}", lean.violations());
    crate::harness::snapshot("save", lean.server.finish_clean());
    project.wait_no_processes();
}

#[test]
fn lakes_job_lines_are_forwarded_as_progress() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let seen = save_with(
        &mut lean,
        101,
        "lean_save",
        args(&project, "Fixture/Basic.lean", json!({})),
        json!({"progressToken": "save"}),
    );
    let messages: Vec<&str> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["message"].as_str().unwrap())
        .collect();
    let at = |words: &str| {
        messages
            .iter()
            .position(|m| m.contains(words))
            .unwrap_or_else(|| panic!("no progress mentions {words:?}: {messages:#?}"))
    };
    let build = at("lake build +Fixture.Basic");
    let built = at("Built Fixture.Basic");
    assert!(build < built, "{messages:#?}");
    assert!(
        messages[built].starts_with("lean_save on Fixture/Basic.lean: ✔ ["),
        "{messages:#?}"
    );
    let values: Vec<f64> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let answer = seen.last().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    lean.server.finish_clean();
}

#[test]
fn importers_open_in_lean_are_told_the_module_was_rebuilt() {
    if crate::harness::fake_only("importers_open_in_lean_are_told_the_module_was_rebuilt") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
    let saved = lean.ok("lean_save", args(&project, "Fixture/Basic.lean", json!({})));
    let basic = "file://[root]/Fixture/Basic.lean";
    // Notifications are not answered: wait until Lean has read the last one.
    lean.wait_received("the .ilean change", |t| {
        t["method"] == "workspace/didChangeWatchedFiles"
    });
    let trace = lean.trace();
    let root = project.root().display().to_string();
    let told: Vec<Value> = trace
        .iter()
        .filter(|t| t["dir"] == "in")
        .filter(|t| {
            matches!(
                t["method"].as_str(),
                Some("textDocument/didSave" | "workspace/didChangeWatchedFiles")
            )
        })
        .map(|t| {
            let mut t = t.clone();
            t.as_object_mut().unwrap().remove("dir");
            serde_json::from_str(&t.to_string().replace(&root, "[root]")).unwrap()
        })
        .collect();
    assert_eq!(
        told,
        [
            json!({"method": "textDocument/didSave", "uri": basic}),
            json!({"method": "workspace/didChangeWatchedFiles", "changes": [
                {"uri": format!("file://[root]/{}", OLEAN.replace(".olean", ".ilean")), "type": 1}
            ]}),
        ],
        "the source saved, then its new .ilean"
    );
    assert_eq!(saved["module"], "Fixture.Basic");
    let error = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Uses.lean", json!({})),
        "syncBarrierIncomplete",
    );
    assert_eq!(error["data"]["reason"], "staleImports");
    lean.finish_without_violations();
}

#[test]
fn a_document_with_errors_is_refused_with_its_sync_and_nothing_is_built() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let error = lean.fails(
        "lean_save",
        args(&project, "Fixture/TypeError.lean", json!({})),
        "invalidParams",
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("cannot save artifacts for a document with errors; diagnostics: "),
        "{message}"
    );
    let sync = &error["data"]["sync"];
    assert_eq!(sync["path"], "Fixture/TypeError.lean");
    assert_eq!(sync["readiness"]["save_ready"], false);
    assert_eq!(sync["readiness"]["reason"], "documentErrors");
    assert!(sync["diagnostics"]["counts"]["error"].as_u64().unwrap() >= 1);
    assert!(
        !project
            .root()
            .join(".lake/build/lib/lean/Fixture/TypeError.olean")
            .exists()
    );
    if !crate::harness::fake_only("no build was run") {
        assert_eq!(lake_runs(&lean, "build"), 0);
        assert_eq!(lake_runs(&lean, "env"), 0);
    }
    crate::harness::snapshot("save_refused", lean.server.finish_clean());
}

#[test]
fn files_that_are_no_module_of_the_package_are_refused() {
    let project = Project::fixture();
    project.write("Scratch.lean", "def scratch : Nat := 1\n");
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("Elsewhere.lean");
    std::fs::write(&elsewhere, "def elsewhere : Nat := 1\n").unwrap();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let unknown = lean.fails(
        "lean_save",
        args(&project, "Scratch.lean", json!({})),
        "saveTargetNotModule",
    );
    assert_eq!(unknown["data"]["reason"], "unknownToLake");
    assert_eq!(unknown["data"]["candidates"], json!(["Scratch"]));
    assert_eq!(unknown["data"]["sync"]["readiness"]["save_ready"], true);
    assert!(
        !project
            .root()
            .join(".lake/build/lib/lean/Scratch.olean")
            .exists()
    );
    // A file outside the workspace is no file of it: refused before Lake is asked.
    let outside_path = elsewhere.display().to_string();
    let away = lean.fails(
        "lean_save",
        args(&project, &outside_path, json!({})),
        "invalidParams",
    );
    assert!(
        away["message"]
            .as_str()
            .unwrap()
            .contains("outside the workspace"),
        "{away}"
    );
    if !crate::harness::fake_only("a file under no source directory builds nothing") {
        assert_eq!(lake_runs(&lean, "build"), 1, "only Scratch was tried");
    }
    lean.server.finish_clean();
}

#[test]
fn a_library_source_directory_gives_the_module_its_name() {
    let project = Project::fixture();
    project.write(
        "lakefile.toml",
        &(project.read("lakefile.toml") + "\n[[lean_lib]]\nname = \"Src\"\nsrcDir = \"src\"\n"),
    );
    project.write(
        "src/Src/Part.lean",
        "import Fixture.Basic\n\ndef part : Nat := Fixture.double 2\n",
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    let saved = lean.ok("lean_save", args(&project, "src/Src/Part.lean", json!({})));
    assert_eq!(saved["module"], "Src.Part");
    assert_eq!(saved["path"], "src/Src/Part.lean");
    assert_eq!(saved["olean"], "[root]/.lake/build/lib/lean/Src/Part.olean");
    assert!(on_disk(&project, &saved["olean"]).is_file());
    lean.server.finish_clean();
}

#[test]
fn a_failed_build_is_an_error_with_the_build_log() {
    let project = Project::fixture();
    // Lean checks Uses against Basic as its build says it is (this Lake does not build imports
    // on open); Lake builds Basic from its source, which does not compile. (A Basic changed
    // after Lean set Uses up would make Uses' imports stale instead: `imports.rs`.)
    project.write(
        "Fixture/Basic.lean",
        &(project.read("Fixture/Basic.lean")
            + "\n-- fake: error \"type mismatch\"\ndef broken : Nat := \"no\"\n"),
    );
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Uses.lean", json!({})));
    let error = lean.fails(
        "lean_save",
        args(&project, "Fixture/Uses.lean", json!({})),
        "saveBuildFailed",
    );
    let data = &error["data"];
    assert_eq!(data["module"], "Fixture.Uses");
    assert_eq!(data["sync"]["readiness"]["save_ready"], true);
    assert_ne!(data["exitStatus"], 0);
    let failed = data["failedTargets"].as_array().unwrap();
    assert!(!failed.is_empty(), "{error}");
    let tail: Vec<&str> = data["logTail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        tail.iter()
            .any(|l| l.starts_with('✖') && l.contains("Fixture.Basic")),
        "{tail:#?}"
    );
    assert!(
        !project
            .root()
            .join(".lake/build/lib/lean/Fixture/Uses.olean")
            .exists()
    );
    crate::harness::snapshot("save_build_failed", lean.server.finish_clean());
}

/// A server whose save of `Fixture/Gated.lean` (id 101) is held inside its `lake build`, at
/// the fake's build gate `gate`; the path saved.
fn a_save_held_in_its_build(project: &Project, gate: &str) -> (Lean, &'static str) {
    let path = "Fixture/Gated.lean";
    project.write(
        path,
        &format!("-- fake: build-gate {gate}\ndef gated : Nat := 1\n"),
    );
    let mut lean = Lean::start(&[project], &[], &[]);
    lean.server.send(&request(
        101,
        "tools/call",
        call("lean_save", args(project, path, json!({}))),
    ));
    lean.gate_entered(gate);
    (lean, path)
}

#[test]
fn a_source_changed_during_the_build_is_detected() {
    if crate::harness::fake_only("a_source_changed_during_the_build_is_detected") {
        return;
    }
    let project = Project::fixture();
    let (mut lean, path) = a_save_held_in_its_build(&project, "build");
    project.write(path, "def gated : Nat := 2\n");
    lean.open_gate("build");
    let answer = lean.server.response(&json!(101));
    let error = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(error["code"], "contentModified");
    assert_eq!(error["data"]["reason"], "sourceChangedDuringSave");
    assert_eq!(error["data"]["module"], "Fixture.Gated");
    assert_eq!(error["data"]["version"], 1);
    // Lake did rewrite the artifacts (of some text): Lean is told all the same.
    lean.wait_received("the .ilean change", |t| {
        t["method"] == "workspace/didChangeWatchedFiles"
            && t["changes"][0]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with("Fixture/Gated.ilean"))
    });
    // Saving again checks and builds the new text.
    let saved = lean.ok("lean_save", args(&project, path, json!({})));
    assert_eq!(saved["version"], 2);
    crate::harness::snapshot("save_source_changed", lean.server.finish_clean());
}

#[test]
fn a_cancelled_save_ends_its_build_and_the_next_one_works() {
    if crate::harness::fake_only("a_cancelled_save_ends_its_build_and_the_next_one_works") {
        return;
    }
    let project = Project::fixture();
    let (mut lean, path) = a_save_held_in_its_build(&project, "build");
    let running = builds_running(&project);
    assert_eq!(running.len(), 1, "{running:?}");
    lean.server.send(&notification(
        "notifications/cancelled",
        json!({"requestId": 101, "reason": "changed my mind"}),
    ));
    crate::harness::wait_gone_from(project.root(), running[0]);
    assert!(builds_running(&project).is_empty());
    assert!(
        !project
            .root()
            .join(".lake/build/lib/lean/Fixture/Gated.olean")
            .exists()
    );
    lean.open_gate("build");
    let saved = lean.ok("lean_save", args(&project, path, json!({})));
    assert_eq!(saved["module"], "Fixture.Gated");
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0));
    assert!(
        !finished.transcript.contains(r#"← {"id":101,"#),
        "the cancelled save answers nothing"
    );
    project.wait_no_processes();
}

#[test]
fn the_end_of_input_during_a_build_leaves_no_process() {
    if crate::harness::fake_only("the_end_of_input_during_a_build_leaves_no_process") {
        return;
    }
    let project = Project::fixture();
    let (lean, _) = a_save_held_in_its_build(&project, "never");
    assert_eq!(builds_running(&project).len(), 1);
    let finished = lean.server.finish();
    assert_eq!(finished.status.code(), Some(0), "{}", finished.transcript);
    project.wait_no_processes();
}

#[test]
fn close_save_saves_then_closes() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let closed = lean.ok(
        "lean_close_save",
        args(
            &project,
            "Fixture/Basic.lean",
            json!({"diagnostic_scope": "all"}),
        ),
    );
    assert_eq!(closed["closed"], true);
    let saved = &closed["saved"];
    assert_eq!(saved["module"], "Fixture.Basic");
    assert_eq!(saved["olean"], format!("[root]/{OLEAN}"));
    assert!(saved.get("workspace").is_none(), "{closed}");
    assert_eq!(closed["document_progress"], saved["document_progress"]);
    assert_eq!(closed["workspace"]["root"], "[root]");
    assert!(Path::new(&project.root().join(OLEAN)).is_file());
    // Closed: the next sync opens it again, its text and so its version unchanged.
    let synced = lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    assert_eq!(synced["version"], 1);
    if !crate::harness::fake_only("the document was closed after the save") {
        // Lean answered the sync's barrier, so it has read everything sent before.
        let received = lean.received();
        let position = |method: &str| {
            received
                .iter()
                .position(|m| m == method)
                .unwrap_or_else(|| panic!("Lean never received {method}: {received:?}"))
        };
        assert!(
            position("textDocument/didSave") < position("textDocument/didClose"),
            "{received:?}"
        );
    }
    crate::harness::snapshot("close_save", lean.server.finish_clean());
}

#[test]
fn saves_of_one_workspace_take_turns() {
    if crate::harness::fake_only("saves_of_one_workspace_take_turns") {
        return;
    }
    let project = Project::fixture();
    let gated = "Fixture/Gated.lean";
    project.write(gated, "-- fake: build-gate first\ndef gated : Nat := 1\n");
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.server.send(&request(
        101,
        "tools/call",
        call("lean_save", args(&project, gated, json!({}))),
    ));
    lean.gate_entered("first");
    let mut second = call("lean_save", args(&project, "Fixture/Basic.lean", json!({})));
    second["_meta"] = json!({"progressToken": "second"});
    lean.server.send(&request(102, "tools/call", second));
    lean.server
        .wait_for("the second save waiting its turn", |m| {
            m["method"] == "notifications/progress"
                && m["params"]["progressToken"] == "second"
                && m["params"]["message"]
                    .as_str()
                    .is_some_and(|t| t.ends_with("waiting for another save in this workspace"))
        });
    assert_eq!(builds_running(&project).len(), 1, "one build at a time");
    lean.open_gate("first");
    for id in [101, 102] {
        let answer = lean.server.response(&json!(id));
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert_eq!(lake_runs(&lean, "build"), 2);
    lean.server.finish_clean();
}

#[test]
fn a_build_that_runs_out_of_time_keeps_its_log() {
    if crate::harness::fake_only("a build held after a job by the fake's gate") {
        return;
    }
    let project = Project::fixture();
    let basic = "Fixture/Basic.lean";
    let text = project.read(basic);
    project.write(basic, &format!("-- fake: build-gate-after held\n{text}"));
    // The gate is never opened: the build runs out of the Lean timeout after its first job.
    let mut lean = Lean::start(&[&project], &["--lean-timeout-ms", "2000"], &[]);
    let error = lean.fails(
        "lean_save",
        args(&project, "Fixture/Uses.lean", json!({})),
        "leanTimeout",
    );
    let tail = error["data"]["logTail"]
        .as_array()
        .expect("the build's log");
    assert!(
        tail.iter()
            .any(|l| l.as_str().unwrap().ends_with("Built Fixture.Basic")),
        "{error}"
    );
    lean.open_gate("held");
    lean.server.finish_clean();
    project.wait_no_processes();
}

#[test]
fn a_lake_that_vanished_under_a_running_server_fails_the_save_with_its_reason() {
    if crate::harness::fake_only("a copy of the fake lake removed while its server runs") {
        return;
    }
    let project = Project::fixture();
    let bin = tempfile::tempdir().unwrap();
    let lake = bin.path().join("lake");
    std::fs::copy(crate::harness::fake_lake(), &lake).unwrap();
    let lake_arg = lake.display().to_string();
    let mut lean = Lean::start(&[&project], &["--lake", &lake_arg], &[]);
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    // `lake serve` runs on; the one-shot `lake env` of a save can no longer start.
    std::fs::remove_file(&lake).unwrap();
    let error = lean.fails(
        "lean_save",
        args(&project, "Fixture/Basic.lean", json!({})),
        "runtimeSetup",
    );
    assert_eq!(error["data"]["reason"], "lakeNotFound", "{error}");
    lean.server.finish_clean();
    project.wait_no_processes();
}
