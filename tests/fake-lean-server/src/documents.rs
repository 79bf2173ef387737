//! The document lifecycle on the watchdog side (reference §1.4, §1.9): `didOpen` starts a
//! worker process and an elaboration thread, with Lake's per-file setup (setup lines, stale
//! imports, a failed `lake setup-file`) and then Lean's import of the header (a module that does
//! not exist: `header.rs`); `didChange` applies edits, bumps the version and
//! restarts a crashed worker (or one whose imports changed); `didClose` fails pending requests
//! with -32801 and clears the diagnostics; `didSave` and watched-file changes mark importers'
//! imports stale. What is then reported is in `reports.rs`.

use crate::analysis::Analysis;
use crate::config::{CloseClear, StaleNotice, TwinMode};
use crate::elab::{self, Job};
use crate::header::HeaderError;
use crate::project::Project;
use crate::server::Server;
use crate::text::{Pos, Text, range_json};
use crate::worker::Worker;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::mpsc::Sender;

pub const STALE_SHOULD: &str = "Imports are out of date and should be rebuilt; use the \"Restart File\" command in your editor.";
pub const STALE_MUST: &str =
    "Imports are out of date and must be rebuilt; use the \"Restart File\" command in your editor.";

/// What a queued request waits for.
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    Now,
    /// Elaboration past this line.
    Line(u32),
    /// The whole current version.
    Complete,
    /// `waitForDiagnostics`: this version or a later one, complete.
    Version(i64),
}

pub struct Pending {
    pub id: Value,
    pub method: String,
    pub params: Value,
    pub need: Need,
}

pub struct Doc {
    pub uri: String,
    pub analysis: Arc<Analysis>,
    pub version: i64,
    pub max_version: i64,
    /// The version its worker was started at (the open, or the last restart).
    pub started_version: i64,
    pub generation: u64,
    pub worker: Option<Worker>,
    pub elab: Sender<Job>,
    pub mode: String,
    pub reached: u32,
    pub complete: bool,
    pub crashed: bool,
    /// Diagnostics of the current version so far.
    pub diags: Vec<Value>,
    /// Incremental mode: the replacing publish of this version went out.
    pub replaced: bool,
    pub sticky: Vec<Value>,
    pub pending: Vec<Pending>,
    pub header_error: Option<HeaderError>,
    /// The options Lake's setup gave the file when its worker started.
    pub options: Vec<(String, String)>,
    /// The module Lake set it up as (its real path's, `_unknown` outside every library).
    pub setup_module: String,
    /// Lake's diagnostics of other files, published with the worker's next setup (new Lake).
    pub lake_publishes: Vec<(String, Vec<Value>)>,
    /// The module the watchdog named it by when it opened (`references`, newer watchdogs).
    pub module: Option<String>,
}

impl Doc {
    /// Notifications for a version older than the newest received are dropped (§1.4).
    pub(crate) fn suppressed(&self) -> bool {
        self.version < self.max_version
    }

    pub(crate) fn satisfied(&self, need: &Need) -> bool {
        !self.crashed
            && match *need {
                Need::Now => true,
                Need::Line(l) => self.complete || self.reached > l,
                Need::Complete => self.complete,
                Need::Version(v) => self.version >= v && self.complete,
            }
    }
}

impl Server {
    pub fn did_open(&mut self, p: &Value) {
        let td = &p["textDocument"];
        let (Some(uri), Some(text)) = (td["uri"].as_str(), td["text"].as_str()) else {
            return;
        };
        let version = td["version"].as_i64().unwrap_or(0);
        let mode = p["dependencyBuildMode"]
            .as_str()
            .unwrap_or("always")
            .to_owned();
        if let Some(old) = self.docs.remove(uri) {
            self.out
                .trace
                .violation("double didOpen", json!({"uri": uri}));
            eprintln!(
                "fake-lake: didOpen of {uri}, which is already open: a second worker starts and the first one leaks"
            );
            if let Some(w) = old.worker {
                self.leaked.push(w);
            }
        }
        let analysis = Arc::new(Analysis::new(Text::new(text)));
        if let Some(msg) = analysis.flags.watchdog_exit.clone() {
            self.die(&msg);
        }
        let (generation, elab) = self.new_generation(uri);
        let module = crate::references::module_key(&self.project, uri, true);
        let doc = Doc {
            uri: uri.to_owned(),
            analysis,
            version,
            max_version: version,
            started_version: version,
            generation,
            worker: None,
            elab,
            mode,
            reached: 0,
            complete: false,
            crashed: false,
            diags: Vec::new(),
            replaced: false,
            sticky: Vec::new(),
            pending: Vec::new(),
            header_error: None,
            options: Vec::new(),
            setup_module: String::new(),
            lake_publishes: Vec::new(),
            module,
        };
        self.docs.insert(uri.to_owned(), doc);
        self.start_worker(uri);
    }

