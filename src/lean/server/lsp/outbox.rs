//! The queue to the server's stdin, bounded by bytes.
//!
//! Contract:
//! 1. Frames leave in the order they were queued. A frame queued while nothing waits to be
//!    written goes out at once, written by its sender as far as the pipe takes it without
//!    waiting; whatever the pipe does not take, and every frame queued behind it, is written by
//!    the one writer task ([`Writer::run`]). A burst goes out in one write, flushed when nothing
//!    else is queued.
//! 2. Bulk frames (document texts, requests) take room before they are queued: at most
//!    [`OUTBOX_BYTES`] of them wait at once (a frame larger than that takes all the room and goes
//!    alone), and the room comes back once the frame is written. A server that stops reading its
//!    stdin therefore makes senders wait (each caller bounds and can cancel that wait), instead of
//!    queueing every full-text `didChange` in memory.
//! 3. Control frames (`$/cancelRequest`, answers to the server's own requests, `didClose`,
//!    `didSave`, a `didChange` with an empty edit, `exit`) take no room, so the code that must send them without waiting (a drop, the
//!    reader) can; each is small and their number is bounded by what is in flight.
//! 4. When writing fails, the writer stops and reports why; queued frames are dropped with their
//!    room. Once every [`Outbox`] is dropped, the writer writes what is queued and ends.
//!
//! Why senders write: a request is sent from the call's task, and Tokio runs the writer task it
//! wakes on another worker as often as not (a thread woken, a second hand-off), which cost a
//! Lean call more than the write itself.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The most bytes of bulk frames waiting to be written at once.
pub const OUTBOX_BYTES: usize = 8 << 20;

/// One or more encoded messages, written together, holding their room until then.
#[derive(Debug)]
struct Frame {
    bytes: Vec<u8>,
    _room: Option<OwnedSemaphorePermit>,
}

/// The pipe and what waits to be written to it; one lock, so a sender's write and the writer's
/// never interleave.
struct Lane {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    queue: VecDeque<Frame>,
    /// Bytes of the front frame already written.
    written: usize,
    /// Something was written and not flushed yet.
    unflushed: bool,
    /// The writer, waiting for a frame.
    writer: Option<Waker>,
    /// A sender's write failed: the writer reports it.
    failed: Option<io::Error>,
    /// The writer has ended: nothing more is queued.
    stopped: bool,
}

struct Pipe {
    lane: Mutex<Lane>,
    room: Arc<Semaphore>,
    /// The [`Outbox`]es alive; at none, the writer ends once the queue is written.
    senders: AtomicUsize,
}

impl Pipe {
    fn lock(&self) -> MutexGuard<'_, Lane> {
        self.lane.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `frame`, writing it at once when nothing waits (see the contract); `false` when
    /// the writer has stopped.
    fn push(&self, frame: Frame) -> bool {
        let mut lane = self.lock();
        if lane.stopped || lane.failed.is_some() {
            return false;
        }
        if lane.queue.is_empty() && !lane.unflushed {
            let mut cx = Context::from_waker(Waker::noop());
            match lane.write_some(&mut cx, &frame.bytes) {
                Ok(n) if n == frame.bytes.len() => {
                    if lane.flush(&mut cx).is_ready() {
                        return true;
                    }
                    // A writer that buffers: the writer task flushes it.
                    lane.unflushed = true;
                    lane.wake_writer();
                    return true;
                }
                Ok(n) => lane.written = n,
                Err(e) => {
                    lane.failed = Some(e);
                    lane.wake_writer();
                    return true;
                }
            }
        }
        lane.queue.push_back(frame);
        lane.wake_writer();
        true
    }
}

impl Lane {
    /// Writes as much of `bytes` as the pipe takes now; the error of a failed write.
    fn write_some(&mut self, cx: &mut Context<'_>, bytes: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        while at < bytes.len() {
            match self.input.as_mut().poll_write(cx, &bytes[at..]) {
                Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(n)) => {
                    at += n;
                    self.unflushed = true;
                }
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => break,
            }
        }
        Ok(at)
    }

    fn flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = self.input.as_mut().poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            self.unflushed = false;
        }
        flushed
    }

    fn wake_writer(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.wake();
        }
    }

    fn stop(&mut self) {
        self.stopped = true;
        self.queue.clear();
    }
}

/// The sending side of the queue.
pub struct Outbox {
    pipe: Arc<Pipe>,
}

impl fmt::Debug for Outbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox").finish_non_exhaustive()
    }
}

impl Clone for Outbox {
    fn clone(&self) -> Self {
        self.pipe.senders.fetch_add(1, Ordering::AcqRel);
        Outbox {
            pipe: self.pipe.clone(),
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        if self.pipe.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.pipe.lock().wake_writer();
        }
    }
}

/// Room taken for bulk frames not yet queued; given back when dropped unused.
#[derive(Debug)]
pub struct Room {
    permit: OwnedSemaphorePermit,
    outbox: Outbox,
}

/// The writing end: [`Writer::run`] is the writer task.
pub struct Writer {
    pipe: Arc<Pipe>,
}

impl Outbox {
    /// A queue writing to `input`, and its writer.
    pub fn new(input: impl AsyncWrite + Send + 'static) -> (Outbox, Writer) {
        let pipe = Arc::new(Pipe {
            lane: Mutex::new(Lane {
                input: Box::pin(input),
                queue: VecDeque::new(),
                written: 0,
                unflushed: false,
                writer: None,
                failed: None,
                stopped: false,
            }),
            room: Arc::new(Semaphore::new(OUTBOX_BYTES)),
            senders: AtomicUsize::new(1),
        });
        (Outbox { pipe: pipe.clone() }, Writer { pipe })
    }

