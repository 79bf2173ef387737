//! Transports: how JSON-RPC lines reach the coordinator and leave it. Only stdio is shipped.

mod stdio;

pub use stdio::{Frame, Inbound, LineReader, WriterEvent, spawn_reader, spawn_writer};
