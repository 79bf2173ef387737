//! Verdicts Lean already gave, kept so that a probe asked again sends Lean nothing. An agent
//! tries a tactic, edits elsewhere, and tries it again; or several agents try the same
//! candidates: each time Lean would elaborate the same text to the same answer.
//!
//! Contract:
//! 1. A verdict is keyed by everything it depends on: the workspace and its runtime's epoch (a
//!    restart or a drop starts another epoch), the document set's generation (it moves on
//!    whenever Lean is told of a new text of a real file, which may be another file's import,
//!    or of rewritten artifacts: `session/set.rs`), what a receipt says the answer is valid for
//!    (the toolchain, the Lake configuration's hash, and the real document's direct imports and
//!    their hashes as Lean set it up: [`validity`]), the sha256 of the text before the probe or
//!    of the whole base text an edit applies to, where the probe or edit is, and the sha256 of
//!    the candidate text (and, for an edit, whether it may close with a statement changed).
//!    Any change, restart or drop is a new key, so a verdict is never reused for other text or
//!    another state of its imports.
//! 2. Only verdicts read from a complete strict barrier are kept: a run or candidate that
//!    failed, timed out or was cancelled is asked again.
//! 3. Bounded: at most [`MAX_ENTRIES`] verdicts and [`MAX_BYTES`] bytes of them (as JSON); the
//!    least recently used are forgotten first. One cache for the host (`state`), so entries of
//!    an ended runtime, which no key names any more, age out like any other.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};

use lru::LruCache;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::run::Verdict;
use crate::lean::session::DocumentSet;
use crate::lean::session::mirror::Document;
use crate::lean::text::Position;

/// The most verdicts kept.
pub const MAX_ENTRIES: usize = 4096;
/// The most bytes of verdicts kept, counted as their JSON.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// The sha256 of a text, as 32 bytes.
pub fn sha256(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// What an answer about `document` is valid for besides its text (see the contract): the
/// toolchain, the Lake configuration and the document's direct imports, as its receipt names
/// them, hashed.
pub fn validity(set: &DocumentSet, document: &Document) -> [u8; 32] {
    let config = set.lake_config();
    let mut hasher = Sha256::new();
    for part in [config.toolchain().unwrap_or_default(), config.sha256()] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    for import in &document.imports.files {
        for part in [&*import.module, &*import.path, &*import.sha256] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
    }
    hasher.finalize().into()
}

/// What a verdict is about (see the contract).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The workspace.
    pub workspace: Arc<str>,
    /// Its runtime's epoch.
    pub epoch: u64,
    /// The document set's generation.
    pub generation: u64,
    /// What the answer is valid for besides its text ([`validity`]).
    pub validity: [u8; 32],
    /// The real document's URI.
    pub uri: Arc<str>,
    /// What was asked: a run (tactic or command mode) or an edit's candidate.
    pub kind: Kind,
    /// The sha256 of the text before the probe (a run), or of the whole base (an edit).
    pub base: [u8; 32],
    /// Where: a run's anchor, or an edit's range.
    pub from: Position,
    /// An edit range's end (a run's anchor again).
    pub to: Position,
    /// The sha256 of the candidate text.
    pub candidate: [u8; 32],
}

/// What a key asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A run in tactic mode (`true`) or command mode.
    Run { tactic: bool },
    /// A candidate of `lean_try_edit`, which may or may not close with a statement changed.
    Edit { statement_change_allowed: bool },
}

/// A kept verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum Cached {
    /// A run's.
    Run(Verdict),
    /// An edit candidate's result, as answered.
    Edit(Value),
}

impl Cached {
    fn bytes(&self) -> usize {
        let json = match self {
            Cached::Run(verdict) => verdict.to_json(),
            Cached::Edit(value) => value.clone(),
        };
        serde_json::to_string(&json).map_or(0, |s| s.len())
    }
}

/// The kept verdicts (see the contract).
#[derive(Debug)]
pub struct VerdictCache {
    inner: Mutex<Inner>,
    max_bytes: usize,
}

#[derive(Debug)]
struct Inner {
    entries: LruCache<Key, (Cached, usize)>,
    bytes: usize,
}

impl Default for VerdictCache {
    fn default() -> Self {
        VerdictCache::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl VerdictCache {
    /// A cache of at most `entries` verdicts and `bytes` bytes.
    pub fn new(entries: usize, bytes: usize) -> VerdictCache {
        let entries = NonZeroUsize::new(entries.max(1)).expect("at least one");
        VerdictCache {
            inner: Mutex::new(Inner {
                entries: LruCache::new(entries),
                bytes: 0,
            }),
            max_bytes: bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The verdict kept for `key`, if any (it becomes the most recently used).
    pub fn get(&self, key: &Key) -> Option<Cached> {
        self.lock()
            .entries
            .get(key)
            .map(|(cached, _)| cached.clone())
    }

    /// Keeps `cached` for `key`, forgetting the least recently used beyond the bounds.
    pub fn put(&self, key: Key, cached: Cached) {
        let size = cached.bytes();
        if size > self.max_bytes {
            return;
        }
        let mut inner = self.lock();
        if let Some((_, (_, old))) = inner.entries.push(key, (cached, size)) {
            inner.bytes -= old;
        }
        inner.bytes += size;
        while inner.bytes > self.max_bytes {
            match inner.entries.pop_lru() {
                Some((_, (_, old))) => inner.bytes -= old,
                None => break,
            }
        }
    }

    /// How many verdicts are kept, and their bytes.
    pub fn size(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.entries.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(candidate: &str, generation: u64) -> Key {
        Key {
            workspace: "local:/w".into(),
            epoch: 1,
            generation,
            validity: [0; 32],
            uri: "file:///w/A.lean".into(),
            kind: Kind::Edit {
                statement_change_allowed: false,
            },
            base: sha256("base"),
            from: Position::new(1, 2),
            to: Position::new(1, 4),
            candidate: sha256(candidate),
        }
    }

    #[test]
    fn a_verdict_is_found_only_under_its_own_key() {
        let cache = VerdictCache::default();
        cache.put(key("rfl", 1), Cached::Edit(json!({"verdict": "closed"})));
        assert_eq!(
            cache.get(&key("rfl", 1)),
            Some(Cached::Edit(json!({"verdict": "closed"})))
        );
        assert_eq!(cache.get(&key("rfl", 2)), None, "another generation");
        assert_eq!(cache.get(&key("simp", 1)), None, "another candidate");
    }

    #[test]
    fn the_least_recently_used_go_first_beyond_either_bound() {
        let cache = VerdictCache::new(2, 1 << 20);
        cache.put(key("a", 1), Cached::Edit(json!(1)));
        cache.put(key("b", 1), Cached::Edit(json!(2)));
        cache.get(&key("a", 1));
        cache.put(key("c", 1), Cached::Edit(json!(3)));
        assert!(cache.get(&key("b", 1)).is_none(), "b was the least recent");
        assert!(cache.get(&key("a", 1)).is_some());
        let small = VerdictCache::new(100, 25);
        for (n, text) in ["x", "y", "z"].iter().enumerate() {
            small.put(key(text, 1), Cached::Edit(json!("0123456789")));
            assert!(small.size().1 <= 25, "after {n}: {:?}", small.size());
        }
        assert_eq!(small.size(), (2, 24));
        small.put(key("big", 1), Cached::Edit(json!("x".repeat(100))));
        assert!(small.get(&key("big", 1)).is_none(), "larger than the bound");
    }
}
