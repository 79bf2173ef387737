//! The files Lake keeps for one module, found where Lake's `LEAN_PATH` says and checked to
//! exist (reference `lean-stock-speculation.md` §C, "Artifact paths", from Lake's
//! `Config/Module.lean` and its defaults).
//!
//! Contract:
//! 1. The module's library directory is the first `LEAN_PATH` entry `L` that holds
//!    `L/<A/B>.olean`. There: `.olean`, `.ilean` and `.trace` are required; `.olean.server`,
//!    `.olean.private` (the module system) and `.ir` are reported when present.
//! 2. The C output lives in the build directory's `ir/` (`L` is `<build>/lib/lean`):
//!    `<build>/ir/<A/B>.c` is required, `<A/B>.bc` reported when present.
//! 3. An optional artifact older than the `.olean` is a leftover of an earlier build (the
//!    module changed form since) and is not reported.
//! 4. A required artifact that is missing is a [`Missing`] naming every path looked at.
//! 5. [`stamp`] identifies the module's current `.olean` and `.ilean` (modification time and
//!    length), so a caller can tell whether a build rewrote them; [`ilean`] finds the `.ilean`
//!    alone.

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

/// Required artifacts that are not where Lake keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct Missing {
    /// What is missing.
    pub missing: Vec<PathBuf>,
    /// Every library directory looked in.
    pub looked_in: Vec<PathBuf>,
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

/// Finds the module's artifacts (see the contract).
pub fn find(library_dirs: &[PathBuf], module: &str) -> Result<Artifacts, Missing> {
    let not_found = || Missing {
        missing: library_dirs
            .iter()
            .map(|dir| with_suffix(&base(dir, module), ".olean"))
            .collect(),
        looked_in: library_dirs.to_vec(),
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
        });
    }
    let built = modified(&olean);
    let optional = [
        ("olean_server", with_suffix(&lib, ".olean.server")),
        ("olean_private", with_suffix(&lib, ".olean.private")),
        ("ir", with_suffix(&lib, ".ir")),
        ("bc", with_suffix(&ir, ".bc")),
    ]
    .into_iter()
    .filter(|(_, path)| path.is_file() && modified(path) >= built)
    .collect();
    Ok(Artifacts {
        olean,
        ilean,
        c,
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

/// The module's `.ilean` in the first library directory holding its `.olean`, if it is there.
pub fn ilean(library_dirs: &[PathBuf], module: &str) -> Option<PathBuf> {
    library_dirs
        .iter()
        .map(|dir| base(dir, module))
        .find(|lib| with_suffix(lib, ".olean").is_file())
        .map(|lib| with_suffix(&lib, ".ilean"))
        .filter(|ilean| ilean.is_file())
}

/// What identifies a module's current `.olean` and `.ilean`, if it has them.
pub type Stamp = Vec<Option<(SystemTime, u64)>>;

/// The stamp of the module's artifacts in the first library directory holding them.
pub fn stamp(library_dirs: &[PathBuf], module: &str) -> Stamp {
    let of = |path: PathBuf| {
        let meta = std::fs::metadata(path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    };
    library_dirs
        .iter()
        .map(|dir| base(dir, module))
        .find(|lib| with_suffix(lib, ".olean").is_file())
        .map(|lib| {
            vec![
                of(with_suffix(&lib, ".olean")),
                of(with_suffix(&lib, ".ilean")),
            ]
        })
        .unwrap_or_default()
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
        assert_eq!(stamp(&dirs, "A.B"), Stamp::new());
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
        assert_eq!(stamp(&dirs, "A.B").len(), 2);
        assert_eq!(ilean(&dirs, "A.B"), Some(lib.join("A/B.ilean")));
    }
}
