//! Proof handles: the follow-up state of a speculative run, given to the client as an opaque
//! token it can neither read usefully nor change unnoticed.
//!
//! Contract:
//! 1. A handle is the object `{"handle": "lbh1.<payload>.<mac>"}`. The payload (base64url JSON)
//!    binds it to this process (a random session), the workspace, the runtime epoch that ran
//!    it, the document and its version, the anchor position and mode, and the probe texts that
//!    lead to its state; the MAC is HMAC-SHA256 of the payload under a key drawn when the
//!    process starts, so a handle is only ever what this process minted.
//! 2. [`HandleBook::check`] says precisely what is wrong with a handle, first failure first:
//!    not a handle at all or altered (`handleForged`), minted by another process
//!    (`handleForeignProcess`), for another workspace (`handleForeignWorkspace`) or file
//!    (`handleForeignDocument`), released (`handleReleased`), consumed by a linear run
//!    (`handleConsumed`), forgotten because too many handles were minted since
//!    (`handleUnknown`) — all `invalidParams` — or from an ended Lean runtime (a restart or a
//!    drop: `handleSessionEnded`) or an older version of the document (`handleStale`) — both
//!    `contentModified`, since a fresh run at the current version is the remedy. Every error's
//!    data has `reason` and says what to do.
//! 3. The book remembers the state of at most [`BOOK_CAPACITY`] handles, forgetting the oldest.
//!    [`HandleBook::release`] and [`HandleBook::spend`] (a linear run) mark a handle in the same
//!    step as they check it, so of two racing for one handle exactly one succeeds; a second
//!    release or spend is an error too.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::lean::error::HostError;

/// How many handles the book remembers.
pub const BOOK_CAPACITY: usize = 65_536;
const PREFIX: &str = "lbh1";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Where a handle's state was reached: what a run from it continues.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandleState {
    /// The workspace key (`local:<root>`).
    pub workspace: String,
    /// The runtime epoch that ran it.
    pub epoch: u64,
    /// The real document's URI.
    pub uri: String,
    /// The document version it was run against.
    pub version: i64,
    /// The anchor: where the first probe was inserted (UTF-16 LSP position).
    pub line: u32,
    /// See [`HandleState::line`].
    pub character: u32,
    /// `true` inside a proof (tactic mode), `false` between commands.
    pub tactic: bool,
    /// Every probe text run so far, in order.
    pub steps: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    id: u64,
    session: u64,
    #[serde(flatten)]
    state: HandleState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Live,
    Released,
    Consumed,
}

/// A verified handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handle {
    id: u64,
    /// What it continues.
    pub state: HandleState,
}

/// What a caller expects a handle to belong to.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The workspace key.
    pub workspace: &'a str,
    /// The current runtime epoch (`None`: any, as for a release).
    pub epoch: Option<u64>,
    /// The document URI the call names.
    pub uri: &'a str,
    /// The document's current version (`None`: any, as for a release).
    pub version: Option<i64>,
}

/// This process's handles.
#[derive(Debug)]
pub struct HandleBook {
    key: [u8; 32],
    session: u64,
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    next_id: u64,
    marks: HashMap<u64, Mark>,
    order: VecDeque<u64>,
}

impl HandleBook {
    /// A book with a fresh random key and session.
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        let mut session = [0u8; 8];
        // Without randomness there is no unforgeable handle: fail loudly, at start.
        getrandom::fill(&mut key).expect("the OS random source is available");
        getrandom::fill(&mut session).expect("the OS random source is available");
        HandleBook {
            key,
            session: u64::from_le_bytes(session),
            book: Mutex::default(),
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn mac(&self, payload: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload.as_bytes());
        mac
    }

