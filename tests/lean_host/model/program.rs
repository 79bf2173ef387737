//! Programs: a server configuration and the steps a client takes, drawn by proptest, shrunk by
//! it, and printed one step per line.
//!
//! Contract: a step names its workspace and file by raw indices reduced modulo the program's
//! counts, so shrinking the configuration never invalidates a step. A step that uses a handle
//! or cancels a call names an earlier step by a backwards index over the steps that qualify,
//! resolved statically ([`Program::producer`], [`Program::cancel_target`]): the same program
//! always means the same thing, whatever the timing; when the named step made no handle (it
//! failed, or was skipped itself) the step is skipped.

use std::fmt;

use proptest::prelude::*;

use super::texts::{ANCHORS, CONTINUATIONS, FILES, HOVERS, Text, VARIANTS};

/// How the server runs the program.
#[derive(Debug, Clone)]
pub struct Config {
    pub workspaces: usize,
    pub files: usize,
    /// Calls a client keeps outstanding at most (cancelled ones aside).
    pub window: usize,
    pub max_documents: usize,
    pub max_twins: usize,
}

/// A file of a workspace, by raw indices.
#[derive(Debug, Clone, Copy)]
pub struct At {
    ws: u8,
    file: u8,
}

/// One step of a program.
#[derive(Debug, Clone)]
pub enum Step {
    /// Writes the file's new text, then `lean_update` (the next write of it waits for that).
    Edit {
        at: At,
        text: Text,
    },
    Update {
        at: At,
    },
    Sync {
        at: At,
    },
    Refresh {
        at: At,
    },
    Close {
        at: At,
    },
    Save {
        at: At,
    },
    Hover {
        at: At,
        pos: u8,
    },
    Goals {
        at: At,
        pos: u8,
        after: bool,
    },
    /// `lean_run_at`, or `lean_run_at_handle` when `keep`.
    RunAt {
        at: At,
        anchor: u8,
        probe: u8,
        keep: bool,
    },
    /// `lean_run_with` (or `_linear`) on the handle of an earlier handle step.
    RunWith {
        from: u8,
        text: u8,
        linear: bool,
    },
    Release {
        from: u8,
    },
    Drop {
        ws: u8,
    },
    /// `notifications/cancelled` for an earlier call.
    Cancel {
        back: u8,
    },
}

/// A program.
#[derive(Debug, Clone)]
pub struct Program {
    pub config: Config,
    pub steps: Vec<Step>,
}

/// A step's workspace and file, reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Doc {
    pub ws: usize,
    pub file: usize,
}

impl Program {
    /// The file a step's `at` names.
    pub fn doc(&self, at: At) -> Doc {
        Doc {
            ws: at.ws as usize % self.config.workspaces,
            file: at.file as usize % self.config.files,
        }
    }

    pub fn ws(&self, ws: u8) -> usize {
        ws as usize % self.config.workspaces
    }

    /// The earlier step whose handle step `index` uses: `from` back over the handle steps.
    pub fn producer(&self, index: usize, from: u8) -> Option<usize> {
        let makers: Vec<usize> = (0..index)
            .filter(|&i| {
                matches!(
                    self.steps[i],
                    Step::RunAt { keep: true, .. } | Step::RunWith { .. }
                )
            })
            .collect();
        pick(&makers, from)
    }

    /// The earlier call step `index` cancels: `back` back over the calls (edits aside: an
    /// edit's update names the version of the text just written, so it must answer).
    pub fn cancel_target(&self, index: usize, back: u8) -> Option<usize> {
        let calls: Vec<usize> = (0..index)
            .filter(|&i| !matches!(self.steps[i], Step::Edit { .. } | Step::Cancel { .. }))
            .collect();
        pick(&calls, back)
    }
}

fn pick(candidates: &[usize], back: u8) -> Option<usize> {
    let n = candidates.len();
    (n > 0).then(|| candidates[n - 1 - back as usize % n])
}

fn at() -> impl Strategy<Value = At> {
    (0..2u8, 0..3u8).prop_map(|(ws, file)| At { ws, file })
}

fn text() -> impl Strategy<Value = Text> {
    (0..VARIANTS.len(), 0..=30u8).prop_map(|(v, slow)| Text {
        variant: VARIANTS[v],
        slow,
    })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (at(), text()).prop_map(|(at, text)| Step::Edit { at, text }),
        1 => at().prop_map(|at| Step::Update { at }),
        3 => at().prop_map(|at| Step::Sync { at }),
        1 => at().prop_map(|at| Step::Refresh { at }),
        1 => at().prop_map(|at| Step::Close { at }),
        2 => (at(), 0..HOVERS.len() as u8).prop_map(|(at, pos)| Step::Hover { at, pos }),
        2 => (at(), 0..2u8, any::<bool>())
            .prop_map(|(at, pos, after)| Step::Goals { at, pos, after }),
        6 => (at(), 0..ANCHORS.len() as u8, 0..4u8, any::<bool>()).prop_map(
            |(at, anchor, probe, keep)| Step::RunAt { at, anchor, probe, keep }
        ),
        3 => (0..4u8, 0..CONTINUATIONS.len() as u8, any::<bool>())
            .prop_map(|(from, text, linear)| Step::RunWith { from, text, linear }),
        1 => (0..4u8).prop_map(|from| Step::Release { from }),
        1 => (0..2u8).prop_map(|ws| Step::Drop { ws }),
        2 => (0..4u8).prop_map(|back| Step::Cancel { back }),
    ]
}

