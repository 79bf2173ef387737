//! Plays one scenario on a fresh project, on the unit's server, several calls in flight, and
//! keeps what the oracle needs: every call and its answer, every text, module, note and
//! configuration written, by hash, and what the scenario's `lake serve`s were sent.
//!
//! Contract: a call waits only for room in the window, never for time; writes are atomic (a
//! rename, or a removal). A hover or a run passes the highest version of Main any answer named
//! so far (1 before any); an edit names the text last written to Main as its base. After the
//! last step every answer is awaited, then the workspace is dropped (a fence: nothing of the
//! scenario reaches the next one on the same server).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::scenario::{
    self, BASE, BULLET, CANDIDATES, DEP, HOVER, INITIAL, MAIN, Module, NOTE, Note, PROBES,
    Scenario, Step, TACTIC, Text,
};
use crate::harness::sha256_hex;
use crate::model::driver::Driver;
use crate::model::era::Era;
use crate::model::project::{Project, project, scratch};
use crate::model::revivals::Revival;

/// The server a unit's scenarios share, its era, and where its `lake` processes trace.
pub struct Server {
    pub driver: Driver,
    era: Era,
    pub traces: tempfile::TempDir,
}

impl Server {
    pub fn start(era: Era) -> Server {
        let traces = scratch();
        let driver = Driver::start(&[], &[], era, traces.path());
        Server {
            driver,
            era,
            traces,
        }
    }
}

/// One call and its answer.
pub struct Call {
    pub step: usize,
    pub tool: &'static str,
    /// The file it is about.
    pub file: &'static str,
    /// A run's probe.
    pub probe: Option<&'static str>,
    /// An edit's candidates, and the text it named as its base.
    pub candidates: Vec<&'static str>,
    pub base: Option<Text>,
    /// The answer's structured content, and whether it is an error; none when it never came.
    pub answer: Option<(Value, bool)>,
}

/// What the oracle needs of a played scenario.
pub struct Played {
    pub era: Era,
    pub calls: Vec<Call>,
    /// Main's texts by their SHA-256.
    pub texts: HashMap<String, Text>,
    /// Main's texts by the FNV-1a 64 the fake's trace names them by.
    pub texts_fnv: HashMap<String, Text>,
    /// Dep's and Base's contents by the SHA-256 of their text.
    pub deps: HashMap<String, Module>,
    pub bases: HashMap<String, Module>,
    /// The note's contents by the SHA-256 of its text.
    pub notes: HashMap<String, Note>,
    /// The lakefile (strict or not) by the configuration's hash.
    pub configs: HashMap<String, bool>,
    /// The server hung or ended.
    pub broken: Option<String>,
    /// What the scenario's `lake serve`s sent that Lean never sends (the Lean contract).
    pub contract: Vec<String>,
    /// Real documents the host gave the text they already had (see `model::revivals`).
    pub revivals: Vec<Revival>,
}

/// The configuration hash of `root` as the host computes it (`session/fingerprint.rs`): per
/// file, its name, 0, then 1, its length (8 bytes LE) and contents, or 0 when absent.
pub fn config_sha256(root: &Path) -> String {
    let mut bytes = Vec::new();
    for name in [
        "lakefile.toml",
        "lakefile.lean",
        "lake-manifest.json",
        "lean-toolchain",
    ] {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        match std::fs::read(root.join(name)) {
            Ok(contents) => {
                bytes.push(1);
                bytes.extend_from_slice(&(contents.len() as u64).to_le_bytes());
                bytes.extend_from_slice(&contents);
            }
            Err(_) => bytes.push(0),
        }
    }
    sha256_hex(&bytes)
}

/// The inputs of a project: Main's text, Dep, Base, the note and the lakefile.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Files {
    pub main: String,
    pub dep: Module,
    pub base: Module,
    pub note: Note,
    pub strict: bool,
}

/// A project with the files as given.
pub fn prepared(files: &Files) -> Project {
    let project = project();
    write(project.root(), MAIN, &files.main);
    write(project.root(), DEP, &scenario::dep(files.dep));
    write(project.root(), BASE, &scenario::base(files.base));
    write_note(project.root(), files.note);
    write(
        project.root(),
        "lakefile.toml",
        &scenario::lakefile(files.strict),
    );
    project
}

/// The files of a scenario's project before its first step.
pub fn initial() -> Files {
    Files {
        main: scenario::render(INITIAL),
        dep: Module::Value(1),
        base: Module::Value(1),
        note: Note::Plain(1),
        strict: false,
    }
}

