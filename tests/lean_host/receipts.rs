//! Receipts on Lean results (issue 17 §1): the census — every tool of the catalog either carries
//! a receipt on its result or reads no document, in both protocol families — and the receipts
//! typed errors carry, each in its non-complete state.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_only, sha256_hex};

/// The tools whose results carry a receipt: every Lean tool that reads a document.
const WITH_RECEIPT: [&str; 19] = [
    "lean_try_edit",
    "lean_certify",
    "lean_run_at",
    "lean_run_at_handle",
    "lean_hover",
    "lean_signature_help",
    "lean_definition",
    "lean_references",
    "lean_document_symbols",
    "lean_goals",
    "lean_todo",
    "lean_code_action_resolve",
    "lean_run_with",
    "lean_run_with_linear",
    "lean_update",
    "lean_sync",
    "lean_refresh",
    "lean_save",
    "lean_close_save",
];

/// The tools that read no document, and so carry none.
const WITHOUT_RECEIPT: [&str; 9] = [
    "lean_lock",
    "beam_version",
    "beam_stats",
    "beam_feedback_report",
    "lean_drop_workspace",
    "lean_workspace_symbols",
    "lean_release",
    "lean_close",
    "lean_check_receipt",
];

const STATES: [&str; 6] = [
    "complete",
    "incomplete",
    "stale_imports",
    "crashed",
    "setup_failed",
    "superseded",
];

const BASIC: &str = "Fixture/Basic.lean";
const ACTIONS: &str = "Fixture/Actions.lean";

/// Holds `receipt` to its shape, and to naming `text` at `version` (when given).
#[track_caller]
pub fn well_formed(receipt: &Value, text: &str, version: Option<i64>) {
    let fields = receipt
        .as_object()
        .unwrap_or_else(|| panic!("no receipt: {receipt}"));
    for key in [
        "version",
        "text_sha256",
        "state",
        "toolchain",
        "lake_config_sha256",
        "imports",
    ] {
        assert!(fields.contains_key(key), "{key} missing: {receipt}");
    }
    assert_eq!(
        receipt["text_sha256"],
        sha256_hex(text.as_bytes()),
        "{receipt}"
    );
    if let Some(version) = version {
        assert_eq!(receipt["version"], version, "{receipt}");
    }
    let state = receipt["state"].as_str().unwrap();
    assert!(STATES.contains(&state), "{receipt}");
    assert_eq!(
        fields.contains_key("reason"),
        state == "incomplete",
        "{receipt}"
    );
    assert_eq!(
        fields.contains_key("paths"),
        state == "stale_imports",
        "{receipt}"
    );
    let config = receipt["lake_config_sha256"].as_str().unwrap();
    assert!(config.len() == 64 && config.bytes().all(|b| b.is_ascii_hexdigit()));
    assert!(receipt["imports"].is_array(), "{receipt}");
}

/// The project with a file offering a lazy code action.
fn project() -> Project {
    let project = Project::fixture();
    project.write(
        ACTIONS,
        "example : 1 = 1 := by\n  rfl -- fake: code-action \"Use decide\" \"decide\" lazy\n",
    );
    project
}

