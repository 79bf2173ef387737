//! `fake-lake serve`: the watchdog's main loop. A reader thread turns stdin into events; the
//! main loop handles them one at a time and is the only writer of stdout.
//!
//! Lifecycle (reference §1.2): the first message must be the `initialize` request, the next the
//! `initialized` notification — anything else prints `Expected method …` and
//! `Watchdog error: …` on stderr and exits 1. Then the server sends `client/registerCapability`
//! with id `"register_lean_watcher"`. `shutdown` terminates the workers and answers `null`;
//! later requests get -32600; `exit` (or the end of stdin) ends the process, 0 after a
//! shutdown and 1 without one. Requests for a document that is not open get -32801, unknown
//! methods -32601, and `$/cancelRequest` answers a pending or hung request with -32800.

use crate::config::{Config, Garbage};
use crate::documents::{Doc, Pending};
use crate::event::Event;
use crate::output::Out;
use crate::project::Project;
use crate::trace::Trace;
use crate::worker::Worker;
use crate::{answer, assist, wire};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, Sender};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    AwaitInitialize,
    AwaitInitialized,
    Running,
    ShutDown,
}

#[derive(Default)]
pub struct Caps {
    pub silent: bool,
    pub incremental: bool,
}

pub struct Server {
    pub out: Out,
    pub cfg: Config,
    pub project: Project,
    pub events: Sender<Event>,
    pub caps: Caps,
    pub phase: Phase,
    pub docs: HashMap<String, Doc>,
    /// The reference index (`references`).
    pub refs: crate::references::References,
    /// Requests that are never answered until cancelled, with their document.
    pub hung: Vec<(Value, String)>,
    /// Server→client requests awaiting an answer: id → method.
    pub outstanding: HashMap<String, String>,
    pub next_request_id: i64,
    /// Modules saved (or changed on disk) since they were last built.
    pub dirty: HashSet<String>,
    /// Documents whose worker crashed once (disarms `crash once`).
    pub crashed_once: HashSet<String>,
    /// Workers of documents opened twice: Lean leaks them.
    pub leaked: Vec<Worker>,
    pub next_gen: u64,
    pub definition_counter: u64,
    pub rpc_sessions: u64,
    garbage_done: bool,
    exit_code: Option<i32>,
}

pub fn run(args: Vec<String>) -> i32 {
    let cfg = Config::from_env(&args);
    let trace = Trace::open(cfg.trace.as_deref());
    // SAFETY: getpgrp has no preconditions and cannot fail.
    let pgid = unsafe { libc::getpgrp() };
    trace.event(
        "start",
        json!({"args": args, "pid": std::process::id(), "pgid": pgid}),
    );
    let root = std::env::current_dir().unwrap_or_default();
    let (tx, rx) = mpsc::channel();
    let reader = tx.clone();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        loop {
            let ev = match wire::read_message(&mut lock) {
                Ok(Some(v)) => Event::Client(v),
                Ok(None) => Event::ClientEof,
                Err(e) => Event::ClientBroken(e.to_string()),
            };
            let last = !matches!(ev, Event::Client(_));
            if reader.send(ev).is_err() || last {
                return;
            }
        }
    });
    let project = Project::new(root, cfg.uri);
    let mut s = Server {
        out: Out::new(trace),
        cfg,
        project,
        events: tx,
        caps: Caps::default(),
        phase: Phase::AwaitInitialize,
        docs: HashMap::new(),
        refs: Default::default(),
        hung: Vec::new(),
        outstanding: HashMap::new(),
        next_request_id: 0,
        dirty: HashSet::new(),
        crashed_once: HashSet::new(),
        leaked: Vec::new(),
        next_gen: 0,
        definition_counter: 0,
        rpc_sessions: 0,
        garbage_done: false,
        exit_code: None,
    };
    for ev in rx {
        match ev {
            Event::Client(msg) => s.on_message(msg),
            Event::ClientBroken(e) => s.die(&format!("Cannot read LSP message: {e}")),
            Event::ClientEof => s.exit(),
            Event::Elab {
                uri,
                generation,
                ev,
            } => s.on_elab(&uri, generation, ev),
            Event::WorkerExited {
                uri,
                generation,
                code,
                signal,
            } => s.on_worker_exit(&uri, generation, code, signal),
        }
        if let Some(code) = s.exit_code {
            return code;
        }
    }
    0
}

