//! One run of the certification checker (`CHECKER_CONTRACT.md`, `checker/CONTRACT.md`): its
//! files written under `<root>/.lake/beam/certify/`, `lake env lean --run` in the workspace, and
//! its answer read into types.
//!
//! Contract:
//! 1. The checker's source ([`SOURCE`], embedded) is `<root>/.lake/beam/certify/Checker.lean`,
//!    reached as twins are (`session::twin_file::real_directory`: inside `.lake`, each
//!    directory a real one, never through a link). It is kept when that entry is a regular file
//!    with the same bytes; otherwise a file created new beside it is renamed over it (a rename
//!    replaces the entry, never writes through a link). The request is a file created new
//!    under `requests/`, named uniquely, and removed once the run is over.
//! 2. The run is `<lake> env lean --run .lake/beam/certify/Checker.lean <request>` with cwd
//!    `<root>`, through `lake::run` (its own process group, tracked by the registry, bounded by
//!    the Lean timeout, killed with its group on timeout, cancellation or drop); stdout lines
//!    of up to [`MAX_ANSWER`] bytes are read whole.
//! 3. The answer is exactly one JSON object on stdout's last non-empty line, with `"checker": 1`,
//!    after exit status 0; it answers for the requested module, one theorem per requested name
//!    in order, each found one with all its facts. Anything else (a non-zero status, no such
//!    line, another protocol, a malformed answer, a timeout) is `checkerFailed` with the tail
//!    of what Lean printed and the toolchain. A cancelled run is `requestCancelled`: no verdict.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lean::error::{HostError, code};
use crate::lean::lake::checkpoint::Lake;
use crate::lean::lake::run::{Bounds, Stream, run as lake_run};
use crate::lean::progress::Caller;
use crate::lean::session::twin_file::real_directory;
use crate::lean::tail::Tail;

pub use super::checker::CHECKER_SOURCE as SOURCE;

/// The protocol this host speaks.
pub const PROTOCOL: u64 = 1;

/// Where the checker's files are, under `<root>/.lake`.
const DIR: &str = "beam/certify";

/// The longest answer line read whole (a lock of 64 names, each with its candidates' closures
/// and the module's theorems, is far longer than a line of Lake's output).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// How much of Lean's output a failure quotes.
const OUTPUT_LINES: usize = 40;
const OUTPUT_LINE_BYTES: usize = 1024;

/// What the checker is asked.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Request {
    /// Always [`PROTOCOL`].
    pub checker: u64,
    /// The built module.
    pub module: String,
    /// Names, each as its components, looked up exactly.
    pub names: Vec<Vec<String>>,
    /// Whether to list the module's own theorems.
    pub list_theorems: bool,
    /// The workspace modules whose constants are replayed through the kernel.
    pub replay_modules: Vec<String>,
}

/// The checker's answer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Response {
    /// Its protocol.
    pub checker: u64,
    /// `Lean.versionString`.
    pub lean_version: String,
    /// The module it loaded.
    pub module: String,
    /// One per requested name, in order.
    pub theorems: Vec<Theorem>,
    /// The module's own theorems, when asked.
    #[serde(default)]
    pub declared: Option<Vec<Vec<String>>>,
}

/// What the checker says of one name.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Theorem {
    /// The name's components.
    pub name: Vec<String>,
    /// As Lean prints it (`«»` where needed).
    pub printed: String,
    /// Whether the environment has it.
    pub found: bool,
    /// `theorem`, `axiom`, `def`, …
    #[serde(default)]
    pub kind: Option<String>,
    /// The module that declares it.
    #[serde(default)]
    pub module: Option<String>,
    /// Its type, for people.
    #[serde(default, rename = "type")]
    pub ty: Option<String>,
    /// Its statement closure.
    #[serde(default)]
    pub closure: Option<Closure>,
    /// `Lean.collectAxioms`, full names.
    #[serde(default)]
    pub axioms: Option<Vec<String>>,
    /// The kernel's replay of what it depends on.
    #[serde(default)]
    pub replay: Option<Replay>,
}

/// A statement closure.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Closure {
    /// Its hash (opaque).
    pub hash: String,
    /// How many constants.
    pub count: u64,
    /// Those of the workspace's modules.
    #[serde(default)]
    pub own: Vec<String>,
}

