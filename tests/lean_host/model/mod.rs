//! A model-based concurrency suite: random client programs against the shipped server over the
//! fake Lean, checked by an oracle that knows what each call must answer.
//!
//! A program (`program`) is 2–40 steps over 1–3 files of 1–2 workspaces, run with a window of
//! 1–8 calls in flight, under `--max-documents` and `--max-twins` of 1–3; file texts carry a
//! `slow` jitter of 0–30 ms (`texts`). Steps are the document tools (`lean_update`, `lean_sync`,
//! `lean_refresh`, `lean_close`, a rare `lean_save`), position tools (`lean_hover`,
//! `lean_goals`), speculative runs and handle chains (`lean_run_at[_handle]`, `lean_run_with`,
//! `lean_run_with_linear`, `lean_release`), `lean_drop_workspace`, cancellations of earlier
//! calls, and edits (a new text written, then its `lean_update`). The oracle (`check`) then
//! holds the run to eight invariants, each violation tagged with its kind:
//!
//! 1. versions: the updates after writes map versions to texts; no version names two texts
//!    (`[version-map]`), every version an answer names is in the map (`[unknown-version]`),
//!    an answer is about the version it was asked at (`[wrong-version]`), and a receipt names
//!    a version with the hash of its text (`[receipt]`);
//! 2. isolation: every successful result equals the same call's alone on a fresh server for
//!    the same text (`fresh`, memoised per test process), after normalisation
//!    (`[differs-from-alone]`; `lean_drop_workspace` against the model, `[differs-from-model]`);
//! 3. verdicts: every speculative `success`/`messages` equals the one known by construction
//!    (`[verdict]`);
//! 4. errors: every error is a row of the table in `allowed` whose condition holds (`[error]`);
//! 5. no answer names a twin (`beam-twin`, `.lake/beam`) (`[leak]`);
//! 6. bounds: no `lake serve` ever held more documents or twins than allowed
//!    (`[document-bound]`, `[twin-bound]`), the fake recorded no protocol violation
//!    (`[fake-violation]`) and sent nothing Lean never sends (`[lean-contract]`; `bounds`, from
//!    per-process traces, `[no-trace]` if one is missing);
//! 7. every call not cancelled is answered exactly once within 20 s, a cancelled one at most
//!    once (`[answers]`, `[hang]`, `[stray]`);
//! 8. the server exits cleanly at end of input, leaving no process in the projects and no twin
//!    file under `.lake/beam` (`[exit]`, `[processes]`, `[twin-files]`).
//!
//! The work is split in units of [`UNIT`] programs, each a proptest runner with its own seed
//! and one pair of budgets, and taken from one queue by every test's threads, so cargo's
//! parallel tests share it. A server's start is most of a short program's cost in a debug
//! build, so a unit's programs share one server while they pass: each runs on fresh projects
//! whose workspaces are dropped after it (a fence: nothing of it survives into the next), and
//! the server's clean exit is checked when the unit ends. A failing program is shrunk by
//! proptest (each candidate run up to five times, since a race may not happen every time, and
//! a failure retires the server), printed one step per line with the seed, and run again on a
//! server of its own, the report saying whether it fails there too. After a failure no new
//! unit starts. Settings, from the environment:
//!
//! - `LEAN_BEAM_MODEL_PROGRAMS`: programs in all (default 2000); a long run:
//!   `LEAN_BEAM_MODEL_PROGRAMS=100000 cargo test --all-features --test lean_host model`;
//! - `LEAN_BEAM_MODEL_SEED`: the seed (a random one otherwise); the run prints it and a failure
//!   names it, so `LEAN_BEAM_MODEL_SEED=<seed>` draws the same programs again;
//! - `LEAN_BEAM_MODEL_ONLY` / `LEAN_BEAM_MODEL_IGNORE`: comma-separated words; only violations
//!   whose line contains one of the first (and none of the second) count, to shrink one
//!   failure apart from another (`LEAN_BEAM_MODEL_ONLY=[twin-bound]`,
//!   `LEAN_BEAM_MODEL_IGNORE=[document-bound]`).

mod allowed;
pub mod axioms;
pub mod bounds;
mod check;
pub mod driver;
pub mod era;
mod fresh;
mod program;
pub mod project;
pub mod revivals;
mod run;
mod texts;

use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

