//! What leaves the server about documents, and when queued requests are released. Elaboration
//! events become `$/lean/fileProgress` (`processing` from a line to EOF, kind 1; `[]` when done;
//! kind 2 on fatal errors and crashes) and `textDocument/publishDiagnostics` — by default the
//! whole set so far for the version, sticky diagnostics first; with incremental diagnostics on
//! both sides, one replacing publish then appends (reference §1.5–1.6). Events of a superseded
//! version or worker generation are dropped, and nothing is written for a version below the
//! newest received. A dead worker fails every pending request with -32901 (exit code 1) or
//! -32902 (§1.9).

use crate::analysis::CrashKind;
use crate::documents::Pending;
use crate::elab::ElabEvent;
use crate::server::Server;
use crate::text::{Pos, range_json};
use serde_json::{Value, json};

impl Server {
    /// Writes a publish for the current version: the whole set (sticky first), or in
    /// incremental mode the replacing set once and then only `new`.
    pub fn publish(&mut self, uri: &str, new: Vec<Value>) {
        let silent_ok = self.caps.silent;
        // `isIncremental` only for a client that declared it (`publishDiagnostics` in Lean's
        // `FileWorker/Utils.lean`).
        let incremental = self.cfg.incremental && self.caps.incremental;
        let doc = self.docs.get_mut(uri).expect("open");
        let new: Vec<Value> = new
            .into_iter()
            .filter(|d| silent_ok || d.get("isSilent") != Some(&Value::Bool(true)))
            .collect();
        doc.diags.extend(new.iter().cloned());
        if doc.suppressed() {
            return;
        }
        let mut params = json!({"uri": uri, "version": doc.version});
        if incremental && doc.replaced {
            params["diagnostics"] = Value::Array(new);
            params["isIncremental"] = json!(true);
        } else {
            let mut all = doc.sticky.clone();
            all.extend(doc.diags.iter().cloned());
            params["diagnostics"] = Value::Array(all);
            if incremental {
                params["isIncremental"] = json!(false);
            }
            doc.replaced = true;
        }
        self.out.notify("textDocument/publishDiagnostics", params);
    }

    fn progress(&mut self, uri: &str, from_line: Option<u32>, fatal: bool) {
        let doc = &self.docs[uri];
        if doc.suppressed() {
            return;
        }
        let processing = match from_line {
            None => json!([]),
            Some(l) => json!([{
                "range": range_json(Pos::new(l, 0), doc.analysis.text.end_pos()),
                "kind": if fatal { 2 } else { 1 },
            }]),
        };
        let params = json!({
            "textDocument": {"uri": uri, "version": doc.version},
            "processing": processing,
        });
        self.out.notify("$/lean/fileProgress", params);
    }

    pub fn on_elab(&mut self, uri: &str, generation: u64, ev: ElabEvent) {
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        let version = match &ev {
            ElabEvent::Progress { version, .. }
            | ElabEvent::SetupPublish { version, .. }
            | ElabEvent::LakePublish { version, .. }
            | ElabEvent::Publish { version, .. }
            | ElabEvent::Reached { version, .. }
            | ElabEvent::Complete { version }
            | ElabEvent::Crash { version, .. } => *version,
        };
        if doc.generation != generation || doc.version != version || doc.crashed {
            return;
        }
        match ev {
            ElabEvent::Progress {
                from_line, fatal, ..
            } => self.progress(uri, from_line, fatal),
            ElabEvent::SetupPublish { diagnostics, .. } => {
                if !doc.suppressed() {
                    let mut params =
                        json!({"uri": uri, "version": version, "diagnostics": diagnostics});
                    if self.cfg.incremental && self.caps.incremental {
                        params["isIncremental"] = json!(false);
                    }
                    self.out.notify("textDocument/publishDiagnostics", params);
                }
            }
            ElabEvent::LakePublish {
                uri: other,
                diagnostics,
                ..
            } => {
                // `serialMessagesToCrossFileDiagnostics`: for the file the messages are about.
                let params = json!({"uri": other, "diagnostics": diagnostics});
                self.out.notify("textDocument/publishDiagnostics", params);
            }
            ElabEvent::Publish { new, .. } => self.publish(uri, new),
            ElabEvent::Reached { line, .. } => {
                doc.reached = doc.reached.max(line);
                self.answer_ready(uri);
            }
            ElabEvent::Complete { .. } => {
                doc.complete = true;
                self.ilean_final(uri, version);
                self.answer_ready(uri);
                if self.cfg.refresh {
                    self.server_request("workspace/semanticTokens/refresh");
                    self.server_request("workspace/inlayHint/refresh");
                }
            }
            ElabEvent::Crash { kind, .. } => {
                self.crashed_once.insert(uri.to_owned());
                let doc = self.docs.get_mut(uri).expect("open");
                match doc.worker.as_mut() {
                    Some(w) => w.crash(kind == CrashKind::Exit1),
                    None => self.worker_died(uri, kind == CrashKind::Exit1),
                }
            }
        }
    }

    pub fn on_worker_exit(
        &mut self,
        uri: &str,
        generation: u64,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        self.out.trace.event(
            "worker-exited",
            json!({"uri": uri, "generation": generation, "code": code, "signal": signal}),
        );
        let live = self.docs.get(uri).is_some_and(|d| {
            d.worker
                .as_ref()
                .is_some_and(|w| w.generation == generation)
        });
        if live {
            if let Some(w) = self.docs.get_mut(uri).and_then(|d| d.worker.take()) {
                w.release();
            }
            self.worker_died(uri, code == Some(1));
        }
    }

    /// §1.9: pending requests fail (-32901 for exit code 1, else -32902), a fatal progress
    /// covers the file, and the document waits for a didChange.
    fn worker_died(&mut self, uri: &str, exit1: bool) {
        let doc = self.docs.get_mut(uri).expect("open");
        doc.crashed = true;
        let pending = std::mem::take(&mut doc.pending);
        let (code, msg) = if exit1 {
            (
                -32901,
                format!("Server process for {uri} crashed, see stderr for exception."),
            )
        } else {
            (
                -32902,
                format!(
                    "Server process for {uri} crashed, likely due to a stack overflow or a bug."
                ),
            )
        };
        for q in pending {
            self.out.error(&q.id, code, &msg);
        }
        let doc = &self.docs[uri];
        if !doc.suppressed() {
            let params = json!({
                "textDocument": {"uri": uri, "version": doc.version},
                "processing": [{
                    "range": range_json(Pos::new(0, 0), doc.analysis.text.end_pos()),
                    "kind": 2,
                }],
            });
            self.out.notify("$/lean/fileProgress", params);
        }
    }

    /// Answers every queued request of the document whose need is met, in arrival order.
    pub fn answer_ready(&mut self, uri: &str) {
        loop {
            let Some(doc) = self.docs.get_mut(uri) else {
                return;
            };
            let Some(i) = doc.pending.iter().position(|q| doc.satisfied(&q.need)) else {
                return;
            };
            let q = doc.pending.remove(i);
            self.respond(uri, q);
        }
    }

    /// Queues a document request, answering it at once when possible.
    pub fn enqueue(&mut self, uri: &str, q: Pending) {
        let doc = self.docs.get_mut(uri).expect("open");
        doc.pending.push(q);
        self.answer_ready(uri);
    }

    fn respond(&mut self, uri: &str, q: Pending) {
        match self.answer(uri, &q.method, &q.params) {
            Ok(v) => self.out.result(&q.id, v),
            Err((code, msg)) => self.out.error(&q.id, code, &msg),
        }
    }
}
