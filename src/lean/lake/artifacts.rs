//! The files Lake keeps for one module, as Lake names them, checked to exist (reference
//! `lean-stock-speculation.md` §C, "Artifact paths", from Lake's `Config/Module.lean` and its
//! defaults; `lean-language-server.md` Part 3, "Lake's artifact cache").
//!
//! Contract:
//! 1. With Lake's own record ([`from_query`]): the `.olean`, `.ilean` and `.c` are the paths
//!    `lake query` printed (`query`), wherever they are: in Lake's artifact cache after a fetch,
//!    which leaves only the `.ilean` in `.lake/build`. Each must be a file. The `.trace`, which
//!    Lake writes in the build directory on every build and fetch, is `L/<A/B>.trace` for the
//!    first `LEAN_PATH` entry `L` holding it, and is required too. `.olean.server`,
//!    `.olean.private` (the module system) and `.ir` beside an `.olean` Lake named in `L`, and
//!    `.bc` beside its `.c`, are reported when present; beside an artifact in the cache there
//!    are none to find.
//! 2. Without it ([`find`], a Lake without `lake query`, which has no artifact cache either):
//!    the module's library directory is the first `LEAN_PATH` entry `L` that holds
//!    `L/<A/B>.olean`. There: `.olean`, `.ilean` and `.trace` are required, the optional ones as
//!    above. The C output lives in the build directory's `ir/` (`L` is `<build>/lib/lean`):
//!    `<build>/ir/<A/B>.c` is required.
//! 3. An optional artifact older than the `.olean` is a leftover of an earlier build (the
//!    module changed form since) and is not reported.
//! 4. A required artifact that is missing is a [`Missing`] naming every path looked at, and who
//!    named them ([`Source`]).
//! 5. [`stamp`] identifies the module's `.ilean` and `.trace` in the first `LEAN_PATH` entry
//!    holding either (modification time and length): Lake writes both in the build directory
//!    whether it built the module or fetched it from its cache, so a caller can tell whether a
//!    build rewrote them; [`ilean`] finds the `.ilean` alone.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value, json};

/// The artifacts of one module.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifacts {
    /// `.olean`.
    pub olean: PathBuf,
    /// `.ilean`: what Lean's reference index reads.
    pub ilean: PathBuf,
    /// `.c`.
    pub c: PathBuf,
    /// Lake's trace of the build.
    pub trace: PathBuf,
    /// Present optional artifacts, by result field.
    pub optional: Vec<(&'static str, PathBuf)>,
}

/// Who named the paths of a [`Missing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `lake query`, Lake's record of the build.
    LakeQuery,
    /// The `LEAN_PATH` of `lake env`, for a Lake without `lake query`.
    LeanPath,
}

/// Required artifacts that are not where Lake keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// What is missing.
    pub missing: Vec<PathBuf>,
    /// Every library directory looked in.
    pub looked_in: Vec<PathBuf>,
    /// Who named them.
    pub source: Source,
}

fn base(dir: &Path, module: &str) -> PathBuf {
    dir.join(module.replace('.', "/"))
}

fn with_suffix(base: &Path, suffix: &str) -> PathBuf {
    let mut path = base.as_os_str().to_owned();
    path.push(suffix);
    PathBuf::from(path)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The build directory's `ir/` for a library directory `<build>/lib/lean`.
fn ir_dir(library_dir: &Path) -> PathBuf {
    let build = if library_dir.ends_with("lib/lean") {
        library_dir.parent().and_then(Path::parent)
    } else {
        library_dir.parent()
    };
    build.unwrap_or(library_dir).join("ir")
}

/// The optional artifacts of a module whose library-directory base is `lib` and whose C
/// output's base is `ir`, no older than its `.olean` (see the contract).
fn optional(lib: &Path, ir: &Path) -> Vec<(&'static str, PathBuf)> {
    let built = modified(&with_suffix(lib, ".olean"));
    [
        ("olean_server", with_suffix(lib, ".olean.server")),
        ("olean_private", with_suffix(lib, ".olean.private")),
        ("ir", with_suffix(lib, ".ir")),
        ("bc", with_suffix(ir, ".bc")),
    ]
    .into_iter()
    .filter(|(_, path)| path.is_file() && modified(path) >= built)
    .collect()
}

/// Finds the module's artifacts through `LEAN_PATH` alone (see the contract).
pub fn find(library_dirs: &[PathBuf], module: &str) -> Result<Artifacts, Missing> {
    let not_found = || Missing {
        missing: library_dirs
            .iter()
            .map(|dir| with_suffix(&base(dir, module), ".olean"))
            .collect(),
        looked_in: library_dirs.to_vec(),
        source: Source::LeanPath,
    };
    let dir = library_dirs
        .iter()
        .find(|dir| with_suffix(&base(dir, module), ".olean").is_file())
        .ok_or_else(not_found)?;
    let lib = base(dir, module);
    let ir = base(&ir_dir(dir), module);
    let olean = with_suffix(&lib, ".olean");
    let ilean = with_suffix(&lib, ".ilean");
    let trace = with_suffix(&lib, ".trace");
    let c = with_suffix(&ir, ".c");
    let missing: Vec<PathBuf> = [&ilean, &trace, &c]
        .into_iter()
        .filter(|p| !p.is_file())
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(Missing {
            missing,
            looked_in: vec![dir.clone()],
            source: Source::LeanPath,
        });
    }
    Ok(Artifacts {
        olean,
        ilean,
        c,
        trace,
        optional: optional(&lib, &ir),
    })
}

