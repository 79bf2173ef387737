//! The oracle: everything a run of a program must satisfy, checked once every answer is in.
//!
//! Contract (the numbers are the suite's invariants, see `mod.rs`):
//! 1. The updates that follow writes map versions to texts; a version naming two texts is a
//!    violation, and every document version any answer names must be in the map (version 1 is
//!    the initial text, unless an update says otherwise: versions start at 1 and only a read of
//!    another text makes a new one); a receipt, on a result or an error, names a version and
//!    the SHA-256 of that version's text (`[receipt]`).
//! 2. Every successful result equals the same call's alone on a fresh server for the text of
//!    the version it is about (`fresh`); `lean_drop_workspace`, whose answer depends on what
//!    ran before, is checked against the model instead (dropped exactly when a call used the
//!    workspace since its last drop).
//! 3. Every speculative verdict equals the one known by construction (`texts::chain_verdict`).
//! 4. Every error is a row of `allowed` whose condition holds.
//! 5. No answer names a twin.
//! 6. The traces keep the bounds (`bounds`).
//! 7. Every call not cancelled is answered once within the bound; a cancelled one at most once.
//! 8. The server exits cleanly at end of input and leaves no process and no twin file.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::Violation;
use super::allowed::{self, When};
use super::driver::{ANSWER_BOUND, Ended};
use super::fresh::{self, Query};
use super::program::{Doc, Program};
use super::run::{Call, Run};
use super::texts::{self, INITIAL, Text};

type Versions = HashMap<Doc, BTreeMap<i64, Text>>;

/// Every violation in `run` of `program`.
pub fn check(program: &Program, run: &Run) -> Vec<Violation> {
    let mut found = Vec::new();
    answers(run, &mut found);
    let (versions, unsure) = versions(run, &mut found);
    let oracle = Oracle {
        run,
        versions: &versions,
        unsure: &unsure,
    };
    for index in 0..run.calls.len() {
        oracle.outcome(index, &mut found);
    }
    let c = &program.config;
    for ws in 0..c.workspaces {
        let used = run.calls.iter().any(|call| {
            // These never start Lean (`tools/mod.rs`): answering them leaves no trace.
            let lean = !matches!(call.tool, "lean_close" | "lean_release");
            lean && call.ws == ws && call.doc.is_some() && call.result().is_some()
        });
        let traced = run
            .traces
            .iter()
            .any(|(_, w, entries)| *w == ws && entries.iter().any(|e| e["event"] == "start"));
        if used && !traced {
            found.push(Violation::new(
                "no-trace",
                None,
                format!("workspace {ws} answered calls but no lake serve of it left a trace"),
            ));
        }
    }
    found.extend(super::bounds::check(
        &run.traces,
        c.max_documents,
        c.max_twins,
    ));
    ending(run, &mut found);
    found
}

/// Invariants 5 and 7.
fn answers(run: &Run, found: &mut Vec<Violation>) {
    for &index in &run.hung {
        let call = &run.calls[index];
        found.push(Violation::new(
            "hang",
            Some(call.step),
            format!("{} was not answered within {ANSWER_BOUND:?}", call.tool),
        ));
    }
    for call in &run.calls {
        let n = call.sent.answers.len();
        let cancelled = call.sent.cancelled.is_some();
        if n > 1 || (!cancelled && n == 0 && run.hung.is_empty()) {
            found.push(Violation::new(
                "answers",
                Some(call.step),
                format!(
                    "{} was answered {n} times (cancelled: {cancelled})",
                    call.tool
                ),
            ));
        }
        for answer in &call.sent.answers {
            if answer.after > ANSWER_BOUND {
                found.push(Violation::new(
                    "hang",
                    Some(call.step),
                    format!("{} answered after {:?}", call.tool, answer.after),
                ));
            }
            if answer.raw.contains("beam-twin") || answer.raw.contains(".lake/beam") {
                found.push(Violation::new(
                    "leak",
                    Some(call.step),
                    format!("{} named a twin: {}", call.tool, answer.raw),
                ));
            }
        }
    }
    for stray in &run.strays {
        found.push(Violation::new("stray", None, stray.clone()));
    }
}

