//! One `lean_try_edit` below its tool: the base's diagnostics, then every candidate in a twin of
//! its own, side by side over the twin pool, under one deadline.
//!
//! Contract:
//! 1. The base is the real document as the call synced it, past its strict barrier: its
//!    diagnostics are what each candidate is judged against (`edit`). A version Lean already
//!    finished (`receipt::lean_state` is `complete`: the barrier answered for that very LSP
//!    version, progress done, and no crash, header failure or stale-import notice since) is not
//!    waited for again, so a call asked again sends Lean nothing.
//! 2. Each candidate's whole text goes to a twin leased for it alone (`run::in_twin`: the twin
//!    sharing the longest prefix, the strict barrier for that exact text, `twinSetupFailed` for a
//!    header Lean could not process), followed by the `#print axioms` questions about the
//!    declarations the edit touches (`axioms`), and its verdict is read from that text's
//!    diagnostics alone: no other Lean request. A warm candidate costs at most one `didChange`
//!    and one `waitForDiagnostics`; one Lean already judged (`verdicts`) costs nothing.
//! 3. Candidates run at once, as many as the twin bound lets in, the others waiting for a twin.
//!    A candidate the deadline overtakes is `timeout`: its wait is dropped, which cancels its
//!    Lean requests (`$/cancelRequest`), and the others still answer. With `first_closed`, the
//!    first candidate to close (in time) ends the others the same way: they are `skipped`.
//!    Cancelling the call cancels them all. A candidate that fails otherwise (its twin's setup,
//!    a crash, Lean's timeout) fails the call with that typed error, naming the candidate in
//!    `data.candidate`: never a verdict.
//! 4. A `closed` candidate carries an apply-ready patch: the base's sha256, the range, the text,
//!    and the sha256 of the result. A candidate Lean's axioms could not confirm free of `sorry`
//!    carries `sorry_unconfirmed: {reason, message}` (`edit`).

use std::path::Path;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Value, json};

use super::axioms;
use super::edit::{Applied, Judged, Verdict, judge};
use super::probe::TwinText;
use super::run::in_twin;
use super::verdicts::{Cached, Key, Kind, VerdictCache, sha256, validity};
use crate::lean::error::HostError;
use crate::lean::progress::Caller;
use crate::lean::session::Pin;
use crate::lean::session::barrier::{Follow, barrier};
use crate::lean::session::fingerprint::sha256_hex;
use crate::lean::session::mirror::Document;
use crate::lean::session::receipt::{ReceiptState, lean_state};
use crate::lean::session::report::LiveDiagnostics;
use crate::lean::syntax::declarations_in;
use crate::lean::workspace::runtime::Runtime;

/// Which candidates answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefer {
    /// Every candidate.
    All,
    /// Up to the first that closes (see the contract).
    FirstClosed,
}

/// `synced` past its strict barrier, unless Lean already finished that version (contract, 1).
pub async fn settle(
    runtime: &Runtime,
    synced: Document,
    caller: &Caller<'_>,
) -> Result<Document, HostError> {
    if lean_state(&synced) == ReceiptState::Complete {
        return Ok(synced);
    }
    let set = runtime.documents();
    let mut events = set.mirror().subscribe();
    let live = LiveDiagnostics::Off;
    barrier(set, synced, caller, live, &mut events, Follow::AnyText).await
}

/// What one call tries, and where.
pub struct Trial<'a> {
    /// The workspace's runtime.
    pub runtime: &'a Runtime,
    /// The call's pin on the real document.
    pub real: &'a Pin,
    /// The real file.
    pub file: &'a Path,
    /// The path as the call named it (results name the file by it).
    pub path: &'a str,
    /// The verdicts already given.
    pub verdicts: &'a VerdictCache,
    /// The call.
    pub caller: &'a Caller<'a>,
}

