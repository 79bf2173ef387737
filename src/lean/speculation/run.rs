//! One speculative run: text tried at a position of a document, in its twin, without touching the
//! document or its file.
//!
//! Contract:
//! 1. [`start_at`] decides where and how a run starts. Where Lean has proof goals at the position
//!    (`$/lean/plainGoal` is not empty; asked once per document version and position, see
//!    `modes`) the text is a tactic block run in that proof state, anchored at the tactic that
//!    starts the position's line when the position is in its indentation; elsewhere it is one
//!    command.
//! 2. [`run`] builds the twin's text (`probe`), refusing a command-mode text of more than one
//!    command before Lean is asked. It leases the document's twin for the whole run (`session`:
//!    runs on one file queue, runs on others do not, and never more twins than the bound), gives
//!    Lean the text, waits for that exact text's diagnostics (the strict barrier), and reads the
//!    verdict and, in tactic mode on success, the goals after the probe — all under the lease,
//!    so no other run's text can answer. A twin whose header Lean could not process (a header
//!    error or a fatal report, told by shape: `twins::setup_failure`) never gives a verdict: it
//!    is `twinSetupFailed` with Lean's text; when the twin's text imports modules the real
//!    file's does not (a candidate or a probe at the top of the file adding an import), the
//!    error names them (`addedImports`): a Lake that sets a module up from its file on disk
//!    (mid-2025) never built them for the twin, which the message says, with what to do.
//! 3. The verdict is `{success, messages, traces, proof_state, uses_sorry, sorry_unconfirmed?}`:
//!    `success` when neither the probe nor what it causes on its declaration raised an error
//!    (`probe`); `proof_state` the goals after it (tactic mode, on success), else `null`;
//!    `uses_sorry` when the probe writes `sorry` or `admit` (`syntax::writes_sorry`), when one of
//!    Lean's messages says so (`probe`), or when Lean's axioms of what the run touched list
//!    `sorryAx` (`axioms`: asked in the same twin text, answered by the same barrier). A run
//!    that finishes its work (command mode, or a proof the probe leaves with no goals) and would
//!    be clean is clean only when Lean answered those axioms in Lean's shape: otherwise it
//!    `uses_sorry`, with `sorry_unconfirmed: {reason, message}` (`axiomsNotAnswered`,
//!    `axiomsNotAskable`) saying the `sorry` is not ruled out rather than seen. A run that leaves
//!    goals is a step, not a finished proof: Lean admits the goals left with `sorry` of its own,
//!    so its axioms cannot tell, and `uses_sorry` is what the probe and Lean's messages say. It
//!    keeps what Lean said of the twin's text after the strict barrier (`receipt::lean_state`;
//!    `not_checked` for a text refused before Lean was asked), which the run's receipt carries.
//! 4. A verdict Lean gave is kept (`verdicts`), keyed by the text before the anchor, the anchor,
//!    the probe's text and the state Lean was in; a run asked again answers from it (its
//!    `checked` state included) and sends Lean nothing (not even a lease is taken).

use std::path::Path;

use serde_json::{Value, json};

use super::axioms::{self, Axioms};
use super::handles::HandleState;
use super::modes::ProofModes;
use super::probe::{self, TwinText};
use super::twins;
use super::verdicts::{Cached, Key, Kind, VerdictCache, sha256, validity};
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::session::barrier::{Follow, barrier};
use crate::lean::session::goals::plain_goals;
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt::{Reason, ReceiptState, lean_state};
use crate::lean::session::report::LiveDiagnostics;
use crate::lean::session::{Pin, TwinLease};
use crate::lean::syntax::writes_sorry;
use crate::lean::text::{Position, offset_of};
use crate::lean::workspace::runtime::Runtime;