impl Server {
    /// `Watchdog error: <msg>` on stderr, exit 1 (§1.9).
    pub fn die(&mut self, msg: &str) -> ! {
        eprintln!("Watchdog error: {msg}");
        self.out
            .trace
            .event("watchdog-exit", json!({"message": msg}));
        std::process::exit(1)
    }

    fn handshake_error(&mut self, expected: &str, msg: &Value) -> ! {
        let got = msg["method"].as_str().unwrap_or("<response>");
        let text = format!("Expected method '{expected}', got method '{got}'");
        self.out.trace.violation(
            "message before handshake",
            json!({"expected": expected, "got": got}),
        );
        eprintln!("{text}");
        self.die(&text)
    }

    fn on_message(&mut self, msg: Value) {
        self.out.trace.message("in", &msg);
        self.out.contract.client(&msg);
        let method = msg["method"].as_str().map(str::to_owned);
        if let (Some(m), Some((dm, dmsg))) = (&method, self.cfg.watchdog_exit.clone())
            && *m == dm
        {
            self.die(&dmsg);
        }
        let id = msg.get("id").cloned();
        match self.phase {
            Phase::AwaitInitialize => {
                if self.cfg.no_init {
                    return;
                }
                if method.as_deref() != Some("initialize") || id.is_none() {
                    self.handshake_error("initialize", &msg);
                }
                self.initialize(id.as_ref().expect("checked"), &msg["params"]);
            }
            Phase::AwaitInitialized => {
                if method.as_deref() != Some("initialized") || id.is_some() {
                    self.handshake_error("initialized", &msg);
                }
                self.phase = Phase::Running;
                let params = json!({"registrations": [{
                    "id": "register_lean_watcher",
                    "method": "workspace/didChangeWatchedFiles",
                    "registerOptions": {"watchers": [
                        {"globPattern": "**/*.lean"},
                        {"globPattern": "**/*.ilean"},
                    ]},
                }]});
                let id = json!("register_lean_watcher");
                self.outstanding
                    .insert(id.to_string(), "client/registerCapability".into());
                self.out.request(id, "client/registerCapability", params);
            }
            Phase::Running | Phase::ShutDown => match (method, id) {
                (Some(m), Some(id)) => self.on_request(id, &m, &msg["params"]),
                (Some(m), None) => self.on_notification(&m, &msg["params"]),
                (None, Some(id)) => self.on_response(&id, &msg),
                (None, None) => {}
            },
        }
    }

    fn initialize(&mut self, id: &Value, params: &Value) {
        let lean = &params["capabilities"]["lean"];
        self.caps.silent = lean["silentDiagnosticSupport"].as_bool().unwrap_or(false);
        self.caps.incremental = lean["incrementalDiagnosticSupport"]
            .as_bool()
            .unwrap_or(false);
        let mut result = json!({
            "capabilities": {
                "textDocumentSync": {
                    "openClose": true, "change": 2, "willSave": false,
                    "willSaveWaitUntil": false, "save": {"includeText": true},
                },
                "completionProvider": {"triggerCharacters": ["."], "resolveProvider": true},
                "hoverProvider": true,
                "declarationProvider": true,
                "definitionProvider": true,
                "typeDefinitionProvider": true,
                "referencesProvider": true,
                "callHierarchyProvider": true,
                "workspaceSymbolProvider": true,
                "documentHighlightProvider": true,
                "documentSymbolProvider": true,
                "foldingRangeProvider": true,
                "signatureHelpProvider": {"triggerCharacters": [" "]},
                "renameProvider": {"prepareProvider": true},
                "semanticTokensProvider": {"legend": assist::legend(), "full": true, "range": true},
                "codeActionProvider": {
                    "resolveProvider": true,
                    "codeActionKinds": ["quickfix", "refactor", "source.organizeImports"],
                },
                "inlayHintProvider": {"resolveProvider": false},
            },
            "serverInfo": {"name": "Lean 4 Server", "version": "0.3.0"},
        });
        self.cfg.capabilities.apply(&mut result["capabilities"]);
        self.phase = Phase::AwaitInitialized;
        if self.garbage_for("initialize") {
            return;
        }
        self.out.result(id, result);
        if let Some((kind, None)) = self.cfg.garbage.clone()
            && !self.garbage_done
        {
            self.garbage_done = true;
            self.write_garbage(kind);
        }
    }

