//! Runs one program on fresh projects, several calls in flight, and records what the oracle
//! needs: every call with what it was about and its answers, each `lake` process's trace, and
//! what was left when it ended.
//!
//! Contract: a call waits only for room in the window (or for the earlier answer it depends
//! on: a handle's producer, the update of the file's last write), never for time. A versioned
//! call passes the highest version the client has seen for its file (1 before any), as a client
//! would; a write is atomic (a rename), so the server reads one text or the next, never half of
//! one. After the last step every call still owed an answer is awaited. On a server of its own,
//! input then ends and the rest (late answers to cancelled calls) is read until it exits; on a
//! shared one, the program's workspaces are dropped, a fence after which nothing of it is left
//! (a later answer to one of its calls is a stray of the next program).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::driver::{Driver, Ended, Sent, trace_prefix};
use super::era::Era;
use super::program::{Doc, Program, Step};
use super::project::{Project, project, scratch};
use super::texts::{self, ANCHORS, CONTINUATIONS, FILES, GOALS, HOVERS, Text};

/// A speculative chain: where it is anchored and the texts run there, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Chain {
    pub anchor: usize,
    pub steps: Vec<&'static str>,
    /// The document version the chain's first run was asked at.
    pub version: i64,
}

/// One call and what it was about.
#[derive(Debug, Clone)]
pub struct Call {
    pub step: usize,
    pub tool: &'static str,
    pub ws: usize,
    pub doc: Option<Doc>,
    /// The arguments that define its answer besides the file and its text (no workspace, path,
    /// version or handle).
    pub key: Value,
    /// The version it passed.
    pub version: Option<i64>,
    /// The chain a handle tool runs (or releases).
    pub chain: Option<Chain>,
    /// The call whose handle it uses.
    pub handle_of: Option<usize>,
    /// The text an edit wrote just before this update.
    pub wrote: Option<Text>,
    pub sent: Sent,
}

impl Call {
    /// The one successful structured result, if that is what it got.
    pub fn result(&self) -> Option<&Value> {
        let answer = &self.sent.answers.first()?.value;
        (answer["result"]["isError"] == false).then(|| &answer["result"]["structuredContent"])
    }

    /// The handle its result carries.
    pub fn handle(&self) -> Option<&Value> {
        self.result()
            .map(|r| &r["next_handle"])
            .filter(|h| h.is_object())
    }
}

/// What a run of a program left for the oracle.
pub struct Run {
    pub calls: Vec<Call>,
    /// How the server ended, when it ended with the program.
    pub ended: Option<Ended>,
    pub strays: Vec<String>,
    pub hung: Vec<usize>,
    /// Each `lake` process's trace: file name, workspace, entries in order.
    pub traces: Vec<(String, usize, Vec<Value>)>,
    /// Processes left in each project after the server exited.
    pub left_processes: Vec<Vec<u32>>,
    /// Files left under each project's `.lake/beam`.
    pub left_twins: Vec<Vec<PathBuf>>,
}

struct Executor<'p> {
    program: &'p Program,
    projects: &'p [Project],
    driver: &'p mut Driver,
    /// The driver's index of this program's first call.
    base: usize,
    calls: Vec<Call>,
    /// Step → the call it sent.
    step_call: Vec<Option<usize>>,
    /// The update of each file's last write.
    last_write: HashMap<Doc, usize>,
    /// The highest version seen for each file.
    known: HashMap<Doc, i64>,
    alive: bool,
}

/// A server a runner's programs may share (see `mod.rs`): its budgets, and where its `lake`
/// processes trace.
pub struct Server {
    driver: Driver,
    traces: tempfile::TempDir,
}

impl Server {
    pub fn start(max_documents: usize, max_twins: usize) -> Server {
        let traces = scratch();
        let args = [
            "--max-documents".to_owned(),
            max_documents.to_string(),
            "--max-twins".to_owned(),
            max_twins.to_string(),
        ];
        let driver = Driver::start(&[], &args, Era::default_for_now(), traces.path());
        Server { driver, traces }
    }

