//! What a document is checked against besides its own text: the rule for which files that is,
//! recorded when Lean sets the document up ([`LakeConfig::imports`]) and carried over a change of
//! its text that keeps its header ([`LakeConfig::kept`]). `fingerprint` hashes them.
//!
//! Contract:
//! 1. The workspace's source directories are Lake's library source directories of the root
//!    package (`LeanLib.srcDir = pkg.srcDir / lib.srcDir`, `Package.srcDir = pkg.dir /
//!    srcDir`, both `"."` by default: Lake's `Config/LeanLib.lean`, `Config/Package.lean`), read
//!    without running Lake ([`source_dirs`]): the root; from `lakefile.toml`, the package's
//!    `srcDir` and each `[[lean_lib]]`'s under it; from `lakefile.lean` (Lean code, not run), every
//!    `srcDir := "…"` literal, alone and under each other. Only directories inside the root and
//!    outside `.lake` count. More directories than Lake has only make more candidates: a file
//!    that is no module is hashed for nothing, never missed.
//! 2. A module `A.B` is the workspace's when `<dir>/A/B.lean` exists for a source directory
//!    (each such file counts). The import closure is the header's modules that are the
//!    workspace's, then the workspace's modules each of those imports (its header, read with
//!    the file: `syntax::imports`), transitively, in that order, each once. A direct import that
//!    is not the workspace's but a file of a package (`<root>/.lake/packages/<p>/A/B.lean`,
//!    packages in name order) is hashed as well, and not followed: the modules of packages and of
//!    the toolchain are pinned by `lake-manifest.json` and `lean-toolchain`, which the
//!    configuration hash covers.
//! 3. The files the text reads are its `include_str`s (`syntax::includes`), each joined to the
//!    directory of the document's file as Lean's `elabIncludeStr` joins it (an absolute path
//!    replaces it); one whose path is computed leaves [`Imports::unnamed_include`] set. An absent
//!    file is recorded absent.
//! 4. A change of the text that keeps the header keeps the import closure (Lean keeps the
//!    environment it loaded) and finds the text's reads again: a read whose path term ends
//!    within the part of the text both versions share keeps its record, as Lean may reuse
//!    what it read there; any other is hashed now, before Lean is given the text. When neither
//!    text reads anything, the record itself is kept.

