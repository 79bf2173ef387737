//! The Lean contract check inside the fake (`src/contract.rs`, README "Lean contract"): what the
//! server sends is held to the rules as it is written, and a violation lands in the trace.

mod support;

use serde_json::json;
use support::{Client, Opts};

/// `FAKE_LEAN_CONTRACT_BREAK=header-range` sends a header error with `range` = `fullRange`,
/// which Lean never does; the trace names the rule, its source and the message.
#[test]
fn a_header_error_sent_whole_is_recorded_as_a_contract_violation() {
    let mut c = Client::ready(Opts::default().env("FAKE_LEAN_CONTRACT_BREAK", "header-range"));
    let uri = c.project.uri("Fixture/Broken.lean");
    let text = "-- fake: setup-fail \"no such package\"\nimport Missing.Package\n\ndef a := 1\n";
    c.open_text(&uri, text, 1, None);
    let msgs = c.sync(&uri, 1);
    let sent = Client::last_diagnostics(&msgs);
    assert_eq!(sent[0]["range"], sent[0]["fullRange"], "{sent:?}");
    let broken = c.take_contract_violations();
    assert!(!broken.is_empty());
    for v in &broken {
        assert_eq!(v["contract"], "diagnostic.header-error", "{v}");
        assert!(
            v["source"]
                .as_str()
                .unwrap()
                .contains("diagnosticsOfHeaderError"),
            "{v}"
        );
        assert_eq!(v["detail"]["message"]["uri"], json!(uri), "{v}");
        assert_eq!(v["detail"]["at"]["range"]["end"]["line"], 4, "{v}");
    }
    c.await_stderr("Lean contract rule diagnostic.header-error broken");
}

/// Lean's messages have three severities (`msgToInteractiveDiagnostic`): there is no `hint`
/// directive, since Lean never sends severity 4.
#[test]
fn no_directive_makes_a_severity_lean_never_sends() {
    let mut c = Client::ready(Opts::default());
    let uri = c.project.uri("Fixture/Hint.lean");
    c.open_text(&uri, "def a := 1 -- fake: hint \"h\"\n", 1, None);
    let msgs = c.sync(&uri, 1);
    assert_eq!(
        Client::last_diagnostics(&msgs),
        Vec::<serde_json::Value>::new()
    );
}