    /// Ends input and waits for the exit (invariant 8's first half).
    pub fn finish(self) -> Ended {
        let (mut ended, _, strays) = self.driver.finish();
        ended.problems.extend(strays);
        ended
    }
}

/// Runs `program` on `shared`'s server (started there if there is none), or, without one, on
/// a server of its own that ends with it; records everything. A shared server is left running
/// with the program's workspaces dropped, unless the program broke it (a hang, an exit).
pub fn run(program: &Program, shared: Option<&mut Option<Server>>) -> Run {
    let mut own = None;
    let alone = shared.is_none();
    let slot = shared.unwrap_or(&mut own);
    let c = &program.config;
    let projects: Vec<Project> = (0..c.workspaces).map(|_| project()).collect();
    let server = slot.get_or_insert_with(|| Server::start(c.max_documents, c.max_twins));
    let roots: Vec<&Path> = projects.iter().map(Project::root).collect();
    server.driver.set_roots(&roots);
    server.driver.begin();
    let base = server.driver.sent.len();
    let mut executor = Executor {
        program,
        projects: &projects,
        base,
        driver: &mut server.driver,
        calls: Vec::new(),
        step_call: vec![None; program.steps.len()],
        last_write: HashMap::new(),
        known: HashMap::new(),
        alive: true,
    };
    for (index, step) in program.steps.iter().enumerate() {
        if !executor.alive {
            break;
        }
        executor.step(index, step);
    }
    while executor.alive && executor.driver.outstanding() > 0 {
        executor.alive = executor.driver.pump();
    }
    let mut calls = executor.calls;
    let driver = &mut server.driver;
    let hung = std::mem::take(&mut driver.hung);
    if !alone && !driver.stopped() && hung.is_empty() {
        // A fence: every call of the program is done (answered, or cancelled for good) once
        // its workspaces are dropped, so nothing of it reaches the next program.
        for project in &projects {
            let arguments = json!({"workspace": project.descriptor()});
            let drop = driver.call("lean_drop_workspace", arguments);
            if !driver.wait_answered(drop) {
                let why = "the lean_drop_workspace after the program was never answered";
                driver.strays.push(why.to_owned());
                break;
            }
        }
    }
    let mut strays = driver.take_strays();
    let (ended, ended_traces) = if alone || driver.stopped() || !hung.is_empty() {
        let Server { mut driver, traces } = slot.take().expect("the server");
        if !hung.is_empty() || !driver.hung.is_empty() {
            driver.kill();
        }
        let (ended, sent, late) = driver.finish();
        strays.extend(late);
        for (offset, call) in calls.iter_mut().enumerate() {
            call.sent = sent[base + offset].clone();
        }
        (Some(ended), Some(traces))
    } else {
        let sent = &server.driver.sent;
        for (offset, call) in calls.iter_mut().enumerate() {
            call.sent = sent[base + offset].clone();
        }
        (None, None)
    };
    let left_processes = projects
        .iter()
        .map(|p| super::bounds::wait_no_processes(p.root()))
        .collect();
    let left_twins = projects
        .iter()
        .map(|p| super::bounds::files_under(&p.root().join(".lake/beam")))
        .collect();
    let trace_dir = match (&ended_traces, slot.as_ref()) {
        (Some(traces), _) => traces.path(),
        (None, Some(server)) => server.traces.path(),
        (None, None) => unreachable!("a shared server still runs"),
    };
    let prefixes: Vec<String> = roots.iter().map(|r| trace_prefix(r)).collect();
    let traces = super::bounds::read_traces(trace_dir, &prefixes);
    Run {
        calls,
        ended,
        strays,
        hung,
        traces,
        left_processes,
        left_twins,
    }
}

