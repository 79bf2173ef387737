//! The environment switches of `fake-lake serve`, read once at start (README "Environment").
//! Every switch has a default that behaves like a plain, healthy Lean 4.24-era server.

use std::path::PathBuf;
use std::time::Duration;

/// Which comes first at the end of a version: the last `publishDiagnostics` or the
/// `processing: []` progress (reference §1.5: both happen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagOrder {
    /// Progress-done, then the version's single publish (a file that finishes within
    /// `server.reportDelayMs`).
    ProgressFirst,
    /// A publish after each command that reports something, then progress-done.
    DiagnosticsFirst,
}

/// The form of `textDocument/definition` answers (reference §1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefinitionMode {
    Links,
    Locations,
    /// Targets in the requesting document as `LocationLink[]` (the worker), others as
    /// `Location[]` (the watchdog's .ilean fast path).
    Mixed,
    /// `Location[]` and `LocationLink[]` on alternate requests.
    Alternate,
}

/// What Lake's `setup-file` does for a `file:` URI whose path does not exist (§A1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwinMode {
    /// New and old Lake: the document works, outside every library.
    External,
    /// Mid-2025 Lake: `realPath` fails, the header shows "`lake setup-file` failed".
    Fail,
}

/// How the worker words a failed `lake setup-file` in the header error (LLS Part 3, "A file that
/// is not on disk"; Gap 5 "Other setup failures").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupText {
    /// Mid-2025 worker: `` `{cmd}` failed:\n{stdout}\nstderr:\n{stderr} ``, where `{cmd}` starts
    /// with Lake's absolute path (`determineLakePath` reads `LAKE`, which Lake sets to itself).
    Command,
    /// Intermediate and new workers: Lake's stdout, else its stderr, else
    /// `lake setup-file failed`, with no command.
    Bare,
}

impl SetupText {
    /// The header error of a `lake setup-file <path> -` that exited non-zero.
    pub fn failure(self, path: &str, stdout: &str, stderr: &str) -> String {
        match self {
            SetupText::Command => {
                let lake = std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| "lake".into());
                format!("`{lake} setup-file {path} -` failed:\n{stdout}\nstderr:\n{stderr}")
            }
            SetupText::Bare if !stdout.trim().is_empty() => stdout.to_owned(),
            SetupText::Bare if !stderr.trim().is_empty() => stderr.to_owned(),
            SetupText::Bare => "lake setup-file failed".to_owned(),
        }
    }
}

/// How this Lean's `System.Uri.pathToUri` writes the URIs it builds itself (Lean's
/// `Init/System/Uri.lean`; reference Part 3, "URIs").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UriForm {
    /// Newer copies: `; : ? # [ ] @ & = + $ , ! ' ( ) * %`, space, control characters, DEL and
    /// non-ASCII bytes as `%XX` in uppercase hex.
    New,
    /// Older copies: the same in lowercase hex, but space and control characters as they are.
    Old,
}

/// What answers for a module no worker reported (the watchdog's `.ilean` index, README "The
/// reference index").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ileans {
    /// Every `.lean` file under the root, as it is on disk (the fake's stand-in, the default).
    Sources,
    /// Only modules with an `.ilean` in `.lake/build/lib/lean`, as Lean loads them
    /// (`startLoadingReferences`, `handleDidChangeWatchedFiles`): a module never built has none.
    Built,
}

/// How the watchdog finds the module of a document (README "The reference index").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefsEra {
    /// Newer watchdogs: fixed at `didOpen` (`moduleFromDocumentUri`, `external:<uri>` outside
    /// every source directory); requests about a document that is not open find no module.
    Open,
    /// Older watchdogs: from the URI's path whenever it is needed
    /// (`searchModuleNameOfFileName`, `searchModuleNameOfUri`), open or not; a path outside
    /// every source directory has none.
    Path,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Garbage {
    /// `Content-Length: abc`.
    Header,
    /// A well-framed body that is not JSON.
    Json,
    /// A frame cut off inside its body, then the watchdog dies as if killed while writing.
    Cut,
    /// `Content-Length: 1099511627776`, a length no message has; the server goes on.
    Huge,
}

