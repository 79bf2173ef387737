//! What a module build is made of, for `fake-lake build` and `query` (`lake_jobs`), and
//! `fake-lake setup-file <path> [-]` (reference §C, §A1).
//!
//! A module's jobs: its imports first ([`order`]); it fails when its analysis reports an error
//! (directives, tactic rules; [`compile`], which also gives its input hash); its artifacts are
//! `.lake/build/lib/lean/M.{olean,ilean,trace}` and `.lake/build/ir/M.c` ([`store`]; the
//! `.ilean` lists declarations, the `.trace` records the input hash, outputs and log).
//!
//! Setup-file builds the imports the same way ([`failing_imports`]); under
//! `FAKE_LAKE_SETUP_BUILD` an import that fails to build fails the setup as new Lake reports
//! it (`Failed to build module dependencies.`, [`SetupBuild`]).

use crate::analysis::Analysis;
use crate::lake_cache::{self, Local, Outputs};
use crate::lakefile::{self, Glob, Lib};
use crate::text::Text;
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};

fn lib_dir(root: &Path) -> PathBuf {
    root.join(".lake/build/lib/lean")
}

fn artifact(root: &Path, module: &str, ext: &str) -> PathBuf {
    lib_dir(root).join(format!("{}.{ext}", module.replace('.', "/")))
}

pub(crate) fn source(root: &Path, module: &str) -> PathBuf {
    lakefile::source_of(root, module)
}

pub(crate) fn has_config(root: &Path) -> bool {
    lakefile::exists(root)
}

/// The modules a library's globs name (its root, by default), or every module under its root's
/// directory when that root has no file.
pub(crate) fn lib_modules(root: &Path, lib: &Lib) -> Vec<String> {
    let src = lib.src_path(root);
    let under = |module: &str| {
        let mut files = Vec::new();
        collect(&src.join(module.replace('.', "/")), &mut files);
        files.sort();
        files
            .into_iter()
            .filter_map(|p| {
                let rel = p.strip_prefix(&src).ok()?.to_str()?.strip_suffix(".lean")?;
                Some(rel.replace('/', "."))
            })
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    for glob in &lib.globs {
        match glob {
            Glob::One(m) if source(root, m).exists() => out.push(m.clone()),
            Glob::One(m) => out.extend(under(m)),
            Glob::Submodules(m) => out.extend(under(m)),
            Glob::AndSubmodules(m) => {
                if source(root, m).exists() {
                    out.push(m.clone());
                }
                out.extend(under(m));
            }
        }
    }
    out
}

/// Stops at the module's gates of one kind (see the module doc): `build-gate NAME` before it is
/// compiled, `build-gate-after NAME` once its artifacts are written and its job line printed.
pub(crate) fn build_gates(a: &Analysis, kind: &str) {
    let gates = a
        .directives
        .iter()
        .filter(|d| d.name == kind)
        .filter_map(|d| d.flags.first());
    for gate in gates {
        let Some(dir) = std::env::var_os("FAKE_LEAN_GATE_DIR").map(PathBuf::from) else {
            eprintln!("fake-lake: build gate {gate:?} ignored: FAKE_LEAN_GATE_DIR is not set");
            continue;
        };
        let _ = std::fs::write(dir.join(format!("{gate}.entered")), b"build");
        while !dir.join(gate).exists() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "lean") {
            out.push(p);
        }
    }
}

pub(crate) fn analyze(root: &Path, module: &str) -> Option<Analysis> {
    let text = std::fs::read_to_string(source(root, module)).ok()?;
    Some(Analysis::new(Text::new(&text)))
}

/// Modules in dependency order (imports first), restricted to the project.
pub(crate) fn order(root: &Path, targets: &[String]) -> Vec<(String, Vec<String>)> {
    let mut done: Vec<(String, Vec<String>)> = Vec::new();
    fn visit(root: &Path, m: &str, done: &mut Vec<(String, Vec<String>)>, stack: &mut Vec<String>) {
        if done.iter().any(|d| d.0 == m) || stack.iter().any(|s| s == m) {
            return;
        }
        let Some(a) = analyze(root, m) else { return };
        stack.push(m.to_owned());
        let deps: Vec<String> = a
            .outline
            .imports
            .iter()
            .filter(|i| source(root, i).exists())
            .cloned()
            .collect();
        for d in &deps {
            visit(root, d, done, stack);
        }
        stack.pop();
        done.push((m.to_owned(), deps));
    }
    for t in targets {
        visit(root, t, &mut done, &mut Vec::new());
    }
    done
}

