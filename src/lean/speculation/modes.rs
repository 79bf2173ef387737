//! Where Lean has proof goals, remembered. A speculative run first asks Lean whether its position
//! is inside a proof (`$/lean/plainGoal` on the user's document); an agent trying one tactic
//! after another at one place would ask the same question every time. The answer depends only on
//! the text Lean elaborated, so it is asked once per document version and position.
//!
//! Contract:
//! 1. An answer is keyed by the document's URI, its version (the caller's: one text, never
//!    reused for another, across reopens, revivals and restarts) and the position. A new text is
//!    a new key, so an answer is never reused for other text; what only bumps the LSP version
//!    (a revived worker, the real file re-reported after a twin closes) keeps the answer.
//!    Remembering one forgets the older versions of that document.
//! 2. Only answers are remembered: a query that failed or was cancelled is asked again.
//! 3. Bounded: at most [`CAPACITY`] answers; when full, all are forgotten (the next run asks
//!    again). One memory for the host: versions continue across a workspace's runtimes and URIs
//!    differ across workspaces, so a key never names two texts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most answers kept.
pub const CAPACITY: usize = 1024;

/// A position of one version of one document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct At {
    uri: Arc<str>,
    version: i64,
    line: u32,
    character: u32,
}

/// Whether positions are in a proof, per document version (see the contract).
#[derive(Debug, Default)]
pub struct ProofModes {
    known: Mutex<HashMap<At, bool>>,
}

impl ProofModes {
    /// Whether Lean said there are proof goals at this position of this version, if it was asked.
    pub fn get(&self, uri: &Arc<str>, version: i64, line: u32, character: u32) -> Option<bool> {
        let at = At {
            uri: uri.clone(),
            version,
            line,
            character,
        };
        self.lock().get(&at).copied()
    }

    /// Remembers Lean's answer for this position of this version.
    pub fn remember(&self, uri: &Arc<str>, version: i64, line: u32, character: u32, tactic: bool) {
        let mut known = self.lock();
        known.retain(|at, _| at.uri != *uri || at.version >= version);
        if known.len() >= CAPACITY {
            known.clear();
        }
        let at = At {
            uri: uri.clone(),
            version,
            line,
            character,
        };
        known.insert(at, tactic);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<At, bool>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_per_version_and_position_and_older_versions_are_forgotten() {
        let modes = ProofModes::default();
        let a: Arc<str> = "file:///a.lean".into();
        let b: Arc<str> = "file:///b.lean".into();
        modes.remember(&a, 1, 3, 2, true);
        modes.remember(&b, 1, 3, 2, false);
        assert_eq!(modes.get(&a, 1, 3, 2), Some(true));
        assert_eq!(modes.get(&a, 1, 3, 3), None);
        assert_eq!(modes.get(&b, 1, 3, 2), Some(false));
        modes.remember(&a, 2, 3, 2, false);
        assert_eq!(
            modes.get(&a, 1, 3, 2),
            None,
            "an older version is forgotten"
        );
        assert_eq!(modes.get(&a, 2, 3, 2), Some(false));
        assert_eq!(
            modes.get(&b, 1, 3, 2),
            Some(false),
            "other documents are kept"
        );
    }

    #[test]
    fn a_full_memory_starts_over() {
        let modes = ProofModes::default();
        let a: Arc<str> = "file:///a.lean".into();
        for line in 0..CAPACITY as u32 {
            modes.remember(&a, 1, line, 0, true);
        }
        assert_eq!(modes.get(&a, 1, 0, 0), Some(true));
        modes.remember(&a, 1, CAPACITY as u32, 0, true);
        assert_eq!(modes.get(&a, 1, 0, 0), None);
        assert_eq!(modes.get(&a, 1, CAPACITY as u32, 0), Some(true));
    }
}