    /// The garbage-frame fault: replaces the answer to the first request of `method`.
    fn garbage_for(&mut self, method: &str) -> bool {
        match self.cfg.garbage.clone() {
            Some((kind, Some(m))) if m == method && !self.garbage_done => {
                self.garbage_done = true;
                self.write_garbage(kind);
                true
            }
            _ => false,
        }
    }

    fn write_garbage(&mut self, kind: Garbage) {
        match kind {
            Garbage::Header => self.out.raw(b"Content-Length: abc\r\n\r\n{}"),
            Garbage::Json => self.out.raw(b"Content-Length: 12\r\n\r\n{not json!!}"),
            Garbage::Huge => self
                .out
                .raw(b"Content-Length: 1099511627776\r\n\r\n{\"jsonrpc\":\"2.0\","),
            Garbage::Cut => {
                // What a reader sees of a watchdog killed while writing (an OOM kill, a stack
                // overflow, §1.9): a header, part of the body, then the end of the stream.
                self.out
                    .raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":");
                eprintln!("Stack overflow detected. Aborting.");
                // SAFETY: plain signal delivery to this process.
                unsafe {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                unreachable!("killed");
            }
        }
    }

    fn on_request(&mut self, id: Value, method: &str, params: &Value) {
        if self.phase == Phase::ShutDown {
            self.out
                .error(&id, -32600, "Invalid request: the server is shutting down");
            return;
        }
        if self.garbage_for(method) {
            return;
        }
        if !self.cfg.capabilities.handles(method) {
            // A Lean without the provider has no handler for it (`capabilities`).
            let msg = format!("No request handler found for '{method}'");
            self.out.error(&id, -32601, &msg);
            return;
        }
        match method {
            "shutdown" => {
                for (_, d) in self.docs.iter_mut() {
                    if let Some(w) = d.worker.take() {
                        w.terminate();
                    }
                }
                for w in self.leaked.drain(..) {
                    w.terminate();
                }
                self.phase = Phase::ShutDown;
                self.out.result(&id, Value::Null);
            }
            "initialize" => self.out.error(&id, -32600, "Server is already initialized"),
            "$/lean/waitForILeans" => self.out.result(&id, json!({})),
            "workspace/symbol" => {
                let v = self.workspace_symbols(params);
                self.out.result(&id, v);
            }
            "textDocument/references" => {
                let v = self.references(params);
                self.out.result(&id, v);
            }
            "callHierarchy/incomingCalls" | "callHierarchy/outgoingCalls" => {
                self.out.result(&id, json!([]))
            }
            _ => self.document_request(id, method, params),
        }
    }