fn fnv(data: &[u8], seed: u64) -> u64 {
    data.iter().fold(seed ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Is the module's `.olean` missing or older than its source?
pub fn is_stale(root: &Path, module: &str) -> bool {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (
        mtime(&artifact(root, module, "olean")),
        mtime(&source(root, module)),
    ) {
        (Some(o), Some(s)) => o < s,
        _ => true,
    }
}

/// Writes the artifacts of one module; returns its log lines and whether it failed.
pub fn write_artifacts(root: &Path, module: &str) -> std::io::Result<(Vec<String>, bool)> {
    let a = analyze(root, module).ok_or_else(|| std::io::Error::other("no source"))?;
    let (log, failed, hash) = compile(root, module, &a, 0);
    if !failed {
        store(root, module, &a, hash, &log)?;
    }
    Ok((log, failed))
}

pub(crate) fn compile(
    root: &Path,
    module: &str,
    a: &Analysis,
    dep_hash: u64,
) -> (Vec<String>, bool, u64) {
    let rel = source(root, module);
    let rel = rel.strip_prefix(root).unwrap_or(&rel).display().to_string();
    let mut log = Vec::new();
    let mut failed = false;
    for d in messages(root, module, a) {
        let sev = d["severity"].as_u64().unwrap_or(1);
        failed |= sev == 1;
        let level = ["error", "error", "warning", "info", "info"][sev.min(4) as usize];
        let (l, c) = (
            &d["range"]["start"]["line"],
            &d["range"]["start"]["character"],
        );
        let (l, c) = (l.as_u64().unwrap_or(0) + 1, c.as_u64().unwrap_or(0));
        log.push(format!(
            "{level}: {rel}:{l}:{c}: {}",
            d["message"].as_str().unwrap_or("")
        ));
    }
    (log, failed, fnv(a.text.as_str().as_bytes(), dep_hash))
}

/// The build directory's files of a module.
pub fn local<'a>(root: &'a Path, module: &str) -> Local<'a> {
    let rel = module.replace('.', "/");
    Local {
        root,
        lib: lib_dir(root).join(&rel),
        ir: root.join(".lake/build/ir").join(&rel),
    }
}

/// What a build of the module writes: its `.olean`, its `.ilean` (the declarations' ranges) and
/// its `.c`. The `.olean` holds, after its header line, the text the build compiled: what
/// `importModules` loads is what was built, not the file as it is now (the certification
/// checker's model, `checker/env.rs`, reads it back with [`built_text`]).
pub fn outputs(module: &str, a: &Analysis, hash: u64) -> Outputs {
    let mut decls = serde_json::Map::new();
    for d in &a.outline.decls {
        if let (Some(n), Some((x, y))) = (&d.full_name, d.name_span) {
            let (p, q) = (a.text.pos(x), a.text.pos(y));
            decls.insert(
                format!("c:{n}"),
                json!({"definition": [p.line, p.character, q.line, q.character]}),
            );
        }
    }
    [
        (
            "olean",
            format!("{OLEAN_HEADER} {module} {hash:016x}\n{}", a.text.as_str()),
        ),
        (
            "ilean",
            json!({"version": 4, "module": module, "references": decls}).to_string(),
        ),
        ("c", format!("// fake C output for {module}\n")),
    ]
}

/// The first word of a fake `.olean`.
pub const OLEAN_HEADER: &str = "FAKEOLEAN";

/// The module and the text a fake `.olean` was built from; `None` for a file that is no
/// `.olean` of this build's (written by hand, or by a fake before it kept the text).
pub fn built_text(olean: &str) -> Option<(&str, &str)> {
    let (header, text) = olean.split_once('\n')?;
    let mut words = header.split(' ');
    (words.next() == Some(OLEAN_HEADER)).then_some(())?;
    let module = words.next()?;
    words.next()?;
    Some((module, text))
}

/// Writes a module's artifacts and trace into the build directory, as a local build does.
pub fn store(
    root: &Path,
    module: &str,
    a: &Analysis,
    hash: u64,
    log: &[String],
) -> std::io::Result<()> {
    let local = local(root, module);
    let outputs = outputs(module, a, hash);
    for (ext, contents) in &outputs {
        let path = local.path(ext);
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        std::fs::write(path, contents)?;
    }
    let trace = lake_cache::trace_json(&format!("{hash:016x}"), &outputs, log, false);
    std::fs::write(local.path("trace"), trace.to_string())
}

