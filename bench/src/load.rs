//! The closed-loop load: keep N requests in flight on one server, check every answer.
//!
//! A writer thread writes pre-serialized requests whenever it is granted credit; a reader
//! thread reads, checks and times each answer and grants one credit per answer (batched while
//! more answers are already buffered). The reader owns the plan (how many requests will be
//! sent), so it never waits for an answer that is not coming.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::conn::{Conn, own_cpu_time};
use crate::proto::{CallTemplate, Line};

/// When a run stops issuing requests.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// Never more calls than this.
    pub max_calls: u64,
    /// At least this many calls, whatever the time.
    pub min_calls: u64,
    /// Stop issuing after this long (once `min_calls` are planned).
    pub duration: Duration,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Calls answered (all checked).
    pub calls: u64,
    /// First request written to last answer read.
    pub elapsed: Duration,
    /// Per-call latency, when recorded.
    pub latencies: Vec<Duration>,
    /// Server CPU time during the run.
    pub server_cpu: Option<Duration>,
    /// Load generator CPU time during the run.
    pub own_cpu: Duration,
}

impl RunStats {
    /// Calls per second.
    pub fn throughput(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

const RING: usize = 1 << 16;

struct Shared {
    credits: Mutex<u64>,
    wake: Condvar,
    /// Requests written (ids `first_id .. first_id + written`).
    written: AtomicU64,
    finished: AtomicBool,
    /// Send time (ns since `base`) by `id % RING`, and the id it belongs to.
    sent_at: Vec<AtomicU64>,
    sent_id: Vec<AtomicU64>,
}

/// Runs `template` with `concurrency` requests in flight, ids from `first_id`.
pub fn run(
    conn: &mut Conn,
    template: &CallTemplate,
    first_id: u64,
    concurrency: u64,
    limit: Limit,
    record_latency: bool,
) -> Result<RunStats, String> {
    let initial = concurrency.min(limit.max_calls).max(1);
    let shared = Shared {
        credits: Mutex::new(initial),
        wake: Condvar::new(),
        written: AtomicU64::new(0),
        finished: AtomicBool::new(false),
        sent_at: if record_latency {
            (0..RING).map(|_| AtomicU64::new(0)).collect()
        } else {
            Vec::new()
        },
        sent_id: if record_latency {
            (0..RING).map(|_| AtomicU64::new(u64::MAX)).collect()
        } else {
            Vec::new()
        },
    };
    let cpu_before = conn.cpu_time();
    let own_before = own_cpu_time();
    conn.arm(true);
    let base = Instant::now();
    let deadline = base + limit.duration;
    let Conn {
        stdin,
        stdout,
        watch,
        ..
    } = conn;
    let stdin = stdin.as_mut().ok_or("stdin already closed")?;
    let watch: &crate::conn::Watch = watch;
    let (written, read) = thread::scope(|scope| {
        let shared = &shared;
        let writer = scope.spawn(move || -> Result<u64, String> {
            let mut next = 0u64;
            loop {
                let grant = {
                    let mut credits = shared.credits.lock().expect("credit lock");
                    while *credits == 0 && !shared.finished.load(Ordering::Acquire) {
                        credits = shared.wake.wait(credits).expect("credit lock");
                    }
                    if *credits == 0 {
                        return Ok(next);
                    }
                    std::mem::take(&mut *credits)
                };
                let at = base.elapsed().as_nanos() as u64;
                for _ in 0..grant {
                    let id = first_id + next;
                    if record_latency {
                        let slot = (id as usize) % RING;
                        shared.sent_at[slot].store(at, Ordering::Relaxed);
                        shared.sent_id[slot].store(id, Ordering::Release);
                    }
                    template
                        .write(stdin, id)
                        .map_err(|e| format!("writing request {id}: {e}"))?;
                    next += 1;
                }
                // Published before the flush, so an answer never precedes its request's count.
                shared.written.store(next, Ordering::Release);
                stdin
                    .flush()
                    .map_err(|e| format!("writing to the server: {e}"))?;
            }
        });
        let reader = scope.spawn(move || -> Result<(u64, Duration, Vec<Duration>), String> {
            let mut planned = initial;
            let mut answered = 0u64;
            let mut seen: Vec<u64> = Vec::new();
            let mut latencies = Vec::new();
            let mut pending = 0u64;
            let mut line = Vec::with_capacity(4096);
            let mut last = base;
            let grant = |n: &mut u64| {
                if *n > 0 {
                    *shared.credits.lock().expect("credit lock") += std::mem::take(n);
                    shared.wake.notify_one();
                }
            };
            while answered < planned {
                if stdout.buffer().is_empty() {
                    grant(&mut pending);
                }
                line.clear();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) => return Err(format!("after {answered} answers: end of output")),
                    Ok(_) => {}
                    Err(e) => return Err(format!("reading from the server: {e}")),
                }
                watch.progress.fetch_add(1, Ordering::Relaxed);
                let id = match template.check_line(&line)? {
                    Line::Answer(id) => id,
                    Line::Other => continue,
                };
                let now = Instant::now();
                let index = id
                    .checked_sub(first_id)
                    .filter(|i| *i < shared.written.load(Ordering::Acquire))
                    .ok_or_else(|| format!("an answer to request {id}, which was never sent"))?;
                let (word, bit) = ((index / 64) as usize, 1u64 << (index % 64));
                if seen.len() <= word {
                    seen.resize(word + 1, 0);
                }
                if seen[word] & bit != 0 {
                    return Err(format!("request {id} was answered twice"));
                }
                seen[word] |= bit;
                answered += 1;
                last = now;
                if record_latency {
                    let slot = (id as usize) % RING;
                    if shared.sent_id[slot].load(Ordering::Acquire) == id {
                        let sent = shared.sent_at[slot].load(Ordering::Relaxed);
                        let at = now.duration_since(base).as_nanos() as u64;
                        latencies.push(Duration::from_nanos(at.saturating_sub(sent)));
                    }
                }
                let more =
                    planned < limit.max_calls && (planned < limit.min_calls || now < deadline);
                if more {
                    planned += 1;
                    pending += 1;
                    if pending >= 16 {
                        grant(&mut pending);
                    }
                }
            }
            Ok((answered, last.duration_since(base), latencies))
        });
        let read = reader.join().expect("reader thread");
        shared.finished.store(true, Ordering::Release);
        {
            let _credits = shared.credits.lock().expect("credit lock");
            shared.wake.notify_all();
        }
        if read.is_err() {
            // The writer may be blocked on a full pipe: unblock it.
            watch.kill();
        }
        let written = writer.join().expect("writer thread");
        (written, read)
    });
    conn.arm(false);
    let (calls, elapsed, latencies) = read?;
    written?;
    Ok(RunStats {
        calls,
        elapsed,
        latencies,
        server_cpu: cpu_before.and_then(|b| conn.cpu_time().map(|a| a.saturating_sub(b))),
        own_cpu: own_cpu_time().saturating_sub(own_before),
    })
}
