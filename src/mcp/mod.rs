//! The domain-free MCP core: JSON-RPC envelopes, the two protocol families, the injected tool
//! catalog, schema validation, and the stdio coordinator.
//!
//! A host implements [`ToolHost`] (a catalog of [`ToolSpec`]s and one async call) and hands it to
//! [`serve`]; everything protocol-shaped happens here. This module never imports a host.

pub mod catalog;
pub mod context;
mod ids;
pub mod jsonrpc;
pub mod protocol;
pub mod schema;
pub mod server;
pub mod session;
pub mod transport;

pub use catalog::{
    Catalog, CatalogError, Execution, StatusNotice, ToolAnnotations, ToolError, ToolHost,
    ToolResult, ToolSpec,
};
pub use context::CallContext;
pub use jsonrpc::RequestId;
pub use protocol::{LEGACY_REVISION, LogLevel, MODERN_REVISION, ProtocolFamily, ServerIdentity};
pub use server::{
    DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_STATUS_DELAY, ServeError, ServerOptions, serve,
    serve_stdio_until, serve_until,
};
