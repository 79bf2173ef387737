//! The checker's state over one server's life: the handshake's phase, the client's pending
//! requests, and per document what the client sent (its texts and versions) and what the
//! server said of each version (its last progress, whether a replacing publish went out).

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use crate::rules::{
    ERROR_CODE, HANDSHAKE, IN_TEXT, INCREMENTAL, PROGRESS, RESPONSE_ID, SERVER_REQUEST_ID, VERSION,
    WAIT_AFTER_PROGRESS, WAIT_VERSION,
};
use crate::text::{Lines, Pos, apply_change, lean_text};
use crate::{Found, Violation, diagnostics, pos, range};

/// How many versions of a document keep their line lengths; positions naming an older one go
/// unchecked.
pub const KEPT_VERSIONS: usize = 32;

/// Lean's `ErrorCode`s (`src/Lean/Data/JsonRpc.lean`).
const ERROR_CODES: [i64; 12] = [
    -32700, -32600, -32601, -32602, -32603, -32002, -32001, -32801, -32800, -32900, -32901, -32902,
];

const REGISTRATION_ID: &str = "register_lean_watcher";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    BeforeInitialize,
    AwaitInitialized,
    /// `initialized` came: the watcher registration is due first.
    AwaitRegistration,
    Running,
}

#[derive(Default)]
struct Doc {
    open: bool,
    text: String,
    /// The newest version of the current open.
    newest: Option<i64>,
    /// Every version ever sent.
    sent: HashSet<i64>,
    highest: Option<i64>,
    kept: VecDeque<(i64, Lines)>,
    /// Per version, whether its last progress was final (`[]` or fatal).
    progress: HashMap<i64, bool>,
    /// Versions that had an `isIncremental: false` publish.
    replaced: HashSet<i64>,
    /// The client sent a version not above the newest: Leans differ in what they make of it
    /// (the first workers ignore the change, newer ones take it and lower their bound), so the
    /// document's text and versions are no longer known until it is opened again.
    erratic: bool,
}

impl Doc {
    fn lines(&self, version: i64) -> Option<&Lines> {
        if self.erratic {
            return None;
        }
        self.kept
            .iter()
            .rev()
            .find(|(v, _)| *v == version)
            .map(|(_, l)| l)
    }

    /// A new version of the current text.
    fn version(&mut self, version: i64) {
        self.erratic |= self.newest.is_some_and(|n| version <= n);
        self.newest = Some(version);
        self.sent.insert(version);
        self.highest = Some(self.highest.map_or(version, |h| h.max(version)));
        self.kept.retain(|(v, _)| *v != version);
        self.kept.push_back((version, Lines::of(&self.text)));
        if self.kept.len() > KEPT_VERSIONS
            && let Some((gone, _)) = self.kept.pop_front()
        {
            self.progress.remove(&gone);
            self.replaced.remove(&gone);
        }
    }
}

struct Request {
    method: String,
    uri: Option<String>,
    /// The document's newest version when the request was sent.
    since: Option<i64>,
    /// `waitForDiagnostics`' version.
    wait: Option<i64>,
}

/// One server's traffic, held to the rules (see the crate's contract).
pub struct Checker {
    phase: Phase,
    init_id: Option<String>,
    incremental: bool,
    registered: bool,
    next_server_id: u64,
    docs: HashMap<String, Doc>,
    pending: HashMap<String, Request>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

impl Checker {
    pub fn new() -> Checker {
        Checker {
            phase: Phase::BeforeInitialize,
            init_id: None,
            incremental: false,
            registered: false,
            next_server_id: 0,
            docs: HashMap::new(),
            pending: HashMap::new(),
        }
    }

    /// A message the client sent.
    pub fn client(&mut self, msg: &Value) {
        let params = msg.get("params").unwrap_or(&Value::Null);
        match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
            (Some(method), Some(id)) => self.request(id, method, params),
            (Some(method), None) => self.notification(method, params),
            _ => {}
        }
    }

