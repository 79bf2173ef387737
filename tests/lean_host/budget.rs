//! Lean's memory within the bounds the user sets: documents beyond `--max-documents` are closed
//! least recently used first, workspaces beyond `--max-workspaces` and workspaces idle for
//! `--idle-timeout-ms` are shut down, and the next call brings each back lazily with the same
//! versions — no visible difference but latency. `beam_stats` shows what is open and what was
//! let go.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::peak_rss_kib;

fn files(project: &Project) -> [&'static str; 3] {
    let names = ["Fixture/One.lean", "Fixture/Two.lean", "Fixture/Three.lean"];
    for (n, name) in names.iter().enumerate() {
        project.write(name, &format!("def value{n} : Nat := {n}\n"));
    }
    names
}

fn lean_stats(lean: &mut Lean) -> Value {
    let stats = lean.ok("beam_stats", json!({}));
    stats["workspaces"]["local:[root]"].clone()
}

#[test]
fn documents_beyond_the_budget_are_closed_and_come_back_unchanged() {
    let project = Project::fixture();
    let names = files(&project);
    let mut lean = Lean::start(&[&project], &["--max-documents", "2"], &[]);
    let versions: Vec<Value> = names
        .iter()
        .map(|name| lean.ok("lean_sync", args(&project, name, json!({})))["version"].clone())
        .collect();
    let workspace = lean_stats(&mut lean);
    assert_eq!(
        workspace["sessions"]["lean"]["openDocCount"], 2,
        "{workspace}"
    );
    assert_eq!(workspace["sessions"]["lean"]["documentsClosedForBudget"], 1);
    if !crate::harness::fake_only("the least recently used document's didClose") {
        lean.wait_received("One.lean's didClose", |t| {
            t["method"] == "textDocument/didClose"
                && t["uri"].as_str().is_some_and(|u| u.ends_with("One.lean"))
        });
    }
    // The closed document answers at the version its caller holds.
    let hover = lean.ok(
        "lean_hover",
        args(
            &project,
            names[0],
            json!({"version": versions[0], "line": 0, "character": 4}),
        ),
    );
    assert!(hover.to_string().contains("value0"), "{hover}");
    assert_eq!(lean_stats(&mut lean)["sessions"]["lean"]["openDocCount"], 2);
    lean.server.finish_clean();
}

#[test]
fn the_least_recently_used_workspace_makes_room_and_comes_back() {
    let first = Project::fixture();
    let second = Project::fixture();
    let mut lean = Lean::start(&[&first, &second], &["--max-workspaces", "1"], &[]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&first, basic, json!({})))["version"].clone();
    lean.ok("lean_sync", args(&second, basic, json!({})));
    first.wait_no_processes();
    let stats = lean.ok("beam_stats", json!({}));
    let gone = &stats["workspaces"]["local:[root]"];
    assert_eq!(gone["sessions"]["lean"]["active"], false, "{stats}");
    assert_eq!(gone["byBackend"]["lean"]["budgetShutdowns"], 1, "{stats}");
    let back = lean.ok(
        "lean_hover",
        args(
            &first,
            basic,
            json!({"version": version, "line": 16, "character": 36}),
        ),
    );
    assert!(back.to_string().contains("Fixture.add"), "{back}");
    second.wait_no_processes();
    lean.server.finish_clean();
    first.wait_no_processes();
}

#[test]
fn an_idle_workspace_is_shut_down_and_comes_back() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &["--idle-timeout-ms", "100"], &[]);
    let basic = "Fixture/Basic.lean";
    let version = lean.ok("lean_sync", args(&project, basic, json!({})))["version"].clone();
    // Lean is let go once nothing has used it for the idle time.
    project.wait_no_processes();
    let workspace = lean_stats(&mut lean);
    assert_eq!(
        workspace["sessions"]["lean"]["active"], false,
        "{workspace}"
    );
    assert_eq!(
        workspace["byBackend"]["lean"]["idleShutdowns"], 1,
        "{workspace}"
    );
    let synced = lean.ok("lean_sync", args(&project, basic, json!({})));
    assert_eq!(
        synced["version"], version,
        "the same text, the same version"
    );
    assert_eq!(
        lean_stats(&mut lean)["byBackend"]["lean"]["sessionStarts"],
        2
    );
    lean.server.finish_clean();
}

#[test]
fn twenty_workspaces_and_two_hundred_documents_stay_within_the_bounds() {
    if crate::harness::fake_only(
        "twenty_workspaces_and_two_hundred_documents_stay_within_the_bounds",
    ) {
        return;
    }
    let projects: Vec<Project> = (0..20).map(|_| Project::fixture()).collect();
    let names: Vec<String> = (0..10).map(|n| format!("Fixture/Doc{n}.lean")).collect();
    for project in &projects {
        for (n, name) in names.iter().enumerate() {
            project.write(name, &format!("def doc{n} : Nat := {n}\n"));
        }
    }
    let refs: Vec<&Project> = projects.iter().collect();
    let (workspaces, documents) = (2, 3);
    let mut lean = Lean::start(
        &refs,
        &["--max-workspaces", "2", "--max-documents", "3"],
        &[],
    );
    let processes =
        |projects: &[Project]| -> usize { projects.iter().map(|p| p.processes().len()).sum() };
    let mut peak = 0;
    for project in &projects {
        for name in &names {
            lean.ok("lean_sync", args(project, name, json!({})));
            peak = peak.max(processes(&projects));
        }
    }
    let rss = peak_rss_kib(lean.server.pid());
    println!(
        "200 documents in 20 workspaces, --max-workspaces {workspaces} --max-documents \
         {documents}: at most {peak} Lean processes alive at once; server peak RSS {rss} KiB"
    );
    // Each workspace: lake serve and a worker per open document; one more workspace may
    // still be shutting down when the next starts.
    assert!(
        peak <= (workspaces + 1) * (1 + documents),
        "{peak} Lean processes alive at once"
    );
    lean.server.finish_clean();
    for project in &projects {
        project.wait_no_processes();
    }
}
