//! Lean's diagnostics, read: what each published diagnostic is, and what a set of them means
//! for counts, readiness and the results the tools return.
//!
//! Contract:
//! 0. A [`Diagnostic`] is read into types with serde (`range`, `fullRange`, `severity`,
//!    `message`, `source`, `isSilent`); the JSON Lean sent is kept only to be forwarded as it
//!    is. Its *extent* is its `fullRange` when Lean gave one, else its `range`: Lean publishes
//!    every message through `msgToInteractiveDiagnostic`, which cuts the `range` of a message
//!    of several lines at the start of the line after its start (reference Part 4,
//!    "Multi-line diagnostics"), so `range` says where a message starts and, for one line, where
//!    it ends, never how far a longer one reaches. What a result shows of a diagnostic's place
//!    is its extent. A diagnostic Lean sent malformed counts as one of unknown severity.
//! 1. [`Diagnostic::classify`] sorts what `textDocument/publishDiagnostics` carries into
//!    elaboration diagnostics (counted), Lake `setup-file` lines (progress, never counted),
//!    stale-import notices (the barrier is incomplete) and silent ones (dropped: they are
//!    editor-only, like "Goals accomplished!").
//!    - A Lake setup line is an information diagnostic with no `source`, whose `range` is
//!      0:0–1:0 or 0:0–0:0, whose message is one line and is not a stale-import notice: the
//!      worker builds one by hand for each stderr line of `lake setup-file` (its `range` fixed,
//!      its `fullRange` the whole file; lean-language-server.md §1.3, transcripts "Gap 6").
//!    - A stale-import notice is a diagnostic saying imports "are out of date and should be
//!      rebuilt" (after a dependency was saved) or "must be rebuilt" (a build was needed but
//!      not allowed), or Lake's "target is out-of-date and needs to be rebuilt".
//!    - New Lake's "Failed to build module dependencies." is no stale-import notice: Lake tried
//!      to build the imports and failed, and rebuilding fails the same way until the import is
//!      fixed (reference `lean-language-server.md` Part 3). It is the file's header error, an
//!      ordinary error (it explains the fatal progress that comes with it);
//!      [`Diagnostic::import_build_failure`] reads which modules failed and Lake's errors from
//!      the build log it carries (the `lake build` log format, Part 3 "`lake build +M`"): `✖ [i/n]
//!      Building M` job lines and `- M` lines after `Some required targets logged failures:`
//!      name the modules, `error:` lines are Lake's errors. Lake writes the log after that line
//!      (its `LakeBuildError.summary`) or, when it reports on stderr, before it.
//! 2. Counts cover every elaboration diagnostic by severity; readiness is `save_ready` unless an
//!    error is present (`reason: "documentErrors"`), with each error as blocking evidence.
//! 3. Severities are named `error`, `warning`, `information`, `hint`, `unknown`; live logs map
//!    them to MCP levels `error`, `warning`, `info`, `debug`.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::lean::json::object;
use crate::lean::text::{Position, Range};
use crate::mcp::LogLevel;

/// What one published diagnostic is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A result of elaboration: counted and reported.
    Lean,
    /// A line of Lake's `setup-file` output: progress only.
    SetupLine,
    /// Imports are out of date: the diagnostics are not final.
    StaleImports,
    /// Editor-only (`isSilent`): dropped.
    Silent,
}

/// One diagnostic as Lean published it, read (see the contract).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The diagnostic exactly as Lean sent it, to forward.
    pub raw: Value,
    /// 1 error, 2 warning, 3 information, 4 hint; `None` when absent.
    pub severity: Option<u64>,
    /// The message text.
    pub message: String,
    /// `range`: for a message of several lines, cut at the next line's start.
    pub range: Option<Range>,
    /// `fullRange`: the message's extent, when Lean gave it.
    pub full_range: Option<Range>,
    /// `source`, when Lean named one.
    pub source: Option<String>,
    /// `isSilent`: editor-only.
    pub silent: bool,
}

/// The fields of a diagnostic on the wire.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Wire {
    range: Option<Range>,
    full_range: Option<Range>,
    severity: Option<u64>,
    message: String,
    source: Option<String>,
    is_silent: Option<bool>,
}

/// The stale-import texts Lean and Lake use.
const STALE_IMPORT_TEXTS: [&str; 3] = [
    "Imports are out of date and should be rebuilt",
    "Imports are out of date and must be rebuilt",
    "target is out-of-date and needs to be rebuilt",
];