    fn new_generation(&mut self, uri: &str) -> (u64, Sender<Job>) {
        self.next_gen += 1;
        let generation = self.next_gen;
        (
            generation,
            elab::spawn(uri.to_owned(), generation, self.events.clone()),
        )
    }

    /// Starts the worker process of a document and its first elaboration, with Lake's
    /// per-file setup (§1.3): setup lines, and the header errors of stale imports or a failed
    /// `lake setup-file`; then Lean's own import of the header (`header.rs`).
    fn start_worker(&mut self, uri: &str) {
        let events = self.events.clone();
        let generation = self.docs[uri].generation;
        match Worker::spawn(uri, generation, events) {
            Ok(w) => {
                self.out.trace.event(
                    "worker-spawned",
                    json!({"uri": uri, "pid": w.pid, "generation": generation}),
                );
                self.docs.get_mut(uri).expect("open").worker = Some(w);
            }
            Err(e) => eprintln!("fake-lake: cannot start a worker for {uri}: {e}"),
        }
        let open = self.open_analyses();
        let doc = self.docs.get_mut(uri).expect("open");
        doc.started_version = doc.version;
        let doc = &self.docs[uri];
        let a = doc.analysis.clone();
        let mode = doc.mode.clone();
        let path = Project::path_of_uri(uri);
        let closure = self.project.import_closure(&a.outline.imports, &open);
        // Lake runs only for `file:` URIs (§A2): other schemes get no setup lines.
        let mut setup_lines = Vec::new();
        if path.is_some() {
            setup_lines.extend(self.cfg.setup_lines.iter().cloned());
            setup_lines.extend(a.flags.setup_lines.iter().cloned());
        }
        let missing = path.as_ref().is_some_and(|p| !p.exists());
        let options = path.as_ref().map_or_else(Vec::new, |p| {
            crate::lakefile::setup_options(&self.project.root, p, self.cfg.external_options)
        });
        let setup_module = path
            .as_ref()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .and_then(|p| self.project.module_of_path(&p))
            .unwrap_or_else(|| "_unknown".into());
        let shown = path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let failed =
            |stderr: &str| HeaderError::Setup(self.cfg.setup_text.failure(&shown, "", stderr));
        let mut header_error = None;
        let mut lake_publishes = Vec::new();
        // Mid Lake builds a workspace module's imports from its file on disk (`header.rs`).
        let lake_built = path
            .as_ref()
            .and_then(|p| crate::header::lake_built(&self.project.root, p, self.cfg.setup_imports));
        let lake_imports = lake_built.as_ref().unwrap_or(&a.outline.imports);
        // New Lake builds the imports and fails the setup when one does not build (LLS Part 3).
        let failing = || match (self.cfg.setup_build, path.is_some()) {
            (Some(era), true) => {
                crate::lake_build::failing_imports(&self.project.root, lake_imports)
                    .map(|failure| (era, failure))
            }
            _ => None,
        };
        if missing && self.cfg.twin == TwinMode::Fail {
            header_error = Some(failed(&format!(
                "error: no such file or directory (error code: 2)\n  file: {shown}\n"
            )));
        } else if let (Some(log), true) = (crate::faults::invalid_config(), path.is_some()) {
            // `lake setup-file` exits 1 under LAKE_INVALID_CONFIG (SPEC:62), so the file's header
            // shows its failure (LLS:82); what it prints is the load log.
            header_error = Some(failed(&format!("{log}\n")));
        } else if let Some(stderr) = a
            .flags
            .setup_fail
            .as_ref()
            .filter(|_| !a.flags.setup_fail_twins_only || shown.contains("/.lake/beam/"))
        {
            header_error = Some(failed(stderr));
        } else if path.is_some() {
            let stale: Vec<String> = closure
                .iter()
                .filter(|m| {
                    self.dirty.contains(*m)
                        || (self.cfg.stale_mtime
                            && crate::lake_build::is_stale(&self.project.root, m))
                })
                .cloned()
                .collect();
            if mode == "never" {
                // Under `--no-build` an import that does not build is out of date (exit 3).
                if a.flags.stale_imports || !stale.is_empty() || failing().is_some() {
                    header_error = Some(HeaderError::Setup(STALE_MUST.to_owned()));
                }
            } else if let Some((era, failure)) = failing() {
                // Each stderr line of setup-file is a setup line (LLS:98); the header error is
                // what that era of Lake reports.
                setup_lines.extend(failure.log.iter().cloned());
                header_error = Some(HeaderError::Setup(failure.header_error(era)));
                if era == crate::lake_build::SetupBuild::New {
                    lake_publishes = failure
                        .diagnostics
                        .into_iter()
                        .map(|(file, ds)| (self.project.lean_uri(&file), ds))
                        .collect();
                }
            } else {
                let n = stale.len();
                for (i, m) in stale.iter().enumerate() {
                    if self.cfg.stale_mtime {
                        let _ = crate::lake_build::write_artifacts(&self.project.root, m);
                    }
                    self.dirty.remove(m);
                    setup_lines.push(format!("✔ [{}/{n}] Built {m}", i + 1));
                }
            }
        }
        if header_error.is_none() {
            // Lake set the file up; Lean imports its header (`Elab.processHeader`), logging a
            // failure at the header's first token.
            let at = crate::lexer::skip_ws(a.code(), 0, a.code().len());
            header_error = crate::header::import_error(
                &self.project.root,
                &a.outline.imports,
                at,
                lake_built.as_deref(),
                self.cfg.import_text,
            );
        }
        let doc = self.docs.get_mut(uri).expect("open");
        if doc.mode == "once" {
            doc.mode = "never".into();
        }
        doc.header_error = header_error;
        doc.options = options;
        doc.setup_module = setup_module;
        doc.lake_publishes = lake_publishes;
        self.send_job(uri, setup_lines);
    }

