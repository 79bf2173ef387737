//! The oracle: what a fresh server says of the inputs a receipt names, and every call of a
//! played scenario held to it; and Lean's own word, on a fresh server, on the verdicts runs and
//! edits give.
//!
//! Contract (each violation tagged with its kind):
//! 1. A receipt names Main's text (by `text_sha256`), its import closure (Dep and Base, by
//!    `imports`), the note it reads (by `includes`; a null hash is an absent note) and the
//!    lakefile (by `lake_config_sha256`); each must be one the scenario wrote (`[unknown-text]`,
//!    `[unknown-import]`, `[unknown-include]`, `[unknown-config]`), and a `complete` receipt
//!    must name all of them (`[closure]`).
//! 2. Those inputs, Main without its delay, are synced alone on a fresh server of the unit's
//!    era and a fresh project ([`fresh`], memoised for the test process). A receipt labelled
//!    `complete` is a violation (`[false-complete]`) unless the fresh sync is complete too, and,
//!    on a result with diagnostics (`lean_sync`, `lean_refresh`), its diagnostics and readiness
//!    are the fresh sync's: so a receipt that names a closure or a note other than the one Lean
//!    checked the text against, where they change what Lean says (a module that does not
//!    build, a note that makes an error), is caught. A receipt of a sync or refresh that is not
//!    `complete` is counted, and counted again when the fresh sync is complete: the rate of
//!    answers a fresh server would have called complete.
//! 3. Header failures: inputs whose header Lean cannot process, by construction (a variant's
//!    header, or a module of the closure that does not build), never come back `crashed` or as
//!    `workerCrashed`/`workerExited` (`[crashed-header]`), and the fresh server must say
//!    `setup_failed` of them (`[oracle]`: the oracle really answers that question). No real
//!    document is given the text it already had (a revival, `model::revivals`) unless a text
//!    given it since its open or last revival crashes Lean (`[revived]`).
//! 4. Clean verdicts: a run that says `success: true, uses_sorry: false` never wrote `sorry`,
//!    and when it finished the proof, Lean's `#print axioms` of `Main.swap`, asked on a fresh
//!    server after the real text up to the run's position and the probe (the oracle's own
//!    reading, `model::axioms`), lists no `sorryAx` (`[false-clean]`); an edit candidate that
//!    says `closed` likewise, asked after the whole edited text (`[false-closed]`). Lean's
//!    answer must agree with what the texts are built to mean (`[oracle]`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

use super::play::{Call, Files, Played, initial, prepared};
use super::scenario::{self, BULLET, MAIN, Module, NOTE, Note, Text, Variant};
use crate::model::Violation;
use crate::model::axioms::{self, Said};
use crate::model::driver::Driver;
use crate::model::era::{Build, Era};
use crate::model::project::scratch;

/// The inputs a receipt names, and the era of the Lean that checked them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Inputs {
    text: Text,
    files: Files,
    era: Era,
}

impl Inputs {
    /// Whether Lean cannot process the header of these inputs, by construction.
    fn header_fails(&self) -> bool {
        let built = self.era.build != Build::Off;
        self.text.variant.header_fails()
            || (built && (self.files.dep == Module::Broken || self.files.base == Module::Broken))
    }
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
    pub clean_verdicts: AtomicUsize,
    pub axioms_asked: AtomicUsize,
}

pub static TALLY: Tally = Tally {
    receipts: AtomicUsize::new(0),
    complete: AtomicUsize::new(0),
    not_complete: AtomicUsize::new(0),
    fresh_complete: AtomicUsize::new(0),
    fresh_runs: AtomicUsize::new(0),
    clean_verdicts: AtomicUsize::new(0),
    axioms_asked: AtomicUsize::new(0),
};

/// A memo of the test process.
fn memo<K: std::hash::Hash + Eq + Clone, V: Clone>(
    cache: &'static OnceLock<Mutex<HashMap<K, V>>>,
    key: &K,
    compute: impl FnOnce() -> V,
) -> V {
    let cache = cache.get_or_init(Mutex::default);
    let known = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(key)
        .cloned();
    known.unwrap_or_else(|| {
        let value = compute();
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), value.clone());
        value
    })
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

