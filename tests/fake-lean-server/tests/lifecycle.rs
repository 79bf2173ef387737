//! Document lifecycle, progress, diagnostics and `waitForDiagnostics` (reference §1.4–1.6,
//! Gaps 5–6, §A1).

mod support;

use serde_json::{Value, json};
use support::{Client, Opts, Project};

fn is_publish(v: &Value) -> bool {
    v["method"] == "textDocument/publishDiagnostics"
}

fn is_done(v: &Value) -> bool {
    v["method"] == "$/lean/fileProgress" && v["params"]["processing"] == json!([])
}

fn messages(msgs: &[Value]) -> Vec<String> {
    Client::last_diagnostics(msgs)
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn open_reports_progress_from_zero_then_done() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    let msgs = c.sync(&uri, 1);
    let first = &msgs[0];
    assert_eq!(first["method"], "$/lean/fileProgress");
    let p = &first["params"]["processing"][0];
    assert_eq!(p["kind"], 1);
    assert_eq!(p["range"]["start"], json!({"line": 0, "character": 0}));
    assert_eq!(p["range"]["end"], json!({"line": 37, "character": 0}));
    assert_eq!(
        first["params"]["textDocument"],
        json!({"uri": uri, "version": 1})
    );
    assert!(msgs.iter().any(is_done));
    // Without silentDiagnosticSupport the "Goals accomplished!" infos are dropped.
    assert_eq!(messages(&msgs), Vec::<String>::new());
}

#[test]
fn progress_first_order_puts_done_before_the_single_publish() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_DIAG_ORDER", "progress-first"));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    let done = msgs.iter().position(is_done).unwrap();
    let publishes: Vec<usize> = (0..msgs.len()).filter(|&i| is_publish(&msgs[i])).collect();
    assert_eq!(publishes.len(), 1);
    assert!(done < publishes[0]);
    assert_eq!(messages(&msgs).len(), 3);
}

#[test]
fn diagnostics_first_order_publishes_cumulatively_before_done() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_DIAG_ORDER", "diagnostics-first"));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    let done = msgs.iter().position(is_done).unwrap();
    let publishes: Vec<&Value> = msgs.iter().filter(|m| is_publish(m)).collect();
    assert_eq!(publishes.len(), 3, "one per command that reports");
    let counts: Vec<usize> = publishes
        .iter()
        .map(|p| p["params"]["diagnostics"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts, [1, 2, 3]);
    let last = msgs.iter().rposition(is_publish).unwrap();
    assert!(last < done);
    assert!(publishes.iter().all(|p| p["params"]["version"] == 1));
}

#[test]
fn report_delay_zero_selects_diagnostics_first() {
    let mut c = Client::start(
        Project::new(),
        Opts {
            args: vec!["-Dserver.reportDelayMs=0".into()],
            ..Opts::default()
        },
    );
    c.handshake(json!({}));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    assert!(msgs.iter().rposition(is_publish).unwrap() < msgs.iter().position(is_done).unwrap());
}

#[test]
fn wait_for_diagnostics_waits_for_a_future_version() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/TypeError.lean");
    let id = c.request(
        "textDocument/waitForDiagnostics",
        json!({"uri": uri, "version": 2}),
    );
    c.sync(&uri, 1);
    let text = c
        .project
        .read("Fixture/TypeError.lean")
        .replace("\"one\"", "1");
    let answered = |c: &Client| {
        c.log
            .iter()
            .position(|m| m.get("id") == Some(&id) && m.get("method").is_none())
    };
    assert_eq!(answered(&c), None, "version 2 has not arrived yet");
    c.change_full(&uri, 2, &text);
    assert_eq!(c.result(&id), json!({}));
    let publish_at = c
        .log
        .iter()
        .position(|m| is_publish(m) && m["params"]["version"] == 2)
        .unwrap();
    assert!(
        publish_at < answered(&c).unwrap(),
        "every version-2 diagnostic is written first"
    );
}