/// A kernel replay.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Replay {
    /// Whether the kernel accepted every constant.
    pub ok: bool,
    /// How many it checked.
    #[serde(default)]
    pub checked: Option<u64>,
    /// The one it refused.
    #[serde(default)]
    pub constant: Option<String>,
    /// The kernel's words.
    #[serde(default)]
    pub error: Option<String>,
}

impl Theorem {
    /// Whether a found theorem carries every fact (see the contract, 3).
    fn complete(&self) -> bool {
        !self.found
            || (self.kind.is_some()
                && self.module.is_some()
                && self.closure.is_some()
                && self.axioms.is_some()
                && self.replay.is_some())
    }
}

/// Runs the checker on `request` (see the contract); `toolchain` is named in a failure.
pub async fn run(
    lake: Lake<'_>,
    request: &Request,
    toolchain: Option<&str>,
    caller: &Caller<'_>,
) -> Result<Response, HostError> {
    let root = lake.root.path();
    let written = write(root, request)?;
    caller.step(&format!(
        "lake env lean --run (the certification checker, on {})",
        request.module
    ));
    let args = [
        "env".to_owned(),
        "lean".to_owned(),
        "--run".to_owned(),
        format!(".lake/{DIR}/Checker.lean"),
        written.relative.clone(),
    ];
    let mut output = Tail::new(OUTPUT_LINES, OUTPUT_LINE_BYTES);
    let mut last = None;
    let status = lake_run(
        lake.lake,
        root,
        &args,
        |killer| lake.registry.track(lake.root, killer),
        caller.cancel,
        Bounds {
            timeout: lake.timeout,
            stdout_line: MAX_ANSWER,
        },
        |stream, line| {
            output.push(line);
            if stream == Stream::Stdout && !line.trim().is_empty() {
                last = Some(line.to_owned());
            }
        },
    )
    .await;
    drop(written);
    let failed =
        |what: &str, output: &Tail| HostError::checker_failed(what, output.lines(), toolchain);
    let status = match status {
        Ok(status) => status,
        Err(e) if e.code == code::LEAN_TIMEOUT => {
            return Err(failed(&format!("it timed out ({})", e.message), &output));
        }
        Err(e) => return Err(e),
    };
    if !status.success() {
        return Err(failed(&format!("it exited with {status}"), &output));
    }
    read(request, last.as_deref()).map_err(|what| failed(&what, &output))
}

/// The answer on the last non-empty stdout line (see the contract, 3), or what is wrong.
pub fn read(request: &Request, last: Option<&str>) -> Result<Response, String> {
    let last = last.ok_or("it printed no answer on stdout")?;
    let value: Value = serde_json::from_str(last.trim())
        .map_err(|e| format!("its last line is not a JSON answer ({e})"))?;
    if value.get("checker").and_then(Value::as_u64) != Some(PROTOCOL) {
        return Err(format!(
            "its answer is not of protocol {PROTOCOL} (checker: {})",
            value.get("checker").unwrap_or(&Value::Null)
        ));
    }
    let response: Response =
        serde_json::from_value(value).map_err(|e| format!("its answer is malformed ({e})"))?;
    if response.module != request.module {
        return Err(format!(
            "it answered for module {}, not {}",
            response.module, request.module
        ));
    }
    let names: Vec<&Vec<String>> = response.theorems.iter().map(|t| &t.name).collect();
    if names != request.names.iter().collect::<Vec<_>>() {
        return Err("its theorems are not the names it was asked, in order".to_owned());
    }
    if let Some(t) = response.theorems.iter().find(|t| !t.complete()) {
        return Err(format!("it found {} without all its facts", t.printed));
    }
    if request.list_theorems && response.declared.is_none() {
        return Err("it did not list the module's theorems".to_owned());
    }
    Ok(response)
}

/// The request's file, removed when dropped.
struct Written {
    path: PathBuf,
    /// Its path from the root, as the command names it.
    relative: String,
}