    /// Waits for room for `bytes` of bulk frames (see the contract).
    pub async fn room(&self, bytes: usize) -> Room {
        let wanted = bytes.clamp(1, OUTBOX_BYTES) as u32;
        let permit = self
            .pipe
            .room
            .clone()
            .acquire_many_owned(wanted)
            .await
            .expect("the outbox's semaphore is never closed");
        Room {
            permit,
            outbox: self.clone(),
        }
    }

    /// Queues a control frame at once; `false` when the writer has stopped.
    pub fn control(&self, bytes: Vec<u8>) -> bool {
        self.pipe.push(Frame { bytes, _room: None })
    }
}

impl Room {
    /// Queues `bytes` (one or more encoded messages) in the room taken; `false` when the writer
    /// has stopped.
    pub fn send(self, bytes: Vec<u8>) -> bool {
        let frame = Frame {
            bytes,
            _room: Some(self.permit),
        };
        self.outbox.pipe.push(frame)
    }
}

/// Stops the lane when the writer ends, however it ends (its task may be dropped).
struct Stopping<'a>(&'a Pipe);

impl Drop for Stopping<'_> {
    fn drop(&mut self) {
        self.0.lock().stop();
    }
}

impl Writer {
    /// Writes frames until every [`Outbox`] is gone and the queue is written, or until a write
    /// fails; the error, if one did.
    pub async fn run(self) -> Option<io::Error> {
        let _stopping = Stopping(&self.pipe);
        std::future::poll_fn(|cx| self.poll_write(cx)).await
    }

    fn poll_write(&self, cx: &mut Context<'_>) -> Poll<Option<io::Error>> {
        let mut lane = self.pipe.lock();
        loop {
            if let Some(e) = lane.failed.take() {
                return Poll::Ready(Some(e));
            }
            let Some(frame) = lane.queue.pop_front() else {
                break;
            };
            let from = lane.written;
            // An error drops the frame, and with it its room.
            let wrote = match lane.write_some(cx, &frame.bytes[from..]) {
                Ok(n) => n,
                Err(e) => return Poll::Ready(Some(e)),
            };
            lane.written += wrote;
            if lane.written < frame.bytes.len() {
                lane.queue.push_front(frame);
                return Poll::Pending;
            }
            lane.written = 0;
        }
        if lane.unflushed {
            match lane.flush(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Some(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        if self.pipe.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        lane.writer = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_server_that_stops_reading_makes_bulk_senders_wait_and_control_frames_pass() {
        // A pipe nobody reads: the writer blocks once its buffer is full.
        let (writer, mut reader) = tokio::io::duplex(1024);
        let (outbox, frames) = Outbox::new(writer);
        let task = tokio::spawn(frames.run());
        outbox
            .room(OUTBOX_BYTES)
            .await
            .send(vec![b'x'; OUTBOX_BYTES]);
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), outbox.room(10));
        assert!(waiting.await.is_err(), "no room while the big frame waits");
        assert!(
            outbox.control(b"cancel".to_vec()),
            "control frames never wait"
        );
        let mut all = Vec::new();
        let read = tokio::spawn(async move {
            reader.read_to_end(&mut all).await.unwrap();
            all
        });
        // Once the frame is written, its room comes back.
        outbox.room(10).await.send(b"after".to_vec());
        drop(outbox);
        assert!(task.await.unwrap().is_none());
        let all = read.await.unwrap();
        assert_eq!(all.len(), OUTBOX_BYTES + "cancel".len() + "after".len());
        assert!(all.ends_with(b"cancelafter"));
    }

    #[tokio::test]
    async fn an_idle_queue_is_written_by_the_sender_and_order_holds_behind_a_partial_write() {
        let (writer, mut reader) = tokio::io::duplex(64);
        let (outbox, frames) = Outbox::new(writer);
        // No writer task yet: a frame that fits is written by its sender.
        assert!(outbox.control(b"first".to_vec()));
        let mut got = [0; 5];
        // A hang here (nothing written without the task) becomes a failure.
        let read = reader.read_exact(&mut got);
        tokio::time::timeout(std::time::Duration::from_secs(10), read)
            .await
            .expect("the sender wrote the frame")
            .unwrap();
        assert_eq!(&got, b"first");
        // One the pipe cannot take whole waits for the writer, and so does what follows it.
        assert!(outbox.control(vec![b'y'; 100]));
        assert!(outbox.control(b"last".to_vec()));
        let task = tokio::spawn(frames.run());
        drop(outbox);
        let mut all = Vec::new();
        reader.read_to_end(&mut all).await.unwrap();
        assert!(task.await.unwrap().is_none());
        assert_eq!(all.len(), 104);
        assert!(all.starts_with(&[b'y'; 100]) && all.ends_with(b"last"));
    }

    #[tokio::test]
    async fn a_failed_write_stops_the_writer_and_later_frames_are_refused() {
        let (writer, reader) = tokio::io::duplex(64);
        drop(reader);
        let (outbox, frames) = Outbox::new(writer);
        let task = tokio::spawn(frames.run());
        assert!(outbox.control(b"lost".to_vec()));
        let error = task.await.unwrap().expect("the write failed");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
        assert!(!outbox.control(b"after".to_vec()));
    }
}
