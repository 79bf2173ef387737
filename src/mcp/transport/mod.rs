//! Transports: how JSON-RPC lines reach the coordinator and leave it. Only stdio is shipped.

mod stdio;

pub use stdio::{Inbound, LineReader, spawn_reader, spawn_writer};
