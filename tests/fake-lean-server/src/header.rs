//! A document's header failing, in the two shapes Lean reports it (README "Header errors"):
//!
//! - [`HeaderError::Setup`]: Lake's per-file setup failed (`lake setup-file` exited non-zero,
//!   imports out of date under `--no-build`). The worker reports it with
//!   `Language.diagnosticsOfHeaderError` (`Lean/Language/Basic.lean`): one message from 1:0
//!   (Lean's lines are 1-based) to the end of the file, which `msgToInteractiveDiagnostic` cuts
//!   into `range` 0:0–1:0 (0:0–0:n on a one-line file) and `fullRange` 0:0–end of file.
//! - [`HeaderError::Import`]: Lake set the file up, then Lean's own `Elab.processHeader`
//!   (`Lean/Elab/Import.lean`) could not import a module: `importModules` threw, and the message
//!   is logged at `header.getPos?`, the header's first token, with no end position (a zero-width
//!   range; not 0:0 when the file starts with a comment). The header snapshot has no result
//!   (`Lean/Language/Lean.lean`: `if msgLog.hasErrors then return { diagnostics, result? := none
//!   }`), so it is fatal like the other.
//!
//! [`import_error`] says which imports Lean cannot find. A module exists when it is one of the
//! toolchain's (`Init`, `Std`, `Lean`, `Lake`), when Lake builds it for this file (a project
//! module with a source file; under mid Lake's [`SetupImports::Disk`] only those the file's
//! on-disk header reaches), or when its `.olean` is in the build directory. The texts are
//! `findOLean`'s (`Lean/Util/Path.lean`) and `importModulesCore`'s (`Lean/Environment.lean`),
//! per era ([`ImportText`]).

use crate::analysis::Analysis;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Why Lean could not process a document's header (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum HeaderError {
    /// A failed Lake setup: an error from 0:0 over the whole file.
    Setup(String),
    /// `processHeader`'s own error, at byte `at` (the header's first token), zero-width.
    Import { at: usize, message: String },
}

impl HeaderError {
    /// The one diagnostic the worker publishes for it.
    pub fn diagnostic(&self, a: &Analysis) -> Value {
        match self {
            HeaderError::Setup(message) => a.diagnostic(1, (0, a.text.as_str().len()), message),
            HeaderError::Import { at, message } => a.diagnostic(1, (*at, *at), message),
        }
    }
}

/// Which imports Lake builds for a file that is a module of the workspace
/// (`FAKE_LAKE_SETUP_IMPORTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupImports {
    /// New Lake (`setupEditedModule`, `Lake/Build/Module.lean`): those of the header the worker
    /// sends on stdin, the document's own.
    Stdin,
    /// Mid Lake (`Lake/CLI/Serve.lean` `setupFile`: a module found by `findModuleBySrc?` is set
    /// up by `mod.setup.fetch`, "TODO: Use `header?` for modules within the workspace as well"):
    /// those of the module's file on disk, whatever the document's header says. Its setup carries
    /// no import artifacts (`imports? := none`, `importArts := {}`), so Lean imports the
    /// document's header through `findOLean`, and an import Lake did not build and that was never
    /// built fails there.
    Disk,
}

/// How `findOLean` words a module prefix found in no search path entry (`FAKE_LEAN_IMPORT_TEXT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportText {
    /// Lean from June 2024 (lean4 PR #4424): `unknown module prefix 'P'\n\nNo directory 'P' or
    /// file 'P.olean' in the search path entries:\n<entries>`.
    Prefix,
    /// Older Lean: `unknown package 'P'`, and `\nYou might need to open '<dir>' as a workspace
    /// in your editor` when a directory above the working directory holds a directory `P`.
    Package,
}

/// The toolchain's module roots (its `lib/lean` holds `Init.olean`, `Std.olean`, …).
const TOOLCHAIN: [&str; 4] = ["Init", "Std", "Lean", "Lake"];

/// The search path entry of the project's build directory, as Lake's environment has it.
const BUILD_ENTRY: &str = "./.lake/build/lib/lean";