use std::collections::{HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::fingerprint::{ImportFile, Imports, IncludedFile, LakeConfig, stamp};
use crate::lean::syntax;

/// The workspace's source directories (see the contract), from the contents of
/// `lakefile.toml` and `lakefile.lean` when present.
pub(super) fn source_dirs(root: &Path, toml: Option<&[u8]>, lean: Option<&[u8]>) -> Vec<PathBuf> {
    let mut relative: Vec<PathBuf> = vec![PathBuf::new()];
    if let Some(toml) = toml.and_then(|t| std::str::from_utf8(t).ok()) {
        relative.extend(toml_dirs(toml));
    }
    if let Some(lean) = lean {
        let literals = lean_literals(&String::from_utf8_lossy(lean));
        for outer in &literals {
            relative.push(PathBuf::from(outer));
            for inner in literals.iter().filter(|inner| *inner != outer) {
                relative.push(Path::new(outer).join(inner));
            }
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in relative {
        let Some(dir) = inside(root, &root.join(dir)) else {
            continue;
        };
        if !dir.starts_with(root.join(".lake")) && !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The package's `srcDir` and each library's under it, from `lakefile.toml`.
fn toml_dirs(toml: &str) -> Vec<PathBuf> {
    let Ok(document) = toml.parse::<toml_edit::DocumentMut>() else {
        return Vec::new();
    };
    let package = PathBuf::from(
        document
            .get("srcDir")
            .and_then(|v| v.as_str())
            .unwrap_or("."),
    );
    let mut dirs = vec![package.clone()];
    if let Some(libraries) = document
        .get("lean_lib")
        .and_then(|v| v.as_array_of_tables())
    {
        for library in libraries {
            let dir = library
                .get("srcDir")
                .and_then(|v| v.as_str())
                .unwrap_or(".");
            dirs.push(package.join(dir));
        }
    }
    dirs
}

/// Every `srcDir := "…"` literal of a `lakefile.lean`.
fn lean_literals(lean: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in lean.match_indices("srcDir") {
        let rest = lean[at + "srcDir".len()..].trim_start();
        let Some(rest) = rest.strip_prefix(":=") else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(end) = rest.find('"') {
            found.push(rest[..end].to_owned());
        }
    }
    found
}

/// `path` with `.` and `..` resolved lexically, when it lies inside `root`.
fn inside(root: &Path, path: &Path) -> Option<PathBuf> {
    let normal = normal(path);
    normal.starts_with(root).then_some(normal)
}

/// `path` with `.` and `..` resolved lexically.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `A.B` as the relative path of its source, `A/B.lean`.
fn source_of(module: &str) -> PathBuf {
    module
        .split('.')
        .collect::<PathBuf>()
        .with_extension("lean")
}

impl LakeConfig {
    /// What a document whose file is `file` is checked against when Lean sets it up with `text`,
    /// whose header imports `modules` (see the contract).
    pub fn imports(&self, modules: Vec<String>, text: &str, file: &Path) -> Imports {
        let mut files = Vec::new();
        let mut followed: HashSet<String> = modules.iter().cloned().collect();
        let mut next: VecDeque<String> = VecDeque::new();
        let mut take = |module: &str, files: &mut Vec<ImportFile>, next: &mut VecDeque<String>| {
            let own = self.workspace_files(module);
            let found = !own.is_empty();
            for file in own {
                if let Some((import, imported)) = self.import_file(module, file, true) {
                    files.push(import);
                    next.extend(
                        imported
                            .iter()
                            .filter(|m| followed.insert((*m).clone()))
                            .cloned(),
                    );
                }
            }
            found
        };
        for (n, module) in modules.iter().enumerate() {
            if modules[..n].contains(module) || take(module, &mut files, &mut next) {
                continue;
            }
            if let Some(package) = self.package_file(module) {
                files.extend(self.import_file(module, package, false).map(|i| i.0));
            }
        }
        while let Some(module) = next.pop_front() {
            take(&module, &mut files, &mut next);
        }
        let (includes, unnamed_include) = self.includes(text, file, None);
        Imports {
            modules,
            files,
            includes,
            unnamed_include,
        }
    }

    /// What a document set up as `known` with `old` is checked against once given `text` under
    /// the same header (see the contract).
    pub fn kept(&self, known: &Arc<Imports>, old: &str, text: &str, file: &Path) -> Arc<Imports> {
        let reads = !known.includes.is_empty() || known.unnamed_include;
        if !reads && syntax::includes(text).is_empty() {
            return known.clone();
        }
        let (includes, unnamed_include) = self.includes(text, file, Some((old, &known.includes)));
        Arc::new(Imports {
            modules: known.modules.clone(),
            files: known.files.clone(),
            includes,
            unnamed_include,
        })
    }

    /// The files `text` reads, with those `previous` recorded for another text kept where they
    /// may have been reused (see the contract); whether a path is computed.
    fn includes(
        &self,
        text: &str,
        file: &Path,
        previous: Option<(&str, &[IncludedFile])>,
    ) -> (Vec<IncludedFile>, bool) {
        let found = syntax::includes(text);
        let mut unnamed = false;
        let mut out = Vec::with_capacity(found.len());
        let shared = previous.map_or(0, |(old, _)| shared_prefix(old, text));
        let dir = file.parent().unwrap_or(Path::new("/"));
        for include in found {
            let Some(path) = include.path else {
                unnamed = true;
                continue;
            };
            let target = dir.join(path);
            let reused = previous
                .filter(|_| include.end <= shared)
                .and_then(|(_, old)| {
                    old.iter()
                        .find(|o| o.end == include.end && o.file == target)
                });
            match reused {
                Some(kept) => out.push(kept.clone()),
                None => out.push(self.included_file(target, include.end)),
            }
        }
        (out, unnamed)
    }

    fn included_file(&self, file: PathBuf, end: usize) -> IncludedFile {
        let hashed = self.hash(&file, false);
        let normal = normal(&file);
        let path = match normal.strip_prefix(self.root()) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => normal.display().to_string(),
        };
        IncludedFile {
            path,
            sha256: hashed.as_ref().map(|h| h.sha256.clone()),
            stamp: hashed.as_ref().map_or_else(|| stamp(&file), |h| h.stamp),
            settled: hashed.as_ref().is_some_and(|h| h.settled),
            file,
            end,
        }
    }

    /// `module`'s file hashed, with the modules it imports when `follow`.
    fn import_file(
        &self,
        module: &str,
        file: PathBuf,
        follow: bool,
    ) -> Option<(ImportFile, Arc<[String]>)> {
        let hashed = self.hash(&file, follow)?;
        let path = file.strip_prefix(self.root()).ok()?.display().to_string();
        let imported = hashed.imports.unwrap_or_else(|| Arc::new([]));
        let import = ImportFile {
            module: module.to_owned(),
            path,
            sha256: hashed.sha256,
            file,
            stamp: hashed.stamp,
            settled: hashed.settled,
        };
        Some((import, imported))
    }

    /// The workspace's files that can be `module` (see the contract).
    fn workspace_files(&self, module: &str) -> Vec<PathBuf> {
        let relative = source_of(module);
        self.source_dirs
            .iter()
            .map(|dir| dir.join(&relative))
            .filter(|file| file.is_file())
            .collect()
    }

    /// The package file that is `module`, the first package's in name order.
    fn package_file(&self, module: &str) -> Option<PathBuf> {
        let relative = source_of(module);
        let mut packages: Vec<PathBuf> = std::fs::read_dir(self.root().join(".lake/packages"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        packages.sort();
        packages
            .into_iter()
            .map(|dir| dir.join(&relative))
            .find(|file| file.is_file())
    }
}

/// How many leading bytes two texts share, on a character boundary.
fn shared_prefix(a: &str, b: &str) -> usize {
    let mut shared = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !b.is_char_boundary(shared) {
        shared -= 1;
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: [&str; 3] = ["lakefile.toml", "lakefile.lean", "lean-toolchain"];

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn paths(imports: &Imports) -> Vec<&str> {
        imports.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn source_directories_follow_lakes_rules() {
        let root = Path::new("/w");
        let toml = b"name = \"p\"\nsrcDir = \"lib\"\n\n[[lean_lib]]\nname = \"A\"\n\n\
                     [[lean_lib]]\nname = \"B\"\nsrcDir = \"b\"\n\n[[lean_lib]]\nname = \"C\"\n\
                     srcDir = \"../../etc\"\n";
        assert_eq!(
            source_dirs(root, Some(toml), None),
            [root.to_path_buf(), root.join("lib"), root.join("lib/b")]
        );
        let lean = b"package p where\n  srcDir := \"src\"\nlean_lib L where\n  srcDir := \"x\"\n";
        assert_eq!(
            source_dirs(root, None, Some(lean)),
            [
                root.to_path_buf(),
                root.join("src"),
                root.join("src/x"),
                root.join("x"),
                root.join("x/src")
            ]
        );
        let hidden = b"[[lean_lib]]\nname = \"H\"\nsrcDir = \".lake/packages/q\"\n";
        assert_eq!(source_dirs(root, Some(hidden), None), [root.to_path_buf()]);
        assert_eq!(
            source_dirs(root, Some(b"not = [toml"), None),
            [root.to_path_buf()]
        );
    }

    #[test]
    fn the_closure_follows_the_workspaces_modules_not_the_packages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            (
                "lakefile.toml",
                "name = \"p\"\n[[lean_lib]]\nname = \"S\"\nsrcDir = \"src\"\n",
            ),
            ("A/B.lean", "import S.C\nimport Dep.Core\n"),
            ("src/S/C.lean", "import A.D\nimport Init\n"),
            ("A/D.lean", "import A.B\n"),
            (".lake/packages/dep/Dep/Core.lean", "import Dep.Deeper\n"),
            (".lake/packages/dep/Dep/Deeper.lean", ""),
            (".lake/packages/dep/Dep/Direct.lean", ""),
        ];
        for (path, text) in files {
            write(root, path, text);
        }
        let config = LakeConfig::read(root, &FILES);
        let modules = ["Init", "A.B", "Dep.Direct"].map(str::to_owned).to_vec();
        let imports = config.imports(modules, "", &root.join("Top.lean"));
        assert_eq!(
            paths(&imports),
            [
                "A/B.lean",
                ".lake/packages/dep/Dep/Direct.lean",
                "src/S/C.lean",
                "A/D.lean"
            ]
        );
        assert!(config.changed_imports(&imports).is_empty());
        write(root, "A/D.lean", "import A.B\n-- changed\n");
        assert_eq!(config.changed_imports(&imports), ["A/D.lean"]);
    }

    #[test]
    fn reads_are_found_kept_where_lean_may_reuse_them_and_hashed_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "M/data.txt", "one");
        let config = LakeConfig::read(root, &FILES);
        let file = root.join("M/Top.lean");
        let text = "def s := include_str \"data.txt\"\ndef t := 1\n";
        let set_up = Arc::new(config.imports(Vec::new(), text, &file));
        let read = &set_up.includes[0];
        assert_eq!(read.path, "M/data.txt");
        assert_eq!(
            read.sha256.as_deref(),
            Some(&*super::super::fingerprint::sha256_hex(b"one"))
        );
        write(root, "M/data.txt", "two");
        assert_eq!(config.changed_imports(&set_up), ["M/data.txt"]);
        // Changed after the read: Lean may reuse it, so it is the one it read.
        let later = format!("{text}def u := 2\n");
        let kept = config.kept(&set_up, text, &later, &file);
        assert_eq!(kept.includes, set_up.includes);
        assert_eq!(config.changed_imports(&kept), ["M/data.txt"]);
        // Changed before it: Lean reads it again.
        let earlier = format!("-- a comment\n{text}");
        let again = config.kept(&set_up, text, &earlier, &file);
        assert!(config.changed_imports(&again).is_empty());
        // A text without reads keeps its record as it is.
        let plain = Arc::new(config.imports(Vec::new(), "def x := 1\n", &file));
        assert!(Arc::ptr_eq(
            &config.kept(&plain, "def x := 1\n", "def x := 2\n", &file),
            &plain
        ));
    }

    #[test]
    fn absent_outside_and_computed_reads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        std::fs::create_dir_all(&root).unwrap();
        write(dir.path(), "outside.txt", "x");
        let config = LakeConfig::read(&root, &FILES);
        let file = root.join("Top.lean");
        let text = "def a := include_str \"missing.txt\"\ndef b := include_str \"../outside.txt\"\n\
                    def c := include_str path\n";
        let imports = config.imports(Vec::new(), text, &file);
        assert_eq!(imports.includes[0].path, "missing.txt");
        assert_eq!(imports.includes[0].sha256, None);
        assert_eq!(
            imports.includes[1].path,
            dir.path().join("outside.txt").display().to_string()
        );
        assert!(imports.unnamed_include);
        assert!(config.changed_imports(&imports).is_empty());
        write(&root, "missing.txt", "now here");
        assert_eq!(config.changed_imports(&imports), ["missing.txt"]);
    }
}