/// New Lake's `setup-file` line when building a file's imports failed (`Lake.setupFile`).
pub const IMPORT_BUILD_FAILED: &str = "Failed to build module dependencies.";

/// At most this many of Lake's error lines are kept, each at most this long.
const LAKE_ERRORS: usize = 20;
const LAKE_ERROR_CHARS: usize = 1000;

/// What Lake said when it could not build a file's imports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportBuildFailure {
    /// The modules whose build failed, in the log's order, without repeats.
    pub modules: Vec<String>,
    /// Lake's `error:` lines, in order.
    pub errors: Vec<String>,
}

impl Diagnostic {
    /// Reads one entry of a publish.
    pub fn new(raw: Value) -> Diagnostic {
        let wire = Wire::deserialize(&raw).unwrap_or_default();
        Diagnostic {
            severity: wire.severity,
            message: wire.message,
            range: wire.range,
            full_range: wire.full_range,
            source: wire.source,
            silent: wire.is_silent == Some(true),
            raw,
        }
    }

    /// Where it starts.
    pub fn start(&self) -> Option<Position> {
        self.extent().map(|r| r.start)
    }

    /// Its extent: `fullRange`, else `range` (see the contract).
    pub fn extent(&self) -> Option<Range> {
        self.full_range.or(self.range)
    }

    /// What this diagnostic is (see the contract).
    pub fn classify(&self) -> Kind {
        if self.silent {
            return Kind::Silent;
        }
        if STALE_IMPORT_TEXTS.iter().any(|t| self.message.contains(t)) {
            return Kind::StaleImports;
        }
        let origin = Position::new(0, 0);
        // The `range` the worker gives a setup line by hand (never its extent, the whole file).
        let at_header = self.range.is_some_and(|r| {
            r.start == origin && (r.end == origin || r.end == Position::new(1, 0))
        });
        if self.severity == Some(3)
            && self.source.is_none()
            && at_header
            && !self.message.contains('\n')
        {
            return Kind::SetupLine;
        }
        Kind::Lean
    }

    /// Lake's report that it could not build the file's imports, when this is one: an error
    /// at the header with a line saying so (see the contract).
    pub fn import_build_failure(&self) -> Option<ImportBuildFailure> {
        let at_header = self.start() == Some(Position::new(0, 0));
        let says = self
            .message
            .lines()
            .any(|l| l.trim() == IMPORT_BUILD_FAILED);
        if !(self.is_error() && at_header && says) {
            return None;
        }
        let mut failure = ImportBuildFailure::default();
        // A job's or a target's caption: the module, without a facet (`M:olean`).
        let add = |modules: &mut Vec<String>, caption: &str| {
            let module = caption.split(':').next().unwrap_or_default().trim();
            if !module.is_empty() && !modules.iter().any(|m| m == module) {
                modules.push(module.to_owned());
            }
        };
        let mut listing = false;
        for line in self.message.lines().map(str::trim) {
            if let Some(job) = line.strip_prefix('✖') {
                // `✖ [2/5] Building M` (newer Lake adds ` (1.2s)`).
                let job = job.trim_start();
                let after = job.split_once(']').map_or(job, |(_, rest)| rest).trim();
                let mut words = after.split_whitespace();
                if let (Some(_verb), Some(module)) = (words.next(), words.next()) {
                    add(&mut failure.modules, module);
                }
            } else if line == "Some required targets logged failures:" {
                listing = true;
                continue;
            } else if let Some(caption) = line.strip_prefix("- ").filter(|_| listing) {
                add(
                    &mut failure.modules,
                    caption.split_whitespace().next().unwrap_or_default(),
                );
                continue;
            }
            listing = false;
            if line.starts_with("error:") && failure.errors.len() < LAKE_ERRORS {
                failure
                    .errors
                    .push(line.chars().take(LAKE_ERROR_CHARS).collect());
            }
        }
        Some(failure)
    }

