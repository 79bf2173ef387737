//! Lean's reference index and the twins: what keeps a probe's text out of what navigation
//! answers (references, workspace symbols, the definition fast path, call hierarchy).
//!
//! Lean's watchdog files what each worker reports under the *module* of the document's real
//! path, and a twin is a link to its real file, so Lean takes a twin for the real module
//! (`lean-language-server.md` Part 4, "Twin links and the reference index"): a report replaces
//! the module's entry unless its version is lower (`finalizeWorkerRefs`), closing any document
//! erases the entry (`eraseFileWorker`), and results name the real file whoever reported them.
//!
//! Contract:
//! 1. Every LSP version of a real document is above every twin's (`mirror`'s bands): while Lean
//!    holds a real document's entry, no report of its twins replaces or joins it.
//! 2. A twin is given a text only while Lean holds its real document's entry ([`Indexed`]): once
//!    Lean answered the real document's barrier for its current LSP version since it was last
//!    opened, revived or erased. Lean sends a version's final report before that answer on one
//!    ordered stream (`FileWorker.lean`: the reporter ends with `ileanInfoFinal`, and
//!    `waitForDiagnostics` answers after it), so the entry is in. A run waits for that first
//!    ([`before_twin`]); a real document whose worker crashed for good is not waited for, and a
//!    twin whose real document Lean holds no entry of when its run ends is closed then.
//! 3. Closing a twin erases its real file's entry, so the real document, when Lean has it open
//!    and alive, is reported again at once (by the set, the only sender of document
//!    notifications: `DocumentSet::close_locked`): a `didChange` at its next LSP
//!    version that changes nothing (an empty edit at 0:0; no text is sent). Lean reports a new
//!    version whole and reuses every snapshot of an unchanged text, so it elaborates nothing
//!    again (the oldest workers redo the last command). Until Lean answered that version's
//!    barrier the entry is `Erased`, and navigation that reads the index waits for it
//!    ([`settle`]).
//! 4. A twin is closed for `--max-twins` only when no other twin of its file is in a run: a
//!    running twin's report would fill the erased entry before its real document's.
//! 5. A revived real document (Lean restarts its worker, erasing its entry) is `Unreported` again.

use std::sync::Arc;

use serde_json::json;

use super::ask::ask;
use super::mirror::{Document, Entry, Role, State};
use super::report::LiveDiagnostics;
use super::set::DocumentSet;
use crate::lean::error::{HostError, code};
use crate::lean::progress::Caller;

/// What Lean's reference index holds of a real document (see the contract).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Indexed {
    /// Opened or revived, and no barrier answered since: Lean may hold nothing of it yet.
    #[default]
    Unreported,
    /// A twin's close erased its entry, and Lean is reporting it again.
    Erased,
    /// Lean answered a barrier of it since it was last opened, revived or erased.
    Reported,
}

/// Whether a twin of `real` may be given a text: Lean holds the real document's entry (see the
/// contract). Call under the lock.
pub(super) fn holds(state: &State, real: &str) -> bool {
    state
        .entries
        .get(real)
        .is_none_or(|e| e.indexed == Indexed::Reported)
}

/// Whether the idle twin `twin` may be closed for the bound: no other twin of its file is in a
/// run (see the contract). Call under the lock.
pub(super) fn may_close(state: &State, twin: &Entry) -> bool {
    let Role::Twin(closing) = &twin.role else {
        return true;
    };
    !state
        .entries
        .values()
        .any(|e| matches!(&e.role, Role::Twin(other) if other.real == closing.real && e.users > 0))
}

/// Waits until Lean holds the entry of `real`, whose twin a run is about to give a text (see
/// the contract); `false` when Lean will hold none (its worker crashed for good), and the run
/// goes on without.
pub async fn before_twin(
    set: &DocumentSet,
    real: &Arc<str>,
    caller: &Caller<'_>,
) -> Result<bool, HostError> {
    loop {
        let waiting = {
            let state = set.mirror().lock();
            match state.entries.get(real) {
                Some(entry) if entry.indexed != Indexed::Reported => entry.document.clone(),
                _ => None,
            }
        };
        let Some(document) = waiting else {
            return Ok(true);
        };
        if !answered(set, &document, caller).await? {
            return Ok(false);
        }
    }
}

