//! What the main loop reacts to, in one channel: client messages (from the reader thread),
//! elaboration progress (from the per-document threads) and worker exits (from the waiter
//! threads). One channel gives one order, which is the order of the output stream.

use crate::elab::ElabEvent;
use serde_json::Value;

pub enum Event {
    Client(Value),
    /// The client sent something that is not an LSP message.
    ClientBroken(String),
    ClientEof,
    Elab {
        uri: String,
        generation: u64,
        ev: ElabEvent,
    },
    WorkerExited {
        uri: String,
        generation: u64,
        code: Option<i32>,
        signal: Option<i32>,
    },
}