/// The paths `lake query` printed for a module's `.olean`, `.ilean` and `.c`.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    /// `+M:olean`.
    pub olean: PathBuf,
    /// `+M:ilean`.
    pub ilean: PathBuf,
    /// `+M:c`.
    pub c: PathBuf,
}

/// Checks the artifacts Lake named, and finds the module's trace (see the contract).
pub fn from_query(
    named: Named,
    library_dirs: &[PathBuf],
    module: &str,
) -> Result<Artifacts, Missing> {
    let traces: Vec<PathBuf> = library_dirs
        .iter()
        .map(|dir| with_suffix(&base(dir, module), ".trace"))
        .collect();
    let trace = traces.iter().find(|trace| trace.is_file()).cloned();
    let mut missing: Vec<PathBuf> = [&named.olean, &named.ilean, &named.c]
        .into_iter()
        .filter(|p| !p.is_file())
        .cloned()
        .collect();
    if trace.is_none() {
        missing.extend(traces);
    }
    let (Some(trace), true) = (trace, missing.is_empty()) else {
        return Err(Missing {
            missing,
            looked_in: library_dirs.to_vec(),
            source: Source::LakeQuery,
        });
    };
    // Optional artifacts sit beside an `.olean` in a library directory, never in the cache.
    let in_library = library_dirs
        .iter()
        .map(|dir| base(dir, module))
        .find(|lib| with_suffix(lib, ".olean") == named.olean);
    let optional = match in_library {
        Some(lib) => optional(&lib, &named.c.with_extension("")),
        None => Vec::new(),
    };
    Ok(Artifacts {
        olean: named.olean,
        ilean: named.ilean,
        c: named.c,
        trace,
        optional,
    })
}

impl Artifacts {
    /// The result fields: `olean`, `ilean`, `c`, `trace`, and the optional ones present.
    pub fn fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        for (name, path) in [
            ("olean", &self.olean),
            ("ilean", &self.ilean),
            ("c", &self.c),
            ("trace", &self.trace),
        ]
        .into_iter()
        .chain(self.optional.iter().map(|(name, path)| (*name, path)))
        {
            fields.insert(name.into(), json!(path.display().to_string()));
        }
        fields
    }
}

/// The module's base in the first library directory holding its `.ilean` or its `.trace`,
/// the two files Lake always writes there.
fn written_base(library_dirs: &[PathBuf], module: &str) -> Option<PathBuf> {
    library_dirs
        .iter()
        .map(|dir| base(dir, module))
        .find(|lib| with_suffix(lib, ".ilean").is_file() || with_suffix(lib, ".trace").is_file())
}

/// The module's `.ilean` in the build directory, if it is there.
pub fn ilean(library_dirs: &[PathBuf], module: &str) -> Option<PathBuf> {
    written_base(library_dirs, module)
        .map(|lib| with_suffix(&lib, ".ilean"))
        .filter(|ilean| ilean.is_file())
}

/// What identifies one file's contents as written: modification time and length.
type FileStamp = Option<(SystemTime, u64)>;

/// What identifies a module's current `.ilean` and `.trace` (see the contract).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    ilean: FileStamp,
    trace: FileStamp,
}