impl Executor<'_> {
    fn step(&mut self, index: usize, step: &Step) {
        let program = self.program;
        match *step {
            Step::Edit { at, text } => {
                let doc = program.doc(at);
                if let Some(&update) = self.last_write.get(&doc)
                    && !self.answered(update)
                {
                    return;
                }
                // Room first: the update follows its write at once, so the write happened
                // exactly before the update was sent (what the oracle's conditions assume).
                self.make_room();
                self.write(doc, text);
                let call = self.send(index, "lean_update", doc, json!({}), None);
                self.calls[call].wrote = Some(text);
                self.last_write.insert(doc, call);
            }
            Step::Update { at } => {
                self.send(index, "lean_update", program.doc(at), json!({}), None);
            }
            Step::Sync { at } | Step::Refresh { at } => {
                let tool = if matches!(step, Step::Sync { .. }) {
                    "lean_sync"
                } else {
                    "lean_refresh"
                };
                let extra = json!({"diagnostics_in_result": true, "diagnostic_scope": "all"});
                self.send(index, tool, program.doc(at), extra, None);
            }
            Step::Close { at } => {
                self.send(index, "lean_close", program.doc(at), json!({}), None);
            }
            Step::Save { at } => {
                self.send(index, "lean_save", program.doc(at), json!({}), None);
            }
            Step::Hover { at, pos } => {
                let (line, character) = HOVERS[pos as usize % HOVERS.len()];
                let extra = json!({"line": line, "character": character});
                self.versioned(index, "lean_hover", program.doc(at), extra, None);
            }
            Step::Goals { at, pos, after } => {
                let (line, character) = GOALS[pos as usize % GOALS.len()];
                let mode = if after { "after" } else { "before" };
                let extra = json!({"line": line, "character": character, "mode": mode});
                self.versioned(index, "lean_goals", program.doc(at), extra, None);
            }
            Step::RunAt {
                at,
                anchor,
                probe,
                keep,
            } => {
                let a = &ANCHORS[anchor as usize % ANCHORS.len()];
                let probe = a.probes[probe as usize % a.probes.len()];
                let extra = json!({"line": a.line, "character": a.character, "text": probe});
                let tool = if keep {
                    "lean_run_at_handle"
                } else {
                    "lean_run_at"
                };
                let chain = Chain {
                    anchor: anchor as usize % ANCHORS.len(),
                    steps: vec![probe],
                    version: 0,
                };
                self.versioned(index, tool, program.doc(at), extra, Some(chain));
            }
            Step::RunWith { from, text, linear } => {
                let text = CONTINUATIONS[text as usize % CONTINUATIONS.len()];
                let tool = if linear {
                    "lean_run_with_linear"
                } else {
                    "lean_run_with"
                };
                self.with_handle(index, from, tool, Some(text));
            }
            Step::Release { from } => self.with_handle(index, from, "lean_release", None),
            Step::Drop { ws } => {
                let ws = program.ws(ws);
                let arguments = json!({"workspace": self.projects[ws].descriptor()});
                self.make_room();
                let sent = self.driver.call("lean_drop_workspace", arguments);
                self.record(
                    index,
                    "lean_drop_workspace",
                    ws,
                    None,
                    json!({}),
                    None,
                    sent,
                );
            }
            Step::Cancel { back } => {
                if let Some(call) = program
                    .cancel_target(index, back)
                    .and_then(|target| self.step_call[target])
                {
                    self.driver.cancel(self.base + call);
                }
            }
        }
    }

    /// A call on the handle of the step `from` names, once that step has answered; skipped
    /// when it made no handle.
    fn with_handle(
        &mut self,
        index: usize,
        from: u8,
        tool: &'static str,
        text: Option<&'static str>,
    ) {
        let Some(producer) = self
            .program
            .producer(index, from)
            .and_then(|step| self.step_call[step])
        else {
            return;
        };
        if !self.answered(producer) {
            return;
        }
        let (Some(handle), Some(doc), Some(mut chain)) = (
            self.calls[producer].handle().cloned(),
            self.calls[producer].doc,
            self.calls[producer].chain.clone(),
        ) else {
            return;
        };
        let mut extra = json!({"handle": handle});
        if let Some(text) = text {
            extra["text"] = json!(text);
            chain.steps.push(text);
        }
        let call = self.send(index, tool, doc, extra, Some(chain));
        self.calls[call].handle_of = Some(producer);
    }

    /// A call that passes the file's highest version seen.
    fn versioned(
        &mut self,
        index: usize,
        tool: &'static str,
        doc: Doc,
        mut extra: Value,
        chain: Option<Chain>,
    ) {
        let version = self.known.get(&doc).copied().unwrap_or(1);
        extra["version"] = json!(version);
        let chain = chain.map(|c| Chain { version, ..c });
        let call = self.send(index, tool, doc, extra, chain);
        self.calls[call].version = Some(version);
    }

    fn send(
        &mut self,
        index: usize,
        tool: &'static str,
        doc: Doc,
        extra: Value,
        chain: Option<Chain>,
    ) -> usize {
        let mut arguments = json!({
            "workspace": self.projects[doc.ws].descriptor(),
            "path": FILES[doc.file],
        });
        let mut key = json!({});
        for (name, value) in extra.as_object().expect("an object") {
            arguments[name] = value.clone();
            if !matches!(name.as_str(), "version" | "handle") {
                key[name] = value.clone();
            }
        }
        self.make_room();
        let sent = self.driver.call(tool, arguments);
        self.record(index, tool, doc.ws, Some(doc), key, chain, sent)
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        index: usize,
        tool: &'static str,
        ws: usize,
        doc: Option<Doc>,
        key: Value,
        chain: Option<Chain>,
        sent: usize,
    ) -> usize {
        debug_assert_eq!(sent, self.base + self.calls.len());
        self.calls.push(Call {
            step: index,
            tool,
            ws,
            doc,
            key,
            version: None,
            chain,
            handle_of: None,
            wrote: None,
            sent: self.driver.sent[sent].clone(),
        });
        self.step_call[index] = Some(sent - self.base);
        sent - self.base
    }

    /// Waits until the window has room for one more call.
    fn make_room(&mut self) {
        while self.alive && self.driver.outstanding() >= self.program.config.window {
            self.alive = self.driver.pump();
        }
        self.learn();
    }

    /// Waits for call `index`'s answer; false when none comes (it was cancelled, or the server
    /// hung or ended, which ends the program).
    fn answered(&mut self, index: usize) -> bool {
        let answered = self.alive && self.driver.wait_answered(self.base + index);
        self.alive &= !self.driver.stopped();
        self.learn();
        answered
    }

    /// Takes the versions the answers so far name (a client uses the newest it has seen).
    fn learn(&mut self) {
        for (call, sent) in self.calls.iter_mut().zip(&self.driver.sent[self.base..]) {
            if call.sent.answers.len() == sent.answers.len() {
                continue;
            }
            call.sent = sent.clone();
            let Some(doc) = call.doc else { continue };
            let content = &sent.answers[0].value["result"]["structuredContent"];
            let seen = [&content["version"], &content["data"]["currentVersion"]];
            for version in seen.into_iter().filter_map(Value::as_i64) {
                let known = self.known.entry(doc).or_insert(version);
                *known = (*known).max(version);
            }
        }
    }

    /// Writes `text` as the file's whole content, atomically.
    fn write(&self, doc: Doc, text: Text) {
        let root = self.projects[doc.ws].root();
        let temporary = root.join(".model-suite-write");
        std::fs::write(&temporary, texts::render(doc.file, text)).expect("write a text");
        std::fs::rename(&temporary, root.join(FILES[doc.file])).expect("replace the file");
    }
}