/// Replaces a file of `root` at once (a rename).
fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
    let temporary = root.join(".no-false-complete-write");
    std::fs::write(&temporary, text).expect("write a file");
    std::fs::rename(&temporary, path).expect("replace the file");
}

fn write_note(root: &Path, note: Note) {
    match scenario::note(note) {
        Some(text) => write(root, NOTE, &text),
        None => {
            let _ = std::fs::remove_file(root.join(NOTE));
        }
    }
}

struct Player<'a> {
    driver: &'a mut Driver,
    root: &'a Path,
    workspace: Value,
    window: usize,
    base: usize,
    /// What Main holds now.
    main: Text,
    calls: Vec<Call>,
    played: Played,
    alive: bool,
}

/// Plays `scenario` on `slot`'s server (started in `era` if there is none).
pub fn play(scenario: &Scenario, slot: &mut Option<Server>, era: Era) -> Played {
    let files = initial();
    let project = prepared(&files);
    let server = slot.get_or_insert_with(|| Server::start(era));
    let traces = server.traces.path().to_path_buf();
    server.driver.set_roots(&[project.root()]);
    server.driver.begin();
    let base = server.driver.sent.len();
    let mut played = Played {
        era: server.era,
        calls: Vec::new(),
        texts: HashMap::new(),
        texts_fnv: HashMap::new(),
        deps: HashMap::new(),
        bases: HashMap::new(),
        notes: HashMap::new(),
        configs: HashMap::new(),
        broken: None,
        contract: Vec::new(),
        revivals: Vec::new(),
    };
    played.remember_main(INITIAL);
    played.remember_dep(files.dep);
    played.remember_base(files.base);
    played.remember_note(files.note);
    played.configs.insert(config_sha256(project.root()), false);
    let mut player = Player {
        driver: &mut server.driver,
        root: project.root(),
        workspace: project.descriptor(),
        window: scenario.window,
        base,
        main: INITIAL,
        calls: Vec::new(),
        played,
        alive: true,
    };
    for (index, step) in scenario.steps.iter().enumerate() {
        if !player.alive {
            break;
        }
        player.step(index, step);
    }
    while player.alive && player.driver.outstanding() > 0 {
        player.alive = player.driver.pump();
    }
    if player.alive {
        let drop = player.driver.call(
            "lean_drop_workspace",
            json!({"workspace": player.workspace}),
        );
        player.alive = player.driver.wait_answered(drop);
    }
    let Player {
        driver,
        mut calls,
        mut played,
        alive,
        ..
    } = player;
    for (offset, call) in calls.iter_mut().enumerate() {
        call.answer = driver.sent[base + offset].answers.first().map(|answer| {
            let result = &answer.value["result"];
            (
                result["structuredContent"].clone(),
                result["isError"] == true,
            )
        });
    }
    let strays = driver.take_strays();
    let prefix = crate::model::driver::trace_prefix(project.root());
    played.contract = crate::support::contract::fake_violations_in(&traces, &prefix);
    let entries = crate::model::bounds::read_traces(&traces, &[prefix]);
    played.revivals = crate::model::revivals::revivals(&entries);

    if !alive || !strays.is_empty() {
        played.broken = Some(format!(
            "the server hung or ended (hung calls: {:?}; strays: {strays:?})",
            driver.hung
        ));
        slot.take();
    }
    played.calls = calls;
    played
}

impl Played {
    fn remember_main(&mut self, text: Text) {
        let rendered = scenario::render(text);
        self.texts.insert(sha256_hex(rendered.as_bytes()), text);
        let fnv = crate::model::revivals::fnv(&rendered);
        self.texts_fnv.insert(fnv, text);
    }

    fn remember_dep(&mut self, module: Module) {
        let text = scenario::dep(module);
        self.deps.insert(sha256_hex(text.as_bytes()), module);
    }

    fn remember_base(&mut self, module: Module) {
        let text = scenario::base(module);
        self.bases.insert(sha256_hex(text.as_bytes()), module);
    }

    fn remember_note(&mut self, note: Note) {
        if let Some(text) = scenario::note(note) {
            self.notes.insert(sha256_hex(text.as_bytes()), note);
        }
    }
}