    /// The severity's name.
    pub fn severity_name(&self) -> &'static str {
        match self.severity {
            Some(1) => "error",
            Some(2) => "warning",
            Some(3) => "information",
            Some(4) => "hint",
            _ => "unknown",
        }
    }

    /// The MCP log level a live `lean.diagnostic` log of it has.
    pub fn log_level(&self) -> LogLevel {
        match self.severity {
            Some(1) => LogLevel::Error,
            Some(2) => LogLevel::Warning,
            Some(3) => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }

    /// Whether it is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Some(1)
    }

    /// Whether `diagnostic_scope` admits it: `errors` only errors, `all` everything.
    pub fn in_scope(&self, all: bool) -> bool {
        all || self.is_error()
    }

    /// Its extent as a result shows it (`null` when Lean gave none).
    pub fn range(&self) -> Value {
        self.extent().map_or(Value::Null, Range::to_json)
    }

    /// Whether it is Lake's report that the file could not be set up
    /// (`Language.diagnosticsOfHeaderError`: an error from 0:0 over the whole file) in a file
    /// whose last line is `last_line`. Its extent says so, never its cut `range`.
    pub fn spans_file(&self, last_line: u32) -> bool {
        self.is_error()
            && self
                .extent()
                .is_some_and(|r| r.start == Position::new(0, 0) && r.end.line >= last_line)
    }

    /// A key that tells two publishes' copies of one diagnostic apart from a new one.
    pub fn identity(&self) -> String {
        format!(
            "{}|{:?}|{}",
            self.severity.unwrap_or(0),
            self.extent(),
            self.message
        )
    }
}

/// `{error, warning, information, hint, unknown, total}` over elaboration diagnostics.
pub fn counts(diagnostics: &[Diagnostic]) -> Value {
    let mut by = [0u64; 5];
    for d in diagnostics {
        let slot = match d.severity {
            Some(s @ 1..=4) => (s - 1) as usize,
            _ => 4,
        };
        by[slot] += 1;
    }
    json!({
        "error": by[0], "warning": by[1], "information": by[2], "hint": by[3], "unknown": by[4],
        "total": by.iter().sum::<u64>(),
    })
}

/// Whether the document could be saved as is, and what blocks it: `reason` is `headerFailed`
/// when Lean could not process the header (`header_failed`: `mirror`'s `Document::header_error`,
/// told by shape, as Lake's words differ by era), so nothing after it was checked.
pub fn readiness(diagnostics: &[Diagnostic], header_failed: bool) -> Value {
    let blocking: Vec<Value> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            json!({
                "range": d.range(),
                "severity": d.severity_name(),
                "message": d.message,
                "save_blocking": true,
                "completion_blocking": true,
            })
        })
        .collect();
    let reason = match (blocking.is_empty(), header_failed) {
        (_, true) => "headerFailed",
        (true, false) => "ok",
        (false, false) => "documentErrors",
    };
    object([
        ("save_ready", blocking.is_empty().into()),
        ("reason", reason.into()),
        ("blocking_error_count", blocking.len().into()),
        ("blocking_diagnostics", Value::Array(blocking)),
        ("blocking_messages", json!([])),
    ])
}

