//! The strict handshake, `register_lean_watcher`, refresh requests, shutdown and exit
//! (reference §1.2, §1.8, §1.10).

mod support;

use serde_json::{Value, json};
use support::{Client, Opts, Project};

#[test]
fn initialize_answers_the_2025_watchdog_capabilities() {
    let mut c = Client::start(Project::new(), Opts::default());
    let init = c.handshake(json!({}));
    assert_eq!(
        init["serverInfo"],
        json!({"name": "Lean 4 Server", "version": "0.3.0"})
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["textDocumentSync"]["change"], 2);
    assert_eq!(
        caps["textDocumentSync"]["save"],
        json!({"includeText": true})
    );
    let legend = &caps["semanticTokensProvider"]["legend"];
    assert_eq!(legend["tokenTypes"][0], "keyword");
    assert!(
        legend["tokenModifiers"]
            .as_array()
            .is_some_and(|m| !m.is_empty())
    );
    assert_eq!(caps["codeActionProvider"]["resolveProvider"], true);
    assert_eq!(
        caps["completionProvider"]["triggerCharacters"],
        json!(["."])
    );
    for p in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "documentSymbolProvider",
    ] {
        assert_eq!(caps[p], true, "{p}");
    }
}

#[test]
fn register_lean_watcher_has_a_string_id_and_must_be_answered() {
    let mut c = Client::start(Project::new(), Opts::default());
    c.auto_answer = false;
    let id = c.request("initialize", json!({"capabilities": {}}));
    c.result(&id);
    c.notify("initialized", json!({}));
    let reg = c.wait_for("registerCapability", |v| {
        v["method"] == "client/registerCapability"
    });
    assert_eq!(reg["id"], "register_lean_watcher");
    let globs: Vec<&str> = reg["params"]["registrations"][0]["registerOptions"]["watchers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["globPattern"].as_str())
        .collect();
    assert_eq!(globs, ["**/*.lean", "**/*.ilean"]);
    // Left unanswered: recorded as a violation when the process exits.
    assert_eq!(c.finish(), Some(1));
    let v = c.project.violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["violation"], "unanswered server request at exit");
    assert_eq!(v[0]["detail"]["id"], "register_lean_watcher");
}

#[test]
fn answered_watcher_leaves_no_violation() {
    let mut c = Client::ready(Opts::default());
    let id = c.request("shutdown", Value::Null);
    assert_eq!(c.result(&id), Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.finish(), Some(0));
    assert!(c.project.violations().is_empty());
}

#[test]
fn first_message_must_be_initialize() {
    let mut c = Client::start(Project::new(), Opts::default());
    c.notify("initialized", json!({}));
    assert_eq!(c.finish(), Some(1));
    let err = c.stderr();
    assert!(
        err.contains("Expected method 'initialize', got method 'initialized'"),
        "{err}"
    );
    assert!(
        err.contains("Watchdog error: Expected method 'initialize'"),
        "{err}"
    );
    assert_eq!(
        c.project.violations()[0]["violation"],
        "message before handshake"
    );
}

#[test]
fn second_message_must_be_initialized() {
    let mut c = Client::start(Project::new(), Opts::default());
    let id = c.request("initialize", json!({"capabilities": {}}));
    c.result(&id);
    let uri = c.project.uri("Fixture/Basic.lean");
    c.open_text(&uri, "def x := 1\n", 1, None);
    assert_eq!(c.finish(), Some(1));
    let err = c.stderr();
    assert!(
        err.contains("Expected method 'initialized', got method 'textDocument/didOpen'"),
        "{err}"
    );
    assert!(
        err.lines().any(|l| l.starts_with("Watchdog error: ")),
        "{err}"
    );
}

#[test]
fn shutdown_then_requests_are_invalid_and_exit_ends() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    let id = c.request("shutdown", Value::Null);
    assert_eq!(c.result(&id), Value::Null);
    let late = c.request("textDocument/hover", Client::at(&uri, 7, 5));
    assert_eq!(c.error_code(&late), -32600);
    c.notify("exit", Value::Null);
    assert_eq!(c.finish(), Some(0));
}

