//! Plays one scenario on a fresh project, on the unit's server, several calls in flight, and
//! keeps what the oracle needs: every call and its answer, and every text, import and
//! configuration written, by hash.
//!
//! Contract: a call waits only for room in the window, never for time; writes are atomic (a
//! rename). A hover passes the highest version of Main any answer named so far (1 before any).
//! After the last step every answer is awaited, then the workspace is dropped (a fence: nothing
//! of the scenario reaches the next one on the same server).

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Value, json};

use super::scenario::{self, DEP, HOVER, INITIAL, MAIN, Scenario, Step, Text};
use crate::harness::sha256_hex;
use crate::model::driver::Driver;
use crate::model::project::{Project, project, scratch};

/// The server a unit's scenarios share, and where its `lake` processes trace.
pub struct Server {
    pub driver: Driver,
    traces: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        let traces = scratch();
        let driver = Driver::start(&[], &[], traces.path());
        Server { driver, traces }
    }
}

/// One call of Main (or Dep) and its answer.
pub struct Call {
    pub step: usize,
    pub tool: &'static str,
    /// The answer's structured content, and whether it is an error; none when it never came.
    pub answer: Option<(Value, bool)>,
}

/// What a scenario left.
pub struct Played {
    pub calls: Vec<Call>,
    /// Main's texts by their SHA-256.
    pub texts: HashMap<String, Text>,
    /// Dep's values by the SHA-256 of its text.
    pub deps: HashMap<String, u8>,
    /// The lakefile (strict or not) by the configuration's hash.
    pub configs: HashMap<String, bool>,
    /// The server hung or ended.
    pub broken: Option<String>,
    /// What the scenario's `lake serve`s sent that Lean never sends (the Lean contract).
    pub contract: Vec<String>,
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

/// A project with Main, Dep and the lakefile as given.
pub fn prepared(main: &str, dep_value: u8, strict: bool) -> Project {
    let project = project();
    write(project.root(), MAIN, main);
    write(project.root(), DEP, &scenario::dep(dep_value));
    write(project.root(), "lakefile.toml", &scenario::lakefile(strict));
    project
}

/// Replaces a file of `root` at once (a rename).
fn write(root: &Path, file: &str, text: &str) {
    let temporary = root.join(".no-false-complete-write");
    std::fs::write(&temporary, text).expect("write a file");
    std::fs::rename(&temporary, root.join(file)).expect("replace the file");
}

struct Player<'a> {
    driver: &'a mut Driver,
    root: &'a Path,
    workspace: Value,
    window: usize,
    base: usize,
    calls: Vec<Call>,
    played: Played,
    alive: bool,
}

/// Plays `scenario` on `slot`'s server (started if there is none).
pub fn play(scenario: &Scenario, slot: &mut Option<Server>) -> Played {
    let project = prepared(&scenario::render(INITIAL), 1, false);
    let server = slot.get_or_insert_with(Server::start);
    let traces = server.traces.path().to_path_buf();
    server.driver.set_roots(&[project.root()]);
    server.driver.begin();
    let base = server.driver.sent.len();
    let mut played = Played {
        calls: Vec::new(),
        texts: HashMap::new(),
        deps: HashMap::new(),
        configs: HashMap::new(),
        broken: None,
        contract: Vec::new(),
    };
    played
        .texts
        .insert(sha256_hex(scenario::render(INITIAL).as_bytes()), INITIAL);
    played
        .deps
        .insert(sha256_hex(scenario::dep(1).as_bytes()), 1);
    played.configs.insert(config_sha256(project.root()), false);
    let mut player = Player {
        driver: &mut server.driver,
        root: project.root(),
        workspace: project.descriptor(),
        window: scenario.window,
        base,
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

impl Player<'_> {
    fn step(&mut self, index: usize, step: &Step) {
        match *step {
            Step::Write(text) => self.write_main(text),
            Step::Dep(value) => {
                let text = scenario::dep(value);
                self.played.deps.insert(sha256_hex(text.as_bytes()), value);
                write(self.root, DEP, &text);
            }
            Step::Config(strict) => {
                write(self.root, "lakefile.toml", &scenario::lakefile(strict));
                self.played.configs.insert(config_sha256(self.root), strict);
            }
            Step::Sync => self.sync(index, "lean_sync", MAIN),
            Step::Refresh => self.sync(index, "lean_refresh", MAIN),
            Step::Update => self.send(index, "lean_update", MAIN, json!({})),
            Step::Hover => self.hover(index),
            Step::SyncDep => self.sync(index, "lean_sync", DEP),
            Step::Race(text) => {
                self.sync(index, "lean_sync", MAIN);
                self.write_main(text);
                self.hover(index);
            }
        }
    }

    fn write_main(&mut self, text: Text) {
        let rendered = scenario::render(text);
        self.played
            .texts
            .insert(sha256_hex(rendered.as_bytes()), text);
        write(self.root, MAIN, &rendered);
    }

    fn sync(&mut self, index: usize, tool: &'static str, file: &str) {
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
            let main = call.tool != "lean_sync_dep";
            content.into_iter().filter(move |_| main).flat_map(|c| {
                [&c["version"], &c["data"]["currentVersion"]]
                    .into_iter()
                    .filter_map(Value::as_i64)
                    .collect::<Vec<_>>()
            })
        });
        named.max().unwrap_or(1)
    }

    fn send(&mut self, index: usize, tool: &'static str, file: &str, extra: Value) {
        while self.alive && self.driver.outstanding() >= self.window {
            self.alive = self.driver.pump();
        }
        if !self.alive {
            return;
        }
        let mut arguments = json!({"workspace": self.workspace, "path": file});
        arguments
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        let sent = self.driver.call(tool, arguments);
        debug_assert_eq!(sent, self.base + self.calls.len());
        let tool = if file == DEP { "lean_sync_dep" } else { tool };
        self.calls.push(Call {
            step: index,
            tool,
            answer: None,
        });
    }
}