    /// Mints a live handle for `state`.
    pub fn mint(&self, state: HandleState) -> Value {
        let id = {
            let mut book = self.book();
            book.next_id += 1;
            let id = book.next_id;
            book.marks.insert(id, Mark::Live);
            book.order.push_back(id);
            while book.order.len() > BOOK_CAPACITY {
                if let Some(old) = book.order.pop_front() {
                    book.marks.remove(&old);
                }
            }
            id
        };
        let payload = Payload {
            id,
            session: self.session,
            state,
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&payload).expect("serializable"));
        let tag = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        json!({ "handle": format!("{PREFIX}.{payload}.{tag}") })
    }

    /// Verifies a handle against what the call expects (see the contract).
    pub fn check(&self, handle: &Value, expected: Expected<'_>) -> Result<Handle, HostError> {
        self.verify(handle, expected, None)
    }

    /// Verifies a handle and marks it consumed, in one step (a linear run).
    pub fn spend(&self, handle: &Value, expected: Expected<'_>) -> Result<Handle, HostError> {
        self.verify(handle, expected, Some(Mark::Consumed))
    }

    /// Verifies a handle and marks it released, in one step.
    pub fn release(&self, handle: &Value, expected: Expected<'_>) -> Result<Handle, HostError> {
        self.verify(handle, expected, Some(Mark::Released))
    }

    fn verify(
        &self,
        handle: &Value,
        expected: Expected<'_>,
        then: Option<Mark>,
    ) -> Result<Handle, HostError> {
        let payload = self.authentic(handle)?;
        let state = &payload.state;
        if state.workspace != expected.workspace {
            return Err(invalid(
                "handleForeignWorkspace",
                format!(
                    "request workspace '{}' does not match handle workspace '{}'; use the handle \
                     with the workspace it came from",
                    expected.workspace, state.workspace
                ),
            ));
        }
        if state.uri != expected.uri {
            return Err(invalid(
                "handleForeignDocument",
                format!(
                    "the handle belongs to {}, not {}; pass the path it was made for",
                    state.uri, expected.uri
                ),
            ));
        }
        let mut book = self.book();
        match book.marks.get(&payload.id) {
            Some(Mark::Live) => {}
            Some(Mark::Released) => {
                return Err(invalid(
                    "handleReleased",
                    "the handle was released; run lean_run_at_handle again for a new one",
                ));
            }
            Some(Mark::Consumed) => {
                return Err(invalid(
                    "handleConsumed",
                    "the handle was consumed by lean_run_with_linear; continue from the \
                     next_handle that run returned",
                ));
            }
            None => {
                return Err(invalid(
                    "handleUnknown",
                    format!(
                        "unknown handle: more than {BOOK_CAPACITY} handles were made since; run \
                         lean_run_at_handle again"
                    ),
                ));
            }
        }
        if expected.epoch.is_some_and(|epoch| epoch != state.epoch) {
            return Err(HostError::handle_session_ended());
        }
        if let Some(current) = expected.version.filter(|v| *v != state.version) {
            return Err(HostError::handle_stale(state.version, current));
        }
        if let Some(mark) = then {
            book.marks.insert(payload.id, mark);
        }
        Ok(Handle {
            id: payload.id,
            state: payload.state,
        })
    }

    fn authentic(&self, handle: &Value) -> Result<Payload, HostError> {
        let forged = || {
            invalid(
                "handleForged",
                "not a handle this server made: pass next_handle exactly as a run returned it",
            )
        };
        let token = handle
            .get("handle")
            .and_then(Value::as_str)
            .ok_or_else(forged)?;
        let mut parts = token.split('.');
        let (Some(PREFIX), Some(payload), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(forged());
        };
        let decoded: Payload = URL_SAFE_NO_PAD
            .decode(payload)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(forged)?;
        if decoded.session != self.session {
            return Err(invalid(
                "handleForeignProcess",
                "the handle was made by another lean-beam-mcp process (or before a restart of \
                 this one); run lean_run_at_handle again here",
            ));
        }
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| forged())?;
        self.mac(payload).verify_slice(&tag).map_err(|_| forged())?;
        Ok(decoded)
    }
}

impl Default for HandleBook {
    fn default() -> Self {
        HandleBook::new()
    }
}

