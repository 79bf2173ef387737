//! A tap on the transport: who sees every line the server reads and writes, for a traffic trace.
//!
//! Contract: a [`Tap`] sees each input line exactly as it arrived (terminator and a trailing
//! `\r` removed; blank lines, which are skipped, are not shown), before it is decoded, in input
//! order, and is told of each line discarded for its length instead of seeing it. It sees each
//! output line as the writer is about to write it, in output order. It is called on the
//! transport's own threads and tasks, so it must be quick and must not block on the server.

use std::fmt::Debug;
use std::sync::Arc;

/// Sees the traffic of one transport.
pub trait Tap: Debug + Send + Sync + 'static {
    /// One input line, raw.
    fn inbound(&self, line: &[u8]);
    /// An input line longer than `limit` bytes was discarded unread.
    fn discarded(&self, limit: usize);
    /// One output line, raw (its terminator included).
    fn outbound(&self, line: &[u8]);
}

/// A transport's tap, if it has one.
pub type TapHandle = Option<Arc<dyn Tap>>;