/// Calls every tool of the catalog once, on a server in `family`, and holds each result to the
/// census.
fn census(family: &str) {
    let project = project();
    let mut lean = match family {
        "modern" => Lean::start_modern(&[&project], &[], &[]),
        _ => Lean::start(&[&project], &[], &[]),
    };
    // Each call: its tool, the text of the file it names (if any), its result.
    let mut seen: Vec<(String, Option<String>, Value)> = Vec::new();
    let mut ok = |lean: &mut Lean, tool: &str, arguments: Value| -> Value {
        let text = arguments["path"].as_str().map(|path| project.read(path));
        let result = lean.ok(tool, arguments);
        seen.push((tool.to_owned(), text, result.clone()));
        result
    };
    let at = |line: u64, character: u64, more: Value| {
        let mut position = json!({"version": 1, "line": line, "character": character});
        position
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        args(&project, BASIC, position)
    };
    let synced = ok(&mut lean, "lean_sync", args(&project, BASIC, json!({})));
    assert_eq!(synced["receipt"]["state"], "complete", "{synced}");
    ok(&mut lean, "lean_update", args(&project, BASIC, json!({})));
    ok(&mut lean, "lean_refresh", args(&project, BASIC, json!({})));
    ok(&mut lean, "lean_hover", at(16, 36, json!({})));
    ok(&mut lean, "lean_signature_help", at(16, 36, json!({})));
    ok(&mut lean, "lean_definition", at(16, 36, json!({})));
    ok(&mut lean, "lean_references", at(7, 5, json!({})));
    let symbols = args(&project, BASIC, json!({"version": 1}));
    ok(&mut lean, "lean_document_symbols", symbols);
    ok(
        &mut lean,
        "lean_goals",
        at(19, 2, json!({"mode": "before"})),
    );
    ok(
        &mut lean,
        "lean_run_at",
        at(23, 2, json!({"text": "constructor"})),
    );
    let first = ok(
        &mut lean,
        "lean_run_at_handle",
        at(23, 2, json!({"text": "constructor"})),
    );
    let handle = first["next_handle"].clone();
    let with =
        |handle: &Value, text: &str| args(&project, BASIC, json!({"handle": handle, "text": text}));
    let second = ok(&mut lean, "lean_run_with", with(&handle, "· exact hq"));
    ok(
        &mut lean,
        "lean_run_with_linear",
        with(&second["next_handle"], "skip"),
    );
    let release = args(&project, BASIC, json!({"handle": handle}));
    ok(&mut lean, "lean_release", release);
    let todo = json!({"version": 1, "start_line": 0, "start_character": 0,
                      "end_line": 36, "end_character": 0});
    ok(&mut lean, "lean_todo", args(&project, BASIC, todo));
    let actions = json!({"version": 1, "start_line": 1, "start_character": 2,
                         "end_line": 1, "end_character": 2, "kinds": ["code_action"]});
    let listed = ok(&mut lean, "lean_todo", args(&project, ACTIONS, actions));
    let action = listed["items"][0]["code_action"].to_string();
    let action: Value =
        serde_json::from_str(&action.replace("[root]", &project.root().display().to_string()))
            .unwrap();
    let resolve = json!({"version": 1, "code_action": action});
    ok(
        &mut lean,
        "lean_code_action_resolve",
        args(&project, ACTIONS, resolve),
    );
    let workspace = json!({"workspace": project.descriptor()});
    let mut query = workspace.clone();
    query["query"] = json!("double");
    ok(&mut lean, "lean_workspace_symbols", query);
    let check = args(&project, BASIC, json!({"receipt": synced["receipt"]}));
    let checked = ok(&mut lean, "lean_check_receipt", check);
    assert_eq!(checked["holds"], true, "{checked}");
    let empty = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    let candidate = json!({"base_sha256": synced["receipt"]["text_sha256"],
                           "candidates": [{"range": empty, "text": ""}]});
    ok(&mut lean, "lean_try_edit", args(&project, BASIC, candidate));
    let theorems = json!({"theorems": ["and_swap"]});
    let locked = ok(&mut lean, "lean_lock", args(&project, BASIC, theorems));
    let lock = json!({"lock": locked["lock"]});
    ok(&mut lean, "lean_certify", args(&project, BASIC, lock));
    ok(&mut lean, "lean_save", args(&project, BASIC, json!({})));
    ok(
        &mut lean,
        "lean_close_save",
        args(&project, BASIC, json!({})),
    );
    ok(&mut lean, "lean_close", args(&project, ACTIONS, json!({})));
    ok(&mut lean, "beam_version", json!({}));
    ok(&mut lean, "beam_stats", json!({}));
    let report = json!({"workspace": project.descriptor(), "title": "t", "summary": "s",
                        "reproduction": "r", "expected": "e", "actual": "a"});
    ok(&mut lean, "beam_feedback_report", report);
    ok(&mut lean, "lean_drop_workspace", workspace);
    for (tool, text, result) in &seen {
        if WITH_RECEIPT.contains(&tool.as_str()) {
            let text = text
                .as_deref()
                .expect("a tool about a document names its file");
            well_formed(&result["receipt"], text, result["version"].as_i64());
            if tool == "lean_close_save" {
                assert_eq!(result["receipt"], result["saved"]["receipt"]);
            }
        } else {
            assert!(
                result.get("receipt").is_none(),
                "{tool} reads no document, yet answered a receipt: {result}"
            );
        }
    }
    let called: Vec<&str> = seen.iter().map(|(tool, _, _)| tool.as_str()).collect();
    for tool in WITH_RECEIPT.iter().chain(&WITHOUT_RECEIPT) {
        assert!(called.contains(tool), "the census never called {tool}");
    }
    lean.finish_without_violations();
}