/// Invariant 1's map, from the updates that follow writes.
fn versions(run: &Run, found: &mut Vec<Violation>) -> (Versions, Vec<Doc>) {
    let mut map = Versions::new();
    for call in &run.calls {
        let (Some(text), Some(doc)) = (call.wrote, call.doc) else {
            continue;
        };
        let Some(version) = call.result().and_then(|r| r["version"].as_i64()) else {
            continue;
        };
        let texts = map.entry(doc).or_default();
        match texts.get(&version) {
            Some(other) if *other != text => found.push(Violation::new(
                "version-map",
                Some(call.step),
                format!("version {version} names two texts: {other:?} and {text:?}"),
            )),
            _ => {
                texts.insert(version, text);
            }
        }
    }
    // A write whose update did not answer (a drop stopped its Lean's start) leaves the text
    // the next version names unknown: those versions go unchecked rather than guessed.
    let unsure: Vec<_> = run
        .calls
        .iter()
        .filter(|c| c.wrote.is_some() && c.result().and_then(|r| r["version"].as_i64()).is_none())
        .filter_map(|c| c.doc)
        .collect();
    for call in &run.calls {
        if let Some(doc) = call.doc
            && !unsure.contains(&doc)
        {
            map.entry(doc).or_default().entry(1).or_insert(INITIAL);
        }
    }
    (map, unsure)
}

struct Oracle<'a> {
    run: &'a Run,
    versions: &'a Versions,
    /// Documents whose versions are not all known (see `versions`).
    unsure: &'a [Doc],
}

