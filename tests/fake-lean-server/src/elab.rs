//! The elaboration of one document, on a thread of its own so that gates and slow steps never
//! block the main loop. For each version it walks the [`Step`](crate::analysis::Step)s in order
//! and reports, through [`ElabEvent`]s, what a Lean worker reports (reference §1.5–1.6):
//! `processing` from line 0 to EOF; on a worker start, one publish per Lake setup line and an
//! empty publish that clears them (Gap 6); then per command: gates (block until
//! `<gate dir>/<name>` exists, after creating `<name>.entered`), slow time (progress ticks),
//! a crash, its diagnostics; finally the version's last publish and `processing: []`, in the
//! configured order. A newer version arriving at any point supersedes the running one, which
//! then reports nothing more. The only waits are the gate poll and the explicit slow mode.

use crate::analysis::{Analysis, CrashKind};
use crate::config::DiagOrder;
use crate::event::Event;
use crate::header::HeaderError;
use crate::text::{Pos, range_json};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// Gate polling interval: how soon a created gate file is noticed.
const GATE_POLL: Duration = Duration::from_millis(2);

pub struct Job {
    pub version: i64,
    pub analysis: Arc<Analysis>,
    /// Lake setup-file stderr lines (only when the worker starts).
    pub setup_lines: Vec<String>,
    /// A fatal header error: elaboration stops after reporting it.
    pub header_error: Option<HeaderError>,
    /// Lake's diagnostics of other files (`source: "Lake"`), published before the header error.
    pub lake_publishes: Vec<(String, Vec<Value>)>,
    /// A `crash once` directive may still fire.
    pub crash_once_armed: bool,
    /// The options Lake's setup gave the file (`lakefile::setup_options`).
    pub options: Vec<(String, String)>,
    /// The module Lake set the file up as (`_unknown` outside every library), as `pp.sorrySource`
    /// names it.
    pub module: String,
    pub order: DiagOrder,
    pub gate_dir: Option<PathBuf>,
    pub slow_tick: Duration,
}

#[derive(Debug)]
pub enum ElabEvent {
    /// `processing` from `from_line` to EOF (`kind` 1 or 2); `None` means done.
    Progress {
        version: i64,
        from_line: Option<u32>,
        fatal: bool,
    },
    /// A publish with exactly these diagnostics, outside the cumulative set (setup lines).
    SetupPublish {
        version: i64,
        diagnostics: Vec<Value>,
    },
    /// A publish for another file: Lake's diagnostics of an import that did not build.
    LakePublish {
        version: i64,
        uri: String,
        diagnostics: Vec<Value>,
    },
    /// New diagnostics of the version; the main loop publishes the cumulative set.
    Publish {
        version: i64,
        new: Vec<Value>,
    },
    /// Elaboration has passed every line before `line`.
    Reached {
        version: i64,
        line: u32,
    },
    /// Every diagnostic of the version has been handed over.
    Complete {
        version: i64,
    },
    Crash {
        version: i64,
        kind: CrashKind,
    },
}

enum Flow {
    Done,
    Superseded(Job),
    Stop,
}

/// Starts the thread for one document generation; jobs go in through the returned sender.
pub fn spawn(uri: String, generation: u64, events: Sender<Event>) -> Sender<Job> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    // Lean elaborates a document under the path of its URI (`ctx.fileName`).
    let file = crate::project::Project::path_of_uri(&uri);
    std::thread::spawn(move || {
        let emit = |ev: ElabEvent| {
            let _ = events.send(Event::Elab {
                uri: uri.clone(),
                generation,
                ev,
            });
        };
        let mut next: Option<Job> = None;
        loop {
            let job = match next.take() {
                Some(j) => j,
                None => match rx.recv() {
                    Ok(j) => j,
                    Err(_) => return,
                },
            };
            match elaborate(&job, file.as_deref(), &rx, &emit) {
                Flow::Done => {}
                Flow::Superseded(j) => next = Some(j),
                Flow::Stop => return,
            }
        }
    });
    tx
}

/// The newest queued job, if any.
fn newer(rx: &Receiver<Job>) -> Result<Option<Job>, ()> {
    let mut last = None;
    loop {
        match rx.try_recv() {
            Ok(j) => last = Some(j),
            Err(TryRecvError::Empty) => return Ok(last),
            Err(TryRecvError::Disconnected) => {
                return if last.is_some() { Ok(last) } else { Err(()) };
            }
        }
    }
}

/// Waits up to `d` for a newer job.
fn wait(rx: &Receiver<Job>, d: Duration) -> Option<Flow> {
    match rx.recv_timeout(d) {
        Ok(j) => Some(Flow::Superseded(newer(rx).ok().flatten().unwrap_or(j))),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => Some(Flow::Stop),
    }
}

