//! Behaviours that differ by Lean or Lake era, each selectable: capabilities per era
//! (`FAKE_LEAN_CAPABILITIES`, LLS Part 3 "Capabilities vary") and new Lake's report of imports
//! that do not build (`FAKE_LAKE_SETUP_BUILD`, LLS Part 3 "Failed to build module
//! dependencies."), whom a save tells of stale imports (`FAKE_LEAN_STALE_NOTICE`); and what a
//! file read by `include_str` holds.

mod support;

use serde_json::{Value, json};
use std::process::Command;
use support::{Client, Opts, Project};

const BROKEN: &str =
    "def broken : Nat := oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"\n";
const IMPORTER: &str = "import Fixture.Broken\n\ndef fine : Nat := 1\n";

fn header_errors(msgs: &[Value]) -> Vec<Value> {
    Client::last_diagnostics(msgs)
        .into_iter()
        .filter(|d| d["severity"] == 1)
        .collect()
}

#[test]
fn the_2025_watchdog_has_no_signature_help() {
    let mut newest = Client::start(Project::new(), Opts::default());
    let init = newest.handshake(json!({}));
    assert!(init["capabilities"]["signatureHelpProvider"].is_object());
    let mut old = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LEAN_CAPABILITIES", "2025"),
    );
    let init = old.handshake(json!({}));
    assert!(init["capabilities"].get("signatureHelpProvider").is_none());
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    let uri = old.open("Fixture/Basic.lean");
    old.sync(&uri, 1);
    let id = old.request("textDocument/signatureHelp", Client::at(&uri, 16, 36));
    assert_eq!(old.error_code(&id), -32601);
    let hover = old.call("textDocument/hover", Client::at(&uri, 16, 36));
    assert!(hover["contents"].is_object(), "{hover}");
}

#[test]
fn any_provider_can_be_dropped() {
    let spec = "-referencesProvider,-codeActionProvider.resolveProvider";
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LEAN_CAPABILITIES", spec),
    );
    let init = c.handshake(json!({}));
    let caps = &init["capabilities"];
    assert!(caps.get("referencesProvider").is_none());
    assert_eq!(caps["codeActionProvider"]["resolveProvider"], false);
    assert!(caps["signatureHelpProvider"].is_object());
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    let mut at = Client::at(&uri, 7, 5);
    at["context"] = json!({"includeDeclaration": true});
    let id = c.request("textDocument/references", at);
    assert_eq!(c.error_code(&id), -32601);
}

/// The header error, Lake's setup lines and the build diagnostics of an import that fails.
fn import_fails(era: &str) -> (Client, String, Vec<Value>) {
    let project = Project::new();
    project.write("Fixture/Broken.lean", BROKEN);
    let mut c = Client::start(project, Opts::default().env("FAKE_LAKE_SETUP_BUILD", era));
    c.handshake(json!({}));
    let uri = c.project.uri("Fixture/UsesBroken.lean");
    c.open_text(&uri, IMPORTER, 1, Some("once"));
    let msgs = c.sync(&uri, 1);
    let errors = header_errors(&msgs);
    assert_eq!(errors.len(), 1, "{msgs:?}");
    assert_eq!(
        errors[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    let fatal = msgs
        .iter()
        .any(|m| m["params"]["processing"][0]["kind"] == 2);
    assert!(fatal, "fatal progress: {msgs:?}");
    let setup: Vec<String> = msgs
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .filter_map(|m| m["params"]["diagnostics"][0]["message"].as_str())
        .map(str::to_owned)
        .collect();
    assert!(
        setup.iter().any(|l| l == "✖ [1/1] Building Fixture.Broken"),
        "{setup:?}"
    );
    let message = errors[0]["message"].as_str().unwrap().to_owned();
    (c, message, msgs)
}

const LOG: &str = "✖ [1/1] Building Fixture.Broken\nerror: Fixture/Broken.lean:1:20: unknown identifier 'oops'\nSome required targets logged failures:\n- Fixture.Broken";

#[test]
fn new_lake_fails_the_setup_with_its_summary_and_lake_diagnostics() {
    let (mut c, message, _) = import_fails("new");
    assert_eq!(
        message,
        format!("Failed to build module dependencies.\n{LOG}")
    );
    let broken = c.project.uri("Fixture/Broken.lean");
    let lake = c.wait_for("Lake's diagnostics of the import", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == broken
    });
    let d = &lake["params"]["diagnostics"][0];
    assert_eq!(d["source"], "Lake");
    assert_eq!(d["severity"], 1);
    assert_eq!(d["message"], "unknown identifier 'oops'");
    assert_eq!(d["range"]["start"], json!({"line": 0, "character": 20}));
}

#[test]
fn intermediate_lake_fails_the_setup_with_its_stderr() {
    let (_, message, _) = import_fails("intermediate");
    assert_eq!(
        message,
        format!("{LOG}\nFailed to build module dependencies.")
    );
}

#[test]
fn an_import_that_fails_under_never_is_out_of_date() {
    let project = Project::new();
    project.write("Fixture/Broken.lean", BROKEN);
    let mut c = Client::start(project, Opts::default().env("FAKE_LAKE_SETUP_BUILD", "new"));
    c.handshake(json!({}));
    let uri = c.project.uri("Fixture/UsesBroken.lean");
    c.open_text(&uri, IMPORTER, 1, Some("never"));
    let errors = header_errors(&c.sync(&uri, 1));
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("must be rebuilt")
    );
    // Without the switch, imports are taken as built (the fake's older default).
    let mut plain = Client::ready(Opts::default());
    plain.project.write("Fixture/Broken.lean", BROKEN);
    let uri = plain.project.uri("Fixture/UsesBroken.lean");
    plain.open_text(&uri, IMPORTER, 1, Some("once"));
    assert!(header_errors(&plain.sync(&uri, 1)).is_empty());
}

