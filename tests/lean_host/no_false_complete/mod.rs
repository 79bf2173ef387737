//! No false `complete` (issue 17, acceptance; issue 25): seeded adversarial scenarios over the
//! fake, in which no result labelled `complete` may say other than a fresh server says of the
//! inputs its receipt names, and no verdict may be clean that Lean's axioms do not confirm.
//!
//! A scenario (`scenario`) mixes edits racing queries (a window of 1–6 calls in flight, and a
//! race step: a sync, the file rewritten at once, a hover), elaboration delays of 0–500 ms
//! (most small), stale notices (a sync or build of an import saves it), worker crashes (every
//! time, or once), header failures (Lake's set-up, a module of the import chain Main → Dep →
//! Base that does not build, Lean's own misspelt imports), a file read by `include_str`, Lake
//! configuration edits (that change what Lean reports), another writer changing any of these
//! files between calls, runs and edits tried where Lean hides a `sorry` from its warnings.
//! `play` runs it; `oracle` holds every receipt to a fresh server's sync of the text, closure,
//! note and configuration the receipt names, header failures to never being crashes or
//! revived, and clean verdicts to Lean's `#print axioms`, and counts the syncs not labelled
//! complete that a fresh server would have called complete.
//!
//! Each unit runs in one era ([`ERAS`]: who hears of a saved import, the 2022 watchdog nobody;
//! how Lake's set-up reports an import that does not build), its fresh servers too. The
//! machinery is the model suite's (`model`): its server driver and projects, its seeded units
//! (a proptest runner each, sharing one server while its scenarios pass, a failure shrunk and
//! printed with the seed) and its queue of units shared by every test's threads. Settings:
//!
//! - `LEAN_BEAM_RECEIPT_SCENARIOS`: scenarios in all (default 2000);
//! - `LEAN_BEAM_RECEIPT_SEED`: the seed (a random one otherwise); the run prints it, and a
//!   failure names it with the command that draws the same scenarios again.

mod oracle;
mod play;
mod scenario;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use proptest::test_runner::TestError;

use crate::model::era::{Build, Era, Notice};
use crate::model::{env_number, env_seed, seeded_unit, share_units};

/// The eras units cycle through: Lake builds imports at set-up in each (so a module of the
/// chain that does not build fails Main's header), each way it reports one that does not.
const ERAS: [Era; 4] = [
    Era {
        notice: Notice::Closure,
        build: Build::New,
    },
    Era {
        notice: Notice::None,
        build: Build::Intermediate,
    },
    Era {
        notice: Notice::None,
        build: Build::New,
    },
    Era {
        notice: Notice::Closure,
        build: Build::Intermediate,
    },
];

const DEFAULT_SCENARIOS: usize = 2000;
/// Scenarios per unit (one server, one proptest runner).
const UNIT: usize = 50;
/// Threads each test runs units on; most of a scenario is waiting on processes.
const PER_TEST: usize = 3;

struct Settings {
    seed: u64,
    scenarios: usize,
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let scenarios = env_number("LEAN_BEAM_RECEIPT_SCENARIOS");
        Settings {
            seed: env_seed("LEAN_BEAM_RECEIPT_SEED"),
            scenarios: scenarios.map_or(DEFAULT_SCENARIOS, |n| n as usize),
        }
    })
}

fn again(what: &str) -> String {
    let s = settings();
    format!(
        "Again: LEAN_BEAM_RECEIPT_SEED={} LEAN_BEAM_RECEIPT_SCENARIOS={} cargo test \
         --all-features --test lean_host no_false_complete ({what})",
        s.seed, s.scenarios
    )
}

/// Runs unit `n`'s scenarios on one server while they pass; the report of the minimal failing
/// one.
fn unit(n: usize) -> Result<(), String> {
    let s = settings();
    let count = UNIT.min(s.scenarios - n * UNIT);
    let started = Instant::now();
    let era = Era::of_unit(n, &ERAS);
    let strategy = scenario::scenarios();
    let (result, runs, server) = seeded_unit(s.seed, n, count, &strategy, |scenario, server| {
        oracle::check(&play::play(scenario, server, era))
    });
    drop(server.map(|server| server.driver.finish()));
    println!(
        "no-false-complete unit {n} ({era}): {runs} scenario runs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    match result {
        Ok(()) => Ok(()),
        Err(TestError::Fail(violations, scenario)) => {
            let alone =
                (0..3).any(|_| !oracle::check(&play::play(&scenario, &mut None, era)).is_empty());
            let alone = if alone {
                "it also fails on a server of its own"
            } else {
                "it failed on a server shared with earlier scenarios, and not in a few tries on \
                 one of its own"
            };
            Err(format!(
                "no false complete: a receipt says complete where a fresh server does not \
                 agree, or a verdict Lean's axioms do not confirm (seed {}, unit {n}, {era}; \
                 {alone}).\nMinimal scenario:\n{scenario}\
                 Violations:\n{violations}\n{}",
                s.seed,
                again("the same scenarios")
            ))
        }
        Err(TestError::Abort(why)) => Err(format!("no-false-complete unit {n} aborted: {why}")),
    }
}

/// Runs units until none is left (see `model::share_units`), then reports the counts so far.
fn shards() {
    if crate::harness::fake_only("the no-false-complete suite") {
        return;
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    static FAILED: AtomicBool = AtomicBool::new(false);
    static ANNOUNCED: OnceLock<()> = OnceLock::new();
    let s = settings();
    let units = s.scenarios.div_ceil(UNIT);
    ANNOUNCED.get_or_init(|| {
        println!(
            "no-false-complete suite: seed {} (LEAN_BEAM_RECEIPT_SEED), {} scenarios \
             (LEAN_BEAM_RECEIPT_SCENARIOS) in {units} units",
            s.seed, s.scenarios
        );
    });
    let failures = share_units(units, PER_TEST, &NEXT, &FAILED, unit);
    let t = &oracle::TALLY;
    let (not_complete, fresh_complete) = (
        t.not_complete.load(Ordering::Relaxed),
        t.fresh_complete.load(Ordering::Relaxed),
    );
    println!(
        "no-false-complete suite so far: {} receipts, {} complete (each agreeing with a fresh \
         server); {not_complete} syncs not complete, of which {fresh_complete} ({:.1}%) a fresh \
         server calls complete; {} fresh servers; {} clean verdicts, each confirmed by Lean's \
         axioms ({} questions asked)",
        t.receipts.load(Ordering::Relaxed),
        t.complete.load(Ordering::Relaxed),
        100.0 * fresh_complete as f64 / not_complete.max(1) as f64,
        t.fresh_runs.load(Ordering::Relaxed),
        t.clean_verdicts.load(Ordering::Relaxed),
        t.axioms_asked.load(Ordering::Relaxed),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn shard_0() {
    shards();
}

#[test]
fn shard_1() {
    shards();
}