    fn send_job(&mut self, uri: &str, setup_lines: Vec<String>) {
        let armed = !self.crashed_once.contains(uri);
        let doc = self.docs.get_mut(uri).expect("open");
        doc.reached = 0;
        doc.complete = false;
        doc.diags.clear();
        doc.replaced = false;
        let job = Job {
            version: doc.version,
            analysis: doc.analysis.clone(),
            setup_lines,
            header_error: doc.header_error.clone(),
            options: doc.options.clone(),
            module: doc.setup_module.clone(),
            lake_publishes: std::mem::take(&mut doc.lake_publishes),
            crash_once_armed: armed,
            order: self.cfg.order,
            gate_dir: self.cfg.gate_dir.clone(),
            slow_tick: self.cfg.slow_tick,
        };
        let _ = doc.elab.send(job);
    }

    pub fn did_change(&mut self, p: &Value) {
        let td = &p["textDocument"];
        let Some(uri) = td["uri"].as_str() else {
            return;
        };
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        let changes = p["contentChanges"].as_array().cloned().unwrap_or_default();
        if changes.is_empty() {
            return;
        }
        let version = td["version"].as_i64().unwrap_or(doc.version + 1);
        if version <= doc.max_version {
            self.out.trace.violation(
                "non-increasing version",
                json!({"uri": uri, "version": version, "newest": doc.max_version}),
            );
        }
        let mut text = doc.analysis.text.clone();
        for c in &changes {
            if let Err(e) = text.apply_change(c) {
                eprintln!("fake-lake: bad didChange for {uri}: {e}");
            }
        }
        let old_imports = doc.analysis.outline.imports.clone();
        doc.analysis = Arc::new(Analysis::new(text));
        doc.version = version;
        doc.max_version = doc.max_version.max(version);
        if self.cfg.edit_cancels {
            let cancelled: Vec<Pending> = doc
                .pending
                .extract_if(.., |q| !matches!(q.need, Need::Version(_)))
                .collect();
            for q in cancelled {
                self.out.error(&q.id, -32801, "File changed.");
            }
        }
        let doc = self.docs.get_mut(uri).expect("open");
        let header_changed = doc.analysis.outline.imports != old_imports;
        if doc.crashed || header_changed {
            // §1.9: only a didChange restarts a crashed worker; §1.4: a changed header makes
            // the worker exit with code 2 and the watchdog restart it with the current text.
            doc.crashed = false;
            if let Some(w) = doc.worker.take() {
                w.release();
            }
            let (generation, elab) = self.new_generation(uri);
            let doc = self.docs.get_mut(uri).expect("open");
            doc.generation = generation;
            doc.elab = elab;
            self.start_worker(uri);
        } else {
            self.send_job(uri, Vec::new());
        }
    }