impl Trial<'_> {
    /// The base: `synced`, past its strict barrier (see the contract).
    pub async fn base(&self, synced: Document) -> Result<Document, HostError> {
        settle(self.runtime, synced, self.caller).await
    }

    /// Each candidate's result, in order (see the contract).
    pub async fn run(
        &self,
        base: &Document,
        candidates: &[Applied],
        prefer: Prefer,
        deadline: tokio::time::Instant,
    ) -> Result<Vec<Value>, HostError> {
        let total = candidates.len();
        let mut running: FuturesUnordered<_> = candidates
            .iter()
            .enumerate()
            .map(|(n, applied)| async move {
                let judged = tokio::time::timeout_at(deadline, self.one(base, applied));
                (n, judged.await)
            })
            .collect();
        let mut results: Vec<Option<Value>> = vec![None; total];
        while let Some((n, judged)) = running.next().await {
            let shown = match judged {
                Err(_) => unjudged(Verdict::Timeout),
                Ok(Err(error)) => return Err(for_candidate(error, n)),
                Ok(Ok(shown)) => shown,
            };
            let verdict = shown["verdict"].as_str().unwrap_or_default().to_owned();
            self.caller
                .step(&format!("candidate {} of {total}: {verdict}", n + 1));
            results[n] = Some(shown);
            if prefer == Prefer::FirstClosed && verdict == Verdict::Closed.name() {
                break;
            }
        }
        drop(running);
        let skipped = || unjudged(Verdict::Skipped);
        Ok(results
            .into_iter()
            .map(|r| r.unwrap_or_else(skipped))
            .collect())
    }

    /// One candidate's result: kept, or Lean's (see the contract).
    async fn one(&self, base: &Document, applied: &Applied) -> Result<Value, HostError> {
        let set = self.runtime.documents();
        let generation = set.generation();
        let key = Key {
            workspace: self.runtime.root().key().into(),
            epoch: self.runtime.epoch(),
            generation,
            validity: validity(set, base),
            uri: base.uri.clone(),
            kind: Kind::Edit {
                statement_change_allowed: applied.statement_change_allowed,
            },
            base: sha256(&base.text),
            from: applied.from,
            to: applied.to,
            candidate: sha256(&applied.text),
        };
        if let Some(Cached::Edit(shown)) = self.verdicts.get(&key) {
            return Ok(shown);
        }
        let mut text = applied.text.clone();
        let (edited, declaration) = (&applied.declaration, applied.declaration.start);
        let touched = declarations_in(&applied.text, declaration, edited.end);
        let asked = axioms::ask(&mut text, &touched);
        let twin = TwinText {
            text,
            start: applied.from,
            end: applied.edit_end,
            declaration,
        };
        let (mut ran, _lease) =
            in_twin(self.runtime, self.real, self.file, &twin, self.caller).await?;
        let axioms = asked.take_answers(&mut ran.diagnostics);
        let judged = judge(
            &base.diagnostics,
            applied,
            &ran.diagnostics,
            &axioms,
            self.path,
        );
        let shown = shown(&judged, applied, &base.text);
        if set.generation() == generation {
            self.verdicts.put(key, Cached::Edit(shown.clone()));
        }
        Ok(shown)
    }
}

/// A judged candidate as the result shows it.
fn shown(judged: &Judged, applied: &Applied, base: &str) -> Value {
    let mut shown = json!({
        "verdict": judged.verdict.name(),
        "goals": judged.goals,
        "diagnostics": judged.diagnostics,
        "gate": judged.gate,
    });
    if let Some(reason) = judged.reason {
        shown["reason"] = json!(reason);
    }
    if judged.truncated {
        shown["truncated"] = json!(true);
    }
    if let Some((reason, message)) = &judged.sorry_unconfirmed {
        shown["sorry_unconfirmed"] = json!({"reason": reason, "message": message});
    }
    if judged.verdict == Verdict::Closed {
        shown["patch"] = json!({
            "base_sha256": sha256_hex(base.as_bytes()),
            "range": {"start": applied.from.to_json(), "end": applied.to.to_json()},
            "text": applied.inserted,
            "result_sha256": sha256_hex(applied.text.as_bytes()),
        });
    }
    shown
}

/// A candidate without a verdict of Lean's.
fn unjudged(verdict: Verdict) -> Value {
    json!({"verdict": verdict.name(), "goals": [], "diagnostics": [], "gate": null})
}

/// `error`, naming the candidate it came from.
pub fn for_candidate(mut error: HostError, n: usize) -> HostError {
    error.message = format!("candidate {}: {}", n + 1, error.message);
    match error.data.as_mut() {
        Some(Value::Object(data)) => {
            data.insert("candidate".into(), json!(n));
        }
        _ => error.data = Some(json!({ "candidate": n })),
    }
    error
}