/// Holds a catalog entry to the census: its tool is in exactly one set, and its description
/// mentions a receipt exactly when its result carries one (`catalog.rs` runs it on each).
#[track_caller]
pub fn in_one_census_set(tool: &Value) {
    let name = tool["name"].as_str().unwrap();
    let with = WITH_RECEIPT.contains(&name);
    assert_ne!(
        with,
        WITHOUT_RECEIPT.contains(&name),
        "{name} must be in exactly one of WITH_RECEIPT and WITHOUT_RECEIPT"
    );
    let description = tool["description"].as_str().unwrap();
    assert_eq!(
        description.contains("carries a receipt"),
        with,
        "{name}'s description and its receipt disagree: {description}"
    );
}

#[test]
fn every_lean_result_about_a_document_carries_its_receipt_legacy() {
    if fake_only("every_lean_result_about_a_document_carries_its_receipt_legacy") {
        return;
    }
    census("legacy");
}

#[test]
fn every_lean_result_about_a_document_carries_its_receipt_modern() {
    if fake_only("every_lean_result_about_a_document_carries_its_receipt_modern") {
        return;
    }
    census("modern");
}

/// The receipt of a typed error: well formed, naming `file`'s text, in `state`.
#[track_caller]
fn error_receipt(error: &Value, text: &str, state: &str) {
    let receipt = &error["data"]["receipt"];
    well_formed(receipt, text, None);
    assert_eq!(receipt["state"], state, "{error}");
}

#[test]
fn typed_errors_about_a_document_carry_its_receipt_in_their_state() {
    if fake_only("typed_errors_about_a_document_carry_its_receipt_in_their_state") {
        return;
    }
    let project = Project::fixture();
    let files = [
        (
            "Fixture/Crashy.lean",
            "def one : Nat := 1\ndef two : Nat := 2 -- fake: crash\n",
        ),
        (
            "Fixture/Broken.lean",
            "-- fake: setup-fail \"no such package\"\nimport Missing\n\ndef one : Nat := 1\n",
        ),
        (
            "Fixture/TwinBroken.lean",
            "-- fake: setup-fail \"no twins here\" twins\ntheorem t : True := by\n  trivial\n",
        ),
    ];
    for (path, text) in files {
        project.write(path, text);
    }
    let mut lean = Lean::start(&[&project], &[], &[]);
    let [crashy, broken, twin_broken] = files.map(|(path, _)| path);
    let crashed = lean.fails(
        "lean_sync",
        args(&project, crashy, json!({})),
        "workerCrashed",
    );
    error_receipt(&crashed, files[0].1, "crashed");
    // A header Lean could not set up: the sync answers, not complete; a position tool fails.
    let synced = lean.ok("lean_sync", args(&project, broken, json!({})));
    well_formed(&synced["receipt"], files[1].1, Some(1));
    assert_eq!(synced["receipt"]["state"], "setup_failed", "{synced}");
    let hover = json!({"version": 1, "line": 3, "character": 4});
    let header = lean.fails("lean_hover", args(&project, broken, hover), "invalidParams");
    assert_eq!(header["data"]["reason"], "headerFailed", "{header}");
    error_receipt(&header, files[1].1, "setup_failed");
    let clean = lean.ok("lean_sync", args(&project, twin_broken, json!({})));
    assert_eq!(clean["receipt"]["state"], "complete", "{clean}");
    let run = json!({"version": 1, "line": 2, "character": 2, "text": "trivial"});
    let twin = lean.fails(
        "lean_run_at",
        args(&project, twin_broken, run),
        "runtimeSetup",
    );
    assert_eq!(twin["data"]["reason"], "twinSetupFailed", "{twin}");
    error_receipt(&twin, files[2].1, "setup_failed");
    // An import changed on disk under its importer, Lean not told: the sync says the imports
    // are stale as it does on Lean's notice, naming the import that is not the one Lean checked
    // against (issue 25: a receipt's state is never the sync's only word on it).
    let uses = "Fixture/Uses.lean";
    lean.ok("lean_sync", args(&project, uses, json!({})));
    let basic = project.read(BASIC) + "\n-- changed\n";
    project.write(BASIC, &basic);
    let unaware = lean.fails(
        "lean_sync",
        args(&project, uses, json!({})),
        "syncBarrierIncomplete",
    );
    error_receipt(&unaware, &project.read(uses), "stale_imports");
    assert_eq!(
        unaware["data"]["receipt"]["paths"],
        json!([BASIC]),
        "{unaware}"
    );
    let updated = lean.ok("lean_update", args(&project, uses, json!({})));
    assert_eq!(updated["receipt"]["state"], "stale_imports", "{updated}");
    assert_eq!(updated["receipt"]["paths"], json!([BASIC]), "{updated}");
    // Once Lean is told (the import synced, so saved), its notice makes the sync an error.
    lean.ok("lean_sync", args(&project, BASIC, json!({})));
    let basic = project.read(BASIC) + "\n-- changed again\n";
    project.write(BASIC, &basic);
    lean.ok("lean_sync", args(&project, BASIC, json!({})));
    let stale = lean.fails(
        "lean_sync",
        args(&project, "Fixture/Uses.lean", json!({})),
        "syncBarrierIncomplete",
    );
    error_receipt(&stale, &project.read("Fixture/Uses.lean"), "stale_imports");
    assert_eq!(stale["data"]["receipt"]["paths"], json!([BASIC]), "{stale}");
    // The document moved on from the caller's version.
    let moved = json!({"version": 99, "line": 0, "character": 0});
    let superseded = lean.fails(
        "lean_hover",
        args(&project, BASIC, moved),
        "contentModified",
    );
    error_receipt(&superseded, &basic, "superseded");
    lean.finish_without_violations();
}

