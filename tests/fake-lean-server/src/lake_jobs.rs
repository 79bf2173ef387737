//! `fake-lake build [targets]` and `fake-lake query [targets]` (reference §C; README "`fake-lake
//! build`, `query`, `env` and `setup-file`").
//!
//! Build: targets are `+Mod` (a module some `[[lean_lib]]` builds, by Lake's rule in
//! `lakefile`; facets like `:olean` ignored; any other module is `error: unknown module`), a
//! library name (the modules its globs name, or every module under its directory when its root
//! has no file), or another buildable module; no target means every library of
//! `lakefile.toml`. Modules build in import order; each finished job prints `✔ [i/n] Built
//! Mod` (`⚠` with warnings, `ℹ` with only information, followed by the log), a failed one
//! `✖ [i/n] Building Mod` and its errors; dependents of a failure are skipped. Success ends
//! with `Build completed successfully (N jobs).`, failure with `Some required targets logged
//! failures:` and exit 1. An up-to-date module (its `.trace` holds the current input hash)
//! prints nothing, or `Replayed` with its old log. With Lake's artifact cache on
//! (`lake_cache`), a module that is not up to date is `Fetched` instead of built, and one whose
//! trace records a fetch says `Fetched` again. `--no-build`: a module that would have to be
//! compiled fails (`target is out-of-date and needs to be rebuilt`, Lake's `buildAction`) and the
//! run exits 3 (`noBuildCode`, `Build/Run.lean`); fetching is allowed. A
//! `build-gate NAME` directive in a module stops its compilation (after its text was read)
//! until `$FAKE_LEAN_GATE_DIR/NAME` exists, writing `NAME.entered` first; `build-gate-after
//! NAME` stops the build the same way once the module's artifacts are written and its job line
//! printed (Lake goes on after a job: other jobs, the build's summary). Output goes to stderr
//! (Lake's `BuildConfig.out` default), or stdout with `FAKE_LAKE_BUILD_OUT=stdout`. Each run is
//! recorded in the trace as `{"event": "lake-build", "args": [...]}`.
//!
//! Query: targets `+Mod[:facet]` (facets `olean`, `ilean`, `c`; none prints an empty line) are
//! built the same way, the job lines on stderr, then each target's path is printed on stdout, one
//! line per target in the order given (Lake's `helpQuery`, `lake query` in `CLI/Main.lean`), or
//! the build's failures and exit 1. `FAKE_LAKE_QUERY=0` plays a Lake without the command:
//! `error: unknown command 'query'`, exit 1. Each run, that one too, is recorded as `{"event":
//! "lake-query", "args"}`.

use crate::lake_build::{self, analyze, build_gates, compile, has_config, order, source};
use crate::lake_cache::{self, Cache};
use crate::lakefile;
use crate::trace::Trace;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const FAILURES: &str = "Some required targets logged failures:";

fn record(event: &str, args: &[String]) {
    let trace_path = std::env::var_os("FAKE_LEAN_TRACE").map(PathBuf::from);
    Trace::open(trace_path.as_deref())
        .event(event, json!({"args": args, "pid": std::process::id()}));
}

fn no_config(out: &mut dyn Write) -> i32 {
    let _ = writeln!(
        out,
        "error: no configuration file with a supported extension:\n./lakefile.lean\n./lakefile.toml"
    );
    1
}

/// Lake's refusal of a `+M` no library builds (`CliError.unknownModule`), or `None`.
fn unknown_module(root: &Path, module: &str) -> Option<String> {
    (lakefile::library_of(root, module).is_none() || !source(root, module).exists())
        .then(|| format!("error: unknown module `{module}`"))
}

pub fn build_main(args: &[String]) -> i32 {
    let root = std::env::current_dir().unwrap_or_default();
    let to_stdout = std::env::var("FAKE_LAKE_BUILD_OUT").as_deref() == Ok("stdout");
    let mut out: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout())
    } else {
        Box::new(std::io::stderr())
    };
    if !has_config(&root) {
        return no_config(&mut out);
    }
    record("lake-build", args);
    let libs = lakefile::libraries(&root);
    let mut targets = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let a = a.split(':').next().unwrap_or(a);
        let found = match a.strip_prefix('+') {
            Some(m) => {
                // Lake: `+M` names a module some library builds (`findTargetModule?`).
                if let Some(error) = unknown_module(&root, m) {
                    let _ = writeln!(out, "{error}");
                    return 1;
                }
                vec![m.to_owned()]
            }
            None => match libs.iter().find(|l| l.name == a) {
                Some(lib) => lake_build::lib_modules(&root, lib),
                None if lakefile::library_of(&root, a).is_some() && source(&root, a).exists() => {
                    vec![a.to_owned()]
                }
                None => {
                    let _ = writeln!(out, "error: unknown target `{a}`");
                    return 1;
                }
            },
        };
        targets.extend(found);
    }
    if args.iter().all(|a| a.starts_with('-')) {
        for l in &libs {
            targets.extend(lake_build::lib_modules(&root, l));
        }
    }
    let no_build = args.iter().any(|a| a == "--no-build");
    let (jobs, failed) = run_jobs(&root, &targets, &mut out, no_build);
    if failed.is_empty() {
        let _ = writeln!(out, "Build completed successfully ({jobs} jobs).");
        0
    } else {
        report_failures(&mut out, &failed, no_build)
    }
}

/// Lake's exit code when `--no-build` is set and a build is required (`noBuildCode`,
/// `Build/Run.lean`).
const NO_BUILD_CODE: i32 = 3;