impl Stamp {
    /// Whether the module had an `.ilean`.
    pub fn has_ilean(&self) -> bool {
        self.ilean.is_some()
    }
}

/// The stamp of the module's `.ilean` and `.trace` (see the contract).
pub fn stamp(library_dirs: &[PathBuf], module: &str) -> Stamp {
    let of = |path: PathBuf| {
        let meta = std::fs::metadata(path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    };
    written_base(library_dirs, module).map_or_else(Stamp::default, |lib| Stamp {
        ilean: of(with_suffix(&lib, ".ilean")),
        trace: of(with_suffix(&lib, ".trace")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"x").unwrap();
    }

    #[test]
    fn lakes_layout_is_found_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let build = dir.path().join(".lake/build");
        let lib = build.join("lib/lean");
        let dirs = vec![dir.path().join("elsewhere"), lib.clone()];
        let missing = find(&dirs, "A.B").unwrap_err();
        assert_eq!(missing.looked_in, dirs);
        assert_eq!(missing.source, Source::LeanPath);
        assert_eq!(stamp(&dirs, "A.B"), Stamp::default());
        for ext in ["olean", "ilean", "trace"] {
            touch(&lib.join(format!("A/B.{ext}")));
        }
        let missing = find(&dirs, "A.B").unwrap_err();
        assert_eq!(missing.missing, [build.join("ir/A/B.c")]);
        touch(&build.join("ir/A/B.c"));
        touch(&lib.join("A/B.olean.server"));
        let found = find(&dirs, "A.B").unwrap();
        assert_eq!(found.olean, lib.join("A/B.olean"));
        assert_eq!(found.c, build.join("ir/A/B.c"));
        assert_eq!(
            found.optional,
            [("olean_server", lib.join("A/B.olean.server"))]
        );
        let fields = found.fields();
        let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
        assert_eq!(keys, ["c", "ilean", "olean", "olean_server", "trace"]);
        assert!(stamp(&dirs, "A.B").has_ilean());
        assert_eq!(ilean(&dirs, "A.B"), Some(lib.join("A/B.ilean")));
        // Lake named the same files: the same artifacts.
        let named = Named {
            olean: lib.join("A/B.olean"),
            ilean: lib.join("A/B.ilean"),
            c: build.join("ir/A/B.c"),
        };
        assert_eq!(from_query(named, &dirs, "A.B"), Ok(found));
    }

    #[test]
    fn artifacts_in_lakes_cache_are_taken_from_lake_and_the_trace_from_the_build_directory() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join(".lake/build/lib/lean");
        let cache = dir.path().join("cache/artifacts");
        let dirs = vec![lib.clone()];
        let named = Named {
            olean: cache.join("0123456789abcdef.olean"),
            ilean: lib.join("A/B.ilean"),
            c: cache.join("fedcba9876543210.c"),
        };
        let missing = from_query(named.clone(), &dirs, "A.B").unwrap_err();
        assert_eq!(missing.source, Source::LakeQuery);
        assert_eq!(
            missing.missing,
            [
                named.olean.clone(),
                named.ilean.clone(),
                named.c.clone(),
                lib.join("A/B.trace")
            ]
        );
        // What a fetch leaves: the `.ilean` and the `.trace` (and a leftover of another form).
        for path in [&named.olean, &named.c, &named.ilean] {
            touch(path);
        }
        touch(&lib.join("A/B.trace"));
        touch(&lib.join("A/B.olean.server"));
        let found = from_query(named.clone(), &dirs, "A.B").unwrap();
        assert_eq!(found.olean, named.olean);
        assert_eq!(found.c, named.c);
        assert_eq!(found.trace, lib.join("A/B.trace"));
        assert!(found.optional.is_empty(), "{found:?}");
        std::fs::remove_file(&named.c).unwrap();
        let missing = from_query(named.clone(), &dirs, "A.B").unwrap_err();
        assert_eq!(missing.missing, std::slice::from_ref(&named.c));
        // No `.olean` in the build directory: the stamp and the `.ilean` are still found.
        let before = stamp(&dirs, "A.B");
        assert!(before.has_ilean());
        assert_eq!(ilean(&dirs, "A.B"), Some(lib.join("A/B.ilean")));
        std::fs::write(lib.join("A/B.ilean"), b"rewritten").unwrap();
        assert_ne!(stamp(&dirs, "A.B"), before);
    }
}