impl Drop for Written {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes the checker's source and the request (see the contract, 1).
fn write(root: &Path, request: &Request) -> Result<Written, HostError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let lake = root.join(".lake");
    let dir = real_directory(&lake, Path::new(DIR))?;
    let requests = real_directory(&lake, &Path::new(DIR).join("requests"))?;
    let unique = format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let cannot = |path: &Path, e: std::io::Error| {
        HostError::internal(format!(
            "cannot write the certification checker's {}: {e}; check that the workspace's \
             .lake directory is writable",
            path.display()
        ))
    };
    let source = dir.join("Checker.lean");
    let same = source.symlink_metadata().is_ok_and(|m| m.is_file())
        && std::fs::read(&source).is_ok_and(|bytes| bytes == SOURCE.as_bytes());
    if !same {
        let fresh = dir.join(format!(".Checker.{unique}.new"));
        create_new(&fresh, SOURCE.as_bytes()).map_err(|e| cannot(&fresh, e))?;
        std::fs::rename(&fresh, &source).map_err(|e| {
            let _ = std::fs::remove_file(&fresh);
            cannot(&source, e)
        })?;
    }
    let name = format!("{unique}.json");
    let path = requests.join(&name);
    let body = serde_json::to_vec(request).unwrap_or_default();
    create_new(&path, &body).map_err(|e| cannot(&path, e))?;
    Ok(Written {
        path,
        relative: format!(".lake/{DIR}/requests/{name}"),
    })
}

/// Writes `bytes` to a file that must not exist yet.
fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            checker: 1,
            module: "Fixture.Main".into(),
            names: vec![vec!["Fixture".into(), "main".into()], vec!["main".into()]],
            list_theorems: false,
            replay_modules: vec!["Fixture.Main".into()],
        }
    }

    const FOUND: &str = r#"{"name": ["Fixture","main"], "printed": "Fixture.main", "found": true,
        "kind": "theorem", "module": "Fixture.Main", "type": "True",
        "closure": {"hash": "ab", "count": 3, "own": []}, "axioms": ["propext"],
        "replay": {"ok": true, "checked": 2}}"#;

    fn answer(theorems: &str) -> String {
        format!(
            r#"{{"checker": 1, "lean_version": "4.22.0", "module": "Fixture.Main", "theorems": [{theorems}]}}"#
        )
        .replace('\n', " ")
    }

    #[test]
    fn the_answer_is_read_into_types() {
        let line = answer(&format!(
            r#"{FOUND}, {{"name": ["main"], "printed": "main", "found": false}}"#
        ));
        let response = read(&request(), Some(&line)).unwrap();
        let found = &response.theorems[0];
        assert_eq!(found.closure.as_ref().unwrap().hash, "ab");
        assert_eq!(found.axioms.as_deref().unwrap(), ["propext"]);
        assert!(found.replay.as_ref().unwrap().ok);
        assert!(!response.theorems[1].found);
    }

    #[test]
    fn anything_else_is_a_failure() {
        let not_found = r#"{"name": ["main"], "printed": "main", "found": false}"#;
        let wrong = [
            None,
            Some("not json".to_owned()),
            Some(r#"{"checker": 2}"#.to_owned()),
            Some(answer(not_found)),
            Some(
                answer(&format!("{FOUND}, {not_found}"))
                    .replace("Fixture.Main\", \"theorems", "Other\", \"theorems"),
            ),
            Some(answer(&format!(
                "{}, {not_found}",
                FOUND.replace(r#""replay": {"ok": true, "checked": 2}"#, r#""x": 0"#)
            ))),
        ];
        for last in wrong {
            assert!(read(&request(), last.as_deref()).is_err(), "{last:?}");
        }
        let mut listing = request();
        listing.list_theorems = true;
        let line = answer(&format!("{FOUND}, {not_found}"));
        assert!(read(&listing, Some(&line)).is_err());
    }

    #[test]
    fn the_source_is_replaced_never_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere.lean");
        std::fs::write(&elsewhere, "keep").unwrap();
        let certify = dir.path().join(".lake/beam/certify");
        std::fs::create_dir_all(&certify).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&elsewhere, certify.join("Checker.lean")).unwrap();
        let written = write(dir.path(), &request()).unwrap();
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
        let source = certify.join("Checker.lean");
        assert!(!source.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&source).unwrap(), SOURCE);
        let path = written.path.clone();
        assert!(written.relative.starts_with(".lake/beam/certify/requests/"));
        let sent: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(sent["names"][1], serde_json::json!(["main"]));
        drop(written);
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_on_the_way_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".lake")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".lake/beam")).unwrap();
        let error = write(dir.path(), &request()).err().unwrap();
        assert_eq!(error.data.unwrap()["reason"], "twinPathUnsafe");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    }
}
