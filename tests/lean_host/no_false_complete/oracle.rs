//! The oracle: what a fresh server says of the inputs a receipt names, and every receipt of a
//! played scenario held to it.
//!
//! Contract: a receipt names Main's text (by `text_sha256`), Dep's (by its one import's hash)
//! and the lakefile (by `lake_config_sha256`); each must be one the scenario wrote
//! (`[unknown-text]`, `[unknown-import]`, `[unknown-config]`). Those inputs, Main without its
//! delay, are synced alone on a fresh server and project ([`fresh`], memoised for the test
//! process). A receipt labelled `complete` is a violation (`[false-complete]`) unless the fresh
//! sync is complete too, and, on a result with diagnostics (`lean_sync`, `lean_refresh`), its
//! diagnostics and readiness are the fresh sync's. A receipt of a sync or refresh that is not
//! `complete` is counted, and counted again when the fresh sync is complete: the rate of
//! answers a fresh server would have called complete.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

use super::play::{Played, prepared};
use super::scenario::{self, MAIN, Text};
use crate::model::Violation;
use crate::model::driver::Driver;
use crate::model::project::scratch;

/// The inputs a receipt names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Inputs {
    main: String,
    dep: u8,
    strict: bool,
}

/// What a fresh server's sync of some inputs says: the receipt's state, and the diagnostics
/// and readiness (or the error's code).
#[derive(Debug, Clone, PartialEq)]
struct Fresh {
    state: String,
    said: Value,
}

/// Counts over every scenario of the test process.
pub struct Tally {
    pub receipts: AtomicUsize,
    pub complete: AtomicUsize,
    pub not_complete: AtomicUsize,
    pub fresh_complete: AtomicUsize,
    pub fresh_runs: AtomicUsize,
}

pub static TALLY: Tally = Tally {
    receipts: AtomicUsize::new(0),
    complete: AtomicUsize::new(0),
    not_complete: AtomicUsize::new(0),
    fresh_complete: AtomicUsize::new(0),
    fresh_runs: AtomicUsize::new(0),
};

fn cache() -> &'static Mutex<HashMap<Inputs, Fresh>> {
    static CACHE: OnceLock<Mutex<HashMap<Inputs, Fresh>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The diagnostics and readiness of a sync's result, without versions (two servers count
/// them apart).
fn said(content: &Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                fields.remove("version");
                fields.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut said =
        json!({"diagnostics": content["diagnostics"], "readiness": content["readiness"]});
    strip(&mut said);
    said
}

/// What a fresh server says of `inputs` (memoised).
fn fresh(inputs: &Inputs) -> Fresh {
    let known = cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(inputs)
        .cloned();
    if let Some(known) = known {
        return known;
    }
    TALLY.fresh_runs.fetch_add(1, Ordering::Relaxed);
    let project = prepared(&inputs.main, inputs.dep, inputs.strict);
    let traces = scratch();
    let mut driver = Driver::start(&[project.root()], &[], traces.path());
    let arguments = json!({"workspace": project.descriptor(), "path": MAIN,
                           "diagnostics_in_result": true, "diagnostic_scope": "all"});
    let call = driver.call("lean_sync", arguments);
    assert!(driver.wait_answered(call), "a fresh sync never answered");
    let result = driver.sent[call].answers[0].value["result"].clone();
    driver.finish();
    let broken = crate::support::contract::fake_violations_in(traces.path(), "");
    assert!(
        broken.is_empty(),
        "a fresh server's Lean sent what Lean never sends:\n{}",
        broken.join("\n")
    );
    let content = &result["structuredContent"];
    let fresh = if result["isError"] == true {
        Fresh {
            state: content["data"]["receipt"]["state"]
                .as_str()
                .unwrap_or("none")
                .to_owned(),
            said: json!({"error": content["code"]}),
        }
    } else {
        Fresh {
            state: content["receipt"]["state"]
                .as_str()
                .unwrap_or("none")
                .to_owned(),
            said: said(content),
        }
    };
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(inputs.clone(), fresh.clone());
    fresh
}

/// Every violation of `played` (see the contract).
pub fn check(played: &Played) -> Vec<Violation> {
    let mut found = Vec::new();
    if let Some(broken) = &played.broken {
        found.push(Violation::new("broken", None, broken.clone()));
    }
    for report in &played.contract {
        found.push(Violation::new("lean-contract", None, report.clone()));
    }
    for call in &played.calls {
        let Some((content, error)) = &call.answer else {
            continue;
        };
        if call.tool == "lean_sync_dep" {
            continue;
        }
        let receipt = if *error {
            &content["data"]["receipt"]
        } else {
            &content["receipt"]
        };
        if !receipt.is_object() {
            if !*error {
                let why = format!("{} answered without a receipt: {content}", call.tool);
                found.push(Violation::new("no-receipt", Some(call.step), why));
            }
            continue;
        }
        TALLY.receipts.fetch_add(1, Ordering::Relaxed);
        let Some(inputs) = inputs(played, call.step, receipt, &mut found) else {
            continue;
        };
        let state = receipt["state"].as_str().unwrap_or_default();
        let diagnostics = !*error && matches!(call.tool, "lean_sync" | "lean_refresh");
        if state == "complete" {
            TALLY.complete.fetch_add(1, Ordering::Relaxed);
            let fresh = fresh(&inputs);
            let differs = fresh.state != "complete" || (diagnostics && said(content) != fresh.said);
            if differs {
                let got = if diagnostics {
                    said(content)
                } else {
                    json!("(no diagnostics)")
                };
                found.push(Violation::new(
                    "false-complete",
                    Some(call.step),
                    format!(
                        "{} labelled {receipt} complete; a fresh server's sync of those inputs \
                         says {} with {}, the call said {got}",
                        call.tool, fresh.state, fresh.said
                    ),
                ));
            }
        } else if matches!(call.tool, "lean_sync" | "lean_refresh") {
            TALLY.not_complete.fetch_add(1, Ordering::Relaxed);
            if fresh(&inputs).state == "complete" {
                TALLY.fresh_complete.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    found
}

/// The inputs `receipt` names, each one the scenario wrote.
fn inputs(
    played: &Played,
    step: usize,
    receipt: &Value,
    found: &mut Vec<Violation>,
) -> Option<Inputs> {
    let mut unknown = |kind: &'static str, what: String| {
        found.push(Violation::new(kind, Some(step), what));
        None
    };
    let text: Option<&Text> = receipt["text_sha256"]
        .as_str()
        .and_then(|sha| played.texts.get(sha));
    let Some(text) = text else {
        return unknown(
            "unknown-text",
            format!("the receipt names no text written: {receipt}"),
        );
    };
    let imports = receipt["imports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let dep = match imports {
        [import] if import["module"] == "Fixture.Dep" => import["sha256"]
            .as_str()
            .and_then(|sha| played.deps.get(sha)),
        _ => None,
    };
    let Some(&dep) = dep else {
        return unknown(
            "unknown-import",
            format!("the receipt names no Dep written: {receipt}"),
        );
    };
    let config = receipt["lake_config_sha256"]
        .as_str()
        .and_then(|sha| played.configs.get(sha));
    let Some(&strict) = config else {
        return unknown(
            "unknown-config",
            format!("the receipt names no lakefile written: {receipt}"),
        );
    };
    Some(Inputs {
        main: scenario::canonical(*text),
        dep,
        strict,
    })
}
