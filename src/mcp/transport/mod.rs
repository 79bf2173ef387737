//! Transports: how JSON-RPC lines reach the coordinator and leave it, and how a stdio server is
//! told to stop. Only stdio is shipped.

mod signal;
mod stdio;

pub use signal::termination;
pub use stdio::{Inbound, LineReader, spawn_reader, spawn_writer};