/// Programs of 2–40 steps under these budgets, most of them short: a program's fixed cost (a
/// `lake serve` per workspace) is most of its cost, and races need few steps; one in ten is
/// long.
pub fn programs(max_documents: usize, max_twins: usize) -> impl Strategy<Value = Program> {
    // A second workspace is a second `lake serve`, the dearest thing a program can ask for, and
    // races within one workspace are the likelier: one program in three has two.
    let workspaces = prop_oneof![2 => Just(1usize), 1 => Just(2usize)];
    let config =
        (workspaces, 1..=3usize, 1..=8usize).prop_map(move |(workspaces, files, window)| Config {
            workspaces,
            files,
            window,
            max_documents,
            max_twins,
        });
    let short = prop::collection::vec(step(), 2..=5);
    let more = prop::option::weighted(0.1, prop::collection::vec(step(), 0..=35));
    // A rare save per program at most: it runs `lake build`, the slowest thing a step can do.
    let save = prop::option::weighted(0.1, (0..40usize, at()));
    (config, short, more, save).prop_map(|(config, mut steps, more, save)| {
        steps.extend(more.into_iter().flatten());
        if let Some((index, at)) = save {
            steps.insert(index.min(steps.len()), Step::Save { at });
        }
        Program { config, steps }
    })
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "{} workspace(s), {} file(s), window {}, --max-documents {}, --max-twins {}",
            c.workspaces, c.files, c.window, c.max_documents, c.max_twins
        )?;
        for (i, step) in self.steps.iter().enumerate() {
            writeln!(f, "  #{i:<3} {}", self.describe(i, step))?;
        }
        Ok(())
    }
}

impl Program {
    /// One step, readably.
    pub fn describe(&self, index: usize, step: &Step) -> String {
        let doc = |at: At| {
            let d = self.doc(at);
            let name = FILES[d.file].trim_start_matches("Fixture/");
            format!("w{} {name}", d.ws)
        };
        let step_ref = |r: Option<usize>| r.map_or("(none: skipped)".into(), |r| format!("#{r}"));
        match step {
            Step::Edit { at, text } => format!(
                "edit        {} := {:?} (slow {}) + lean_update",
                doc(*at),
                text.variant,
                text.slow
            ),
            Step::Update { at } => format!("lean_update {}", doc(*at)),
            Step::Sync { at } => format!("lean_sync   {}", doc(*at)),
            Step::Refresh { at } => format!("lean_refresh {}", doc(*at)),
            Step::Close { at } => format!("lean_close  {}", doc(*at)),
            Step::Save { at } => format!("lean_save   {}", doc(*at)),
            Step::Hover { at, pos } => {
                let (l, c) = HOVERS[*pos as usize];
                format!("lean_hover  {} {l}:{c}", doc(*at))
            }
            Step::Goals { at, pos, after } => {
                let (l, c) = super::texts::GOALS[*pos as usize % 2];
                let mode = if *after { "after" } else { "before" };
                format!("lean_goals  {} {l}:{c} {mode}", doc(*at))
            }
            Step::RunAt {
                at,
                anchor,
                probe,
                keep,
            } => {
                let a = &ANCHORS[*anchor as usize];
                let tool = if *keep {
                    "lean_run_at_handle"
                } else {
                    "lean_run_at"
                };
                let probe = a.probes[*probe as usize % a.probes.len()];
                format!("{tool} {} {}:{} {probe:?}", doc(*at), a.line, a.character)
            }
            Step::RunWith { from, text, linear } => {
                let tool = if *linear {
                    "lean_run_with_linear"
                } else {
                    "lean_run_with"
                };
                let text = CONTINUATIONS[*text as usize];
                let from = step_ref(self.producer(index, *from));
                format!("{tool} handle of {from} {text:?}")
            }
            Step::Release { from } => {
                format!(
                    "lean_release handle of {}",
                    step_ref(self.producer(index, *from))
                )
            }
            Step::Drop { ws } => format!("lean_drop_workspace w{}", self.ws(*ws)),
            Step::Cancel { back } => {
                format!("cancel      {}", step_ref(self.cancel_target(index, *back)))
            }
        }
    }
}