    pub fn did_close(&mut self, p: &Value) {
        let Some(uri) = p["textDocument"]["uri"].as_str() else {
            return;
        };
        if self.docs.contains_key(uri) {
            self.ilean_closed(uri);
        }
        let Some(doc) = self.docs.remove(uri) else {
            return;
        };
        let msg = format!("Cannot process request to closed file '{uri}'");
        for q in doc.pending {
            self.out.error(&q.id, -32801, &msg);
        }
        let hung: Vec<Value> = self
            .hung
            .extract_if(.., |(_, u)| u == uri)
            .map(|(id, _)| id)
            .collect();
        for id in hung {
            self.out.error(&id, -32801, &msg);
        }
        if let Some(w) = doc.worker {
            w.release();
        }
        let version = match self.cfg.close_clear {
            CloseClear::Last => doc.version,
            CloseClear::Started => doc.started_version,
            CloseClear::None => return,
        };
        self.out.notify(
            "textDocument/publishDiagnostics",
            json!({"uri": uri, "version": version, "diagnostics": []}),
        );
    }

    /// `didSave`: handled from the mid-era watchdog on (`handleDidSave`); the 2022 watchdog has
    /// no handler and logs the notification as unsupported.
    pub fn did_save(&mut self, p: &Value) {
        let Some(uri) = p["textDocument"]["uri"].as_str() else {
            return;
        };
        if self.cfg.stale_notice == StaleNotice::None {
            eprintln!("Got unsupported notification: textDocument/didSave");
            self.mark_dirty(uri);
            return;
        }
        self.source_changed(uri);
    }

    /// Lake sees a module's source changed whatever the URI's form, and whatever the watchdog
    /// made of it (it goes by the file).
    fn mark_dirty(&mut self, uri: &str) {
        if let Some(module) = self.project.module_of_uri(uri) {
            self.dirty.insert(module);
        }
    }

    /// `didSave` of a file, or a watched `.lean` change: every open document whose import
    /// closure holds that exact URI string, as Lean built it (the watchdog's `importedBy`, keyed
    /// by the worker's `$/lean/importClosure`: `Environment.allImportedModuleNames`, the whole
    /// transitive closure, through `documentUriFromModule`; LLS Part 3 "URIs"), gets the sticky
    /// "should be rebuilt" diagnostic (§1.4, Gap 5); a URI in another form reaches no importer.
    pub fn source_changed(&mut self, uri: &str) {
        let Some(module) = self.project.module_of_uri(uri) else {
            return;
        };
        self.dirty.insert(module);
        let open = self.open_analyses();
        let importers: Vec<String> = self
            .docs
            .iter()
            .filter(|(u, d)| u.as_str() != uri && !d.crashed)
            .map(|(u, _)| u.clone())
            .collect();
        for u in importers {
            let imports = self.docs[&u].analysis.outline.imports.clone();
            let closure = self.project.import_closure_uris(&imports, &open);
            if !closure.iter().any(|imported| imported == uri) {
                continue;
            }
            let doc = self.docs.get_mut(&u).expect("open");
            let text = &doc.analysis.text;
            let sticky = json!({
                "range": range_json(Pos::new(0, 0), Pos::new(1, 0)),
                "fullRange": range_json(Pos::new(0, 0), text.end_pos()),
                "severity": 3,
                "message": STALE_SHOULD,
            });
            doc.sticky.retain(|s| s["message"] != STALE_SHOULD);
            doc.sticky.push(sticky);
            doc.replaced = false;
            self.publish(&u, Vec::new());
        }
    }

    pub fn watched_files(&mut self, p: &Value) {
        for c in p["changes"].as_array().cloned().unwrap_or_default() {
            let Some(uri) = c["uri"].as_str() else {
                continue;
            };
            if uri.ends_with(".lean") && c["type"].as_i64() != Some(3) {
                // The 2022 watchdog reads only `.ilean` changes.
                match self.cfg.stale_notice {
                    StaleNotice::Closure => self.source_changed(uri),
                    StaleNotice::None => self.mark_dirty(uri),
                }
            } else if let Some(path) = Project::path_of_uri(uri)
                && path.extension().is_some_and(|e| e == "ilean")
            {
                // A rebuilt module (found by its path, as the watchdog reads `.ilean` changes):
                // its importers' imports are no longer stale.
                let lib = self.project.root.join(".lake/build/lib/lean");
                if let Ok(relative) = path.with_extension("").strip_prefix(&lib) {
                    let module = relative.to_string_lossy().replace('/', ".");
                    self.dirty.remove(&module);
                }
            }
        }
    }

    pub fn open_analyses(&self) -> Vec<(String, Arc<Analysis>)> {
        let mut v: Vec<_> = self
            .docs
            .iter()
            .map(|(u, d)| (u.clone(), d.analysis.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}