const DEFAULT_PROGRAMS: usize = 2000;
/// Programs per unit of work: a proptest runner with its own seed, budgets and server. Units
/// cycle through the 9 pairs of budgets (`--max-documents` and `--max-twins` of 1–3).
const UNIT: usize = 50;
/// Threads each test runs units on: cargo runs tests in parallel, one per core, and a program
/// mostly waits on processes.
const PER_TEST: usize = 3;
/// Runs of a shrinking candidate: a race that failed once may need a few tries to fail again.
const SHRINK_ATTEMPTS: usize = 5;

/// One broken invariant.
#[derive(Debug, Clone)]
pub struct Violation {
    pub kind: &'static str,
    /// The program step it is about.
    pub step: Option<usize>,
    pub detail: String,
}

impl Violation {
    pub fn new(kind: &'static str, step: Option<usize>, detail: String) -> Violation {
        Violation { kind, step, detail }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Some(step) => write!(f, "[{}] at #{step}: {}", self.kind, self.detail),
            None => write!(f, "[{}] {}", self.kind, self.detail),
        }
    }
}

struct Settings {
    seed: u64,
    programs: usize,
    only: Vec<String>,
    ignore: Vec<String>,
}

fn words(name: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The number the environment variable `name` holds, if it is set.
pub fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
    })
}

/// The seed the environment variable `name` holds, else one drawn from the clock and the pid.
pub fn env_seed(name: &str) -> u64 {
    env_number(name).unwrap_or_else(|| {
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        clock ^ (u64::from(std::process::id()) << 32)
    })
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let programs = env_number("LEAN_BEAM_MODEL_PROGRAMS");
        Settings {
            seed: env_seed("LEAN_BEAM_MODEL_SEED"),
            programs: programs.map_or(DEFAULT_PROGRAMS, |n| n as usize),
            only: words("LEAN_BEAM_MODEL_ONLY"),
            ignore: words("LEAN_BEAM_MODEL_IGNORE"),
        }
    })
}

/// The violations that count under `LEAN_BEAM_MODEL_ONLY` / `_IGNORE`.
fn counted(found: Vec<Violation>) -> Vec<Violation> {
    let s = settings();
    found
        .into_iter()
        .filter(|v| {
            let line = v.to_string();
            (s.only.is_empty() || s.only.iter().any(|w| line.contains(w)))
                && !s.ignore.iter().any(|w| line.contains(w))
        })
        .collect()
}

/// Runs unit `n`'s programs, under its budgets, on one server while they pass; the report of
/// the minimal failing one.
/// One unit of a seeded suite: `count` cases drawn from `strategy` by a proptest runner seeded
/// with `seed` and the unit's number `n`, each tried by `attempt` on the unit's shared server
/// (`None` until `attempt` starts one, and again after a failure retires it). A failing case is
/// shrunk, each candidate tried [`SHRINK_ATTEMPTS`] times, since a race need not happen each
/// time. What the runner said, how many attempts ran, and the server left.
pub fn seeded_unit<P: Clone + std::fmt::Debug, S>(
    seed: u64,
    n: usize,
    count: usize,
    strategy: &impl proptest::strategy::Strategy<Value = P>,
    attempt: impl Fn(&P, &mut Option<S>) -> Vec<Violation>,
) -> (Result<(), TestError<P>>, usize, Option<S>) {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&(n as u64).to_le_bytes());
    let config = Config {
        cases: count as u32,
        failure_persistence: None,
        max_shrink_iters: 1000,
        max_shrink_time: 240_000,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let server = RefCell::new(None);
    let shrinking = AtomicBool::new(false);
    let runs = AtomicUsize::new(0);
    let result = runner.run(strategy, |case| {
        // Once a case failed, a candidate gets a few tries (a race need not happen each
        // time), and a failure retires the server, so candidates carry little history.
        let attempts = if shrinking.load(Ordering::Relaxed) {
            SHRINK_ATTEMPTS
        } else {
            1
        };
        for _ in 0..attempts {
            runs.fetch_add(1, Ordering::Relaxed);
            let found = attempt(&case, &mut server.borrow_mut());
            if !found.is_empty() {
                shrinking.store(true, Ordering::Relaxed);
                server.borrow_mut().take();
                return Err(TestCaseError::fail(lines(&found)));
            }
        }
        Ok(())
    });
    (result, runs.into_inner(), server.into_inner())
}

