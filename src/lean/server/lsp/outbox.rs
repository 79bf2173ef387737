//! The queue to the server's stdin, bounded by bytes.
//!
//! Contract:
//! 1. Frames leave in the order they were queued, one writer task writing them; a burst goes out
//!    in one write, flushed when nothing else is queued.
//! 2. Bulk frames (document texts, requests) take room before they are queued: at most
//!    [`OUTBOX_BYTES`] of them wait at once (a frame larger than that takes all the room and goes
//!    alone), and the room comes back once the frame is written. A server that stops reading its
//!    stdin therefore makes senders wait (each caller bounds and can cancel that wait), instead of
//!    queueing every full-text `didChange` in memory.
//! 3. Control frames (`$/cancelRequest`, answers to the server's own requests, `didClose`,
//!    `didSave`, `exit`) take no room, so the code that must send them without waiting (a drop, the
//!    reader) can; each is small and their number is bounded by what is in flight.
//! 4. When writing fails, the writer stops and reports why; queued frames are dropped with their
//!    room.

use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// The most bytes of bulk frames waiting to be written at once.
pub const OUTBOX_BYTES: usize = 8 << 20;

/// One or more encoded messages, written together, holding their room until then.
#[derive(Debug)]
pub struct Frame {
    bytes: Vec<u8>,
    _room: Option<OwnedSemaphorePermit>,
}

/// The sending side of the queue.
#[derive(Debug, Clone)]
pub struct Outbox {
    frames: mpsc::UnboundedSender<Frame>,
    room: Arc<Semaphore>,
}

/// Room taken for bulk frames not yet queued; given back when dropped unused.
#[derive(Debug)]
pub struct Room {
    permit: OwnedSemaphorePermit,
    frames: mpsc::UnboundedSender<Frame>,
}

impl Outbox {
    /// A queue and its receiving end, for [`write_frames`].
    pub fn new() -> (Outbox, mpsc::UnboundedReceiver<Frame>) {
        let (frames, receiver) = mpsc::unbounded_channel();
        let room = Arc::new(Semaphore::new(OUTBOX_BYTES));
        (Outbox { frames, room }, receiver)
    }

    /// Waits for room for `bytes` of bulk frames (see the contract).
    pub async fn room(&self, bytes: usize) -> Room {
        let wanted = bytes.clamp(1, OUTBOX_BYTES) as u32;
        let permit = self
            .room
            .clone()
            .acquire_many_owned(wanted)
            .await
            .expect("the outbox's semaphore is never closed");
        Room {
            permit,
            frames: self.frames.clone(),
        }
    }

    /// Queues a control frame at once; `false` when the writer has stopped.
    pub fn control(&self, bytes: Vec<u8>) -> bool {
        self.frames.send(Frame { bytes, _room: None }).is_ok()
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
        self.frames.send(frame).is_ok()
    }
}

/// Writes frames until the queue ends or a write fails; the error, if one did.
pub async fn write_frames(
    mut input: impl AsyncWrite + Unpin,
    mut frames: mpsc::UnboundedReceiver<Frame>,
) -> Option<std::io::Error> {
    while let Some(frame) = frames.recv().await {
        let written = async {
            input.write_all(&frame.bytes).await?;
            if frames.is_empty() {
                input.flush().await?;
            }
            Ok::<(), std::io::Error>(())
        };
        if let Err(e) = written.await {
            return Some(e);
        }
        drop(frame);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_server_that_stops_reading_makes_bulk_senders_wait_and_control_frames_pass() {
        let (outbox, frames) = Outbox::new();
        // A pipe nobody reads: the writer blocks once its buffer is full.
        let (writer, mut reader) = tokio::io::duplex(1024);
        let task = tokio::spawn(write_frames(writer, frames));
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
}
