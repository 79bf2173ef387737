//! A worker that dies after the file moved on: Lean holds every request about a dead worker's
//! file until a `didChange` restarts it, so when a call's request fails with a crash code and
//! another call had already given Lean a newer text (which died with the worker: one worker
//! holds every version of a file), the call revives that text before asking again, and answers.
//! Found by the no-false-complete suite (a sync hung until the Lean timeout when the file was
//! rewritten to a crashing text while an import was stale).

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_only};
use crate::support::{call, request};

const MAIN: &str = "Fixture/Main.lean";
const DEP: &str = "Fixture/Dep.lean";

/// Main: a proof, then a definition from Dep, the worker crashing on it when `crash`; with a
/// gate before it when `gated`. `mark` only tells two texts apart.
fn main_text(crash: bool, gated: bool, mark: u8) -> String {
    let crash = if crash { " -- fake: crash" } else { "" };
    let gate = if gated { "-- fake: gate g\n" } else { "" };
    format!(
        "import Fixture.Dep\n\nnamespace Main\n\n\
         theorem swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  \
         · exact hq\n  · exact hp\n\n{gate}def useDep : Nat := Dep.value{crash}\n\n\
         -- {mark}\nend Main\n"
    )
}

fn dep(value: u8) -> String {
    format!("namespace Dep\n\ndef value : Nat := {value}\n\nend Dep\n")
}

#[test]
fn a_request_failed_by_a_crash_revives_the_newer_text_that_died_with_the_worker() {
    if fake_only("a crash held at the fake's gate") {
        return;
    }
    let project = Project::fixture();
    project.write(MAIN, &main_text(false, false, 0));
    project.write(DEP, &dep(1));
    let mut lean = Lean::start(&[&project], &[], &[]);
    lean.ok("lean_sync", args(&project, DEP, json!({})));
    lean.ok("lean_sync", args(&project, MAIN, json!({})));
    // Dep changes: Main's imports are out of date (a stale notice on it).
    project.write(DEP, &dep(3));
    lean.ok("lean_sync", args(&project, DEP, json!({})));
    // A sync of a text that crashes, held before the crash...
    project.write(MAIN, &main_text(true, true, 1));
    let sync = lean.id();
    let arguments = args(&project, MAIN, json!({}));
    lean.server
        .send(&request(sync, "tools/call", call("lean_sync", arguments)));
    lean.gate_entered("g");
    // ... while another call gives Lean a newer text, which crashes the same way.
    project.write(MAIN, &main_text(true, true, 2));
    let update = lean.ok("lean_update", args(&project, MAIN, json!({})));
    assert_eq!(update["changed"], true, "{update}");
    let newer = lean.wait_received("the newer text", |t| {
        t["method"] == "textDocument/didChange" && t["uri"].as_str().unwrap().ends_with(MAIN)
    })["version"]
        .as_i64()
        .unwrap();
    lean.open_gate("g");
    let answer: Value = lean.server.response(&json!(sync));
    let failed = &answer["result"]["structuredContent"];
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_ne!(failed["code"], "internalError", "{answer}");
    // After the crash answer, the newer text was revived (a later version) before Lean was
    // asked again.
    let trace = lean.trace();
    let crash = trace
        .iter()
        .position(|t| t["dir"] == "out" && matches!(t["error"].as_i64(), Some(-32902)))
        .expect("the crash answer");
    let after: Vec<&Value> = trace[crash..].iter().filter(|t| t["dir"] == "in").collect();
    let revival = after
        .iter()
        .position(|t| {
            t["method"] == "textDocument/didChange" && t["version"].as_i64() > Some(newer)
        })
        .expect("a revival after the crash");
    let asked = after
        .iter()
        .position(|t| t["method"] == "textDocument/waitForDiagnostics")
        .expect("Lean asked again");
    assert!(revival < asked, "{after:?}");
    lean.finish_without_violations();
}