fn unit(n: usize) -> Result<(), String> {
    let s = settings();
    let (max_documents, max_twins) = (n % 9 / 3 + 1, n % 3 + 1);
    let count = UNIT.min(s.programs - n * UNIT);
    let started = Instant::now();
    let strategy = program::programs(max_documents, max_twins);
    let (result, runs, server) = seeded_unit(s.seed, n, count, &strategy, |program, server| {
        counted(check::check(program, &run::run(program, Some(server))))
    });
    let exit = server
        .map(|server| counted(check::exit(&server.finish())))
        .unwrap_or_default();
    println!(
        "model suite unit {n} (--max-documents {max_documents} --max-twins {max_twins}): \
         {} program runs in {:.1} s; {} answers computed alone so far",
        runs,
        started.elapsed().as_secs_f64(),
        fresh::runs()
    );
    let again = |what: &str| {
        format!(
            "Again: LEAN_BEAM_MODEL_SEED={} LEAN_BEAM_MODEL_PROGRAMS={} cargo test \
             --all-features --test lean_host model ({what})",
            s.seed, s.programs,
        )
    };
    match result {
        Ok(()) if exit.is_empty() => Ok(()),
        Ok(()) => Err(format!(
            "model suite unit {n}: the server its programs shared (--max-documents \
             {max_documents} --max-twins {max_twins}) did not end cleanly:\n{}\n{}",
            lines(&exit),
            again("every program passed")
        )),
        Err(TestError::Fail(violations, program)) => {
            let alone = (0..SHRINK_ATTEMPTS)
                .any(|_| !counted(check::check(&program, &run::run(&program, None))).is_empty());
            let alone = if alone {
                "it also fails on a server of its own"
            } else {
                "it failed on a server shared with earlier programs, and not in a few tries on \
                 one of its own"
            };
            Err(format!(
                "model suite: a program breaks the server's invariants (seed {}, unit {n}; \
                 {alone}).\nMinimal program:\n{program}Violations:\n{violations}\n{}",
                s.seed,
                again("the same programs")
            ))
        }
        Err(TestError::Abort(why)) => Err(format!("model suite unit {n} aborted: {why}")),
    }
}

pub fn lines(found: &[Violation]) -> String {
    let lines: Vec<String> = found.iter().map(|v| format!("  {v}")).collect();
    lines.join("\n")
}

/// Runs units until none is left, on [`PER_TEST`] threads: every test takes units from one
/// queue, so the work is shared however cargo schedules the tests.
fn shards() {
    if crate::harness::fake_only("the model suite") {
        return;
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // After a failure no unit starts: one shrunk program (and those found meanwhile) is the
    // report, not one per unit.
    static FAILED: AtomicBool = AtomicBool::new(false);
    let s = settings();
    let units = s.programs.div_ceil(UNIT);
    static ANNOUNCED: OnceLock<()> = OnceLock::new();
    ANNOUNCED.get_or_init(|| {
        println!(
            "model suite: seed {} (LEAN_BEAM_MODEL_SEED), {} programs (LEAN_BEAM_MODEL_PROGRAMS) \
             in {units} units",
            s.seed, s.programs
        );
    });
    let failures = share_units(units, PER_TEST, &NEXT, &FAILED, unit);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs units `0..units` on `threads` threads, each taking the next from `next` (shared by
/// every test of a suite, so cargo's parallel tests share the work), until none is left or one
/// failed (`failed`); the failures.
pub fn share_units(
    units: usize,
    threads: usize,
    next: &AtomicUsize,
    failed: &AtomicBool,
    unit: impl Fn(usize) -> Result<(), String> + Sync,
) -> Vec<String> {
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut failures = Vec::new();
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n >= units || failed.load(Ordering::Relaxed) {
                            return failures;
                        }
                        if let Err(failure) = unit(n) {
                            failed.store(true, Ordering::Relaxed);
                            failures.push(failure);
                        }
                    }
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap_or_else(|p| vec![panic_text(&p)]))
            .collect()
    })
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    format!(
        "a model suite thread panicked: {}",
        text.unwrap_or("(no message)")
    )
}

#[test]
fn shard_0() {
    shards();
}

#[test]
fn shard_1() {
    shards();
}

#[test]
fn shard_2() {
    shards();
}