    fn document_request(&mut self, id: Value, method: &str, params: &Value) {
        let Some(need) = answer::need_of(method, params) else {
            self.out.error(
                &id,
                -32601,
                &format!("No request handler found for '{method}'"),
            );
            return;
        };
        let uri = answer::uri_of(method, params).unwrap_or_default();
        if method == "codeAction/resolve" && params.get("data").is_none() {
            // §D: the watchdog routes resolve by `data.params.textDocument.uri`; without `data`
            // that lookup panics and the request lands on no open file.
            eprintln!(
                "PANIC at Lean.Lsp.CodeAction.getFileSource! Lean.Server.CodeActions:0:0: no data field"
            );
        }
        if !self.docs.contains_key(&uri) {
            let msg = format!("Cannot process request to closed file '{uri}'");
            self.out.error(&id, -32801, &msg);
            return;
        }
        let doc_hang = self.docs[&uri]
            .analysis
            .flags
            .hang
            .as_ref()
            .is_some_and(|ms| ms.is_empty() || ms.iter().any(|m| m == method));
        if doc_hang || self.cfg.hang.iter().any(|m| m == method) {
            self.hung.push((id, uri));
            return;
        }
        if matches!(
            method,
            "textDocument/definition" | "textDocument/declaration"
        ) && let Some(found) = self.indexed_definitions(params)
        {
            self.out.result(&id, found);
            return;
        }
        self.enqueue(
            &uri,
            Pending {
                id,
                method: method.to_owned(),
                params: params.clone(),
                need,
            },
        );
    }

    fn on_notification(&mut self, method: &str, params: &Value) {
        if method == "exit" {
            self.exit();
            return;
        }
        if self.phase == Phase::ShutDown {
            return;
        }
        match method {
            "textDocument/didOpen" => self.did_open(params),
            "textDocument/didChange" => self.did_change(params),
            "textDocument/didClose" => self.did_close(params),
            "textDocument/didSave" => self.did_save(params),
            "workspace/didChangeWatchedFiles" => self.watched_files(params),
            "$/cancelRequest" => self.cancel(&params["id"]),
            "initialized" => {}
            m if m.starts_with("$/") => {}
            m => eprintln!("Got unsupported notification: {m}"),
        }
    }

    fn cancel(&mut self, id: &Value) {
        if let Some(i) = self.hung.iter().position(|(h, _)| h == id) {
            self.hung.remove(i);
            self.out.error(id, -32800, "");
            return;
        }
        for d in self.docs.values_mut() {
            if let Some(i) = d.pending.iter().position(|q| &q.id == id) {
                d.pending.remove(i);
                self.out.error(id, -32800, "");
                return;
            }
        }
    }

    fn on_response(&mut self, id: &Value, msg: &Value) {
        let Some(method) = self.outstanding.remove(&id.to_string()) else {
            self.out
                .trace
                .violation("response to unknown request", json!({"id": id}));
            return;
        };
        let ok = match method.as_str() {
            "client/registerCapability" => msg.get("error").is_none(),
            _ => msg.get("result") == Some(&Value::Null),
        };
        if !ok {
            self.out.trace.violation(
                "server request answered wrongly",
                json!({"id": id, "method": method, "answer": msg}),
            );
        }
    }

    /// A server→client request with a numeric id (the watchdog renumbers them).
    pub fn server_request(&mut self, method: &str) {
        // Shutting down terminates the workers, and the watchdog forwards nothing of theirs after
        // (`shutdown` in `Server/Watchdog.lean`): a worker's refresh cannot follow the answer.
        if self.phase == Phase::ShutDown {
            return;
        }
        let id = json!(self.next_request_id);
        self.next_request_id += 1;
        self.outstanding.insert(id.to_string(), method.to_owned());
        self.out
            .send(json!({"jsonrpc": "2.0", "id": id, "method": method}));
    }

    fn exit(&mut self) {
        let mut unanswered: Vec<_> = self.outstanding.drain().collect();
        unanswered.sort();
        for (id, method) in unanswered {
            self.out.trace.violation(
                "unanswered server request at exit",
                json!({"id": serde_json::from_str::<Value>(&id).unwrap_or(Value::Null), "method": method}),
            );
        }
        for (_, d) in self.docs.drain() {
            if let Some(w) = d.worker {
                w.release();
            }
        }
        for w in self.leaked.drain(..) {
            w.release();
        }
        let code = if self.phase == Phase::ShutDown { 0 } else { 1 };
        self.out.trace.event("exit", json!({"code": code}));
        self.exit_code = Some(code);
    }
}
