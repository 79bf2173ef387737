//! `fake-lake env lean …`: the `lean` executable on Lake's path, as far as the certification
//! checker needs it (README "The certification checker"). `lean --run <file> <args…>` runs the
//! checker when `<file>` starts with its protocol line ([`CHECKER_LINE`]): the answer of
//! `checker::answer` over `checker::Env::load` of the request's module, one JSON line on stdout,
//! exit 0. Any other file: Lean's error for a file that does not elaborate, exit 1 (the fake
//! elaborates nothing else). `lean --version` prints the version.
//!
//! Failures, as Lean's: the checker's source unreadable (`IO.FS.readFile`'s error, exit 1); the
//! request unreadable or the module not built (`uncaught exception: …` on stderr, exit 1, as
//! `lean --run` reports an exception `main` throws). `FAKE_LEAN_CHECKER` plays the checker
//! failing ([`Fault`]). Every run is one trace event `{"event": "checker", …}`, written before
//! the run's outcome, so a test can wait for a hanging checker.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::checker::{Env, Request, answer};
use crate::trace::Trace;

/// The first line of the checker's source (`src/lean/certify/checker/Checker.lean`).
pub const CHECKER_LINE: &str = "-- lean-beam certification checker, protocol 1";

/// How the checker fails under `FAKE_LEAN_CHECKER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The source does not elaborate on this toolchain (an API it names is missing): Lean's
    /// message `file:line:col: error: …` on stdout, exit 1, `main` never runs.
    CompileError,
    /// The process dies by a signal (Lean's `Stack overflow detected. Aborting.`, SIGABRT).
    Crash,
    /// Exit 0 with a last line that is no JSON (the answer cut short).
    Garbage,
    /// Never answers (until killed).
    Hang,
    /// Answers in another protocol (`"checker": 0`).
    OldProtocol,
}

impl Fault {
    pub fn from_env() -> Option<Fault> {
        match std::env::var("FAKE_LEAN_CHECKER").ok()?.as_str() {
            "compile-error" => Some(Fault::CompileError),
            "crash" => Some(Fault::Crash),
            "garbage" => Some(Fault::Garbage),
            "hang" => Some(Fault::Hang),
            "old-protocol" => Some(Fault::OldProtocol),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Fault::CompileError => "compile-error",
            Fault::Crash => "crash",
            Fault::Garbage => "garbage",
            Fault::Hang => "hang",
            Fault::OldProtocol => "old-protocol",
        }
    }
}

/// The Lean version the fake plays: the workspace's `lean-toolchain` (`leanprover/lean4:v4.X.Y`
/// gives `4.X.Y`, as elan would run that Lean and `Lean.versionString` name it), else 4.24.0.
pub fn lean_version(root: &Path) -> String {
    std::fs::read_to_string(root.join("lean-toolchain"))
        .ok()
        .and_then(|t| {
            let tag = t.trim().rsplit(':').next()?.to_owned();
            Some(tag.strip_prefix('v').unwrap_or(&tag).to_owned())
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "4.24.0".to_owned())
}

/// `lean <args…>` in the workspace at the current directory.
pub fn lean_main(args: &[String]) -> i32 {
    let root = std::env::current_dir().unwrap_or_default();
    match args.first().map(String::as_str) {
        Some("--version") | Some("-v") => {
            println!("Lean (version {}, fake)", lean_version(&root));
            0
        }
        Some("--run") if args.len() >= 2 => run(&root, &args[1], &args[2..]),
        _ => {
            eprintln!("fake lean: only `lean --run <file> [args]` and `lean --version` are played");
            1
        }
    }
}

fn run(root: &Path, file: &str, args: &[String]) -> i32 {
    let trace_path = std::env::var_os("FAKE_LEAN_TRACE").map(PathBuf::from);
    let trace = Trace::open(trace_path.as_deref());
    let source = match std::fs::read_to_string(root.join(file)) {
        Ok(s) => s,
        Err(_) => {
            // `IO.FS.readFile`'s error (`IO.Error.toString` of `noFileOrDirectory`).
            eprintln!("no such file or directory (error code: 2)\n  file: {file}");
            return 1;
        }
    };
    let checker = source.lines().next() == Some(CHECKER_LINE);
    let fault = Fault::from_env().filter(|_| checker);
    trace.event(
        "checker",
        json!({"file": file, "args": args, "checker": checker, "fault": fault.map(Fault::name)}),
    );
    if !checker {
        // What `lean` prints for a file it cannot elaborate: a message `file:line:col: error:`
        // on stdout and exit 1 (`Lean.Elab.runFrontend`; `main` is never run).
        println!(
            "{file}:1:0: error: unknown command: the fake Lean elaborates no file but \
             lean-beam's certification checker"
        );
        return 1;
    }
    match fault {
        Some(Fault::CompileError) => {
            println!("{file}:330:4: error: unknown identifier 'Lean.addDecl'");
            return 1;
        }
        Some(Fault::Crash) => {
            eprintln!("Stack overflow detected. Aborting.");
            std::process::abort();
        }
        // Never answers: only the host's deadline (a kill of the process group) ends it.
        Some(Fault::Hang) => loop {
            std::thread::park();
        },
        _ => {}
    }
    let Some(request) = args.first() else {
        eprintln!("usage: lean --run Checker.lean <request.json>");
        return 2;
    };
    let outcome = read_request(root, request).and_then(|req| {
        let env = Env::load(root, &req.module).map_err(|e| e.0)?;
        Ok(answer(&env, &req, &lean_version(root)))
    });
    let mut answer = match outcome {
        Ok(answer) => answer,
        Err(e) => {
            eprintln!("uncaught exception: {e}");
            return 1;
        }
    };
    match fault {
        Some(Fault::Garbage) => {
            let line = answer.to_string();
            let half: String = line.chars().take(line.chars().count() / 2).collect();
            println!("{half}");
        }
        Some(Fault::OldProtocol) => {
            answer["checker"] = json!(0);
            println!("{answer}");
        }
        _ => println!("{answer}"),
    }
    0
}

fn read_request(root: &Path, path: &str) -> Result<Request, String> {
    let text = std::fs::read_to_string(root.join(path))
        .map_err(|_| format!("no such file or directory (error code: 2)\n  file: {path}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("invalid JSON: {e}"))?;
    Request::parse(&v)
}
