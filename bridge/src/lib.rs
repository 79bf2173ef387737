//! The test-only Streamable HTTP bridge in front of the `lean-beam-mcp` stdio server.
//!
//! This crate is a workspace member from the start so that the layout in `DESIGN.md` holds; the
//! bridge itself (loopback binding, Host/Origin checks, header validation, id routing) is built by
//! the issue that owns it. It is never part of an installed server.