impl Oracle<'_> {
    fn outcome(&self, index: usize, found: &mut Vec<Violation>) {
        let call = &self.run.calls[index];
        let Some(answer) = call.sent.answers.first() else {
            return;
        };
        let result = &answer.value["result"];
        // A cancelled call may be answered by a JSON-RPC error (its cancellation's answer).
        let cancelled = call.sent.cancelled.is_some() && answer.value.get("error").is_some();
        if cancelled {
            return;
        }
        if answer.value.get("error").is_some() || !result.is_object() {
            found.push(Violation::new(
                "error",
                Some(call.step),
                format!("{} got a JSON-RPC error: {}", call.tool, answer.raw),
            ));
            return;
        }
        let content = &result["structuredContent"];
        // Invariant 1: every document version named is known.
        let named = [
            &content["version"],
            &content["data"]["currentVersion"],
            &content["data"]["handleVersion"],
            &content["data"]["sync"]["version"],
            &content["receipt"]["version"],
            &content["data"]["receipt"]["version"],
        ];
        for version in named.into_iter().filter_map(Value::as_i64) {
            if let Some(doc) = call.doc
                && self.text(doc, version).is_none()
                && !self.unsure.contains(&doc)
            {
                found.push(Violation::new(
                    "unknown-version",
                    Some(call.step),
                    format!(
                        "{} named version {version}, which no update gave",
                        call.tool
                    ),
                ));
            }
        }
        // A receipt names a version and the hash of exactly that version's text.
        for receipt in [&content["receipt"], &content["data"]["receipt"]] {
            let (Some(version), Some(doc)) = (receipt["version"].as_i64(), call.doc) else {
                continue;
            };
            let Some(text) = self.text(doc, version) else {
                continue;
            };
            let hash = fresh::text_sha256(&texts::render(doc.file, text));
            if receipt["text_sha256"] != hash.as_str() {
                found.push(Violation::new(
                    "receipt",
                    Some(call.step),
                    format!(
                        "{}'s receipt names version {version} with another text's hash: \
                         {receipt}",
                        call.tool
                    ),
                ));
            }
        }
        if result["isError"] == true {
            self.error(index, content, found);
        } else if call.tool == "lean_drop_workspace" {
            self.dropped(index, content, found);
        } else {
            self.like_alone(call, found);
            verdict(call, content, found);
        }
    }

    fn text(&self, doc: Doc, version: i64) -> Option<Text> {
        self.versions.get(&doc)?.get(&version).copied()
    }

    /// Invariant 2 (and the deterministic refusals of invariant 4).
    fn like_alone(&self, call: &Call, found: &mut Vec<Violation>) {
        let Some(doc) = call.doc else { return };
        let answer = &call.sent.answers[0];
        let content = &answer.value["result"]["structuredContent"];
        let passed = call.version.or(call.chain.as_ref().map(|c| c.version));
        let own = content["version"]
            .as_i64()
            .or(content["data"]["sync"]["version"].as_i64());
        if let (Some(own), Some(passed)) = (own, passed)
            && own != passed
        {
            found.push(Violation::new(
                "wrong-version",
                Some(call.step),
                format!(
                    "{} was asked at version {passed} and answered about {own}",
                    call.tool
                ),
            ));
        }
        let version = own.or(passed);
        let text = match version {
            Some(v) => match self.text(doc, v) {
                Some(text) => text,
                None => return,
            },
            // Only `lean_close` answers about no version: any text will do.
            None => INITIAL,
        };
        let mut wrong = Vec::new();
        let exact = texts::render(doc.file, text);
        let got = fresh::normalise(
            call.tool,
            &answer.value,
            version.unwrap_or(0),
            &exact,
            &mut wrong,
        );
        if !wrong.is_empty() {
            found.push(Violation::new(
                "wrong-version",
                Some(call.step),
                format!(
                    "{} is about version {version:?} but names {wrong:?}",
                    call.tool
                ),
            ));
        }
        let alone = fresh::alone(&Query {
            tool: call.tool,
            file: doc.file,
            key: &call.key,
            chain: call.chain.as_ref(),
            text,
        });
        if got != alone {
            found.push(Violation::new(
                "differs-from-alone",
                Some(call.step),
                format!(
                    "{} at version {version:?} ({:?}) answered\n        {got}\n      alone \
                     it answers\n        {alone}",
                    call.tool, text.variant
                ),
            ));
        }
    }

    /// Invariant 4.
    fn error(&self, index: usize, error: &Value, found: &mut Vec<Violation>) {
        let call = &self.run.calls[index];
        let what = format!(
            "{} failed: {} ({}): {}",
            call.tool,
            error["code"].as_str().unwrap_or("?"),
            error["data"]["reason"].as_str().unwrap_or("no reason"),
            error["message"].as_str().unwrap_or("")
        );
        let Some(row) = allowed::find(error) else {
            found.push(Violation::new("error", Some(call.step), what));
            return;
        };
        if row.when == When::LikeAlone {
            self.like_alone(call, found);
        } else if !self.holds(index, row.when, error) {
            let why = format!(
                "{what}; allowed only when {:?}, which does not hold",
                row.when
            );
            found.push(Violation::new("error", Some(call.step), why));
        }
    }

    fn holds(&self, index: usize, when: When, error: &Value) -> bool {
        let calls = &self.run.calls;
        let call = &calls[index];
        let answered = call.sent.answers[0].seq;
        let other = |tool: &str| {
            calls.iter().enumerate().any(|(j, c)| {
                j != index
                    && c.tool == tool
                    && c.handle_of.is_some()
                    && c.handle_of == call.handle_of
                    && c.sent.seq < answered
            })
        };
        match when {
            When::Superseded => {
                let data = &error["data"];
                let base = data["expectedVersion"]
                    .as_i64()
                    .or(data["handleVersion"].as_i64());
                let passed = data["expectedVersion"]
                    .as_i64()
                    .is_none_or(|v| Some(v) == call.version);
                passed && base.is_some_and(|b| data["currentVersion"].as_i64() > Some(b))
            }
            When::DroppedSince => {
                let began = self.chain_root(index).sent.seq;
                calls.iter().any(|c| {
                    c.tool == "lean_drop_workspace"
                        && c.ws == call.ws
                        && c.sent.seq > began
                        && c.sent.seq < answered
                })
            }
            When::ConsumedSince => other("lean_run_with_linear"),
            When::ReleasedSince => other("lean_release"),
            When::Cancelled => call.sent.cancelled.is_some(),
            When::SavedBefore => calls
                .iter()
                .any(|c| c.tool == "lean_save" && c.ws == call.ws && c.sent.seq < answered),
            When::EditedDuring => calls.iter().any(|c| {
                c.wrote.is_some()
                    && c.doc == call.doc
                    && c.sent.seq > call.sent.seq
                    && c.sent.seq < answered
            }),
            When::WorkspaceEditedDuring => calls.iter().any(|c| {
                c.wrote.is_some()
                    && c.ws == call.ws
                    && c.sent.seq > call.sent.seq
                    && c.sent.seq < answered
            }),
            When::Always | When::LikeAlone => true,
        }
    }

    /// The first call of the chain whose handle call `index` uses (itself if none).
    fn chain_root(&self, mut index: usize) -> &Call {
        while let Some(parent) = self.run.calls[index].handle_of {
            index = parent;
        }
        &self.run.calls[index]
    }

    /// Invariant 2 for `lean_drop_workspace`: dropped exactly when a call used the workspace
    /// since its last drop (a fence: those calls were received, so done, before it).
    fn dropped(&self, index: usize, content: &Value, found: &mut Vec<Violation>) {
        let calls = &self.run.calls;
        let call = &calls[index];
        let before: Vec<&Call> = calls[..index].iter().filter(|c| c.ws == call.ws).collect();
        let previous = before.iter().rposition(|c| c.tool == "lean_drop_workspace");
        if previous.is_some_and(|p| before[p].sent.cancelled.is_some()) {
            return;
        }
        // `lean_close` and `lean_release` never start Lean (`tools/mod.rs`): they use nothing.
        let since: Vec<&&Call> = before[previous.map_or(0, |p| p + 1)..]
            .iter()
            .filter(|c| !matches!(c.tool, "lean_close" | "lean_release"))
            .collect();
        let expected = if since.iter().any(|c| c.sent.cancelled.is_none()) {
            true
        } else if since.is_empty() {
            false
        } else {
            return;
        };
        let consistent = content["dropped"] == expected
            && content["invalidated_handles"] == expected
            && (content["reason"] == "notFound") != expected;
        if !consistent {
            found.push(Violation::new(
                "differs-from-model",
                Some(call.step),
                format!("lean_drop_workspace answered {content}; expected dropped: {expected}"),
            ));
        }
    }
}

