//! The Lean contract check: rules read from Lean's source about what a `lake serve` sends, and
//! a checker that holds one server's traffic to them. It exists so that a stand-in for Lean (the
//! fake) can never agree with a client on a shape Lean does not send.
//!
//! Contract:
//! 1. [`Checker`] observes one server's life, both ways and in one order: [`Checker::client`]
//!    for each client→server message, [`Checker::server`] for each server→client message, which
//!    returns the violations of that message. The order may be the server's (the fake calls it
//!    as it reads and writes) or the client's (a host trace: sends as sent, receipts as read);
//!    every rule holds in both, because a rule only ever requires a client message to have
//!    been observed *before* a server message, never after.
//! 2. Each violation names its [`Rule`] (id, statement, the Lean source it was read from) and
//!    carries a JSON detail: why, the message's summary, the offending part.
//! 3. The checker keeps per document only the newest text and the line lengths of its last
//!    [`KEPT_VERSIONS`] versions, and does constant work per position: it runs on every
//!    message of every test.
//! 4. [`check_host_trace`] runs a checker over a host's LSP trace file (`--trace-dir`).

mod checker;
mod diagnostics;
mod host_trace;
pub mod rules;
mod text;

use serde_json::{Map, Value, json};

pub use checker::{Checker, KEPT_VERSIONS};
pub use host_trace::{HostTrace, check_host_trace};
pub use rules::{RULES, Rule, rule};

/// A server message Lean could never send.
#[derive(Clone, Debug)]
pub struct Violation {
    pub rule: &'static Rule,
    /// `{"why", "message", "at"}`: what is wrong, the message's summary, the offending part.
    pub detail: Value,
}

impl Violation {
    /// The fake's trace line: `{"contract": id, "source": ..., "detail": ...}`.
    pub fn to_json(&self) -> Value {
        json!({"contract": self.rule.id, "source": self.rule.source, "detail": self.detail})
    }

    /// The violation a trace line records (`None` for any other line, or an unknown rule).
    pub fn from_json(line: &Value) -> Option<Violation> {
        let rule = rule(line.get("contract")?.as_str()?)?;
        let detail = line.get("detail").cloned().unwrap_or(Value::Null);
        Some(Violation { rule, detail })
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &self.detail;
        write!(
            f,
            "Lean contract rule {} broken: {}\n  message: {}\n  offending: {}\n  rule: {}\n  \
             read from: {}",
            self.rule.id,
            d["why"].as_str().unwrap_or_default(),
            d["message"],
            d["at"],
            self.rule.statement,
            self.rule.source
        )
    }
}

/// The violations of one server message, each with that message's summary (made only when
/// there is one: this runs on every message).
pub(crate) struct Found<'a> {
    message: &'a Value,
    list: Vec<Violation>,
}

impl<'a> Found<'a> {
    pub(crate) fn new(message: &'a Value) -> Found<'a> {
        Found {
            message,
            list: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, rule: &'static Rule, why: &str, at: &Value) {
        let detail = json!({"why": why, "message": summary(self.message), "at": at});
        self.list.push(Violation { rule, detail });
    }

    pub(crate) fn into_vec(self) -> Vec<Violation> {
        self.list
    }
}

/// What identifies a message in a report: method, id, and the document and version it names.
pub(crate) fn summary(msg: &Value) -> Value {
    let mut m = Map::new();
    for key in ["method", "id"] {
        if let Some(v) = msg.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    let params = msg.get("params").unwrap_or(&Value::Null);
    let doc = params.get("textDocument").unwrap_or(params);
    for key in ["uri", "version"] {
        if let Some(v) = doc.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    Value::Object(m)
}

/// An LSP position `{"line","character"}`.
pub(crate) fn pos(v: &Value) -> Option<text::Pos> {
    Some((v.get("line")?.as_u64()?, v.get("character")?.as_u64()?))
}

/// An LSP range `{"start","end"}`.
pub(crate) fn range(v: &Value) -> Option<(text::Pos, text::Pos)> {
    Some((pos(v.get("start")?)?, pos(v.get("end")?)?))
}
