//! The runtime drivers against the blocking ones: the same lines out of the same bytes however
//! they arrive, and the writer's order, flush-when-dry and once-only closed report on real pipes.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use proptest::prelude::*;
use tokio::io::{AsyncReadExt, ReadBuf};

use super::*;
use crate::mcp::transport::framing::tests::describe;
use crate::mcp::transport::{LineReader, QueueLimits, bounded};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// An async input that hands out its bytes in the given piece sizes, cycling; a size of 0 is a
/// read that is not ready yet (and wakes itself at once).
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl AsyncRead for Pieces {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        if size == 0 && self.at < self.data.len() {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = size.min(buf.remaining()).min(self.data.len() - self.at);
        buf.put_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

fn blocking(data: &[u8], limit: usize) -> Vec<String> {
    let mut reader = LineReader::new(data, limit);
    std::iter::from_fn(|| reader.next_inbound())
        .map(describe)
        .collect()
}

/// A queue of one item, so that a reader also waits on a full queue.
const ONE: QueueLimits = QueueLimits {
    items: 1,
    bytes: usize::MAX,
};

/// Queues for the writer that never make a producer wait.
const ROOMY: QueueLimits = QueueLimits {
    items: usize::MAX,
    bytes: usize::MAX,
};

/// What the task reader delivers, through a queue of one so that it also waits on a full queue.
async fn on_the_runtime(mut input: impl AsyncRead + Unpin, limit: usize) -> Vec<String> {
    let (tx, mut rx) = bounded(ONE);
    let reading = async move { read_lines(&mut input, LineFramer::new(limit), &tx).await };
    let collecting = async {
        let mut items = Vec::new();
        while let Some(item) = rx.recv().await {
            items.push(describe(item));
        }
        items
    };
    tokio::join!(reading, collecting).1
}

fn arb_line() -> impl Strategy<Value = Vec<u8>> {
    let request = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#).into_bytes();
    prop_oneof![
        3 => (0u32..1000).prop_map(request),
        1 => Just(br#"{"jsonrpc":"2.0","method":"n"}"#.to_vec()),
        2 => prop::collection::vec(any::<u8>(), 0..40),
        2 => (1usize..100, prop::sample::select(vec![b' ', b'x', b'\t', b'\r']))
            .prop_map(|(n, byte)| vec![byte; n]),
    ]
}

fn arb_stream() -> impl Strategy<Value = Vec<u8>> {
    let end = prop::sample::select(vec![&b"\n"[..], b"\r\n", b""]);
    prop::collection::vec((arb_line(), end), 0..8).prop_map(|lines| {
        lines
            .into_iter()
            .flat_map(|(line, end)| line.into_iter().chain(end.iter().copied()))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_task_reader_frames_like_the_blocking_reader(
        data in arb_stream(),
        limit in 1usize..96,
        sizes in prop::collection::vec(prop_oneof![1 => Just(0usize), 6 => 1usize..64], 1..12),
    ) {
        let mut sizes = sizes;
        sizes.push(1);
        let input = Pieces { data: data.clone(), at: 0, sizes, next: 0 };
        let delivered = runtime().block_on(on_the_runtime(input, limit));
        prop_assert_eq!(delivered, blocking(&data, limit));
    }
}

#[test]
fn the_task_reader_reads_a_real_pipe_to_its_end() {
    let line = br#"{"jsonrpc":"2.0","id":7,"method":"m"}"#;
    let mut data = Vec::new();
    for n in 0..5000 {
        data.extend_from_slice(if n % 3 == 0 { b"  \r\n" } else { &line[..] });
        data.extend_from_slice(b"\r\n");
    }
    data.extend_from_slice(&[b'x'; 300]);
    data.extend_from_slice(line);
    let expected = blocking(&data, 128);
    let delivered = runtime().block_on(async {
        let (mut tx, rx) = pipe::pipe().expect("pipe");
        let writing = async move {
            for piece in data.chunks(4093) {
                tx.write_all(piece).await.expect("write");
                tokio::task::yield_now().await;
            }
        };
        tokio::join!(writing, on_the_runtime(rx, 128)).1
    });
    // 1667 blank lines skipped; the unterminated last line is overlong.
    assert_eq!(delivered.len(), 5000 - 1667 + 1);
    assert_eq!(delivered.last().map(String::as_str), Some("oversized 128"));
    assert_eq!(delivered, expected);
}

#[test]
fn the_task_reader_stops_when_the_receiver_is_dropped() {
    runtime().block_on(async {
        let (_tx, mut rx) = pipe::pipe().expect("pipe");
        let (inbound, receiver) = bounded(ONE);
        let reading =
            tokio::spawn(async move { read_lines(&mut rx, LineFramer::new(64), &inbound).await });
        drop(receiver);
        tokio::time::timeout(Duration::from_secs(5), reading)
            .await
            .expect("the reader ends although its input never does")
            .expect("no panic");
    });
}

/// A tap that counts the bytes of the output lines it is shown, in order.
#[derive(Debug, Default)]
struct Outbound(std::sync::Mutex<Vec<u8>>);

impl super::super::Tap for Outbound {
    fn inbound(&self, _: &[u8]) {}
    fn discarded(&self, _: usize) {}
    fn outbound(&self, line: &[u8]) {
        self.0.lock().unwrap().extend_from_slice(line);
    }
}

#[test]
fn the_task_writer_shows_its_tap_every_line_in_output_order() {
    runtime().block_on(async {
        let (tx, mut rx) = pipe::pipe().expect("pipe");
        let (lines, queue) = bounded(ROOMY);
        let tap = Arc::new(Outbound::default());
        let shown = tap.clone();
        let writer = tokio::spawn(async move {
            drop(write_lines(tx, queue, Some(tap), || panic!("not closed")).await);
        });
        for n in 0..2000u32 {
            let line: Vec<u8> = format!("{n}\n").into_bytes();
            let len = line.len();
            assert!(lines.push(line, len));
        }
        drop(lines);
        let mut all = String::new();
        rx.read_to_string(&mut all).await.unwrap();
        writer.await.unwrap();
        assert_eq!(
            String::from_utf8(shown.0.lock().unwrap().clone()).unwrap(),
            all
        );
    });
}

#[test]
fn the_task_writer_writes_in_order_and_flushes_when_the_queue_runs_dry() {
    runtime().block_on(async {
        let (tx, mut rx) = pipe::pipe().expect("pipe");
        let (lines, queue) = bounded(ROOMY);
        let writer = tokio::spawn(async move {
            drop(write_lines(tx, queue, None, || panic!("not closed")).await);
        });
        let mut got = vec![0u8; 64];
        for round in 0..3u8 {
            // One line and no more: it must reach the pipe without waiting for company.
            {
                let line: Vec<u8> = vec![b'a' + round, b'\n'];
                let n = line.len();
                assert!(lines.push(line, n));
            }
            let n = tokio::time::timeout(Duration::from_secs(5), rx.read(&mut got))
                .await
                .expect("flushed while the queue is dry")
                .unwrap();
            assert_eq!(&got[..n], &[b'a' + round, b'\n']);
        }
        for n in 0..3000u32 {
            {
                let line: Vec<u8> = format!("{n}\n").into_bytes();
                let n = line.len();
                assert!(lines.push(line, n));
            }
        }
        drop(lines);
        let mut all = String::new();
        rx.read_to_string(&mut all).await.unwrap();
        let expected: String = (0..3000).map(|n| format!("{n}\n")).collect();
        assert_eq!(all, expected);
        writer.await.unwrap();
    });
}

#[test]
fn the_task_writer_reports_a_closed_output_once_and_keeps_draining() {
    runtime().block_on(async {
        let (tx, rx) = pipe::pipe().expect("pipe");
        drop(rx);
        let closed = Arc::new(AtomicUsize::new(0));
        let (lines, queue) = bounded(ROOMY);
        let counter = closed.clone();
        let writer = tokio::spawn(write_lines(tx, queue, None, move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }));
        for _ in 0..10 {
            {
                let line: Vec<u8> = b"{}\n".to_vec();
                let n = line.len();
                assert!(lines.push(line, n));
            }
            tokio::task::yield_now().await;
        }
        drop(lines);
        writer.await.unwrap();
        assert_eq!(closed.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_stalled_client_parks_the_writer_not_the_runtime() {
    runtime().block_on(async {
        let (tx, _rx) = pipe::pipe().expect("pipe");
        let (lines, queue) = bounded(ROOMY);
        let writer = tokio::spawn(write_lines(tx, queue, None, || {}));
        // Far more than a pipe holds; nobody reads. Senders never wait, and on this
        // single-threaded runtime other work still runs.
        for _ in 0..64 {
            {
                let line: Vec<u8> = vec![b'x'; 64 * 1024];
                let n = line.len();
                assert!(lines.push(line, n));
            }
            tokio::task::yield_now().await;
        }
        let other = tokio::spawn(async { 42 });
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(5), other)
                .await
                .expect("the runtime is not blocked")
                .unwrap(),
            42
        );
        assert!(!writer.is_finished());
        writer.abort();
    });
}