/// Where a `lean_run_at*` call at `at` of `document` runs `text`, and in which mode (see the
/// contract).
pub async fn start_at(
    runtime: &Runtime,
    document: &Document,
    at: Position,
    text: &str,
    modes: &ProofModes,
    caller: &Caller<'_>,
) -> Result<HandleState, HostError> {
    let Position { line, character } = at;
    let mut character = character;
    let known = modes.get(&document.uri, document.version, line, character);
    let tactic = match known {
        Some(tactic) => tactic,
        None => {
            let goals = plain_goals(runtime.documents(), document, at, caller).await?;
            let tactic = goals.is_some_and(|goals| !goals.is_empty());
            modes.remember(&document.uri, document.version, line, character, tactic);
            tactic
        }
    };
    if tactic {
        // A position in a tactic's indentation means that tactic: the probe takes its column.
        let text = document
            .text
            .split('\n')
            .nth(line as usize)
            .unwrap_or_default();
        let indentation = text.len() - text.trim_start().len();
        let column = text[..indentation].encode_utf16().count() as u32;
        if character < column && !text.trim().is_empty() {
            character = column;
        }
    }
    Ok(HandleState {
        workspace: runtime.root().key(),
        epoch: runtime.epoch(),
        uri: document.uri.to_string(),
        version: document.version,
        line,
        character,
        tactic,
        steps: vec![text.to_owned()],
    })
}

/// A run's verdict (see the contract).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The probe raised no error.
    pub success: bool,
    /// What it said, errors first as Lean ordered them.
    pub messages: Vec<Value>,
    /// Its `[class]` traces.
    pub traces: Vec<String>,
    /// The goals after it, in tactic mode on success.
    pub proof_state: Value,
    /// The probe writes `sorry`, or Lean says the declaration, with the probe, still depends on
    /// it, or Lean's axioms could not rule it out (`sorry_unconfirmed`).
    pub uses_sorry: bool,
    /// Why Lean's axioms could not rule `sorry` out, when they could not: a typed reason and a
    /// message (see the contract).
    pub sorry_unconfirmed: Option<(&'static str, String)>,
    /// What Lean said of the twin's text, for the run's receipt (`session/receipt.rs`).
    pub checked: ReceiptState,
}

impl Verdict {
    /// The verdict's result fields.
    pub fn to_json(&self) -> Value {
        let mut shown = json!({
            "success": self.success,
            "messages": self.messages,
            "traces": self.traces,
            "proof_state": self.proof_state,
            "uses_sorry": self.uses_sorry,
        });
        if let Some((reason, message)) = &self.sorry_unconfirmed {
            shown["sorry_unconfirmed"] = json!({"reason": reason, "message": message});
        }
        shown
    }
}

/// Runs `start`'s steps in the twin of the document `real` pins, whose file is `file` and whose
/// text is `document`'s (see the contract).
pub async fn run(
    runtime: &Runtime,
    real: &Pin,
    file: &Path,
    document: &Document,
    start: &HandleState,
    verdicts: &VerdictCache,
    caller: &Caller<'_>,
) -> Result<Verdict, HostError> {
    let last = start.steps.last().map(String::as_str).unwrap_or_default();
    if !start.tactic {
        let extra = probe::extra_commands(last);
        if !extra.is_empty() {
            return Ok(Verdict {
                success: false,
                messages: vec![
                    json!({"severity": "error", "text": probe::one_command_message(&extra)}),
                ],
                traces: Vec::new(),
                proof_state: Value::Null,
                uses_sorry: false,
                sorry_unconfirmed: None,
                checked: ReceiptState::Incomplete(Reason::NotChecked),
            });
        }
    }
    let at = Position::new(start.line, start.character);
    let anchor = offset_of(&document.text, at);
    let mut twin_text = probe::twin_text(&document.text, anchor, &start.steps, start.tactic);
    let generation = runtime.documents().generation();
    let key = Key {
        workspace: runtime.root().key().into(),
        epoch: runtime.epoch(),
        generation,
        validity: validity(runtime.documents(), document),
        uri: document.uri.clone(),
        kind: Kind::Run {
            tactic: start.tactic,
        },
        base: sha256(&document.text[..anchor]),
        from: at,
        to: at,
        candidate: sha256(&twin_text.text[anchor..]),
    };
    if let Some(Cached::Run(verdict)) = verdicts.get(&key) {
        return Ok(verdict);
    }
    // Appended past the key: the questions follow from the text the key already names.
    let touched = probe::touched(&twin_text, start.tactic);
    let asked = axioms::ask(&mut twin_text.text, &touched);
    let (mut ran, _lease) = in_twin(runtime, real, file, &twin_text, caller).await?;
    let checked = lean_state(&ran);
    let axioms = asked.take_answers(&mut ran.diagnostics);
    let outcome = probe::outcome(&ran.diagnostics, &twin_text);
    let proof_state = if start.tactic && outcome.success {
        plain_goals(runtime.documents(), &ran, twin_text.end, caller)
            .await?
            .map_or(Value::Null, |goals| json!({ "goals": goals }))
    } else {
        Value::Null
    };
    let written = start.steps.iter().any(|step| writes_sorry(step));
    let verdict = judged(outcome, proof_state, written, &axioms, checked);
    if runtime.documents().generation() == generation {
        verdicts.put(key, Cached::Run(verdict.clone()));
    }
    Ok(verdict)
}

