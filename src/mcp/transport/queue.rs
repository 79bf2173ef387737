//! A FIFO queue bounded by items and by bytes, shared by both directions of the transport.
//!
//! Contract:
//! 1. Nothing grows without bound: [`QueueSender::ready`] completes only while the queue holds
//!    fewer items and fewer bytes than its limits. The stdin reader waits on it before every
//!    push, so the inbound queue stays within its limits (one line larger than the byte limit is
//!    accepted into an empty queue, so no single message can wedge it); the coordinator waits on
//!    the outbound queue before reading each message, so that queue exceeds its limits by no more
//!    than what admitted calls owe (see 2).
//! 2. [`QueueSender::push`] always queues while the receiver lives: it is for lines the protocol
//!    owes (an answer to an admitted call), which are bounded by the number of admitted calls.
//!    [`QueueSender::offer`] queues only while there is room, and is for lines that may be dropped
//!    when the other side stops reading (progress and log notifications).
//! 3. An item stops counting when it is received. Senders and the receiver are `Send` and the
//!    receiver can be read from a runtime task or a plain thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// What one item costs besides its bytes (its allocation and bookkeeping), so that many tiny
/// items are bounded too.
const ITEM_OVERHEAD: usize = 64;

/// The limits of one queue.
#[derive(Debug, Clone, Copy)]
pub struct QueueLimits {
    /// The most items queued before producers wait.
    pub items: usize,
    /// The most bytes queued before producers wait.
    pub bytes: usize,
}

#[derive(Debug)]
struct Room {
    limits: QueueLimits,
    items: AtomicUsize,
    bytes: AtomicUsize,
    freed: Notify,
}

impl Room {
    fn has_room(&self) -> bool {
        self.items.load(Ordering::Acquire) < self.limits.items
            && self.bytes.load(Ordering::Acquire) < self.limits.bytes
    }

    fn take(&self, cost: usize) {
        self.items.fetch_add(1, Ordering::AcqRel);
        self.bytes.fetch_add(cost, Ordering::AcqRel);
    }

    fn give_back(&self, cost: usize) {
        self.items.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(cost, Ordering::AcqRel);
        // Whoever waits has registered before it found the queue full (see `ready`), so waking
        // every waiter whenever there is room can never miss one, whatever pushes raced this.
        if self.has_room() {
            self.freed.notify_waiters();
        }
    }
}

/// The producing side; cheap to clone.
#[derive(Debug)]
pub struct QueueSender<T> {
    tx: UnboundedSender<(T, usize)>,
    room: Arc<Room>,
}

impl<T> Clone for QueueSender<T> {
    fn clone(&self) -> Self {
        QueueSender {
            tx: self.tx.clone(),
            room: self.room.clone(),
        }
    }
}

/// The consuming side.
#[derive(Debug)]
pub struct QueueReceiver<T> {
    rx: UnboundedReceiver<(T, usize)>,
    room: Arc<Room>,
}

/// A queue with these limits.
pub fn bounded<T>(limits: QueueLimits) -> (QueueSender<T>, QueueReceiver<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let room = Arc::new(Room {
        limits,
        items: AtomicUsize::new(0),
        bytes: AtomicUsize::new(0),
        freed: Notify::new(),
    });
    (
        QueueSender {
            tx,
            room: room.clone(),
        },
        QueueReceiver { rx, room },
    )
}

impl<T> QueueSender<T> {
    /// Completes once the queue is under both of its limits (at once if it is).
    pub async fn ready(&self) {
        loop {
            let freed = self.room.freed.notified();
            let mut freed = std::pin::pin!(freed);
            freed.as_mut().enable();
            if self.room.has_room() {
                return;
            }
            freed.await;
        }
    }

    /// Whether the queue is under both of its limits now.
    pub fn has_room(&self) -> bool {
        self.room.has_room()
    }

    /// Queues an item of `bytes` bytes whatever the limits; `false` when the receiver is gone.
    pub fn push(&self, item: T, bytes: usize) -> bool {
        let cost = bytes + ITEM_OVERHEAD;
        self.room.take(cost);
        if self.tx.send((item, cost)).is_err() {
            self.room.give_back(cost);
            return false;
        }
        true
    }

    /// Queues an item only while the queue is under its limits; `false` when it was dropped.
    pub fn offer(&self, item: T, bytes: usize) -> bool {
        self.room.has_room() && self.push(item, bytes)
    }

    /// Completes when the receiver is dropped.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }
}

impl<T> QueueReceiver<T> {
    /// The next item, or `None` once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<T> {
        let (item, cost) = self.rx.recv().await?;
        self.room.give_back(cost);
        Some(item)
    }

    /// As [`Self::recv`], blocking the calling thread (never call it on a runtime worker).
    pub fn blocking_recv(&mut self) -> Option<T> {
        let (item, cost) = self.rx.blocking_recv()?;
        self.room.give_back(cost);
        Some(item)
    }

    /// As [`Self::recv`], with the bytes the item was queued with.
    pub async fn recv_sized(&mut self) -> Option<(T, usize)> {
        let (item, cost) = self.rx.recv().await?;
        self.room.give_back(cost);
        Some((item, cost - ITEM_OVERHEAD))
    }

    /// The next item if one is queued now.
    pub fn try_recv(&mut self) -> Option<T> {
        let (item, cost) = self.rx.try_recv().ok()?;
        self.room.give_back(cost);
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: QueueLimits = QueueLimits {
        items: 4,
        bytes: 1000,
    };

    #[tokio::test]
    async fn offers_stop_at_the_limits_and_pushes_do_not() {
        let (tx, mut rx) = bounded::<u32>(LIMITS);
        for i in 0..4 {
            assert!(tx.offer(i, 1));
        }
        assert!(!tx.has_room());
        assert!(!tx.offer(99, 1), "a full queue drops what may be dropped");
        assert!(tx.push(4, 1), "what is owed is always queued");
        let received: Vec<u32> = std::iter::from_fn(|| rx.try_recv()).collect();
        assert_eq!(received, [0, 1, 2, 3, 4]);
        assert!(tx.has_room());
    }

    #[tokio::test]
    async fn one_line_over_the_byte_limit_fits_an_empty_queue() {
        let (tx, mut rx) = bounded::<&str>(LIMITS);
        tx.ready().await;
        assert!(tx.push("big", 5000));
        assert!(!tx.has_room());
        assert_eq!(rx.recv().await, Some("big"));
        tx.ready().await;
    }

    #[tokio::test]
    async fn ready_completes_when_the_receiver_frees_room() {
        let (tx, mut rx) = bounded::<u32>(LIMITS);
        for i in 0..4 {
            tx.push(i, 1);
        }
        let waiter = tokio::spawn({
            let tx = tx.clone();
            async move { tx.ready().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        rx.recv().await;
        waiter
            .await
            .expect("ready completes once an item is received");
    }

    #[tokio::test]
    async fn a_push_after_the_receiver_is_gone_gives_its_room_back() {
        let (tx, rx) = bounded::<u32>(LIMITS);
        drop(rx);
        assert!(!tx.push(1, 10));
        assert!(tx.has_room());
        tx.closed().await;
    }
}
