//! The texts programs write and the probes they run, with what the fake answers for each known
//! by construction.
//!
//! Contract: every file's family has one layout (the lines below never move), so the positions
//! programs ask at are valid in every text; the variants differ only in what those lines say. A
//! twin holds the real text before its anchor, and every anchor is in the theorem: the
//! definitions after it are in no twin, so a hover on them resolves to the real document alone
//! (the fake resolves names over every open document, twins included). The files' texts differ
//! only in their namespace ([`namespace`]), so an answer about one file is another's with the
//! name replaced. Jitter is a `slow` directive on its own line before the theorem;
//! [`canonical`] sets it to 0, which changes nothing but timing (the fake's only use of it), so
//! the oracle's fresh runs are shared by every jitter of one text.

use serde_json::{Value, json};

/// The files a program may use, each buildable by the fixture's `Fixture` library (a save needs
/// a module); each text's namespace is its file's name, so no name of one resolves in another.
pub const FILES: [&str; 3] = [
    "Fixture/ModelA.lean",
    "Fixture/ModelB.lean",
    "Fixture/ModelC.lean",
];

/// What a text says besides the jitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    Clean,
    /// One more definition at the end.
    Extra,
    /// The first bullet's tactic fails.
    Error,
    /// The second bullet is a `sorry`.
    Sorry,
    /// Elaborating the last definition takes 25 ms more.
    Slow,
}

pub const VARIANTS: [Variant; 5] = [
    Variant::Clean,
    Variant::Extra,
    Variant::Error,
    Variant::Sorry,
    Variant::Slow,
];

/// One text of a file: a variant and the jitter of its theorem, in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text {
    pub variant: Variant,
    pub slow: u8,
}

/// What every file holds before a program writes it.
pub const INITIAL: Text = Text {
    variant: Variant::Clean,
    slow: 0,
};

/// The one name that differs between the files' texts: their namespace.
pub fn namespace(file: usize) -> String {
    format!("Model{}", (b'A' + file as u8) as char)
}

/// The text of `file` (see the layout in the contract: lines 4–6 are the proof, 9 and 11 the
/// definitions hovers ask about).
pub fn render(file: usize, text: Text) -> String {
    let first = match text.variant {
        Variant::Error => "  · exact hq -- fake: error \"boom\"",
        _ => "  · exact hq",
    };
    let second = match text.variant {
        Variant::Sorry => "  · sorry",
        _ => "  · exact hp",
    };
    let slow_use = match text.variant {
        Variant::Slow => " -- fake: slow 25",
        _ => "",
    };
    let extra = match text.variant {
        Variant::Extra => "def extra : Nat := useTwice + 1",
        _ => "",
    };
    format!(
        "namespace {ns}\n\
         \n\
         -- fake: slow {slow}\n\
         theorem swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n\
         \x20 constructor\n\
         {first}\n\
         {second}\n\
         \n\
         /-- Twice a number. -/\n\
         def twice (n : Nat) : Nat := 2 * n\n\
         \n\
         def useTwice : Nat := twice 1{slow_use}\n\
         {extra}\n\
         \n\
         end {ns}\n",
        ns = namespace(file),
        slow = text.slow,
    )
}

/// The text the oracle runs alone for `text`: the same with no jitter.
pub fn canonical(file: usize, text: Text) -> String {
    render(file, Text { slow: 0, ..text })
}

/// Hover positions: a definition's own name, and a use of it.
pub const HOVERS: [(u32, u32); 2] = [(9, 5), (11, 24)];

/// Goal positions: the first tactic, and the first bullet's tactic.
pub const GOALS: [(u32, u32); 2] = [(4, 2), (5, 4)];

/// Where runs are anchored, and the probes tried there.
pub struct Anchor {
    pub line: u32,
    pub character: u32,
    pub probes: &'static [&'static str],
    /// The goals there, in the verdict model.
    pub goals: &'static [Goal],
}

/// The failing probe: the fake reports exactly this error for it.
pub const MISMATCH: &str = "exact hp -- fake: error \"type mismatch\"";

pub const ANCHORS: [Anchor; 2] = [
    Anchor {
        line: 4,
        character: 2,
        probes: &["constructor", "exact ⟨hq, hp⟩", "skip", MISMATCH],
        goals: &[Goal::And],
    },
    Anchor {
        line: 5,
        character: 2,
        probes: &["· exact hq", "skip", MISMATCH],
        goals: &[Goal::Left, Goal::Right],
    },
];

/// What `lean_run_with` continues a handle with.
pub const CONTINUATIONS: [&str; 4] = ["· exact hq", "· exact hp", "skip", MISMATCH];

/// A goal of the theorem, as far as the verdicts need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// `q ∧ p`
    And,
    /// `case left ⊢ q`
    Left,
    /// `case right ⊢ p`
    Right,
}

/// A run's verdict: `success` and `messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub success: bool,
    pub messages: Value,
}

/// The verdict of `step` run on `goals` by the fake's tactic rules (README "Goals"), and the
/// goals after it; `None` where the suite does not claim to know (a tactic on no goals).
pub fn verdict(goals: &[Goal], step: &str) -> Option<(Verdict, Vec<Goal>)> {
    let ok = |after: Vec<Goal>| {
        Some((
            Verdict {
                success: true,
                messages: json!([]),
            },
            after,
        ))
    };
    match step {
        "skip" => ok(goals.to_vec()),
        _ if goals.is_empty() => None,
        MISMATCH => Some((
            Verdict {
                success: false,
                messages: json!([{"severity": "error", "text": "type mismatch"}]),
            },
            goals.to_vec(),
        )),
        "constructor" if goals[0] == Goal::And => {
            ok([&[Goal::Left, Goal::Right], &goals[1..]].concat())
        }
        // The fake's `constructor` leaves a goal it cannot split as it is.
        "constructor" => ok(goals.to_vec()),
        // The fake's `exact` closes the first goal, whatever the term.
        _ if step.contains("exact") => ok(goals[1..].to_vec()),
        _ => None,
    }
}

/// The verdict of a chain of steps from an anchor's goals (each earlier step succeeded, since
/// only a success makes a handle).
pub fn chain_verdict(anchor: usize, steps: &[&str]) -> Option<Verdict> {
    let mut goals = ANCHORS[anchor].goals.to_vec();
    let mut last = None;
    for step in steps {
        let (verdict, after) = verdict(&goals, step)?;
        goals = after;
        last = Some(verdict);
    }
    last
}