/// The failures' summary; the exit code: [`NO_BUILD_CODE`] under `--no-build` (every failure
/// is then one that needed a build or followed from it), else 1.
fn report_failures(out: &mut dyn Write, failed: &[String], no_build: bool) -> i32 {
    let _ = writeln!(out, "{FAILURES}");
    for f in failed {
        let _ = writeln!(out, "- {f}");
    }
    if no_build { NO_BUILD_CODE } else { 1 }
}

pub fn query_main(args: &[String]) -> i32 {
    record("lake-query", args);
    if std::env::var("FAKE_LAKE_QUERY").as_deref() == Ok("0") {
        eprintln!("error: unknown command 'query'");
        return 1;
    }
    let root = std::env::current_dir().unwrap_or_default();
    let mut err = std::io::stderr();
    if !has_config(&root) {
        return no_config(&mut err);
    }
    let mut wanted: Vec<(String, String)> = Vec::new();
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        let (spec, facet) = a.split_once(':').unwrap_or((a, ""));
        let Some(module) = spec.strip_prefix('+') else {
            eprintln!("error: fake-lake query knows module targets (+M[:facet]) only, not `{a}`");
            return 1;
        };
        if let Some(error) = unknown_module(&root, module) {
            eprintln!("{error}");
            return 1;
        }
        if !["", "olean", "ilean", "c"].contains(&facet) {
            eprintln!("error: unknown module facet `{facet}`");
            return 1;
        }
        wanted.push((module.to_owned(), facet.to_owned()));
    }
    let modules: Vec<String> = wanted.iter().map(|(m, _)| m.clone()).collect();
    let no_build = args.iter().any(|a| a == "--no-build");
    let (_, failed) = run_jobs(&root, &modules, &mut err, no_build);
    if !failed.is_empty() {
        return report_failures(&mut err, &failed, no_build);
    }
    let cache = Cache::from_env();
    for (module, facet) in &wanted {
        if facet.is_empty() {
            println!();
        } else {
            let local = lake_build::local(&root, module);
            println!("{}", lake_cache::facet_path(cache, &local, facet).display());
        }
    }
    0
}

/// Runs the jobs of `targets` and their imports in import order (see the module doc); how many
/// there were, and the modules that failed.
fn run_jobs(
    root: &Path,
    targets: &[String],
    out: &mut dyn Write,
    no_build: bool,
) -> (usize, Vec<String>) {
    let cache = Cache::from_env();
    let jobs = order(root, targets);
    let n = jobs.len();
    let mut hashes: HashMap<String, u64> = HashMap::new();
    let mut failed: Vec<String> = Vec::new();
    for (i, (m, deps)) in jobs.iter().enumerate() {
        if deps
            .iter()
            .any(|d| failed.contains(d) || !hashes.contains_key(d))
        {
            continue;
        }
        let Some(a) = analyze(root, m) else { continue };
        let dep_hash = deps.iter().fold(0u64, |h, d| h ^ hashes[d].rotate_left(7));
        let (log, bad, hash) = compile(root, m, &a, dep_hash);
        let input = format!("{hash:016x}");
        let local = lake_build::local(root, m);
        let saved = lake_cache::saved(&local.path("trace")).filter(|s| s.input_hash == input);
        let (verb, icon) = if bad {
            ("Building", "✖")
        } else if log.iter().any(|l| l.starts_with("warning")) {
            ("Built", "⚠")
        } else if !log.is_empty() {
            ("Built", "ℹ")
        } else {
            ("Built", "✔")
        };
        let job = |verb: &str, icon: &str| format!("{icon} [{}/{n}] {verb} {m}", i + 1);
        match (saved, cache) {
            // Lake's `replayOrFetch`: a synthetic trace without a log is a fetch again.
            (Some(s), Some(_)) if s.synthetic && s.log.is_empty() => {
                let _ = writeln!(out, "{}", job("Fetched", "✔"));
            }
            (Some(s), _) => {
                if !s.log.is_empty() {
                    let _ = writeln!(out, "{}", job("Replayed", icon));
                    for l in s.log {
                        let _ = writeln!(out, "{l}");
                    }
                }
            }
            (None, Some(mode)) if !bad => {
                build_gates(&a, "build-gate");
                let outputs = lake_build::outputs(m, &a, hash);
                if let Err(e) = lake_cache::fetch(mode, &local, &input, &outputs) {
                    let _ = writeln!(out, "error: cannot fetch {m} from the cache: {e}");
                    failed.push(m.clone());
                    continue;
                }
                let _ = writeln!(out, "{}", job("Fetched", "✔"));
                let _ = out.flush();
                build_gates(&a, "build-gate-after");
            }
            (None, _) if no_build => {
                let _ = writeln!(out, "{}", job("Building", "✖"));
                let _ = writeln!(out, "error: target is out-of-date and needs to be rebuilt");
                failed.push(m.clone());
                continue;
            }
            (None, _) => {
                build_gates(&a, "build-gate");
                if !bad && let Err(e) = lake_build::store(root, m, &a, hash, &log) {
                    let _ = writeln!(out, "error: cannot write artifacts of {m}: {e}");
                    failed.push(m.clone());
                    continue;
                }
                // Lake prints a job's line once the job has finished, its artifacts written.
                let _ = writeln!(out, "{}", job(verb, icon));
                for l in &log {
                    let _ = writeln!(out, "{l}");
                }
                let _ = out.flush();
                build_gates(&a, "build-gate-after");
            }
        }
        if bad {
            failed.push(m.clone());
        } else {
            hashes.insert(m.clone(), hash);
        }
    }
    (n, failed)
}
