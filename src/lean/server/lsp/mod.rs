//! A client for Lean's language server with no MCP knowledge: Content-Length framing, request
//! correlation with cancel-on-drop, in-order notification delivery, and answers to the server's
//! own requests.
//!
//! Hand-written rather than built on async-lsp: the host needs the raw JSON of Lean's extensions
//! (`$/lean/*`, `fullRange`, `leanTags`, `isIncremental`) passed through untouched, a guarantee
//! that each notification is applied to the document mirror before the response that follows it
//! resolves, `$/cancelRequest` sent when a waiting call is dropped, and ownership of the child
//! process and its stderr; the whole client is a few hundred lines with no tower stack.

mod client;
mod framing;
mod outbox;

pub use client::{Batch, Inbox, LspClient, LspError};
#[cfg(feature = "fuzzing")]
pub use framing::{FrameReader, MAX_BODY, encode};