/// What a fresh server says of `inputs` (memoised). Which value Dep or Base holds, and which
/// plain text the note, changes no word Lean says of Main (`Dep.value` is a `Nat` whatever it
/// is; a note is a string), only their hashes, which no fresh answer compared holds: the fresh
/// server checks the first of each.
fn fresh(inputs: &Inputs) -> Fresh {
    static CACHE: OnceLock<Mutex<HashMap<Inputs, Fresh>>> = OnceLock::new();
    let value = |m: Module| match m {
        Module::Value(_) => Module::Value(1),
        broken => broken,
    };
    let mut inputs = inputs.clone();
    inputs.files.dep = value(inputs.files.dep);
    inputs.files.base = value(inputs.files.base);
    if let Note::Plain(_) = inputs.files.note {
        inputs.files.note = Note::Plain(1);
    }
    let inputs = &inputs;
    memo(&CACHE, inputs, || {
        TALLY.fresh_runs.fetch_add(1, Ordering::Relaxed);
        let project = prepared(&inputs.files);
        let traces = scratch();
        let mut driver = Driver::start(&[project.root()], &[], inputs.era, traces.path());
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
        let state = |receipt: &Value| receipt["state"].as_str().unwrap_or("none").to_owned();
        if result["isError"] == true {
            Fresh {
                state: state(&content["data"]["receipt"]),
                said: json!({"error": content["code"]}),
            }
        } else {
            Fresh {
                state: state(&content["receipt"]),
                said: said(content),
            }
        }
    })
}

/// Lean's `#print axioms Main.swap` after `text`, on a fresh server of `era` (memoised).
fn axioms_of(text: &str, era: Era) -> Said {
    static CACHE: OnceLock<Mutex<HashMap<(String, Era), Said>>> = OnceLock::new();
    memo(&CACHE, &(text.to_owned(), era), || {
        TALLY.axioms_asked.fetch_add(1, Ordering::Relaxed);
        let project = prepared(&initial());
        axioms::ask(&project, era, MAIN, text, "Main.swap")
    })
}

/// Whether a probe or candidate writes `sorry`.
fn writes_sorry(text: &str) -> bool {
    let code = text.split("--").next().unwrap_or_default();
    code.split(|c: char| !(c.is_alphanumeric() || "_'.!?".contains(c)))
        .any(|w| w == "sorry" || w == "admit")
}

/// Whether `text`, put in `Main.swap` of a text of `variant`, makes it depend on `sorry`, as
/// the texts are built: it writes one, or uses `hidden` where `hidden` is proved by one.
fn built_to_use_sorry(variant: Variant, text: &str) -> bool {
    writes_sorry(text) || (text.contains("hidden") && variant == Variant::SorryLemma)
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
    for revival in &played.revivals {
        let crashed = revival.uri.ends_with(MAIN)
            && revival.since.iter().any(|given| {
                played
                    .texts_fnv
                    .get(given)
                    .is_some_and(|t| t.variant.crashes())
            });
        if !crashed {
            let known = played.texts_fnv.get(&revival.text);
            found.push(Violation::new(
                "revived",
                None,
                format!(
                    "{} was given the text it had again (a revival: {known:?}), though no text \
                     given it since its open or last revival crashes",
                    revival.uri
                ),
            ));
        }
    }
    for call in played.calls.iter().filter(|c| c.file == MAIN) {
        let Some((content, error)) = &call.answer else {
            continue;
        };
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
        let state = receipt["state"].as_str().unwrap_or_default();
        let Some(inputs) = inputs(played, call.step, receipt, state == "complete", &mut found)
        else {
            continue;
        };
        headers(call, content, *error, state, &inputs, &mut found);
        receipts(call, content, *error, state, &inputs, &mut found);
        if !*error {
            verdicts(call, content, &inputs, &mut found);
        }
    }
    found
}

/// Contract 3, for one call.
fn headers(
    call: &Call,
    content: &Value,
    error: bool,
    state: &str,
    inputs: &Inputs,
    found: &mut Vec<Violation>,
) {
    if !inputs.header_fails() {
        return;
    }
    let code = content["code"].as_str().filter(|_| error);
    if state == "crashed" || matches!(code, Some("workerCrashed" | "workerExited")) {
        found.push(Violation::new(
            "crashed-header",
            Some(call.step),
            format!(
                "{} said Lean crashed on a header Lean cannot process ({:?}, Dep {:?}, Base \
                 {:?}): {content}",
                call.tool, inputs.text.variant, inputs.files.dep, inputs.files.base
            ),
        ));
    }
}