/// The error of Lean's `processHeader` for `imports`, the first whose module does not exist
/// (`importModulesCore` goes through them in order and throws at the first), at byte `at`, or
/// `None` when every one exists. `lake_built` is what Lake built for the file, when that is not
/// every project module (mid Lake).
pub fn import_error(
    root: &Path,
    imports: &[String],
    at: usize,
    lake_built: Option<&[String]>,
    text: ImportText,
) -> Option<HeaderError> {
    let missing = imports.iter().find(|m| !exists(root, m, lake_built))?;
    Some(HeaderError::Import {
        at,
        message: find_olean_error(root, missing, text),
    })
}

fn exists(root: &Path, module: &str, lake_built: Option<&[String]>) -> bool {
    let prefix = module.split('.').next().unwrap_or(module);
    let built_by_lake = crate::lakefile::source_of(root, module).exists()
        && lake_built.is_none_or(|built| built.iter().any(|m| m == module));
    TOOLCHAIN.contains(&prefix) || built_by_lake || olean(root, module).exists()
}

fn olean(root: &Path, module: &str) -> PathBuf {
    root.join(BUILD_ENTRY)
        .join(format!("{}.olean", module.replace('.', "/")))
}

/// What `findOLean` and `importModulesCore` throw for a module that does not exist: the prefix
/// is in a search path entry (its directory there, or the project's sources under it, which Lake
/// builds into that directory: a simplification, as the fake writes no artifacts when it sets a
/// file up), so the `.olean` is missing; or it is in none.
fn find_olean_error(root: &Path, module: &str, text: ImportText) -> String {
    let prefix = module.split('.').next().unwrap_or(module);
    let build = root.join(BUILD_ENTRY);
    let in_build = build.join(prefix).is_dir() || build.join(format!("{prefix}.olean")).exists();
    let mut sources: Vec<PathBuf> = crate::lakefile::libraries(root)
        .iter()
        .map(|lib| lib.src_path(root))
        .collect();
    sources.push(root.to_path_buf());
    let in_sources = crate::lakefile::source_of(root, prefix).exists()
        || sources.iter().any(|dir| dir.join(prefix).is_dir());
    if in_build || in_sources {
        let file = format!("{BUILD_ENTRY}/{}.olean", module.replace('.', "/"));
        return format!("object file '{file}' of module {module} does not exist");
    }
    match text {
        ImportText::Prefix => {
            let toolchain = toolchain_lib().display().to_string();
            format!(
                "unknown module prefix '{prefix}'\n\nNo directory '{prefix}' or file \
                 '{prefix}.olean' in the search path entries:\n{BUILD_ENTRY}\n{toolchain}"
            )
        }
        ImportText::Package => {
            let hint = root
                .ancestors()
                .find(|dir| dir.join(prefix).is_dir())
                .map(|dir| {
                    format!(
                        "\nYou might need to open '{}' as a workspace in your editor",
                        dir.display()
                    )
                })
                .unwrap_or_default();
            format!("unknown package '{prefix}'{hint}")
        }
    }
}

/// The toolchain's library directory, next to this executable as `lib/lean` is next to
/// `bin/lean` (`getLibDir`).
fn toolchain_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let bin = exe.parent().unwrap_or(Path::new("/"));
    bin.parent().unwrap_or(bin).join("lib/lean")
}

/// The imports Lake builds for a document at `path` whose header names `header` (see
/// [`SetupImports`]): under mid Lake, for a module of the workspace (found by its real path, so a
/// link is the module it points to), the transitive project imports of its file on disk, else
/// `None` (every project module the header names is built).
pub fn lake_built(root: &Path, path: &Path, mode: SetupImports) -> Option<Vec<String>> {
    if mode == SetupImports::Stdin {
        return None;
    }
    let real = std::fs::canonicalize(path).ok()?;
    let root_real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let module = crate::lakefile::module_of_path(&root_real, &real)?;
    crate::lakefile::library_of(&root_real, &module)?;
    let on_disk = std::fs::read_to_string(&real).ok()?;
    let imports = Analysis::new(crate::text::Text::new(&on_disk))
        .outline
        .imports;
    let jobs = crate::lake_build::order(root, &imports);
    Some(jobs.into_iter().map(|(m, _)| m).collect())
}