    fn request(&mut self, id: &Value, method: &str, params: &Value) {
        if method == "initialize" && self.phase == Phase::BeforeInitialize {
            self.phase = Phase::AwaitInitialized;
            self.init_id = Some(id.to_string());
            self.incremental = params.pointer("/capabilities/lean/incrementalDiagnosticSupport")
                == Some(&Value::Bool(true));
        }
        let uri = params
            .pointer("/textDocument/uri")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str);
        let request = Request {
            method: method.to_owned(),
            uri: uri.map(str::to_owned),
            since: uri.and_then(|u| self.docs.get(u)).and_then(|d| d.newest),
            wait: (method == "textDocument/waitForDiagnostics")
                .then(|| params.get("version").and_then(Value::as_i64))
                .flatten(),
        };
        self.pending.insert(id.to_string(), request);
    }

    fn notification(&mut self, method: &str, params: &Value) {
        let uri = params.pointer("/textDocument/uri").and_then(Value::as_str);
        match (method, uri) {
            ("initialized", _) if self.phase == Phase::AwaitInitialized => {
                self.phase = Phase::AwaitRegistration;
            }
            ("textDocument/didOpen", Some(uri)) => {
                let doc = self.docs.entry(uri.to_owned()).or_default();
                doc.open = true;
                doc.erratic = false;
                doc.newest = None;
                doc.text = lean_text(
                    params
                        .pointer("/textDocument/text")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                );
                let version = params
                    .pointer("/textDocument/version")
                    .and_then(Value::as_i64);
                doc.version(version.unwrap_or(0));
            }
            ("textDocument/didChange", Some(uri)) => {
                let changes = params.get("contentChanges").and_then(Value::as_array);
                let Some(doc) = self.docs.get_mut(uri).filter(|d| d.open) else {
                    return;
                };
                let Some(changes) = changes.filter(|c| !c.is_empty()) else {
                    return;
                };
                for change in changes {
                    let text = change.get("text").and_then(Value::as_str).unwrap_or("");
                    apply_change(&mut doc.text, change.get("range").and_then(range), text);
                }
                let version = params
                    .pointer("/textDocument/version")
                    .and_then(Value::as_i64);
                doc.version(version.unwrap_or(0));
            }
            ("textDocument/didClose", Some(uri)) => {
                if let Some(doc) = self.docs.get_mut(uri) {
                    doc.open = false;
                    doc.newest = None;
                }
            }
            _ => {}
        }
    }

    /// A message the server sent: the rules it breaks.
    pub fn server(&mut self, msg: &Value) -> Vec<Violation> {
        let mut found = Found::new(msg);
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id");
        self.handshake(method, id, &mut found);
        let params = msg.get("params").unwrap_or(&Value::Null);
        match (method, id) {
            (Some(_), Some(id)) => self.server_request(id, &mut found),
            (Some("textDocument/publishDiagnostics"), None) => self.publish(params, &mut found),
            (Some("$/lean/fileProgress"), None) => self.progress(params, &mut found),
            (None, Some(id)) => self.response(id, msg, &mut found),
            _ => {}
        }
        found.into_vec()
    }

    fn handshake(&mut self, method: Option<&str>, id: Option<&Value>, found: &mut Found) {
        match self.phase {
            Phase::BeforeInitialize => {
                found.push(
                    &HANDSHAKE,
                    "a message before the client's initialize",
                    &Value::Null,
                );
            }
            Phase::AwaitInitialized => {
                let answer = method.is_none() && id.map(Value::to_string) == self.init_id;
                if !answer {
                    let why = "a message other than initialize's answer before initialized";
                    found.push(&HANDSHAKE, why, &Value::Null);
                }
            }
            Phase::AwaitRegistration => {
                self.phase = Phase::Running;
                let registration = method == Some("client/registerCapability")
                    && id.and_then(Value::as_str) == Some(REGISTRATION_ID);
                if !registration {
                    let why = "the first message after initialized is not the watcher registration";
                    found.push(&HANDSHAKE, why, &Value::Null);
                }
            }
            Phase::Running => {}
        }
    }

    fn server_request(&mut self, id: &Value, found: &mut Found) {
        if id.as_str() == Some(REGISTRATION_ID) && !self.registered {
            self.registered = true;
        } else if id.as_u64() == Some(self.next_server_id) {
            self.next_server_id += 1;
        } else {
            let why = format!(
                "id {id}; the next the watchdog hands out is {}",
                self.next_server_id
            );
            found.push(&SERVER_REQUEST_ID, &why, id);
        }
    }

    fn response(&mut self, id: &Value, msg: &Value, found: &mut Found) {
        let Some(request) = self.pending.remove(&id.to_string()) else {
            let why = "no request of the client with this id is pending (never sent, or answered)";
            found.push(&RESPONSE_ID, why, id);
            return;
        };
        if let Some(error) = msg.get("error") {
            let code = error.get("code").and_then(Value::as_i64);
            if !code.is_some_and(|c| ERROR_CODES.contains(&c)) {
                found.push(&ERROR_CODE, "not one of Lean's error codes", error);
            }
            return;
        }
        let Some(result) = msg.get("result") else {
            return;
        };
        if request.wait.is_some() {
            self.waited(&request, found);
        } else {
            self.located(&request, result, found);
        }
    }

    /// A `waitForDiagnostics` result.
    fn waited(&self, request: &Request, found: &mut Found) {
        let (Some(uri), Some(v)) = (&request.uri, request.wait) else {
            return;
        };
        let doc = self.docs.get(uri);
        if doc.and_then(|d| d.highest).is_none_or(|h| h < v) {
            let why = format!("answered before the client sent version {v} or a later one");
            found.push(&WAIT_VERSION, &why, &Value::Null);
            return;
        }
        let Some(doc) = doc.filter(|d| d.open && !d.erratic && d.newest == Some(v)) else {
            return;
        };
        let why = match doc.progress.get(&v) {
            Some(true) => return,
            Some(false) => format!("the last progress of version {v} before it is not final"),
            None => format!("no progress of version {v} came before it"),
        };
        found.push(&WAIT_AFTER_PROGRESS, &why, &Value::Null);
    }

    /// A result with positions in the request's own document: they must fit a version the
    /// worker may have answered for (the newest when it was asked, or a later one).
    fn located(&self, request: &Request, result: &Value, found: &mut Found) {
        let mut at = Vec::new();
        positions(&request.method, result, &mut at);
        let Some(doc) = request.uri.as_ref().and_then(|u| self.docs.get(u)) else {
            return;
        };
        if at.is_empty() {
            return;
        }
        if doc.erratic {
            return;
        }
        let mut candidates = doc
            .kept
            .iter()
            .filter(|(v, _)| request.since.is_none_or(|s| *v >= s))
            .peekable();
        if candidates.peek().is_none() {
            return;
        }
        let mut newest = None;
        for (_, lines) in candidates {
            if at.iter().all(|p| lines.contains(*p)) {
                return;
            }
            newest = Some(lines);
        }
        let (Some(lines), Some(outside)) = (newest, at.first()) else {
            return;
        };
        let outside = at.iter().find(|p| !lines.contains(**p)).unwrap_or(outside);
        let why = format!(
            "position {}:{} of the result is outside every version it may be about (the \
             newest ends at {}:{})",
            outside.0,
            outside.1,
            lines.end().0,
            lines.end().1
        );
        found.push(&IN_TEXT, &why, result);
    }

    fn publish(&mut self, params: &Value, found: &mut Found) {
        let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
        let version = params.get("version").and_then(Value::as_i64);
        let empty = Vec::new();
        let diagnostics = params
            .get("diagnostics")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let doc = self.docs.get_mut(uri);
        let mut doc = match (version, doc) {
            (None, doc) => {
                let lake = !diagnostics.is_empty()
                    && diagnostics
                        .iter()
                        .all(|d| d.get("source").and_then(Value::as_str) == Some("Lake"));
                if !lake {
                    let why = "no version, and not Lake's cross-file report";
                    found.push(&VERSION, why, &Value::Null);
                }
                doc.filter(|_| false)
            }
            (Some(v), Some(doc)) if doc.sent.contains(&v) => Some(doc),
            (Some(v), _) => {
                let why = format!("version {v} was never sent for this URI");
                found.push(&VERSION, &why, &Value::Null);
                None
            }
        };
        if let Some(incremental) = params.get("isIncremental") {
            if !self.incremental {
                let why = "`isIncremental`, but the client did not declare incremental support";
                found.push(&INCREMENTAL, why, incremental);
            }
            match (incremental.as_bool(), version, doc.as_deref_mut()) {
                (Some(false), Some(v), Some(doc)) => {
                    doc.replaced.insert(v);
                }
                (Some(true), Some(v), Some(doc)) if !doc.replaced.contains(&v) => {
                    let why = "`isIncremental: true` before the version's replacing publish";
                    found.push(&INCREMENTAL, why, incremental);
                }
                _ => {}
            }
        }
        let lines = version.zip(doc.as_deref()).and_then(|(v, d)| d.lines(v));
        for d in diagnostics {
            diagnostics::check(d, lines, found);
        }
    }

    fn progress(&mut self, params: &Value, found: &mut Found) {
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = params
            .pointer("/textDocument/version")
            .and_then(Value::as_i64);
        let doc = self.docs.get_mut(uri);
        let (Some(v), Some(doc)) = (
            version,
            doc.filter(|d| version.is_some_and(|v| d.sent.contains(&v))),
        ) else {
            let why = "the version is not one the client sent for this URI";
            found.push(&VERSION, why, &Value::Null);
            return;
        };
        let empty = Vec::new();
        let processing = params
            .get("processing")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        if processing.len() > 1 {
            found.push(
                &PROGRESS,
                "more than one `processing` entry",
                &params["processing"],
            );
        }
        let mut fatal = false;
        for entry in processing {
            let kind = entry.get("kind").and_then(Value::as_u64);
            fatal |= kind == Some(2);
            if !matches!(kind, Some(1 | 2)) {
                found.push(&PROGRESS, "`kind` is not 1 or 2", entry);
            }
            let Some((start, end)) = entry.get("range").and_then(range) else {
                found.push(&PROGRESS, "no readable `range`", entry);
                continue;
            };
            if kind == Some(2) && start != (0, 0) {
                found.push(&PROGRESS, "a fatal entry that does not start at 0:0", entry);
            }
            if let Some(lines) = doc.lines(v) {
                if end != lines.end() {
                    let why = "the range does not run to the end of the version's text";
                    found.push(&PROGRESS, why, entry);
                }
                if !lines.contains(start) {
                    found.push(
                        &IN_TEXT,
                        "the range starts outside the version's text",
                        entry,
                    );
                }
            }
        }
        doc.progress.insert(v, processing.is_empty() || fatal);
    }
}