/// Contract 2, for one call.
fn receipts(
    call: &Call,
    content: &Value,
    error: bool,
    state: &str,
    inputs: &Inputs,
    found: &mut Vec<Violation>,
) {
    let diagnostics = !error && matches!(call.tool, "lean_sync" | "lean_refresh");
    let asked = state == "complete" || diagnostics;
    if !asked {
        return;
    }
    let fresh = fresh(inputs);
    if inputs.header_fails() && fresh.state != "setup_failed" {
        found.push(Violation::new(
            "oracle",
            Some(call.step),
            format!(
                "the oracle built a header Lean cannot process ({:?}, Dep {:?}, Base {:?}), \
                 and a fresh server says {} of it: {}",
                inputs.text.variant, inputs.files.dep, inputs.files.base, fresh.state, fresh.said
            ),
        ));
    }
    if state == "complete" {
        TALLY.complete.fetch_add(1, Ordering::Relaxed);
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
                    "{} labelled {} complete; a fresh server's sync of those inputs says {} \
                     with {}, the call said {got}",
                    call.tool,
                    if error {
                        &content["data"]["receipt"]
                    } else {
                        &content["receipt"]
                    },
                    fresh.state,
                    fresh.said
                ),
            ));
        }
    } else {
        TALLY.not_complete.fetch_add(1, Ordering::Relaxed);
        if fresh.state == "complete" {
            TALLY.fresh_complete.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Contract 4, for one call's result.
fn verdicts(call: &Call, content: &Value, inputs: &Inputs, found: &mut Vec<Violation>) {
    let variant = inputs.text.variant;
    let canonical = scenario::canonical(inputs.text);
    let mut held = |kind: &'static str, what: String, text: String, put: &str| {
        TALLY.clean_verdicts.fetch_add(1, Ordering::Relaxed);
        if writes_sorry(put) {
            found.push(Violation::new(
                kind,
                Some(call.step),
                format!("{what}, yet it writes sorry"),
            ));
            return;
        }
        let said = axioms_of(&text, inputs.era);
        let built = built_to_use_sorry(variant, put);
        if said != Said::Free {
            found.push(Violation::new(
                kind,
                Some(call.step),
                format!(
                    "{what}; Lean's #print axioms of Main.swap there says {said:?} ({variant:?})"
                ),
            ));
        } else if built {
            found.push(Violation::new(
                "oracle",
                Some(call.step),
                format!("{what}; Lean's axioms say it is free of sorry, but the text is built to use one ({variant:?})"),
            ));
        }
    };
    if let Some(probe) = call.probe {
        let clean = content["success"] == true && content["uses_sorry"] == false;
        let finished = content["proof_state"]["goals"]
            .as_array()
            .is_some_and(Vec::is_empty);
        if clean && (finished || writes_sorry(probe)) {
            let before: String = canonical
                .split_inclusive('\n')
                .take(BULLET as usize)
                .collect();
            let text = format!("{before}  {probe}\n");
            let what = format!("lean_run_at {probe:?} said success: true, uses_sorry: false");
            held("false-clean", what, text, probe);
        }
    }
    let Some(base) = call.base else { return };
    let candidates = content["candidates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (k, candidate) in candidates.iter().enumerate() {
        let Some(&put) = call.candidates.get(k) else {
            continue;
        };
        if candidate["verdict"] != "closed" {
            continue;
        }
        let text = scenario::canonical(base);
        let lines: Vec<&str> = text.split('\n').collect();
        let line = lines[BULLET as usize];
        let edited_line = format!("  · {put}");
        debug_assert_eq!(line, "  · exact hp");
        let mut edited: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        edited[BULLET as usize] = edited_line;
        let what = format!("lean_try_edit candidate {put:?} said closed");
        held("false-closed", what, edited.join("\n"), put);
    }
}

/// The inputs `receipt` names, each one the scenario wrote; a `complete` one must name them all.
fn inputs(
    played: &Played,
    step: usize,
    receipt: &Value,
    complete: bool,
    found: &mut Vec<Violation>,
) -> Option<Inputs> {
    let mut unknown = |kind: &'static str, what: String| {
        found.push(Violation::new(kind, Some(step), what));
        None
    };
    let text: Option<&Text> = receipt["text_sha256"]
        .as_str()
        .and_then(|sha| played.texts.get(sha));
    let Some(&text) = text else {
        return unknown(
            "unknown-text",
            format!("the receipt names no text written: {receipt}"),
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
    let imports = receipt["imports"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let import = |module: &str| imports.iter().find(|i| i["module"] == module);
    let includes = receipt["includes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let include = includes.iter().find(|i| i["path"] == NOTE);
    let (Some(dep), Some(base), Some(note)) =
        (import("Fixture.Dep"), import("Fixture.Base"), include)
    else {
        if complete {
            return unknown(
                "closure",
                format!(
                    "a complete receipt must name Main's import closure (Fixture.Dep, \
                     Fixture.Base) and the note it reads: {receipt}"
                ),
            );
        }
        return None;
    };
    let module = |import: &Value, known: &HashMap<String, Module>| {
        import["sha256"]
            .as_str()
            .and_then(|sha| known.get(sha))
            .copied()
    };
    let (Some(dep), Some(base)) = (module(dep, &played.deps), module(base, &played.bases)) else {
        return unknown(
            "unknown-import",
            format!("the receipt names a Dep or Base never written: {receipt}"),
        );
    };
    let note = match &note["sha256"] {
        Value::Null => Some(Note::Absent),
        sha => sha.as_str().and_then(|sha| played.notes.get(sha)).copied(),
    };
    let Some(note) = note else {
        return unknown(
            "unknown-include",
            format!("the receipt names a note never written: {receipt}"),
        );
    };
    Some(Inputs {
        text,
        files: Files {
            main: scenario::canonical(text),
            dep,
            base,
            note,
            strict,
        },
        era: played.era,
    })
}