#[test]
fn silent_diagnostics_need_the_capability() {
    let mut c = Client::start(Project::new(), Opts::default());
    c.handshake(json!({"lean": {"silentDiagnosticSupport": true}}));
    let uri = c.open("Fixture/Basic.lean");
    let diags = Client::last_diagnostics(&c.sync(&uri, 1));
    assert_eq!(diags.len(), 5, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["message"], "Goals accomplished!");
    assert_eq!(d["isSilent"], true);
    assert_eq!(d["leanTags"], json!([2]));
    assert_eq!(d["severity"], 3);
    // Multi-line theorem: range is its first line, fullRange the whole command.
    assert_eq!(d["range"]["end"], json!({"line": 19, "character": 0}));
    assert_eq!(d["fullRange"]["end"], json!({"line": 20, "character": 7}));
}

#[test]
fn incremental_mode_replaces_once_then_appends() {
    let mut c = Client::start(
        Project::new(),
        Opts::default()
            .env("FAKE_LEAN_INCREMENTAL", "1")
            .env("FAKE_LEAN_DIAG_ORDER", "diagnostics-first"),
    );
    c.handshake(json!({"lean": {"incrementalDiagnosticSupport": true}}));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    let pubs: Vec<&Value> = msgs.iter().filter(|m| is_publish(m)).collect();
    let flags: Vec<bool> = pubs
        .iter()
        .map(|p| p["params"]["isIncremental"].as_bool().unwrap())
        .collect();
    assert_eq!(flags, [false, true, true]);
    assert!(
        pubs.iter()
            .all(|p| p["params"]["diagnostics"].as_array().unwrap().len() == 1)
    );
}

#[test]
fn without_the_client_capability_publishes_carry_no_incremental_flag() {
    // `EditableDocumentCore.publishDiagnostics`: `isIncremental? := if
    // incrementalDiagnosticSupport then some … else none`.
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_INCREMENTAL", "1"));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    let p = msgs.iter().find(|m| is_publish(m)).unwrap();
    assert_eq!(p["params"].get("isIncremental"), None, "{p}");
    assert_eq!(p["params"]["diagnostics"].as_array().unwrap().len(), 3);
}

#[test]
fn requests_for_unopened_files_get_content_modified() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Basic.lean");
    let id = c.request("textDocument/hover", Client::at(&uri, 7, 5));
    let r = c.response(&id);
    assert_eq!(r["error"]["code"], -32801);
    assert_eq!(
        r["error"]["message"],
        format!("Cannot process request to closed file '{uri}'")
    );
    let id = c.request("$/lean/plainGoal", Client::at(&uri, 7, 5));
    assert_eq!(c.error_code(&id), -32801);
}

#[test]
fn close_fails_pending_requests_then_clears_diagnostics() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Gated.lean");
    c.open_text(&uri, "def a := 1\n-- fake: gate g\ndef b := 2\n", 1, None);
    c.project.await_gate("g");
    let hover = c.request("textDocument/hover", Client::at(&uri, 2, 4));
    let wait = c.request(
        "textDocument/waitForDiagnostics",
        json!({"uri": uri, "version": 1}),
    );
    c.close(&uri);
    assert_eq!(c.error_code(&hover), -32801);
    assert_eq!(c.error_code(&wait), -32801);
    let clear = c.wait_for("the clearing publish", |v| {
        is_publish(v) && v["params"]["diagnostics"] == json!([])
    });
    assert_eq!(clear["params"]["uri"], uri);
}

/// The clearing publish after `didClose` names a version in every era that sends one: the last
/// (newer watchdogs) or the one the worker started at (older ones, from `forwardMessages`).
#[test]
fn the_clearing_publish_after_close_carries_the_version_of_its_era() {
    for (era, expected) in [("last", Some(3)), ("started", Some(1)), ("none", None)] {
        let mut c = Client::ready(Opts::default().env("FAKE_LEAN_CLOSE_CLEAR", era));
        let uri = c.project.uri("Fixture/Edit.lean");
        c.open_text(&uri, "def a := 1\n", 1, None);
        c.sync(&uri, 1);
        c.change_full(&uri, 2, "def a := 2\n");
        c.change_full(&uri, 3, "def a := 3\n");
        c.sync(&uri, 3);
        c.close(&uri);
        // A request after the close: its answer follows anything the close sent.
        let after = c.request("textDocument/hover", Client::at(&uri, 0, 4));
        assert_eq!(c.error_code(&after), -32801);
        let clears: Vec<Value> = c
            .log
            .iter()
            .filter(|v| is_publish(v) && v["params"]["diagnostics"] == json!([]))
            .filter(|v| v["params"]["uri"] == uri.as_str())
            .cloned()
            .collect();
        let versions: Vec<Option<i64>> = clears
            .iter()
            .map(|v| v["params"]["version"].as_i64())
            .collect();
        match expected {
            Some(version) => assert_eq!(versions.last(), Some(&Some(version)), "{era}: {clears:?}"),
            None => assert!(versions.iter().all(Option::is_some), "{era}: {clears:?}"),
        }
    }
}