impl Player<'_> {
    fn step(&mut self, index: usize, step: &Step) {
        match step {
            Step::Write(text) => self.write_main(*text),
            Step::Dep(module) => {
                self.played.remember_dep(*module);
                write(self.root, DEP, &scenario::dep(*module));
            }
            Step::Base(module) => {
                self.played.remember_base(*module);
                write(self.root, BASE, &scenario::base(*module));
            }
            Step::Note(note) => {
                self.played.remember_note(*note);
                write_note(self.root, *note);
            }
            Step::Config(strict) => {
                write(self.root, "lakefile.toml", &scenario::lakefile(*strict));
                self.played
                    .configs
                    .insert(config_sha256(self.root), *strict);
            }
            Step::Sync => self.sync(index, "lean_sync", MAIN),
            Step::Refresh => self.sync(index, "lean_refresh", MAIN),
            Step::Update => {
                self.send(index, "lean_update", MAIN, json!({}));
            }
            Step::Hover => self.hover(index),
            Step::Run(probe) => {
                let probe = PROBES[*probe as usize % PROBES.len()];
                let at = json!({"version": self.known_version(), "line": BULLET,
                                "character": 2, "text": probe});
                if let Some(call) = self.send(index, "lean_run_at", MAIN, at) {
                    call.probe = Some(probe);
                }
            }
            Step::TryEdit(candidates) => {
                let candidates: Vec<&'static str> = candidates
                    .iter()
                    .map(|c| CANDIDATES[*c as usize % CANDIDATES.len()])
                    .collect();
                let (from, to) = TACTIC;
                let edits: Vec<Value> = candidates
                    .iter()
                    .map(|text| {
                        json!({"range": {"start": {"line": BULLET, "character": from},
                                         "end": {"line": BULLET, "character": to}},
                               "text": text})
                    })
                    .collect();
                let main = self.main;
                let base = sha256_hex(scenario::render(main).as_bytes());
                let arguments = json!({"base_sha256": base, "candidates": edits});
                if let Some(call) = self.send(index, "lean_try_edit", MAIN, arguments) {
                    call.candidates = candidates;
                    call.base = Some(main);
                }
            }
            Step::SyncDep => self.sync(index, "lean_sync", DEP),
            Step::SyncBase => self.sync(index, "lean_sync", BASE),
            Step::SaveBase => {
                self.send(index, "lean_save", BASE, json!({}));
            }
            Step::Race(text) => {
                self.sync(index, "lean_sync", MAIN);
                self.write_main(*text);
                self.hover(index);
            }
        }
    }

    fn write_main(&mut self, text: Text) {
        self.played.remember_main(text);
        self.main = text;
        write(self.root, MAIN, &scenario::render(text));
    }

    fn sync(&mut self, index: usize, tool: &'static str, file: &'static str) {
        let extra = json!({"diagnostics_in_result": true, "diagnostic_scope": "all"});
        self.send(index, tool, file, extra);
    }

    fn hover(&mut self, index: usize) {
        let version = self.known_version();
        let (line, character) = HOVER;
        let at = json!({"version": version, "line": line, "character": character});
        self.send(index, "lean_hover", MAIN, at);
    }

    /// The highest version of Main the answers so far name (1 before any).
    fn known_version(&self) -> i64 {
        let answers = self.driver.sent[self.base..].iter();
        let named = answers.zip(&self.calls).flat_map(|(sent, call)| {
            let content = sent
                .answers
                .first()
                .map(|a| a.value["result"]["structuredContent"].clone());
            let main = call.file == MAIN;
            content.into_iter().filter(move |_| main).flat_map(|c| {
                [&c["version"], &c["data"]["currentVersion"]]
                    .into_iter()
                    .filter_map(Value::as_i64)
                    .collect::<Vec<_>>()
            })
        });
        named.max().unwrap_or(1)
    }

    /// Sends a call once the window has room; the call, unless the server is gone.
    fn send(
        &mut self,
        index: usize,
        tool: &'static str,
        file: &'static str,
        extra: Value,
    ) -> Option<&mut Call> {
        while self.alive && self.driver.outstanding() >= self.window {
            self.alive = self.driver.pump();
        }
        if !self.alive {
            return None;
        }
        let mut arguments = json!({"workspace": self.workspace, "path": file});
        arguments
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        let sent = self.driver.call(tool, arguments);
        debug_assert_eq!(sent, self.base + self.calls.len());
        self.calls.push(Call {
            step: index,
            tool,
            file,
            probe: None,
            candidates: Vec::new(),
            base: None,
            answer: None,
        });
        self.calls.last_mut()
    }
}
