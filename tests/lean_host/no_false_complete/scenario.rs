//! Scenarios: what the adversary writes and asks, drawn by proptest, shrunk by it, and printed
//! one step per line; and the texts it writes, whose meaning for Lean is known.
//!
//! Contract: a project holds `Fixture/Main.lean`, which imports `Fixture.Dep`, and
//! `Fixture/Dep.lean`. Main's texts differ in what the fake makes of them — clean, an error, one
//! more definition, a worker that crashes on every elaboration or once, a header Lake cannot set
//! up (it imports a module no package provides: set-up depends on the header and the
//! configuration alone, so the fake's `setup-fail` comes with a header of its own) — and in a
//! `slow` directive of 0–500 ms (most of them small), which changes nothing but
//! timing ([`canonical`] sets it to 0). Every text has a diagnostic that only a Lake
//! configuration with `autoImplicit = false` shows, so a configuration edit changes Lean's
//! answer. Steps are writes (Main, Dep, the lakefile, by another writer: atomic renames), the
//! queries of Main (`lean_sync`, `lean_refresh`, `lean_update`, `lean_hover`), a sync of Dep
//! (which saves it, so Lean tells Main its imports are stale), and a race: a sync of Main, a new
//! text written at once, then a hover.

use std::fmt;

use proptest::prelude::*;

/// The file under test and its import.
pub const MAIN: &str = "Fixture/Main.lean";
/// See [`MAIN`].
pub const DEP: &str = "Fixture/Dep.lean";

/// What a text of Main says, besides its delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    Clean,
    /// The first bullet's tactic fails.
    Error,
    /// One more definition.
    Extra,
    /// The worker crashes on every elaboration.
    Crash,
    /// The worker crashes once in the server's life (per file), then Lean checks it.
    CrashOnce,
    /// Lake cannot set the file up.
    SetupFail,
}

const VARIANTS: [Variant; 6] = [
    Variant::Clean,
    Variant::Error,
    Variant::Extra,
    Variant::Crash,
    Variant::CrashOnce,
    Variant::SetupFail,
];

/// One text of Main: a variant and the delay of its theorem, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text {
    pub variant: Variant,
    pub slow: u16,
}

/// Main before any write.
pub const INITIAL: Text = Text {
    variant: Variant::Clean,
    slow: 0,
};

/// Where hovers ask (inside every text).
pub const HOVER: (u32, u32) = (11, 0);

/// Main's text.
pub fn render(text: Text) -> String {
    // Lake's set-up depends on the header (and the configuration) alone: a text whose set-up
    // fails imports what no package provides, so Lean sets it up anew.
    let setup = match text.variant {
        Variant::SetupFail => "-- fake: setup-fail \"no such package\"\nimport Missing.Package\n",
        _ => "",
    };
    let first = match text.variant {
        Variant::Error => "· exact hq -- fake: error \"boom\"",
        _ => "· exact hq",
    };
    let crash = match text.variant {
        Variant::Crash => " -- fake: crash",
        Variant::CrashOnce => " -- fake: crash once",
        _ => "",
    };
    let extra = match text.variant {
        Variant::Extra => "def extra : Nat := useDep + 1\n",
        _ => "",
    };
    format!(
        "{setup}import Fixture.Dep\n\
         \n\
         namespace Main\n\
         \n\
         -- fake: slow {slow}\n\
         theorem swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n\
         \x20 constructor\n\
         \x20 {first}\n\
         \x20 · exact hp\n\
         \n\
         def useDep : Nat := Dep.value{crash}\n\
         \n\
         theorem probe_y : y = y := rfl -- fake: error \"unknown identifier 'y'\" on \"y\" when \"autoImplicit=false\"\n\
         {extra}\
         \n\
         end Main\n",
        slow = text.slow,
    )
}

/// The text a fresh server checks for `text`: the same without delay.
pub fn canonical(text: Text) -> String {
    render(Text { slow: 0, ..text })
}

/// Dep's text: its value.
pub fn dep(value: u8) -> String {
    format!("namespace Dep\n\ndef value : Nat := {value}\n\nend Dep\n")
}

/// The lakefile: the fixture's, or with `autoImplicit = false` for the library.
pub fn lakefile(strict: bool) -> String {
    let plain = "name = \"fixture\"\nversion = \"0.1.0\"\ndefaultTargets = [\"Fixture\"]\n\n\
                 [[lean_lib]]\nname = \"Fixture\"\n";
    if strict {
        format!("{plain}leanOptions = {{autoImplicit = false}}\n")
    } else {
        plain.to_owned()
    }
}

/// One step.
#[derive(Debug, Clone)]
pub enum Step {
    /// Another writer replaces Main.
    Write(Text),
    /// Another writer replaces Dep.
    Dep(u8),
    /// Another writer replaces the lakefile.
    Config(bool),
    Sync,
    Refresh,
    Update,
    Hover,
    /// `lean_sync` of Dep: Lean is told it changed.
    SyncDep,
    /// `lean_sync` of Main, the text replaced at once, then `lean_hover`.
    Race(Text),
}

/// A scenario: calls kept in flight at most, and the steps.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub window: usize,
    pub steps: Vec<Step>,
}

fn text() -> impl Strategy<Value = Text> {
    let slow = prop_oneof![
        6 => 0..=20u16,
        3 => 21..=100u16,
        1 => 101..=500u16,
    ];
    (0..VARIANTS.len(), slow).prop_map(|(v, slow)| Text {
        variant: VARIANTS[v],
        slow,
    })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => text().prop_map(Step::Write),
        1 => (1..=3u8).prop_map(Step::Dep),
        1 => any::<bool>().prop_map(Step::Config),
        4 => Just(Step::Sync),
        1 => Just(Step::Refresh),
        1 => Just(Step::Update),
        2 => Just(Step::Hover),
        1 => Just(Step::SyncDep),
        2 => text().prop_map(Step::Race),
    ]
}

/// Scenarios of 2–8 steps, 1–6 calls in flight.
pub fn scenarios() -> impl Strategy<Value = Scenario> {
    (1..=6usize, prop::collection::vec(step(), 2..=8))
        .prop_map(|(window, steps)| Scenario { window, steps })
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "window {}", self.window)?;
        for (i, step) in self.steps.iter().enumerate() {
            let shown = match step {
                Step::Write(t) => format!("write Main := {:?} (slow {})", t.variant, t.slow),
                Step::Dep(n) => format!("write Dep := value {n}"),
                Step::Config(strict) => format!("write lakefile (autoImplicit false: {strict})"),
                Step::Sync => "lean_sync Main".into(),
                Step::Refresh => "lean_refresh Main".into(),
                Step::Update => "lean_update Main".into(),
                Step::Hover => "lean_hover Main".into(),
                Step::SyncDep => "lean_sync Dep".into(),
                Step::Race(t) => format!(
                    "lean_sync Main, write Main := {:?} (slow {}) at once, lean_hover Main",
                    t.variant, t.slow
                ),
            };
            writeln!(f, "  #{i:<3} {shown}")?;
        }
        Ok(())
    }
}