/// Lean ≥ 4.31 is the default: incremental publishes for a client that declares them, and
/// refresh requests whatever it declared.
#[test]
fn by_default_this_lean_is_incremental_and_asks_for_refreshes() {
    let mut c = Client::start(Project::new(), Opts::default());
    c.handshake(json!({"lean": {"incrementalDiagnosticSupport": true}}));
    let uri = c.open("Fixture/TypeError.lean");
    let msgs = c.sync(&uri, 1);
    assert!(
        msgs.iter()
            .filter(|m| is_publish(m))
            .all(|p| p["params"]["isIncremental"].is_boolean())
    );
    c.wait_for("a refresh request", |v| {
        v["method"] == "workspace/semanticTokens/refresh"
    });
    let mut old = Client::ready(
        Opts::default()
            .env("FAKE_LEAN_INCREMENTAL", "0")
            .env("FAKE_LEAN_REFRESH", "0"),
    );
    let uri = old.open("Fixture/TypeError.lean");
    let msgs = old.sync(&uri, 1);
    assert!(
        msgs.iter()
            .filter(|m| is_publish(m))
            .all(|p| p["params"].get("isIncremental").is_none())
    );
    old.close(&uri);
    let after = old.request("textDocument/hover", Client::at(&uri, 0, 4));
    assert_eq!(old.error_code(&after), -32801);
    assert!(
        !old.log
            .iter()
            .any(|v| v["method"] == "workspace/semanticTokens/refresh")
    );
}

#[test]
fn range_edits_and_full_text_edits() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Edit.lean");
    c.open_text(
        &uri,
        "def a : Nat := 1\n-- fake: error \"boom\"\ndef b := 2\n",
        1,
        None,
    );
    assert_eq!(messages(&c.sync(&uri, 1)), ["boom"]);
    // Replace "boom" by "bang" with a range edit on line 1.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": 1, "character": 16}, "end": {"line": 1, "character": 20}},
            "text": "bang"
        }]}),
    );
    assert_eq!(messages(&c.sync(&uri, 2)), ["bang"]);
    c.change_full(&uri, 3, "def a : Nat := 1\n");
    assert_eq!(messages(&c.sync(&uri, 3)), Vec::<String>::new());
}

#[test]
fn non_increasing_versions_are_violations_and_go_silent() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/V.lean");
    c.open_text(&uri, "def a := 1\n", 5, None);
    c.sync(&uri, 5);
    c.change_full(&uri, 3, "-- fake: error \"x\"\ndef a := 1\n");
    let msgs = c.sync(&uri, 3);
    assert!(msgs.is_empty(), "{msgs:?}");
    let v = c.project.violations();
    assert_eq!(v[0]["violation"], "non-increasing version");
    assert_eq!(v[0]["detail"]["newest"], 5);
}

#[test]
fn double_did_open_is_a_violation_and_leaks_a_worker() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    let text = c.project.read("Fixture/Basic.lean");
    c.open_text(&uri, &text, 1, None);
    c.sync(&uri, 1);
    assert_eq!(c.project.violations()[0]["violation"], "double didOpen");
    c.await_stderr("already open");
    let pids = c.worker_pids();
    assert_eq!(pids.len(), 2);
    assert!(
        pids.iter().all(|&p| !support::process_gone(p)),
        "the old worker leaks"
    );
}

