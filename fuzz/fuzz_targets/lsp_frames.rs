//! The Lean LSP frame decoder: `Content-Length` headers and bodies from `lake serve`'s stdout.
//!
//! Input: one byte choosing the read size, then the server's output. Checked: reading never
//! panics and never waits on input that is all there; the frames (and the error that ends them)
//! do not depend on how the bytes arrive; the bodies hold no more bytes than the input; and the
//! bodies read, framed again, read back the same.

#![no_main]

use std::pin::Pin;
use std::task::{Context, Poll};

use lean_beam_mcp::fuzzing::{FrameReader, encode};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, BufReader, ReadBuf};

/// Hands out its bytes `piece` at a time, always ready.
struct Trickle<'a>(&'a [u8], usize);

impl AsyncRead for Trickle<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.0.len().min(self.1).min(buf.remaining());
        buf.put_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Poll::Ready(Ok(()))
    }
}

/// Every frame until the end or the first error (as its message).
fn frames(input: &[u8], piece: usize, buffer: usize) -> (Vec<Vec<u8>>, Option<String>) {
    let mut reader = FrameReader::new(BufReader::with_capacity(buffer, Trickle(input, piece)));
    let mut bodies = Vec::new();
    loop {
        let next = futures_now(reader.next());
        match next {
            Ok(Some(body)) => bodies.push(body),
            Ok(None) => return (bodies, None),
            Err(e) => return (bodies, Some(e.to_string())),
        }
    }
}

/// Polls once: input that is all there must never leave the reader pending.
fn futures_now<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the frame reader waits although all its input is there"),
    }
}

fuzz_target!(|data: &[u8]| {
    let [piece, input @ ..] = data else {
        return;
    };
    let piece = 1 + usize::from(*piece) % 32;
    let whole = frames(input, usize::MAX, 8 * 1024);
    assert_eq!(frames(input, piece, 16), whole, "reads of {piece} bytes");
    let (bodies, _) = &whole;
    assert!(bodies.iter().map(Vec::len).sum::<usize>() <= input.len());
    let again: Vec<u8> = bodies.iter().flat_map(|body| encode(body)).collect();
    assert_eq!(frames(&again, usize::MAX, 8 * 1024), (bodies.clone(), None));
});
