//! The MCP side of a trace: the transport's tap, writing the server's stdio traffic to a stream.

use crate::mcp::transport::Tap;

use super::Stream;

/// Writes what the client sent (`client→beam`) and what the server wrote (`beam→client`).
#[derive(Debug, Clone)]
pub struct McpTraffic(pub Stream);

impl Tap for McpTraffic {
    fn inbound(&self, line: &[u8]) {
        self.0.write("client→beam", line);
    }

    fn discarded(&self, limit: usize) {
        let note = format!("[a line longer than {limit} bytes, discarded unread]");
        self.0.write("client→beam", note.as_bytes());
    }

    fn outbound(&self, line: &[u8]) {
        self.0.write("beam→client", line);
    }
}