#[test]
fn setup_lines_are_published_one_by_one_then_cleared() {
    let mut c = Client::ready(Opts::default().env(
        "FAKE_LEAN_SETUP_LINES",
        "✔ [1/2] Built Fixture.Basic\n✔ [2/2] Built Fixture.Uses",
    ));
    let uri = c.open("Fixture/Uses.lean");
    let msgs = c.sync(&uri, 1);
    let pubs: Vec<&Value> = msgs.iter().filter(|m| is_publish(m)).collect();
    assert!(pubs.len() >= 3);
    for (p, line) in pubs
        .iter()
        .zip(["✔ [1/2] Built Fixture.Basic", "✔ [2/2] Built Fixture.Uses"])
    {
        let d = p["params"]["diagnostics"].as_array().unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0]["message"], line);
        assert_eq!(d[0]["severity"], 3);
        assert!(d[0].get("source").is_none());
        assert_eq!(
            d[0]["range"],
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}})
        );
        assert_eq!(
            d[0]["fullRange"]["end"],
            json!({"line": 17, "character": 0})
        );
    }
    assert_eq!(pubs[2]["params"]["diagnostics"], json!([]));
    // Before elaboration's own reports.
    let first_progress = msgs
        .iter()
        .position(|m| m["method"] == "$/lean/fileProgress")
        .unwrap();
    assert!(first_progress < msgs.iter().position(is_publish).unwrap());
}

#[test]
fn saving_an_import_marks_importers_stale_and_never_mode_must_rebuild() {
    let mut c = Client::ready(Opts::default());
    let basic = c.open("Fixture/Basic.lean");
    let uses = c.open("Fixture/Uses.lean");
    c.sync(&basic, 1);
    c.sync(&uses, 1);
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": basic}}),
    );
    let p = c.wait_for("the sticky publish", |v| {
        is_publish(v) && v["params"]["uri"] == uses
    });
    let d = &p["params"]["diagnostics"][0];
    assert_eq!(
        d["message"],
        "Imports are out of date and should be rebuilt; use the \"Restart File\" command in your editor."
    );
    assert_eq!(d["severity"], 3);
    assert!(d.get("source").is_none());
    // Sticky: still there on the next version.
    let text = c.project.read("Fixture/Uses.lean");
    c.change_full(&uses, 2, &text);
    assert!(messages(&c.sync(&uses, 2))[0].starts_with("Imports are out of date and should"));
    // Restart with `never`: the build is needed but not allowed.
    c.close(&uses);
    c.open_text(&uses, &text, 1, Some("never"));
    let diags = Client::last_diagnostics(&c.sync(&uses, 1));
    assert_eq!(diags.len(), 1);
    assert_eq!(
        diags[0]["message"],
        "Imports are out of date and must be rebuilt; use the \"Restart File\" command in your editor."
    );
    assert_eq!(diags[0]["severity"], 1);
    assert_eq!(
        diags[0]["fullRange"]["end"],
        json!({"line": 17, "character": 0})
    );
    // Restart with `once`: the import is built (a setup line) and the error is gone.
    c.close(&uses);
    c.open_text(&uses, &text, 1, Some("once"));
    let msgs = c.sync(&uses, 1);
    let built = msgs
        .iter()
        .find(|m| {
            is_publish(m)
                && m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|d| !d.is_empty())
        })
        .unwrap();
    assert_eq!(
        built["params"]["diagnostics"][0]["message"],
        "✔ [1/1] Built Fixture.Basic"
    );
    assert!(messages(&msgs).is_empty());
}