#[test]
fn closing_stdin_counts_as_exit() {
    let mut c = Client::ready(Opts::default());
    // No shutdown first: exit code 1, as LSP prescribes for exit without shutdown.
    assert_eq!(c.finish(), Some(1));
}

#[test]
fn unknown_methods_and_notifications() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    let id = c.request("textDocument/frobnicate", Client::at(&uri, 0, 0));
    assert_eq!(c.error_code(&id), -32601);
    c.notify("custom/thing", json!({}));
    c.notify(
        "$/lean/rpc/keepAlive",
        json!({"uri": uri, "sessionId": "1"}),
    );
    c.sync(&uri, 1);
    c.await_stderr("Got unsupported notification: custom/thing");
    assert!(!c.stderr().contains("keepAlive"));
}

#[test]
fn refresh_requests_use_numeric_ids_and_expect_null() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_REFRESH", "1"));
    c.auto_answer = false;
    let uri = c.open("Fixture/Basic.lean");
    c.sync(&uri, 1);
    let st = c.wait_for("semanticTokens/refresh", |v| {
        v["method"] == "workspace/semanticTokens/refresh"
    });
    let ih = c.wait_for("inlayHint/refresh", |v| {
        v["method"] == "workspace/inlayHint/refresh"
    });
    assert!(st["id"].is_number() && ih["id"].is_number());
    c.send(json!({"jsonrpc": "2.0", "id": st["id"], "result": null}));
    c.send(json!({"jsonrpc": "2.0", "id": ih["id"], "result": {"oops": 1}}));
    let id = c.request("shutdown", Value::Null);
    c.result(&id);
    c.notify("exit", Value::Null);
    c.finish();
    let v = c.project.violations();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["violation"], "server request answered wrongly");
}

#[test]
fn trace_counts_what_the_client_sent() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    let id = c.request("textDocument/hover", Client::at(&uri, 7, 5));
    c.notify("$/cancelRequest", json!({"id": id}));
    c.sync(&uri, 1);
    let lines = c.project.trace_lines();
    let ins: Vec<&Value> = lines.iter().filter(|l| l["dir"] == "in").collect();
    let methods: Vec<&str> = ins.iter().filter_map(|l| l["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "initialized",
            "textDocument/didOpen",
            "textDocument/hover",
            "$/cancelRequest",
            "textDocument/waitForDiagnostics"
        ]
    );
    let cancel = ins
        .iter()
        .find(|l| l["method"] == "$/cancelRequest")
        .unwrap();
    assert_eq!(cancel["cancel_id"], id);
    assert!(
        lines
            .iter()
            .any(|l| l["dir"] == "out" && l["method"] == "textDocument/publishDiagnostics")
    );
}

/// The trace names the text a client gave a document (`text_fnv`: FNV-1a 64 of its UTF-8, 16
/// hex digits), on a `didOpen` and a whole-text `didChange` alone: a client that sends the same
/// text again (a revival) can be told from one that sends another.
#[test]
fn trace_names_the_text_a_client_gave() {
    let mut c = Client::ready(Opts::default());
    let uri = c.open("Fixture/Basic.lean");
    let text = c.project.read("Fixture/Basic.lean");
    c.change_full(&uri, 2, &text);
    c.change_full(&uri, 3, "def one : Nat := 1\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": ""}]}),
    );
    c.sync(&uri, 4);
    let fnv = |t: &str| {
        let hash = t.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{hash:016x}")
    };
    let given: Vec<Value> = c
        .project
        .trace_lines()
        .into_iter()
        .filter(|l| l["dir"] == "in" && l["uri"] == uri.as_str())
        .filter(|l| {
            matches!(
                l["method"].as_str(),
                Some("textDocument/didOpen" | "textDocument/didChange")
            )
        })
        .map(|l| l["text_fnv"].clone())
        .collect();
    assert_eq!(
        given,
        [
            json!(fnv(&text)),
            json!(fnv(&text)),
            json!(fnv("def one : Nat := 1\n")),
            Value::Null
        ]
    );
}