/// The publish that clears a closed document's diagnostics, by Lean's era (LLS Part 3 and the
/// watchdog's `handleDidClose`/`terminateFileWorker`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseClear {
    /// Newer watchdogs: at once, with the document's last version.
    Last,
    /// Older watchdogs: when the worker exits, with the version the worker was started at (the
    /// open or the last restart), captured when it started.
    Started,
    /// The first watchdog: no clearing publish at all.
    None,
}

/// Whom the watchdog tells that a saved or changed `.lean` file made their imports stale
/// (Lean's `Server/Watchdog.lean` in each era; README "Protocol behaviour").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StaleNotice {
    /// Mid and newer watchdogs: `handleDidSave` and `handleDidChangeWatchedFiles` notify every
    /// open document whose import closure, as its worker reported it, holds the file's URI.
    Closure,
    /// The 2022 watchdog: no `didSave` handler (`Got unsupported notification`), and of watched
    /// changes only `.ilean` files are read: nobody is ever told.
    None,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub trace: Option<PathBuf>,
    pub order: DiagOrder,
    pub incremental: bool,
    pub refresh: bool,
    /// Which version the clearing publish after `didClose` carries.
    pub close_clear: CloseClear,
    pub definition: DefinitionMode,
    pub ileans: Ileans,
    pub refs_era: RefsEra,
    pub gate_dir: Option<PathBuf>,
    pub hang: Vec<String>,
    pub twin: TwinMode,
    pub setup_text: SetupText,
    pub uri: UriForm,
    pub setup_lines: Vec<String>,
    pub stale_mtime: bool,
    pub stale_notice: StaleNotice,
    /// Whether Lake gives a file outside every library the root package's options (new and mid
    /// Lake, the default) or none (old Lake: `FAKE_LAKE_EXTERNAL_OPTIONS=none`).
    pub external_options: bool,
    /// How a failed build of a file's imports is reported, when imports are built at all.
    pub setup_build: Option<crate::lake_build::SetupBuild>,
    /// Whose imports Lake builds for a module of the workspace: the header sent on stdin (new
    /// Lake) or the file's on disk (mid Lake).
    pub setup_imports: crate::header::SetupImports,
    /// How Lean words an import whose module prefix is in no search path entry.
    pub import_text: crate::header::ImportText,
    /// Which Lean's capabilities `initialize` advertises.
    pub capabilities: crate::capabilities::Capabilities,
    pub garbage: Option<(Garbage, Option<String>)>,
    pub no_init: bool,
    pub watchdog_exit: Option<(String, String)>,
    pub edit_cancels: bool,
    pub slow_tick: Duration,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn flag(name: &str) -> bool {
    var(name).is_some_and(|v| v != "0" && v != "false")
}

/// A switch that is on unless set to `0` or `false`.
fn off(name: &str) -> bool {
    var(name).is_some_and(|v| v == "0" || v == "false")
}

