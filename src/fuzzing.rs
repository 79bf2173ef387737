//! What the fuzz targets (`fuzz/`) need beyond the public API, behind the `fuzzing` feature:
//! the Lean LSP frame reader and client, and argument validation against a catalog's compiled
//! schemas. Not an API: no installed server enables it, and nothing here is stable.
//!
//! Everything else the targets drive (the stdio line framer, the JSON-RPC decoder, [`serve`],
//! the Lean tool catalog) is public already and is used as is.
//!
//! [`serve`]: crate::mcp::serve

use serde_json::Value;

use crate::mcp::Catalog;

pub use crate::lean::server::lsp::{FrameReader, Inbox, LspClient, LspError, MAX_BODY, encode};

/// A violation [`check_arguments`] reports: the JSON Pointer it names and its sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer into the arguments.
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// Validates `arguments` for `tool` exactly as `tools/call` does before dispatch; `None` when
/// the catalog has no such tool.
pub fn check_arguments(
    catalog: &Catalog,
    tool: &str,
    arguments: &Value,
) -> Option<Result<(), Violation>> {
    let tool_entry = catalog.get(tool)?;
    Some(
        tool_entry
            .schema
            .check(tool, arguments)
            .map_err(|e| Violation {
                path: e.path,
                message: e.message,
            }),
    )
}