#[test]
fn stale_imports_directive_under_never() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Stale.lean");
    let text = "import Fixture.Basic\n-- fake: stale-imports\ndef a := 1\n";
    c.open_text(&uri, text, 1, Some("never"));
    let msgs = c.sync(&uri, 1);
    assert!(messages(&msgs)[0].contains("must be rebuilt"));
    let fatal = msgs
        .iter()
        .find(|m| m["params"]["processing"][0]["kind"] == 2)
        .unwrap();
    assert_eq!(
        fatal["params"]["processing"][0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    // The same file with the default mode (`always`) is fine.
    let other = c.project.uri("Fixture/Stale2.lean");
    c.open_text(&other, text, 1, None);
    assert!(messages(&c.sync(&other, 1)).is_empty());
}

#[test]
fn twin_documents_not_on_disk_external_lake() {
    let mut c = Client::ready(Opts::default());
    let twin = c.project.uri("Fixture/Basic.beam-twin.lean");
    let text = c.project.read("Fixture/TypeError.lean");
    c.open_text(&twin, &text, 1, Some("never"));
    assert_eq!(messages(&c.sync(&twin, 1)).len(), 3);
}

/// A twin that Lake cannot set up, worded as each worker era words it (LLS Part 3): the mid-era
/// command with Lake's absolute path, or Lake's own error alone.
fn twin_setup_fails(setup_text: &str, check: impl Fn(&str)) {
    let opts = Opts::default()
        .env("FAKE_LEAN_TWIN", "fail")
        .env("FAKE_LEAN_SETUP_TEXT", setup_text);
    let mut c = Client::ready(opts);
    let twin = c.project.uri("Fixture/Basic.beam-twin.lean");
    let text = c.project.read("Fixture/Basic.lean");
    c.open_text(&twin, &text, 1, Some("never"));
    let msgs = c.sync(&twin, 1);
    let m = messages(&msgs);
    assert_eq!(m.len(), 1);
    check(&m[0]);
    assert!(
        msgs.iter()
            .any(|m| m["params"]["processing"][0]["kind"] == 2)
    );
    // A real file still works.
    let real = c.open("Fixture/Basic.lean");
    assert!(messages(&c.sync(&real, 1)).is_empty());
}

#[test]
fn twin_documents_not_on_disk_mid_lake_fails_setup() {
    twin_setup_fails("command", |m| {
        assert!(m.starts_with("`/"), "Lake by its absolute path: {m}");
        assert!(m.contains("lake setup-file /"), "{m}");
        assert!(m.contains("Basic.beam-twin.lean -` failed:\n"), "{m}");
    });
}

#[test]
fn twin_documents_not_on_disk_fail_with_lakes_own_words_in_newer_workers() {
    twin_setup_fails("bare", |m| {
        assert!(m.starts_with("error: no such file or directory"), "{m}");
        assert!(!m.contains("setup-file"), "{m}");
    });
}

#[test]
fn one_worker_process_per_document_in_a_group_of_its_own_ends_at_eof() {
    let mut c = Client::ready(Opts::default());
    let a = c.open("Fixture/Basic.lean");
    let b = c.open("Fixture/Uses.lean");
    c.sync(&a, 1);
    c.sync(&b, 1);
    let pids = c.worker_pids();
    assert_eq!(pids.len(), 2);
    for &p in &pids {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        // Field 5 of /proc/<pid>/stat is the process group: the worker's own (§1.1).
        assert_eq!(fields[2].parse::<i64>().unwrap(), i64::from(p));
    }
    // Killing the server's group misses the workers; its death closes their stdin.
    c.kill_group();
    support::eventually("workers gone", || {
        pids.iter().all(|&p| support::process_gone(p))
    });
}

#[test]
fn closing_a_document_ends_its_worker() {
    let mut c = Client::ready(Opts::default());
    let a = c.open("Fixture/Basic.lean");
    c.sync(&a, 1);
    let pid = c.worker_pids()[0];
    c.close(&a);
    c.wait_for("the clearing publish", |v| {
        is_publish(v) && v["params"]["uri"] == a
    });
    support::eventually("worker gone", || support::process_gone(pid));
}

#[test]
fn watched_lean_changes_mark_importers_and_ilean_changes_clear_them() {
    let mut c = Client::ready(Opts::default());
    let uses = c.open("Fixture/Uses.lean");
    c.sync(&uses, 1);
    let basic = c.project.uri("Fixture/Basic.lean");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": basic, "type": 2}]}),
    );
    let p = c.wait_for("the sticky publish", |v| {
        is_publish(v) && v["params"]["uri"] == uses
    });
    assert!(
        p["params"]["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("should be rebuilt")
    );
    // The rebuilt module's .ilean: `never` may open importers again.
    let ilean = format!(
        "file://{}/.lake/build/lib/lean/Fixture/Basic.ilean",
        c.project.root.display()
    );
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": ilean, "type": 2}]}),
    );
    let text = c.project.read("Fixture/Uses.lean");
    c.close(&uses);
    c.open_text(&uses, &text, 1, Some("never"));
    assert!(messages(&c.sync(&uses, 1)).is_empty());
}

#[test]
fn editing_the_import_header_restarts_the_worker() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Header.lean");
    c.open_text(&uri, "import Fixture.Basic\ndef a := 1\n", 1, None);
    c.sync(&uri, 1);
    c.change_full(&uri, 2, "import Fixture.Basic\ndef a := 2\n");
    c.sync(&uri, 2);
    assert_eq!(c.worker_pids().len(), 1, "a body edit keeps the worker");
    c.change_full(&uri, 3, "import Fixture.Uses\ndef a := 2\n");
    c.sync(&uri, 3);
    let pids = c.worker_pids();
    assert_eq!(pids.len(), 2, "a header edit restarts it");
    support::eventually("old worker gone", || support::process_gone(pids[0]));
}