/// Invariant 3.
fn verdict(call: &Call, content: &Value, found: &mut Vec<Violation>) {
    let speculative = [
        "lean_run_at",
        "lean_run_at_handle",
        "lean_run_with",
        "lean_run_with_linear",
    ];
    let Some(chain) = call
        .chain
        .as_ref()
        .filter(|_| speculative.contains(&call.tool))
    else {
        return;
    };
    let Some(known) = texts::chain_verdict(chain.anchor, &chain.steps) else {
        return;
    };
    if content["success"] != known.success || content["messages"] != known.messages {
        found.push(Violation::new(
            "verdict",
            Some(call.step),
            format!(
                "{} of {:?} answered success {} with {}; known: success {} with {}",
                call.tool,
                chain.steps,
                content["success"],
                content["messages"],
                known.success,
                known.messages
            ),
        ));
    }
}

/// Invariant 8's first half: how a server ended.
pub fn exit(ended: &Ended) -> Vec<Violation> {
    let mut found = Vec::new();
    if ended.status != Some(0) || !ended.stderr.is_empty() {
        found.push(Violation::new(
            "exit",
            None,
            format!(
                "the server exited with {:?} at end of input; stderr: {:?}",
                ended.status, ended.stderr
            ),
        ));
    }
    for problem in &ended.problems {
        found.push(Violation::new("exit", None, problem.clone()));
    }
    found
}

/// Invariant 8 (the exit, when the server ended with the program).
fn ending(run: &Run, found: &mut Vec<Violation>) {
    if let Some(ended) = &run.ended {
        found.extend(exit(ended));
    }
    for (ws, left) in run.left_processes.iter().enumerate() {
        if !left.is_empty() {
            found.push(Violation::new(
                "processes",
                None,
                format!("processes {left:?} outlived the server in workspace {ws}"),
            ));
        }
    }
    for (ws, left) in run.left_twins.iter().enumerate() {
        if !left.is_empty() {
            found.push(Violation::new(
                "twin-files",
                None,
                format!("twin files left in workspace {ws}: {left:?}"),
            ));
        }
    }
}
