//! Scenarios: what the adversary writes and asks, drawn by proptest, shrunk by it, and printed
//! one step per line; and the texts it writes, whose meaning for Lean is known.
//!
//! Contract: a project holds `Fixture/Main.lean`, which imports `Fixture.Dep`, which imports
//! `Fixture.Base` (a chain A→B→C of the project's modules), and reads `Fixture/Data/note.txt`
//! with `include_str`. Main's texts differ in what the fake makes of them, and every text has
//! the same lines, so positions hold in each:
//! - clean, an error, one more definition, a worker that crashes on every elaboration or once;
//! - a header Lean cannot process: Lake's (a failed `lake setup-file`: set-up depends on the
//!   header, the configuration and the imports' builds, so such a text imports what no package
//!   provides, and Lean sets it up anew), or Lean's own (a misspelt import after a comment, an
//!   import of an unknown prefix at the file's first token);
//! - a `sorry` Lean does not warn about where a probe or candidate lands: `warn.sorry false` (in
//!   the file, or a `set_option … in` prefix of the theorem), `pp.sorrySource`, `pp.all`, the
//!   theorem under `#guard_msgs (drop warning)`, or `hidden`, the lemma probes may use, proved by
//!   `sorry`;
//!
//! and in a `slow` directive of 0–500 ms (most of them small), which changes nothing but timing
//! ([`canonical`] sets it to 0). Every text has a diagnostic that only a Lake configuration with
//! `autoImplicit = false` shows, so a configuration edit changes Lean's answer. Dep and Base
//! hold a value or an error (Lake cannot build such a module, so every file importing it fails
//! its header: the set-up builds imports in every era the suite plays); the note holds text, a
//! line that makes Lean report an error where it is read, or is absent. Steps are writes (Main,
//! Dep, Base, the note, the lakefile, by another writer: atomic renames), the queries of Main
//! (`lean_sync`, `lean_refresh`, `lean_update`, `lean_hover`), runs at Main's last bullet
//! (`lean_run_at`) and edits of its tactic tried (`lean_try_edit`), syncs of Dep and Base (a
//! save: Lean may tell Main its imports are stale) and a build of Base (`lean_save`), and a race:
//! a sync of Main, a new text written at once, then a hover.

use std::fmt;

use proptest::prelude::*;

/// The file under test and the files it depends on.
pub const MAIN: &str = "Fixture/Main.lean";
/// See [`MAIN`].
pub const DEP: &str = "Fixture/Dep.lean";
/// See [`MAIN`].
pub const BASE: &str = "Fixture/Base.lean";
/// See [`MAIN`]: the file Main reads with `include_str`.
pub const NOTE: &str = "Fixture/Data/note.txt";

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
    /// An import of a module that does not exist, after a comment (Lean's own header error).
    BadImport,
    /// An import of an unknown prefix, the file's first token (Lean's own header error).
    BadPrefix,
    /// `set_option warn.sorry false` before the theorem.
    QuietSorry,
    /// `set_option warn.sorry false in` the theorem.
    QuietSorryIn,
    /// `set_option pp.sorrySource true`: the warning names the `sorry`'s source.
    SorrySource,
    /// `set_option pp.all true`: the warning prints `sorryAx`.
    PpAll,
    /// The theorem under `#guard_msgs (drop warning)`: the warning is deleted.
    GuardDrop,
    /// `hidden` is proved by `sorry` (Lean warns there, not where it is used).
    SorryLemma,
}

const VARIANTS: [Variant; 14] = [
    Variant::Clean,
    Variant::Error,
    Variant::Extra,
    Variant::Crash,
    Variant::CrashOnce,
    Variant::SetupFail,
    Variant::BadImport,
    Variant::BadPrefix,
    Variant::QuietSorry,
    Variant::QuietSorryIn,
    Variant::SorrySource,
    Variant::PpAll,
    Variant::GuardDrop,
    Variant::SorryLemma,
];

impl Variant {
    /// Whether Lean cannot process the header of a text of this variant, whatever the imports.
    pub fn header_fails(self) -> bool {
        matches!(
            self,
            Variant::SetupFail | Variant::BadImport | Variant::BadPrefix
        )
    }

    /// Whether a text of this variant crashes Lean's worker.
    pub fn crashes(self) -> bool {
        matches!(self, Variant::Crash | Variant::CrashOnce)
    }
}

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

/// Where hovers ask (inside every text: `useDep`).
pub const HOVER: (u32, u32) = (15, 4);

/// Main's last bullet, `  · exact hp`: where runs are anchored (its first character), and the
/// span of its tactic, which edits replace.
pub const BULLET: u32 = 13;
/// See [`BULLET`].
pub const TACTIC: (u32, u32) = (4, 12);

/// What runs try at the last bullet (its goal is `p`).
pub const PROBES: [&str; 5] = [
    "· exact hp",
    "· sorry",
    "· exact hidden _ hp",
    "· assumption",
    "· exact hq -- fake: error \"type mismatch\"",
];

/// What edits put in place of the last bullet's tactic.
pub const CANDIDATES: [&str; 5] = [
    "exact hp",
    "sorry",
    "exact hidden _ hp",
    "assumption",
    "exact hq -- fake: error \"type mismatch\"",
];

