//! The domain-free MCP core: JSON-RPC envelopes, the two protocol families, the injected tool
//! catalog, schema validation, and the stdio coordinator.
//!
//! A host implements [`ToolHost`] (a catalog of [`ToolSpec`]s and one async call) and hands it to
//! [`serve`]; everything protocol-shaped happens here. This module never imports a host, and
//! never reads a tool's arguments: what a call reports (progress, its liveness notice, logs)
//! the host says through its [`CallContext`].
//!
//! The modules are private; this list is the whole public surface.

mod call;
mod catalog;
mod context;
mod coordinator;
mod ids;
mod jsonrpc;
mod protocol;
mod schema;
mod server;
mod session;
mod status;
pub mod transport;

pub use catalog::{
    Catalog, CatalogError, Execution, ToolAnnotations, ToolError, ToolHost, ToolResult, ToolSpec,
};
pub use context::{CallContext, Progress};
pub use ids::{MAX_INTEGER_ID, MIN_INTEGER_ID, RequestId};
pub use jsonrpc::{
    DecodeError, ErrorObject, Incoming, Notification, Request, Response, code, decode, decode_value,
};
pub use protocol::{
    ClientInfo, ClientName, LEGACY_REVISION, LogLevel, MODERN_REVISION, ProtocolFamily,
    ServerIdentity,
};
pub use server::{
    DEFAULT_CANCEL_GRACE, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RUNNING_CALLS,
    DEFAULT_MAX_WAITING_CALLS, DEFAULT_SHUTDOWN_TIMEOUT, DEFAULT_STATUS_DELAY, Exit, ServeError,
    ServerOptions, serve, serve_stdio_until, serve_until,
};
pub use status::{DEFAULT_HEARTBEAT, PROGRESS_HINT, STATUS_LOGGER, StatusNotice};