fn invalid(reason: &'static str, message: impl Into<String>) -> HostError {
    HostError::refused(reason, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> HandleState {
        HandleState {
            workspace: "local:/w".into(),
            epoch: 1,
            uri: "file:///w/A.lean".into(),
            version: 3,
            line: 4,
            character: 2,
            tactic: true,
            steps: vec!["intro h".into()],
        }
    }

    fn expected() -> Expected<'static> {
        Expected {
            workspace: "local:/w",
            epoch: Some(1),
            uri: "file:///w/A.lean",
            version: Some(3),
        }
    }

    fn reason(result: Result<Handle, HostError>) -> (String, String) {
        let error = result.unwrap_err();
        (
            error.code.to_owned(),
            error.data.unwrap()["reason"].as_str().unwrap().to_owned(),
        )
    }

    #[test]
    fn a_minted_handle_round_trips_until_released() {
        let book = HandleBook::new();
        let handle = book.mint(state());
        let checked = book.check(&handle, expected()).unwrap();
        assert_eq!(checked.state, state());
        book.release(&handle, expected()).unwrap();
        assert_eq!(
            reason(book.check(&handle, expected())),
            ("invalidParams".into(), "handleReleased".into())
        );
    }

    #[test]
    fn each_wrong_handle_has_its_own_reason() {
        let book = HandleBook::new();
        let handle = book.mint(state());
        let with = |f: fn(&mut Expected<'static>)| {
            let mut e = expected();
            f(&mut e);
            reason(book.check(&handle, e))
        };
        assert_eq!(
            with(|e| e.workspace = "local:/v").1,
            "handleForeignWorkspace"
        );
        assert_eq!(
            with(|e| e.uri = "file:///w/B.lean").1,
            "handleForeignDocument"
        );
        assert_eq!(
            with(|e| e.epoch = Some(2)),
            ("contentModified".into(), "handleSessionEnded".into())
        );
        assert_eq!(
            with(|e| e.version = Some(4)),
            ("contentModified".into(), "handleStale".into())
        );
        let lenient = Expected {
            epoch: None,
            version: None,
            ..expected()
        };
        assert!(
            book.check(&handle, lenient).is_ok(),
            "a release takes any epoch and version"
        );
        let other = HandleBook::new();
        assert_eq!(
            reason(other.check(&handle, expected())).1,
            "handleForeignProcess"
        );
        book.spend(&handle, expected()).unwrap();
        assert_eq!(reason(book.check(&handle, expected())).1, "handleConsumed");
        assert_eq!(reason(book.spend(&handle, expected())).1, "handleConsumed");
    }

    #[test]
    fn altered_or_made_up_handles_are_forged() {
        let book = HandleBook::new();
        let token = book.mint(state())["handle"].as_str().unwrap().to_owned();
        let (head, tag) = token.rsplit_once('.').unwrap();
        let (_, payload) = head.split_once('.').unwrap();
        // Same session, more steps, the old MAC: caught.
        let mut decoded: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        decoded["steps"] = json!(["intro h", "exact absurd"]);
        let altered = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&decoded).unwrap());
        for bad in [
            json!({"handle": format!("{PREFIX}.{altered}.{tag}")}),
            json!({"handle": "lbh1.e30.AAAA"}),
            json!({"handle": 7}),
            json!({"value": token}),
            json!({"handle": format!("{token}.more")}),
        ] {
            assert_eq!(
                reason(book.check(&bad, expected())).1,
                "handleForged",
                "{bad}"
            );
        }
    }

    proptest::proptest! {
        /// Any change to a handle's token, anywhere, makes it refused.
        #[test]
        fn no_altered_token_is_accepted(at in 0usize..4096, with in proptest::char::any()) {
            let book = HandleBook::new();
            let token = book.mint(state())["handle"].as_str().unwrap().to_owned();
            let mut chars: Vec<char> = token.chars().collect();
            let at = at % chars.len();
            proptest::prop_assume!(chars[at] != with);
            chars[at] = with;
            let altered: String = chars.into_iter().collect();
            let altered = json!({ "handle": altered });
            proptest::prop_assert!(book.check(&altered, expected()).is_err());
        }
    }

    #[test]
    fn the_book_forgets_the_oldest_beyond_its_capacity() {
        let book = HandleBook::new();
        let first = book.mint(state());
        for _ in 0..BOOK_CAPACITY {
            book.mint(state());
        }
        assert_eq!(reason(book.check(&first, expected())).1, "handleUnknown");
    }
}