/// The positions in `result` that lie in the request's own document.
fn positions(method: &str, result: &Value, at: &mut Vec<Pos>) {
    let items = result.as_array().map(Vec::as_slice).unwrap_or_default();
    match method {
        "textDocument/hover" | "$/lean/plainTermGoal" => push_range(result.get("range"), at),
        "textDocument/documentHighlight" => {
            for item in items {
                push_range(item.get("range"), at);
            }
        }
        "textDocument/documentSymbol" => symbols(items, at),
        "textDocument/foldingRange" => {
            for item in items {
                for key in ["startLine", "endLine"] {
                    if let Some(line) = item.get(key).and_then(Value::as_u64) {
                        at.push((line, 0));
                    }
                }
            }
        }
        "textDocument/inlayHint" => {
            at.extend(items.iter().filter_map(|i| i.get("position").and_then(pos)))
        }
        "textDocument/definition" | "textDocument/declaration" | "textDocument/typeDefinition" => {
            for item in items {
                push_range(item.get("originSelectionRange"), at);
            }
        }
        _ => {}
    }
}

fn symbols(items: &[Value], at: &mut Vec<Pos>) {
    for item in items {
        for key in ["range", "selectionRange"] {
            push_range(item.get(key), at);
        }
        if let Some(children) = item.get("children").and_then(Value::as_array) {
            symbols(children, at);
        }
    }
}

fn push_range(r: Option<&Value>, at: &mut Vec<Pos>) {
    if let Some((s, e)) = r.and_then(range) {
        at.extend([s, e]);
    }
}