/// The verdict from the probe's outcome, the goals after it, whether it writes `sorry`, and
/// Lean's axioms of what it touched (see the contract).
fn judged(
    outcome: probe::Outcome,
    proof_state: Value,
    written: bool,
    axioms: &Axioms,
    checked: ReceiptState,
) -> Verdict {
    let goals_left = proof_state["goals"]
        .as_array()
        .is_some_and(|goals| !goals.is_empty());
    let finished = outcome.success && !outcome.cut_off && !goals_left;
    let mut uses_sorry = outcome.uses_sorry || written;
    let mut sorry_unconfirmed = None;
    if finished && !uses_sorry {
        sorry_unconfirmed = axioms.unconfirmed();
        uses_sorry = axioms.uses_sorry() || sorry_unconfirmed.is_some();
    }
    Verdict {
        success: outcome.success,
        messages: outcome.messages,
        traces: outcome.traces,
        proof_state,
        uses_sorry,
        sorry_unconfirmed,
        checked,
    }
}

/// Gives the file's twin `text` and waits until Lean has finished that text; the twin as it then
/// stands, and the lease the rest of the run holds (see the contract).
pub async fn in_twin(
    runtime: &Runtime,
    real: &Pin,
    file: &Path,
    text: &TwinText,
    caller: &Caller<'_>,
) -> Result<(Document, TwinLease), HostError> {
    let set = runtime.documents();
    let (root, epoch) = (runtime.root().path(), runtime.epoch());
    let place = |slot| twins::placement(root, file, epoch, slot);
    let lease = set.lease_twin(real, place, &text.text, caller).await?;
    let mut events = set.mirror().subscribe();
    let given = lease.give(&text.text, text.start, caller).await?;
    let live = LiveDiagnostics::Off;
    let ran = barrier(set, given, caller, live, &mut events, Follow::SameText).await?;
    // Told by shape, never by words (each Lake era words it differently): the barrier has
    // already failed a twin whose worker crashed, so a fatal report here has a header error.
    let Some(failure) = twins::setup_failure(&ran) else {
        return Ok((ran, lease));
    };
    let added = real
        .document()
        .map(|real| added_imports(&real.text, &text.text))
        .unwrap_or_default();
    Err(if added.is_empty() {
        HostError::twin_setup_failed(caller.path, &failure)
    } else {
        HostError::twin_imports_not_set_up(caller.path, &failure, &added)
    })
}

/// The imports the header of `twin` names that the header of `real` does not.
fn added_imports(real: &str, twin: &str) -> Vec<String> {
    let had = crate::lean::syntax::imports(real);
    let mut added = crate::lean::syntax::imports(twin);
    added.retain(|m| !had.contains(m));
    added
}