/// Waits until Lean holds again every real document's entry a twin's close erased (see the
/// contract), so that what navigation reads from Lean's index is the real texts'.
pub async fn settle(set: &DocumentSet, caller: &Caller<'_>) -> Result<(), HostError> {
    loop {
        let erased = {
            let state = set.mirror().lock();
            let mut erased = state
                .entries
                .values()
                .filter(|e| e.indexed == Indexed::Erased);
            erased.find_map(|e| e.document.clone())
        };
        let Some(document) = erased else {
            return Ok(());
        };
        let closed = || set.mirror().get(&document.uri).is_none();
        match answered(set, &document, caller).await {
            Ok(true) => {}
            // Closed meanwhile (Lean erased it for good), or crashed for good (Lean holds
            // nothing of it until a revival): nothing to wait for.
            Ok(false) => forget(set, &document),
            Err(_) if closed() => {}
            Err(error) => return Err(error),
        }
    }
}

/// Asks Lean for `document`'s barrier and records the answer (`Mirror::barrier_answered`), or
/// revives its crashed worker first; `false` when it is closed, or its worker crashed and is
/// not revived again, so no report will come.
async fn answered(
    set: &DocumentSet,
    document: &Document,
    caller: &Caller<'_>,
) -> Result<bool, HostError> {
    let mut events = set.mirror().subscribe();
    let Some(current) = set.mirror().get(&document.uri) else {
        return Ok(false);
    };
    if current.crashed() {
        // It crashed before this wait: `ask` hears of the crashes that happen while it waits.
        if !current.may_revive() {
            return Ok(false);
        }
        // As `ask` does, the crash counts once its explanation had time to come.
        tokio::select! {
            () = tokio::time::sleep(set.limits().crash_grace) => {}
            () = caller.cancel.cancelled() => {
                return Err(HostError::cancelled("cancelled while a crashed worker was revived"));
            }
        }
        set.revive_if_still(&current.uri, current.lsp_version, false, caller)
            .await;
        return Ok(true);
    }
    let method = "textDocument/waitForDiagnostics";
    let params = |d: &Document| Ok(json!({"uri": &*d.uri, "version": d.lsp_version}));
    let live = LiveDiagnostics::Off;
    match ask(set, &current, caller, live, &mut events, method, params).await {
        Ok((_, waited)) => {
            set.mirror().barrier_answered(&document.uri, waited);
            Ok(true)
        }
        Err(error) if matches!(error.code, code::WORKER_EXITED | code::WORKER_CRASHED) => Ok(false),
        Err(error) => Err(error),
    }
}

/// `document` will not be reported again (see [`settle`]): no longer waited for.
fn forget(set: &DocumentSet, document: &Document) {
    let mut state = set.mirror().lock();
    if let Some(entry) = state.entries.get_mut(&document.uri)
        && entry.indexed == Indexed::Erased
    {
        entry.indexed = Indexed::Unreported;
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::lean::session::mirror::Twin;
    use crate::lean::session::twin_file::TwinFile;
    use crate::lean::text::Position;

    const REAL: &str = "file:///p/A.lean";

    fn entry(role: Role, users: usize, indexed: Indexed) -> Entry {
        Entry {
            role,
            document: None,
            users,
            closing: 0,
            last_used: 0,
            order: Arc::default(),
            indexed,
        }
    }

    fn twin(real: &str, slot: usize, users: usize) -> Entry {
        let link = TwinFile::new(
            Path::new("/p"),
            Path::new("t"),
            Path::new("A.lean"),
            Path::new("/p/A.lean"),
        );
        let role = Role::Twin(Twin {
            real: real.into(),
            slot,
            link,
            probe_start: Position::default(),
        });
        entry(role, users, Indexed::default())
    }

    #[test]
    fn a_twin_is_closed_for_the_bound_only_while_no_twin_of_its_file_runs() {
        let mut state = State::default();
        state.entries.insert("t0".into(), twin(REAL, 0, 0));
        state
            .entries
            .insert("b0".into(), twin("file:///p/B.lean", 0, 1));
        assert!(
            may_close(&state, &state.entries["t0"]),
            "another file's run"
        );
        state.entries.insert("t1".into(), twin(REAL, 1, 1));
        assert!(
            !may_close(&state, &state.entries["t0"]),
            "a run on the same file"
        );
    }

    #[test]
    fn a_twin_is_given_a_text_only_while_lean_holds_its_real_files_entry() {
        let mut state = State::default();
        for indexed in [Indexed::Unreported, Indexed::Erased] {
            state
                .entries
                .insert(REAL.into(), entry(Role::Real, 1, indexed));
            assert!(!holds(&state, REAL), "{indexed:?}");
        }
        state
            .entries
            .insert(REAL.into(), entry(Role::Real, 1, Indexed::Reported));
        assert!(holds(&state, REAL));
    }
}