fn elaborate(
    job: &Job,
    file: Option<&std::path::Path>,
    rx: &Receiver<Job>,
    emit: &dyn Fn(ElabEvent),
) -> Flow {
    let v = job.version;
    let a = &job.analysis;
    emit(ElabEvent::Progress {
        version: v,
        from_line: Some(0),
        fatal: false,
    });
    if !job.setup_lines.is_empty() {
        let end = a.text.end_pos();
        for line in &job.setup_lines {
            // Gap 6: range 0:0–1:0, fullRange over the whole file, information, no source.
            let d = json!({
                "range": range_json(Pos::new(0, 0), Pos::new(1, 0)),
                "fullRange": range_json(Pos::new(0, 0), end),
                "severity": 3,
                "message": line,
            });
            emit(ElabEvent::SetupPublish {
                version: v,
                diagnostics: vec![d],
            });
        }
        emit(ElabEvent::SetupPublish {
            version: v,
            diagnostics: Vec::new(),
        });
    }
    if let Some(header_error) = &job.header_error {
        for (uri, diagnostics) in &job.lake_publishes {
            emit(ElabEvent::LakePublish {
                version: v,
                uri: uri.clone(),
                diagnostics: diagnostics.clone(),
            });
        }
        let error = ElabEvent::Publish {
            version: v,
            new: vec![header_error.diagnostic(a)],
        };
        let fatal = ElabEvent::Progress {
            version: v,
            from_line: Some(0),
            fatal: true,
        };
        emit(ElabEvent::Reached {
            version: v,
            line: u32::MAX,
        });
        // The fatal progress goes out first when the worker never blocked for reportDelayMs
        // (LLS Part 3, "Ordering"), as the end of every other version does.
        match job.order {
            DiagOrder::DiagnosticsFirst => {
                emit(error);
                emit(fatal);
            }
            DiagOrder::ProgressFirst => {
                emit(fatal);
                if let (Some(gate), Some(dir)) = (&a.flags.explain_gate, &job.gate_dir) {
                    let _ = std::fs::write(dir.join(format!("{gate}.entered")), v.to_string());
                    while !dir.join(gate).exists() {
                        if let Some(flow) = wait(rx, GATE_POLL) {
                            return flow;
                        }
                    }
                }
                emit(error);
            }
        }
        emit(ElabEvent::Complete { version: v });
        return Flow::Done;
    }
    let mut unpublished: Vec<Value> = Vec::new();
    let mut published = false;
    let flush = |unpublished: &mut Vec<Value>, published: &mut bool| {
        if !unpublished.is_empty() {
            emit(ElabEvent::Publish {
                version: v,
                new: std::mem::take(unpublished),
            });
            *published = true;
        }
    };
    let setup = crate::analysis::Setup {
        options: &job.options,
        module: &job.module,
    };
    for (k, step) in a.steps.iter().enumerate() {
        match newer(rx) {
            Ok(Some(j)) => return Flow::Superseded(j),
            Ok(None) => {}
            Err(()) => return Flow::Stop,
        }
        let blocked = |unpublished: &mut Vec<Value>, published: &mut bool| {
            flush(unpublished, published);
            emit(ElabEvent::Progress {
                version: v,
                from_line: Some(step.first_line),
                fatal: false,
            });
        };
        for gate in &step.gates {
            let Some(dir) = &job.gate_dir else {
                eprintln!("fake-lake: gate {gate:?} ignored: FAKE_LEAN_GATE_DIR is not set");
                continue;
            };
            blocked(&mut unpublished, &mut published);
            let _ = std::fs::write(dir.join(format!("{gate}.entered")), v.to_string());
            while !dir.join(gate).exists() {
                if let Some(flow) = wait(rx, GATE_POLL) {
                    return flow;
                }
            }
        }
        if step.slow_ms > 0 {
            blocked(&mut unpublished, &mut published);
            let deadline = Instant::now() + Duration::from_millis(step.slow_ms);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                if let Some(flow) = wait(rx, left.min(job.slow_tick)) {
                    return flow;
                }
                emit(ElabEvent::Progress {
                    version: v,
                    from_line: Some(step.first_line),
                    fatal: false,
                });
            }
        }
        if let Some(c) = &step.crash
            && (!c.once || job.crash_once_armed)
        {
            // Lean reports the command it is elaborating as it goes (LLS §1.5), so the last
            // progress before a crash is where checking stopped.
            blocked(&mut unpublished, &mut published);
            emit(ElabEvent::Crash {
                version: v,
                kind: c.kind,
            });
            return Flow::Done;
        }
        unpublished.extend(a.report(k, setup));
        for include in &step.includes {
            unpublished.extend(crate::include::read(a, file, include));
        }
        emit(ElabEvent::Reached {
            version: v,
            line: step.last_line + 1,
        });
        if job.order == DiagOrder::DiagnosticsFirst {
            flush(&mut unpublished, &mut published);
        }
    }
    emit(ElabEvent::Reached {
        version: v,
        line: u32::MAX,
    });
    let done = ElabEvent::Progress {
        version: v,
        from_line: None,
        fatal: false,
    };
    let last = ElabEvent::Publish {
        version: v,
        new: unpublished,
    };
    match job.order {
        DiagOrder::DiagnosticsFirst => {
            if let ElabEvent::Publish { new, .. } = &last
                && (!new.is_empty() || !published)
            {
                emit(last);
            }
            emit(done);
        }
        DiagOrder::ProgressFirst => {
            emit(done);
            emit(last);
        }
    }
    emit(ElabEvent::Complete { version: v });
    Flow::Done
}