/// Main's text.
pub fn render(text: Text) -> String {
    let v = text.variant;
    let first_line = match v {
        Variant::SetupFail => "-- fake: setup-fail \"no such package\"",
        Variant::BadPrefix => "import Fixtur.Dep",
        _ => "-- The file under test.",
    };
    let more_imports = match v {
        Variant::SetupFail => "import Missing.Package",
        Variant::BadImport => "import Fixture.Dpe",
        _ => "-- (one import)",
    };
    let hidden = match v {
        Variant::SorryLemma => "sorry",
        _ => "hp",
    };
    let option = match v {
        Variant::QuietSorry => "set_option warn.sorry false",
        Variant::QuietSorryIn => "set_option warn.sorry false in",
        Variant::SorrySource => "set_option pp.sorrySource true",
        Variant::PpAll => "set_option pp.all true",
        Variant::GuardDrop => "#guard_msgs (drop warning) in",
        _ => "",
    };
    let first = match v {
        Variant::Error => "· exact hq -- fake: error \"boom\"",
        _ => "· exact hq",
    };
    let crash = match v {
        Variant::Crash => " -- fake: crash",
        Variant::CrashOnce => " -- fake: crash once",
        _ => "",
    };
    let extra = match v {
        Variant::Extra => "def extra : Nat := useDep + 1\n",
        _ => "",
    };
    format!(
        "{first_line}\n\
         import Fixture.Dep\n\
         {more_imports}\n\
         \n\
         namespace Main\n\
         \n\
         theorem hidden (p : Prop) (hp : p) : p := {hidden}\n\
         def note : String := include_str \"Data/note.txt\"\n\
         {option}\n\
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

/// What Dep or Base holds: a value, or an error (Lake cannot build it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Module {
    Value(u8),
    Broken,
}

/// Dep's text: it imports Base.
pub fn dep(module: Module) -> String {
    let value = match module {
        Module::Value(n) => format!("Base.value + {n}"),
        Module::Broken => "oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"".into(),
    };
    format!("import Fixture.Base\n\nnamespace Dep\n\ndef value : Nat := {value}\n\nend Dep\n")
}

/// Base's text.
pub fn base(module: Module) -> String {
    let value = match module {
        Module::Value(n) => n.to_string(),
        Module::Broken => "oops -- fake: error \"unknown identifier 'oops'\" on \"oops\"".into(),
    };
    format!("namespace Base\n\ndef value : Nat := {value}\n\nend Base\n")
}

/// What the note holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Note {
    Plain(u8),
    /// A line that makes Lean report an error where the note is read.
    Error,
    Absent,
}

/// The note's text (none when absent).
pub fn note(note: Note) -> Option<String> {
    match note {
        Note::Plain(n) => Some(format!("note {n}\n")),
        Note::Error => Some("-- fake: error \"a bad note\"\n".into()),
        Note::Absent => None,
    }
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
    Dep(Module),
    /// Another writer replaces Base.
    Base(Module),
    /// Another writer replaces (or removes) the note.
    Note(Note),
    /// Another writer replaces the lakefile.
    Config(bool),
    Sync,
    Refresh,
    Update,
    Hover,
    /// `lean_run_at` at the last bullet, with [`PROBES`]`[n]`.
    Run(u8),
    /// `lean_try_edit` of the last bullet's tactic, with these [`CANDIDATES`].
    TryEdit(Vec<u8>),
    /// `lean_sync` of Dep: Lean is told it changed.
    SyncDep,
    /// `lean_sync` of Base: Lean is told it changed.
    SyncBase,
    /// `lean_save` of Base: Lake builds it, Lean is told.
    SaveBase,
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

fn module() -> impl Strategy<Value = Module> {
    prop_oneof![3 => (1..=2u8).prop_map(Module::Value), 1 => Just(Module::Broken)]
}

fn a_note() -> impl Strategy<Value = Note> {
    prop_oneof![
        2 => (1..=2u8).prop_map(Note::Plain),
        1 => Just(Note::Error),
        1 => Just(Note::Absent),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => text().prop_map(Step::Write),
        1 => module().prop_map(Step::Dep),
        1 => module().prop_map(Step::Base),
        1 => a_note().prop_map(Step::Note),
        1 => any::<bool>().prop_map(Step::Config),
        4 => Just(Step::Sync),
        1 => Just(Step::Refresh),
        1 => Just(Step::Update),
        2 => Just(Step::Hover),
        2 => (0..PROBES.len() as u8).prop_map(Step::Run),
        2 => prop::collection::vec(0..CANDIDATES.len() as u8, 1..=2).prop_map(Step::TryEdit),
        1 => Just(Step::SyncDep),
        1 => Just(Step::SyncBase),
        1 => Just(Step::SaveBase),
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
                Step::Dep(m) => format!("write Dep := {m:?}"),
                Step::Base(m) => format!("write Base := {m:?}"),
                Step::Note(n) => format!("write note := {n:?}"),
                Step::Config(strict) => format!("write lakefile (autoImplicit false: {strict})"),
                Step::Sync => "lean_sync Main".into(),
                Step::Refresh => "lean_refresh Main".into(),
                Step::Update => "lean_update Main".into(),
                Step::Hover => "lean_hover Main".into(),
                Step::Run(p) => format!("lean_run_at Main {:?}", PROBES[*p as usize]),
                Step::TryEdit(cs) => {
                    let cs: Vec<&str> = cs.iter().map(|c| CANDIDATES[*c as usize]).collect();
                    format!("lean_try_edit Main {cs:?}")
                }
                Step::SyncDep => "lean_sync Dep".into(),
                Step::SyncBase => "lean_sync Base".into(),
                Step::SaveBase => "lean_save Base".into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_keeps_the_lines_runs_and_hovers_ask_at() {
        for variant in VARIANTS {
            let text = render(Text { variant, slow: 7 });
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines[BULLET as usize], "  · exact hp", "{variant:?}");
            assert!(
                lines[HOVER.0 as usize].starts_with("def useDep"),
                "{variant:?}"
            );
        }
    }
}