/// How `setup-file` reports imports it could not build (`FAKE_LAKE_SETUP_BUILD`, README
/// "Environment"; LLS Part 3 "Failed to build module dependencies."). Lake's `setupFile`
/// (`Lake/CLI/Serve.lean`) runs the build of the file's imports, and when it fails writes
/// `Failed to build module dependencies.` and exits 1; the worker (`FileWorker/SetupFile.lean`)
/// shows Lake's stdout, else its stderr, as the header error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupBuild {
    /// The line on stderr after the build log (which also went to stderr, line by line): the
    /// header error is the log, then the line.
    Intermediate,
    /// A `LakeBuildError` `{summary, buildDiagnostics, failedTargets}` on stdout: the header
    /// error is its summary, the line then the log; each build diagnostic is also published,
    /// with `source: "Lake"`, for the file it is about (`serialMessagesToCrossFileDiagnostics`).
    New,
}

impl SetupBuild {
    pub fn from_env() -> Option<SetupBuild> {
        match std::env::var("FAKE_LAKE_SETUP_BUILD").ok()?.as_str() {
            "intermediate" => Some(SetupBuild::Intermediate),
            "new" => Some(SetupBuild::New),
            _ => None,
        }
    }
}

/// New Lake's line for imports that did not build (`Lake.setupFile`).
pub const IMPORTS_FAILED: &str = "Failed to build module dependencies.";

/// Imports that did not build: the build log, the modules that failed, and their diagnostics
/// as Lake's `SerialMessage`s become LSP diagnostics (`serialMessageToDiagnostic`: 0-based
/// range from the message's position, `source: "Lake"`), by the file they are about.
#[derive(Debug, Clone, Default)]
pub struct ImportFailure {
    pub log: Vec<String>,
    pub failed: Vec<String>,
    pub diagnostics: Vec<(PathBuf, Vec<Value>)>,
}

impl ImportFailure {
    /// The header error the worker shows, as `era` reports it.
    pub fn header_error(&self, era: SetupBuild) -> String {
        let log = self.log.join("\n");
        match era {
            SetupBuild::Intermediate => format!("{log}\n{IMPORTS_FAILED}"),
            SetupBuild::New => format!("{IMPORTS_FAILED}\n{log}"),
        }
    }

    /// New Lake's `LakeBuildError` JSON.
    fn lake_build_error(&self, root: &Path) -> Value {
        let messages: Vec<Value> = self
            .diagnostics
            .iter()
            .flat_map(|(file, ds)| {
                let file = file
                    .strip_prefix(root)
                    .unwrap_or(file)
                    .display()
                    .to_string();
                ds.iter().map(move |d| {
                    let at = |end: &str| {
                        json!({
                            "line": d["range"][end]["line"].as_u64().unwrap_or(0) + 1,
                            "column": d["range"][end]["character"],
                        })
                    };
                    let severity = ["error", "error", "warning", "information"]
                        [d["severity"].as_u64().unwrap_or(1).min(3) as usize];
                    json!({
                        "fileName": file, "pos": at("start"), "endPos": at("end"),
                        "severity": severity, "caption": "", "data": d["message"],
                    })
                })
            })
            .collect();
        json!({
            "summary": self.header_error(SetupBuild::New),
            "buildDiagnostics": messages,
            "failedTargets": self.failed,
        })
    }
}

/// Builds the imports of a file as `setup-file` does (from disk, imports first): a module whose
/// text has errors fails (it never built, so no trace of Lake's can be up to date for it), and
/// the modules importing it are skipped. `None` when every import builds.
pub fn failing_imports(root: &Path, imports: &[String]) -> Option<ImportFailure> {
    let jobs = order(root, imports);
    let n = jobs.len();
    let mut failure = ImportFailure::default();
    let mut skipped: Vec<&str> = Vec::new();
    for (i, (m, deps)) in jobs.iter().enumerate() {
        let blocked = |d: &String| failure.failed.contains(d) || skipped.contains(&d.as_str());
        if deps.iter().any(blocked) {
            skipped.push(m);
            continue;
        }
        let Some(a) = analyze(root, m) else { continue };
        let (log, bad, _) = compile(root, m, &a, 0);
        if !bad {
            continue;
        }
        failure.log.push(format!("✖ [{}/{n}] Building {m}", i + 1));
        failure.log.extend(log);
        failure.failed.push(m.clone());
        let lake: Vec<Value> = messages(root, m, &a)
            .into_iter()
            .map(|d| {
                // `serialMessageToDiagnostic`: the message's `pos`..`endPos`, uncut, no
                // `fullRange`.
                json!({
                    "range": d["fullRange"], "severity": d["severity"], "source": "Lake",
                    "message": d["message"],
                })
            })
            .collect();
        failure.diagnostics.push((source(root, m), lake));
    }
    if failure.failed.is_empty() {
        return None;
    }
    failure
        .log
        .push("Some required targets logged failures:".to_owned());
    for m in &failure.failed {
        failure.log.push(format!("- {m}"));
    }
    Some(failure)
}