#[test]
fn a_lean_timeout_carries_an_incomplete_receipt() {
    if fake_only("a_lean_timeout_carries_an_incomplete_receipt") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/Hangs.lean";
    let text = "-- fake: hang textDocument/hover\ndef one : Nat := 1\n";
    project.write(path, text);
    // Long enough for the sync on a busy machine; the hover then waits it out.
    let mut lean = Lean::start(&[&project], &["--lean-timeout-ms", "2000"], &[]);
    lean.ok("lean_sync", args(&project, path, json!({})));
    let hover = json!({"version": 1, "line": 1, "character": 4});
    let late = lean.fails("lean_hover", args(&project, path, hover), "leanTimeout");
    error_receipt(&late, text, "incomplete");
    assert_eq!(late["data"]["receipt"]["reason"], "timed_out", "{late}");
    lean.finish_without_violations();
}

/// A run's receipt names the document's text, so it is `complete` only when Lean finished that
/// text, not just the twin's (the text before the run's position and the probe): a file whose
/// worker crashes after the position gives a run that succeeds in the twin, and a receipt that
/// says Lean crashed on the text it names (found by the no-false-complete suite: a run's receipt
/// said `complete` of a text a fresh sync calls `workerCrashed`).
#[test]
fn a_runs_receipt_is_never_complete_for_a_text_lean_did_not_finish() {
    if fake_only("a_runs_receipt_is_never_complete_for_a_text_lean_did_not_finish") {
        return;
    }
    let project = Project::fixture();
    let path = "Fixture/CrashesLater.lean";
    let text = "theorem t (p : Prop) (hp : p) : p := by\n  exact hp\n\n\
                def later : Nat := 1 -- fake: crash\n";
    project.write(path, text);
    let mut lean = Lean::start(&[&project], &[], &[]);
    let run = json!({"version": 1, "line": 1, "character": 2, "text": "exact hp"});
    let ran = lean.ok("lean_run_at", args(&project, path, run));
    assert_eq!(ran["success"], true, "the twin holds no crash: {ran}");
    well_formed(&ran["receipt"], text, Some(1));
    assert_eq!(ran["receipt"]["state"], "crashed", "{ran}");
    lean.finish_without_violations();
}
