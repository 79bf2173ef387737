//! The Lean contract check on this server's traffic (`tests/lean-contract`, README "Lean
//! contract"): the main loop shows it every client message and the one writer every message it
//! sends, so a shape Lean never sends is caught in the test that made the fake send it. Each
//! violation is a trace line `{"contract": <rule id>, "source": …, "detail": …}` and a line on
//! stderr; the message still goes out (the client's behaviour on it is part of what the test
//! sees).
//!
//! `FAKE_LEAN_CONTRACT_BREAK=header-range` makes the writer send what Lean never sends, to show
//! that the check catches it: every error from 0:0 over several lines gets `range` =
//! `fullRange`, the header-error shape Lean cuts at 0:0–1:0 (`diagnosticsOfHeaderError`).

use crate::trace::Trace;
use lean_contract::Checker;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Break {
    HeaderRange,
}

pub struct Contract {
    checker: Checker,
    broken: Option<Break>,
}

impl Contract {
    pub fn from_env() -> Contract {
        let broken = match std::env::var("FAKE_LEAN_CONTRACT_BREAK").ok().as_deref() {
            None | Some("") => None,
            Some("header-range") => Some(Break::HeaderRange),
            Some(other) => {
                eprintln!("fake-lake: unknown FAKE_LEAN_CONTRACT_BREAK {other:?} ignored");
                None
            }
        };
        Contract {
            checker: Checker::new(),
            broken,
        }
    }

    /// A message the client sent.
    pub fn client(&mut self, msg: &Value) {
        self.checker.client(msg);
    }

    /// A message about to be sent: broken as asked, then checked; violations are recorded.
    pub fn outgoing(&mut self, msg: &mut Value, trace: &Trace) {
        if self.broken == Some(Break::HeaderRange) {
            header_range(msg);
        }
        for violation in self.checker.server(msg) {
            eprintln!(
                "fake-lake: Lean contract rule {} broken: {}",
                violation.rule.id, violation.detail["why"]
            );
            trace.record(violation.to_json());
        }
    }
}

fn header_range(msg: &mut Value) {
    if msg["method"] != "textDocument/publishDiagnostics" {
        return;
    }
    let Some(diagnostics) = msg["params"]["diagnostics"].as_array_mut() else {
        return;
    };
    for d in diagnostics {
        let full = &d["fullRange"];
        let whole = d["severity"] == 1
            && full["start"]["line"] == 0
            && full["start"]["character"] == 0
            && full["end"]["line"].as_u64().is_some_and(|l| l > 0);
        if whole {
            d["range"] = full.clone();
        }
    }
}