/// The diagnostics a build of the module reports (silent ones are for editors only), under
/// the options its library gives it.
fn messages(root: &Path, module: &str, a: &Analysis) -> Vec<Value> {
    let options = crate::lakefile::setup_options(root, &source(root, module), true);
    let setup = crate::analysis::Setup {
        options: &options,
        module,
    };
    (0..a.steps.len())
        .flat_map(|k| a.report(k, setup))
        .filter(|d| d.get("isSilent") != Some(&Value::Bool(true)))
        .collect()
}

/// `fake-lake setup-file <path> [-]`: exit 2 without a lakefile; exit 1 with the load log on
/// stderr under `LAKE_INVALID_CONFIG` (a configuration that did not load); for a path that does not
/// exist, exit 1 under `FAKE_LEAN_TWIN=fail` (mid Lake), else the external-module setup (as for
/// an existing file that no library builds);
/// exit 3 under `--no-build` when an import is stale (by modification time, or one that fails to
/// build under `FAKE_LAKE_SETUP_BUILD`); under `FAKE_LAKE_SETUP_BUILD`, exit 1 when an import fails
/// to build, reported as that Lake era does ([`SetupBuild`]); otherwise the module setup as JSON
/// on stdout.
pub fn setup_file_main(args: &[String]) -> i32 {
    let root = std::env::current_dir().unwrap_or_default();
    let mut header = String::new();
    if args.iter().any(|a| a == "-") {
        let _ = std::io::stdin().read_to_string(&mut header);
    }
    let Some(path) = args.iter().find(|a| !a.starts_with('-')) else {
        eprintln!("error: missing file argument");
        return 1;
    };
    if !has_config(&root) {
        return 2;
    }
    if let Some(log) = crate::faults::invalid_config() {
        eprintln!("{log}");
        return 1;
    }
    let path = root.join(path);
    let twin_fail = std::env::var("FAKE_LEAN_TWIN").as_deref() == Ok("fail");
    let module = if path.exists() {
        // New Lake: `findModuleBySrc?` of the real path (`resolvePath`: a link is the module it
        // points to), else the external-module setup (SPEC:64–70).
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let root_real = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        lakefile::module_of_path(&root_real, &real)
            .filter(|m| lakefile::library_of(&root_real, m).is_some())
            .unwrap_or_else(|| "_unknown".into())
    } else if twin_fail {
        eprintln!(
            "error: no such file or directory (error code: 2)\n  file: {}",
            path.display()
        );
        return 1;
    } else {
        "_unknown".into()
    };
    let imports: Vec<String> = serde_json::from_str::<Value>(&header)
        .ok()
        .and_then(|h| h["imports"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|i| i["module"].as_str().or(i.as_str()).map(str::to_owned))
        .collect();
    // Mid Lake sets a module of the workspace up from its file on disk (`header.rs`).
    let disk = std::env::var("FAKE_LAKE_SETUP_IMPORTS").as_deref() == Ok("disk");
    let mode = if disk {
        crate::header::SetupImports::Disk
    } else {
        crate::header::SetupImports::Stdin
    };
    let imports = crate::header::lake_built(&root, &path, mode).unwrap_or(imports);
    let era = SetupBuild::from_env();
    let failure = era.and_then(|_| failing_imports(&root, &imports));
    if args.iter().any(|a| a == "--no-build")
        && (failure.is_some()
            || imports
                .iter()
                .any(|m| source(&root, m).exists() && is_stale(&root, m)))
    {
        println!("{}", json!({"staleImports": imports}));
        return 3;
    }
    if let (Some(era), Some(failure)) = (era, failure) {
        // The build's log goes to stderr as it runs (the worker publishes each line).
        for line in &failure.log {
            eprintln!("{line}");
        }
        match era {
            SetupBuild::Intermediate => eprintln!("{IMPORTS_FAILED}"),
            SetupBuild::New => println!("{}", failure.lake_build_error(&root)),
        }
        return 1;
    }
    let external = std::env::var("FAKE_LAKE_EXTERNAL_OPTIONS").as_deref() != Ok("none");
    let options: serde_json::Map<String, Value> = lakefile::setup_options(&root, &path, external)
        .into_iter()
        .map(|(name, value)| {
            let typed = serde_json::from_str::<Value>(&value).unwrap_or(json!(value));
            (name, typed)
        })
        .collect();
    let setup = json!({
        "name": module,
        "isModule": false,
        "imports": imports,
        "options": options,
        "dynlibs": [],
        "plugins": [],
    });
    println!("{setup}");
    0
}