impl Config {
    /// Reads the environment; `args` are the arguments after `serve --`.
    pub fn from_env(args: &[String]) -> Config {
        let fast_report = args.iter().any(|a| a == "-Dserver.reportDelayMs=0");
        let order = match var("FAKE_LEAN_DIAG_ORDER").as_deref() {
            Some("diagnostics-first") => DiagOrder::DiagnosticsFirst,
            Some("progress-first") => DiagOrder::ProgressFirst,
            _ if fast_report => DiagOrder::DiagnosticsFirst,
            _ => DiagOrder::ProgressFirst,
        };
        let definition = match var("FAKE_LEAN_DEFINITION").as_deref() {
            Some("links") => DefinitionMode::Links,
            Some("locations") => DefinitionMode::Locations,
            Some("alternate") => DefinitionMode::Alternate,
            _ => DefinitionMode::Mixed,
        };
        let garbage = var("FAKE_LEAN_GARBAGE").map(|v| {
            let (kind, method) = match v.split_once(':') {
                Some((k, m)) => (k.to_owned(), Some(m.to_owned())),
                None => (v, None),
            };
            let kind = match kind.as_str() {
                "header" => Garbage::Header,
                "cut" => Garbage::Cut,
                "huge" => Garbage::Huge,
                _ => Garbage::Json,
            };
            (kind, method)
        });
        let watchdog_exit = var("FAKE_LEAN_WATCHDOG_EXIT").map(|v| match v.split_once(':') {
            Some((m, msg)) => (m.to_owned(), msg.to_owned()),
            None => (v, "fake watchdog failure".to_owned()),
        });
        Config {
            trace: var("FAKE_LEAN_TRACE").map(PathBuf::from),
            order,
            incremental: !off("FAKE_LEAN_INCREMENTAL"),
            refresh: !off("FAKE_LEAN_REFRESH"),
            external_options: var("FAKE_LAKE_EXTERNAL_OPTIONS").as_deref() != Some("none"),
            close_clear: match var("FAKE_LEAN_CLOSE_CLEAR").as_deref() {
                Some("started") => CloseClear::Started,
                Some("none") => CloseClear::None,
                _ => CloseClear::Last,
            },
            definition,
            ileans: match var("FAKE_LEAN_ILEANS").as_deref() {
                Some("built") => Ileans::Built,
                _ => Ileans::Sources,
            },
            refs_era: match var("FAKE_LEAN_REFS").as_deref() {
                Some("path") => RefsEra::Path,
                _ => RefsEra::Open,
            },
            gate_dir: var("FAKE_LEAN_GATE_DIR").map(PathBuf::from),
            hang: var("FAKE_LEAN_HANG")
                .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
                .unwrap_or_default(),
            twin: match var("FAKE_LEAN_TWIN").as_deref() {
                Some("fail") => TwinMode::Fail,
                _ => TwinMode::External,
            },
            setup_text: match var("FAKE_LEAN_SETUP_TEXT").as_deref() {
                Some("bare") => SetupText::Bare,
                _ => SetupText::Command,
            },
            uri: match var("FAKE_LEAN_URI").as_deref() {
                Some("old") => UriForm::Old,
                _ => UriForm::New,
            },
            setup_lines: var("FAKE_LEAN_SETUP_LINES")
                .map(|v| v.lines().map(str::to_owned).collect())
                .unwrap_or_default(),
            stale_mtime: var("FAKE_LEAN_STALE").as_deref() == Some("mtime"),
            stale_notice: match var("FAKE_LEAN_STALE_NOTICE").as_deref() {
                Some("none") => StaleNotice::None,
                _ => StaleNotice::Closure,
            },
            setup_build: crate::lake_build::SetupBuild::from_env(),
            setup_imports: match var("FAKE_LAKE_SETUP_IMPORTS").as_deref() {
                Some("disk") => crate::header::SetupImports::Disk,
                _ => crate::header::SetupImports::Stdin,
            },
            import_text: match var("FAKE_LEAN_IMPORT_TEXT").as_deref() {
                Some("package") => crate::header::ImportText::Package,
                _ => crate::header::ImportText::Prefix,
            },
            capabilities: crate::capabilities::Capabilities::parse(
                &var("FAKE_LEAN_CAPABILITIES").unwrap_or_default(),
            ),
            garbage,
            no_init: flag("FAKE_LEAN_NO_INIT"),
            watchdog_exit,
            edit_cancels: flag("FAKE_LEAN_EDIT_CANCELS"),
            slow_tick: Duration::from_millis(
                var("FAKE_LEAN_SLOW_TICK_MS")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(50),
            ),
        }
    }
}