#[test]
fn setup_file_exits_1_as_each_era_reports_it() {
    let p = Project::new();
    p.write("Fixture/Broken.lean", BROKEN);
    p.write("Fixture/UsesBroken.lean", IMPORTER);
    let run = |era: &str| {
        let mut cmd = Command::new(support::bin());
        cmd.args(["setup-file", "Fixture/UsesBroken.lean", "-"])
            .current_dir(&p.root)
            .env("FAKE_LAKE_SETUP_BUILD", era)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let header = json!({"imports": [{"module": "Fixture.Broken"}]}).to_string();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), header.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let new = run("new");
    assert_eq!(new.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&new.stdout).expect("a LakeBuildError");
    assert_eq!(
        error["summary"],
        format!("Failed to build module dependencies.\n{LOG}")
    );
    assert_eq!(error["failedTargets"], json!(["Fixture.Broken"]));
    assert_eq!(
        error["buildDiagnostics"][0]["pos"],
        json!({"line": 1, "column": 20})
    );
    let intermediate = run("intermediate");
    assert_eq!(intermediate.status.code(), Some(1));
    assert!(intermediate.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&intermediate.stderr),
        format!("{LOG}\nFailed to build module dependencies.\n")
    );
}

/// A importing B importing C; the publishes A gets after C is saved, once A's next barrier
/// answered (the notice, when one comes, precedes it on the one ordered stream).
fn saved_bottom(opts: Opts) -> (Client, Vec<Value>) {
    let project = Project::new();
    project.write("Fixture/Deep/C.lean", "def Deep.c : Nat := 1\n");
    project.write(
        "Fixture/Deep/B.lean",
        "import Fixture.Deep.C\n\ndef Deep.b : Nat := Deep.c\n",
    );
    project.write(
        "Fixture/Deep/A.lean",
        "import Fixture.Deep.B\n\ndef Deep.a : Nat := Deep.b\n",
    );
    let mut c = Client::start(project, opts);
    c.handshake(json!({}));
    let top = c.open("Fixture/Deep/A.lean");
    c.sync(&top, 1);
    let bottom = c.open("Fixture/Deep/C.lean");
    c.sync(&bottom, 1);
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": bottom}}),
    );
    let msgs = c.sync(&top, 1);
    let publishes = msgs
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == top)
        .collect();
    (c, publishes)
}

#[test]
fn a_saved_transitive_import_reaches_its_importer_from_the_mid_era_watchdog_on() {
    let (_c, publishes) = saved_bottom(Opts::default());
    let notice = publishes
        .iter()
        .flat_map(|p| {
            p["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Imports are out of date and should be rebuilt"))
        });
    assert!(notice.is_some(), "{publishes:?}");
}

#[test]
fn the_2022_watchdog_tells_nobody_of_a_save() {
    let (c, publishes) = saved_bottom(Opts::default().env("FAKE_LEAN_STALE_NOTICE", "none"));
    assert!(publishes.is_empty(), "{publishes:?}");
    c.await_stderr("Got unsupported notification: textDocument/didSave");
}

#[test]
fn what_an_included_file_holds_is_what_lean_reports() {
    let project = Project::new();
    project.write("Fixture/Data/g.txt", "hello\n");
    project.write(
        "Fixture/Reads.lean",
        "def g : String := include_str \"Data/g.txt\"\ndef h : String := include_str \"none.txt\"\n",
    );
    let mut c = Client::start(project, Opts::default());
    c.handshake(json!({}));
    let uri = c.open("Fixture/Reads.lean");
    let first = header_errors(&c.sync(&uri, 1));
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(
        first[0]["range"]["start"],
        json!({"line": 1, "character": 18})
    );
    assert!(
        first[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("no such file or directory (error code: 2)\n  file: ")
    );
    c.project
        .write("Fixture/Data/g.txt", "-- fake: error \"a bad greeting\"\n");
    let text = c.project.read("Fixture/Reads.lean");
    c.change_full(&uri, 2, &text);
    let second = header_errors(&c.sync(&uri, 2));
    let said: Vec<&str> = second
        .iter()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert_eq!(said[0], "a bad greeting", "{second:?}");
    assert_eq!(
        second[0]["range"]["start"],
        json!({"line": 0, "character": 18})
    );
}
