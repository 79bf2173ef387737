//! The observability file (`FAKE_LEAN_TRACE=<file>`): one JSON object per line, appended, for
//! every message received (`"dir":"in"`) and sent (`"dir":"out"`), every protocol violation
//! (`{"violation": "..."}`) and every worker process event (`{"event": ...}`), so that tests can
//! count exactly what a host sent to Lean. Without the variable nothing is written.

use serde_json::{Map, Value, json};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::Mutex;

#[derive(Default)]
pub struct Trace {
    file: Option<Mutex<File>>,
}

impl Trace {
    pub fn open(path: Option<&std::path::Path>) -> Trace {
        let file = path.and_then(|p| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| eprintln!("fake-lake: cannot open trace file {}: {e}", p.display()))
                .ok()
        });
        Trace {
            file: file.map(Mutex::new),
        }
    }

    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    pub fn record(&self, v: Value) {
        if let Some(f) = &self.file {
            let mut line = v.to_string();
            line.push('\n');
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            let _ = f.write_all(line.as_bytes());
        }
    }

    pub fn message(&self, dir: &str, msg: &Value) {
        if self.enabled() {
            self.record(summarize(dir, msg));
        }
    }

    pub fn violation(&self, what: &str, detail: Value) {
        self.record(json!({"violation": what, "detail": detail}));
    }

    pub fn event(&self, what: &str, detail: Value) {
        let mut v = json!({"event": what});
        if let (Value::Object(m), Value::Object(d)) = (&mut v, detail) {
            m.extend(d);
        }
        self.record(v);
    }
}

/// The trace line of one message: method, id, and the document facts tests count by.
pub fn summarize(dir: &str, msg: &Value) -> Value {
    let mut m = Map::new();
    m.insert("dir".into(), json!(dir));
    for key in ["method", "id"] {
        if let Some(v) = msg.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    if msg.get("method").is_none() {
        m.insert("response".into(), json!(true));
        if let Some(e) = msg.get("error") {
            m.insert(
                "error".into(),
                e.get("code").cloned().unwrap_or(Value::Null),
            );
        }
    }
    let params = msg.get("params").unwrap_or(&Value::Null);
    let doc = params.get("textDocument").unwrap_or(params);
    if let Some(uri) = doc.get("uri").or_else(|| params.get("uri")) {
        m.insert("uri".into(), uri.clone());
    }
    if let Some(v) = doc.get("version").or_else(|| params.get("version")) {
        m.insert("version".into(), v.clone());
    }
    match msg.get("method").and_then(Value::as_str) {
        Some("$/cancelRequest") => {
            m.insert(
                "cancel_id".into(),
                params.get("id").cloned().unwrap_or(Value::Null),
            );
        }
        Some("textDocument/publishDiagnostics") => {
            let n = params["diagnostics"].as_array().map_or(0, Vec::len);
            m.insert("count".into(), json!(n));
        }
        Some("workspace/didChangeWatchedFiles") => {
            m.insert(
                "changes".into(),
                params.get("changes").cloned().unwrap_or(Value::Null),
            );
        }
        Some("$/lean/fileProgress") => {
            let p = params["processing"].as_array();
            m.insert("done".into(), json!(p.is_some_and(Vec::is_empty)));
        }
        Some("textDocument/didOpen") => {
            if let Some(text) = doc.get("text").and_then(Value::as_str) {
                m.insert("text_fnv".into(), json!(fnv(text)));
            }
        }
        Some("textDocument/didChange") => {
            // Only a change that gives the whole text names it: a ranged one names a part.
            let last = params["contentChanges"].as_array().and_then(|c| c.last());
            if let Some(change) = last.filter(|c| c.get("range").is_none())
                && let Some(text) = change["text"].as_str()
            {
                m.insert("text_fnv".into(), json!(fnv(text)));
            }
        }
        _ => {}
    }
    Value::Object(m)
}

/// FNV-1a 64 of `text`'s UTF-8, 16 hex digits: names a document's text in the trace, so a test
/// can tell a client sending the same text again (a revival) from one sending another.
fn fnv(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}