#[test]
fn edits_may_fail_pending_position_requests() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_EDIT_CANCELS", "1"));
    let uri = c.project.uri("Fixture/Edits.lean");
    let text = "def a := 1\n-- fake: gate e\ndef b := 2\n";
    c.open_text(&uri, text, 1, None);
    c.project.await_gate("e");
    let hover = c.request("textDocument/hover", Client::at(&uri, 2, 4));
    let wait = c.request(
        "textDocument/waitForDiagnostics",
        json!({"uri": uri, "version": 2}),
    );
    c.change_full(&uri, 2, "def a := 1\ndef b := 2\n");
    let r = c.response(&hover);
    assert_eq!(
        r["error"],
        json!({"code": -32801, "message": "File changed."})
    );
    assert_eq!(
        c.result(&wait),
        json!({}),
        "waitForDiagnostics survives the edit"
    );
}

/// Lake gives a file its library's `leanOptions` when it is the library's module, also through a
/// link (Lake's `resolvePath` is `realPath`); a file outside every library gets the root
/// package's options (new and mid Lake) or none (old Lake). A `set_option` in the text wins.
#[test]
fn a_file_is_checked_under_the_options_lake_sets_it_up_with() {
    let implicit = "theorem t : y = y := rfl -- fake: error \"unknown identifier 'y'\" when \"autoImplicit=false\"\n";
    for external in ["root", "none"] {
        let project = Project::new();
        project.write(
            "lakefile.toml",
            "name = \"fixture\"\ndefaultTargets = [\"Fixture\"]\n\n[[lean_lib]]\nname = \"Fixture\"\nleanOptions = {autoImplicit = false}\n",
        );
        project.write("Fixture/Implicit.lean", implicit);
        project.write("Outside.lean", implicit);
        let link = project
            .root
            .join(".lake/beam/twins/1-1/Fixture/Implicit.lean");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(project.root.join("Fixture/Implicit.lean"), &link).unwrap();
        let mut c = Client::start(
            project,
            Opts::default().env("FAKE_LAKE_EXTERNAL_OPTIONS", external),
        );
        c.handshake(json!({}));
        let checked = |c: &mut Client, uri: &str, text: &str| {
            c.open_text(uri, text, 1, Some("never"));
            messages(&c.sync(uri, 1))
        };
        let real = c.project.uri("Fixture/Implicit.lean");
        assert_eq!(
            checked(&mut c, &real, implicit),
            ["unknown identifier 'y'"],
            "{external}"
        );
        let linked = format!("file://{}", link.display());
        assert_eq!(
            checked(&mut c, &linked, implicit),
            ["unknown identifier 'y'"],
            "{external}"
        );
        let outside = c.project.uri("Outside.lean");
        assert!(checked(&mut c, &outside, implicit).is_empty(), "{external}");
        let sibling = c.project.uri("Fixture/Implicit.beam-twin.lean");
        assert!(
            checked(&mut c, &sibling, implicit).is_empty(),
            "{external}: outside every library"
        );
        let overridden = format!("set_option autoImplicit true\n{implicit}");
        let scratch = c.project.uri("Fixture/Other.beam-twin.lean");
        assert!(checked(&mut c, &scratch, &overridden).is_empty());
        // The package's own options reach a file outside every library only in newer Lakes.
        let project = Project::new();
        project.write(
            "lakefile.toml",
            "name = \"fixture\"\nleanOptions = {autoImplicit = false}\n\n[[lean_lib]]\nname = \"Fixture\"\n",
        );
        project.write("Outside.lean", implicit);
        let mut c = Client::start(
            project,
            Opts::default().env("FAKE_LAKE_EXTERNAL_OPTIONS", external),
        );
        c.handshake(json!({}));
        let outside = c.project.uri("Outside.lean");
        let expected: &[&str] = if external == "root" {
            &["unknown identifier 'y'"]
        } else {
            &[]
        };
        assert_eq!(checked(&mut c, &outside, implicit), expected, "{external}");
    }
}