/// One diagnostic as a result item.
pub fn item(d: &Diagnostic, path: &str, uri: &str, version: i64) -> Value {
    json!({
        "path": path,
        "uri": uri,
        "version": version,
        "severity": d.severity_name(),
        "range": d.range(),
        "message": d.message,
        "completion_blocking": d.is_error(),
        "save_blocking": d.is_error(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(value: Value) -> Diagnostic {
        Diagnostic::new(value)
    }

    fn header(end_line: u64) -> Value {
        json!({"start": {"line": 0, "character": 0}, "end": {"line": end_line, "character": 0}})
    }

    #[test]
    fn lake_setup_lines_are_told_apart_from_elaboration_output() {
        let setup = diagnostic(json!({
            "range": header(1), "fullRange": header(9), "severity": 3,
            "message": "✔ [2/7] Built Fixture.Basic"
        }));
        assert_eq!(setup.classify(), Kind::SetupLine);
        let old_style =
            diagnostic(json!({"range": header(0), "severity": 3, "message": "Building X"}));
        assert_eq!(old_style.classify(), Kind::SetupLine);
        // `#eval` output at the top of a file comes from Lean, with a source.
        let eval = diagnostic(json!({
            "range": header(1), "severity": 3, "source": "Lean 4", "message": "42"
        }));
        assert_eq!(eval.classify(), Kind::Lean);
    }

    #[test]
    fn the_extent_is_the_full_range_when_lean_gave_one() {
        let cut = diagnostic(
            json!({"range": header(1), "fullRange": header(9), "severity": 1,
            "source": "Lean 4", "message": "Failed to build module dependencies."}),
        );
        assert_eq!(cut.range(), header(9));
        assert!(cut.spans_file(9), "its extent covers the file");
        assert!(!cut.spans_file(10));
        let uncut = diagnostic(json!({"range": header(1), "severity": 1, "message": "m"}));
        assert_eq!(uncut.range(), header(1));
        assert!(uncut.spans_file(1) && !uncut.spans_file(2));
        let information = diagnostic(json!({"range": header(9), "severity": 3, "message": "m"}));
        assert!(!information.spans_file(9), "only an error");
        let malformed = diagnostic(json!({"range": "everywhere", "severity": 1, "message": "m"}));
        assert_eq!((malformed.severity, malformed.range()), (None, Value::Null));
    }

    #[test]
    fn stale_imports_and_silent_ones_are_recognised() {
        let should = diagnostic(json!({"range": header(1), "severity": 3,
            "message": "Imports are out of date and should be rebuilt; use the \"Restart File\" command in your editor."}));
        assert_eq!(should.classify(), Kind::StaleImports);
        let must = diagnostic(json!({"range": header(40), "severity": 1,
            "message": "Imports are out of date and must be rebuilt; use the \"Restart File\" command in your editor."}));
        assert_eq!(must.classify(), Kind::StaleImports);
        let silent = diagnostic(json!({"range": header(1), "severity": 3, "isSilent": true,
            "message": "Goals accomplished!"}));
        assert_eq!(silent.classify(), Kind::Silent);
    }

    #[test]
    fn a_failed_import_build_is_no_stale_notice_and_names_modules_and_errors() {
        // New Lake: `LakeBuildError.summary`, the line first, then the log.
        let summary = diagnostic(json!({"range": header(40), "severity": 1,
            "message": "Failed to build module dependencies.\n✖ [2/3] Building Fixture.Broken (0.1s)\nerror: ./Fixture/Broken.lean:3:20: unknown identifier 'oops'\nSome required targets logged failures:\n- Fixture.Broken\n- Fixture.Other:olean\nerror: build failed"}));
        assert_eq!(summary.classify(), Kind::Lean);
        let failure = summary.import_build_failure().expect("a build failure");
        assert_eq!(failure.modules, ["Fixture.Broken", "Fixture.Other"]);
        assert_eq!(
            failure.errors,
            [
                "error: ./Fixture/Broken.lean:3:20: unknown identifier 'oops'",
                "error: build failed"
            ]
        );
        // Lake on stderr: the log first, then the line.
        let stderr = diagnostic(json!({"range": header(1), "severity": 1,
            "message": "✖ [1/1] Building A.B\nerror: A/B.lean:1:0: boom\nFailed to build module dependencies."}));
        let failure = stderr.import_build_failure().expect("a build failure");
        assert_eq!(failure.modules, ["A.B"]);
        assert_eq!(failure.errors, ["error: A/B.lean:1:0: boom"]);
        // Only a header error says so; a message quoting it elsewhere does not.
        let elsewhere = diagnostic(
            json!({"severity": 1, "message": "Failed to build module dependencies.",
            "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 3}}}),
        );
        assert_eq!(elsewhere.import_build_failure(), None);
        let info = diagnostic(json!({"range": header(1), "severity": 3,
            "message": "Failed to build module dependencies."}));
        assert_eq!(info.import_build_failure(), None);
    }

    #[test]
    fn counts_and_readiness_follow_severity() {
        let set = [
            diagnostic(json!({"severity": 1, "message": "Type mismatch", "range": header(0)})),
            diagnostic(json!({"severity": 2, "message": "declaration uses `sorry`"})),
            diagnostic(json!({"message": "no severity"})),
        ];
        assert_eq!(
            counts(&set),
            json!({"error": 1, "warning": 1, "information": 0, "hint": 0, "unknown": 1, "total": 3})
        );
        let ready = readiness(&set, false);
        assert_eq!(ready["save_ready"], false);
        assert_eq!(ready["reason"], "documentErrors");
        assert_eq!(ready["blocking_error_count"], 1);
        assert_eq!(readiness(&[], false)["reason"], "ok");
        assert_eq!(readiness(&set, true)["reason"], "headerFailed");
    }
}
