//! The files a Lean result depends on besides the document's own text, hashed: the Lake
//! configuration a runtime loaded ([`LakeConfig`]) and what a document was checked against
//! ([`Imports`]: its import closure among the workspace's files, the files its text reads).
//! Receipts (`receipt`) name them; `lean_check_receipt` hashes them again. Which files those are
//! is `closure`'s rule.
//!
//! Contract:
//! 1. Hashes are SHA-256 in lowercase hex ([`sha256_hex`]).
//! 2. [`LakeConfig::read`] reads the configuration files once (a runtime does it once per start,
//!    after its handshake, when it also stamps them for change detection): first each file's
//!    stamp (modification time and size), then its contents, so a change after the stamp is
//!    always seen by a later stamp. Its hash covers, for each file in the given order, the
//!    file's name, a 0 byte, then 1 and the contents' length (8 bytes, little-endian) and the
//!    contents, or 0 for a file that is absent ([`config_sha256`]). The toolchain is the trimmed
//!    contents of `lean-toolchain` as read then, none when there is no such file; the workspace's
//!    source directories are read from the same contents (`closure`).
//! 3. Files are hashed through a cache keyed by path, modification time and size (with a
//!    module's imports, when it was read as one); an entry is trusted only when the file's
//!    modification time was at least [`SETTLED`] old when it was read (a write within the same
//!    clock tick keeps both), so a file written just now is read again. Every read of a file's
//!    contents is counted ([`LakeConfig::reads`]). [`LakeConfig::changed_imports`] names the
//!    files of an [`Imports`] whose contents differ from the hash recorded when Lean set the
//!    document up (or that are gone, or, for a file the text reads, that appeared); it stats each
//!    file and reads only those whose stamp moved. [`LakeConfig::moved`] says whether a
//!    configuration file's stamp differs from the one read at start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// How old a file's modification time must be for its hash to be trusted by its stamp alone.
pub const SETTLED: Duration = Duration::from_secs(2);

/// Files the cache remembers at most; it forgets everything when full (set-ups are rare).
const CACHE_CAPACITY: usize = 4096;

/// A file's modification time and size, `None` when it cannot be read.
pub type Stamp = Option<(SystemTime, u64)>;

/// `bytes`' SHA-256, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// A file's stamp now.
pub fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The hash of the configuration files `files` of `root` as they are now (see the contract).
pub fn config_sha256(root: &Path, files: &[&str]) -> String {
    config_contents(root, files).sha256
}

/// What one read of the configuration files says.
struct Contents {
    sha256: String,
    toolchain: Option<String>,
    source_dirs: Vec<PathBuf>,
}

/// The configuration hash, the toolchain and the source directories, from one read of each file.
fn config_contents(root: &Path, files: &[&str]) -> Contents {
    let mut hasher = Sha256::new();
    let mut toolchain = None;
    let mut lakefiles: [Option<Vec<u8>>; 2] = [None, None];
    for name in files {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        match std::fs::read(root.join(name)) {
            Ok(contents) => {
                hasher.update([1]);
                hasher.update((contents.len() as u64).to_le_bytes());
                hasher.update(&contents);
                match *name {
                    "lean-toolchain" => {
                        toolchain = Some(String::from_utf8_lossy(&contents).trim().to_owned());
                    }
                    "lakefile.toml" => lakefiles[0] = Some(contents),
                    "lakefile.lean" => lakefiles[1] = Some(contents),
                    _ => {}
                }
            }
            Err(_) => hasher.update([0]),
        }
    }
    let [toml, lean] = lakefiles;
    Contents {
        sha256: hex(&hasher.finalize()),
        toolchain,
        source_dirs: super::closure::source_dirs(root, toml.as_deref(), lean.as_deref()),
    }
}

/// The toolchain `root` names now: `lean-toolchain` trimmed, none without one.
pub fn toolchain(root: &Path) -> Option<String> {
    let contents = std::fs::read(root.join("lean-toolchain")).ok()?;
    Some(String::from_utf8_lossy(&contents).trim().to_owned())
}

/// One file of a document's import closure, hashed.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportFile {
    /// Its module name.
    pub module: String,
    /// Its path relative to the workspace root.
    pub path: String,
    /// Its contents' hash when Lean set the document up.
    pub sha256: Arc<str>,
    pub(super) file: PathBuf,
    /// Its stamp then, and whether that stamp alone vouches for the hash (see the contract).
    pub(super) stamp: Stamp,
    pub(super) settled: bool,
}

/// One file a document's text reads with `include_str`, hashed when Lean read it.
#[derive(Debug, Clone, PartialEq)]
pub struct IncludedFile {
    /// Its path relative to the workspace root, or absolute when it lies outside.
    pub path: String,
    /// Its contents' hash, none when it was absent.
    pub sha256: Option<Arc<str>>,
    pub(super) file: PathBuf,
    pub(super) stamp: Stamp,
    pub(super) settled: bool,
    /// Where the path term ends in the text, in bytes (`syntax::Include::end`).
    pub(super) end: usize,
}

/// What a document was checked against, as Lean set it up (`closure` says which files).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imports {
    /// Every module the header names, in order (the toolchain's included).
    pub modules: Vec<String>,
    /// The files of its import closure: the direct imports that are files of the workspace or
    /// its packages, then the workspace's modules those import, transitively.
    pub files: Vec<ImportFile>,
    /// The files its text reads with `include_str`.
    pub includes: Vec<IncludedFile>,
    /// Its text reads a file whose path is computed (`include_str p`): no file can be named.
    pub unnamed_include: bool,
}

/// A file's hash, its stamp, whether the stamp vouches for it, and (when read as a module) the
/// modules it imports.
#[derive(Debug, Clone)]
pub(super) struct Hashed {
    pub(super) sha256: Arc<str>,
    pub(super) stamp: Stamp,
    pub(super) settled: bool,
    pub(super) imports: Option<Arc<[String]>>,
}

#[derive(Debug, Clone)]
struct Cached {
    stamp: (SystemTime, u64),
    sha256: Arc<str>,
    imports: Option<Arc<[String]>>,
}

/// The Lake configuration a runtime loaded, and the cache it hashes the workspace's files with
/// (see the contract).
#[derive(Debug)]
pub struct LakeConfig {
    root: PathBuf,
    files: Vec<(String, Stamp)>,
    sha256: String,
    toolchain: Option<String>,
    /// The workspace's own source directories (`closure`).
    pub(super) source_dirs: Vec<PathBuf>,
    cache: Mutex<HashMap<PathBuf, Cached>>,
    reads: AtomicU64,
}

impl LakeConfig {
    /// Reads the configuration files `files` of `root` (see the contract).
    pub fn read(root: &Path, files: &[&str]) -> LakeConfig {
        let stamps = files
            .iter()
            .map(|name| ((*name).to_owned(), stamp(&root.join(name))))
            .collect();
        let contents = config_contents(root, files);
        LakeConfig {
            root: root.to_path_buf(),
            files: stamps,
            sha256: contents.sha256,
            toolchain: contents.toolchain,
            source_dirs: contents.source_dirs,
            cache: Mutex::default(),
            reads: AtomicU64::new(0),
        }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The hash of the configuration as read.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The toolchain as read.
    pub fn toolchain(&self) -> Option<&str> {
        self.toolchain.as_deref()
    }

    /// Each configuration file's stamp as read, in order.
    pub fn stamps(&self) -> &[(String, Stamp)] {
        &self.files
    }

    /// Whether a configuration file's stamp differs now from the one read.
    pub fn moved(&self) -> bool {
        self.files
            .iter()
            .any(|(name, then)| stamp(&self.root.join(name)) != *then)
    }

    /// How many times a file's contents were read (see the contract).
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// The paths of the files of `imports` that differ from their recorded hash (see the
    /// contract): the import closure's first, then the files the text reads.
    pub fn changed_imports(&self, imports: &Imports) -> Vec<String> {
        let modules = imports
            .files
            .iter()
            .filter(|f| self.differs(&f.file, f.stamp, f.settled, Some(&f.sha256)))
            .map(|f| f.path.clone());
        let read = imports
            .includes
            .iter()
            .filter(|f| self.differs(&f.file, f.stamp, f.settled, f.sha256.as_ref()))
            .map(|f| f.path.clone());
        modules.chain(read).collect()
    }

    /// Whether `file`, recorded with `stamp` (vouching for its hash when `settled`) and `sha256`
    /// (none: it was absent), differs now.
    fn differs(&self, file: &Path, then: Stamp, settled: bool, sha256: Option<&Arc<str>>) -> bool {
        let now = stamp(file);
        let Some(sha256) = sha256 else {
            return now.is_some();
        };
        if now.is_some() && now == then && settled {
            return false;
        }
        self.hash(file, false)
            .is_none_or(|hashed| hashed.sha256 != *sha256)
    }

    /// `file`'s hash, its stamp, whether the stamp vouches for it, and with `module` the modules
    /// it imports (see the contract); `None` when it cannot be read.
    pub(super) fn hash(&self, file: &Path, module: bool) -> Option<Hashed> {
        let before = stamp(file)?;
        let settled = SystemTime::now()
            .duration_since(before.0)
            .is_ok_and(|age| age >= SETTLED);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = cache
            .get(file)
            .filter(|c| c.stamp == before && settled && (!module || c.imports.is_some()))
        {
            return Some(Hashed {
                sha256: known.sha256.clone(),
                stamp: Some(before),
                settled: true,
                imports: known.imports.clone(),
            });
        }
        drop(cache);
        let contents = std::fs::read(file).ok()?;
        self.reads.fetch_add(1, Ordering::Relaxed);
        let sha256: Arc<str> = sha256_hex(&contents).into();
        let imports: Option<Arc<[String]>> = module
            .then(|| crate::lean::syntax::imports(&String::from_utf8_lossy(&contents)).into());
        // Read again after: a write meanwhile leaves a stamp that vouches for nothing.
        let settled = settled && stamp(file) == Some(before);
        if settled {
            cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
            let entry = Cached {
                stamp: before,
                sha256: sha256.clone(),
                imports: imports.clone(),
            };
            cache.insert(file.to_path_buf(), entry);
        }
        Some(Hashed {
            sha256,
            stamp: Some(before),
            settled,
            imports,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: [&str; 3] = ["lakefile.toml", "lakefile.lean", "lean-toolchain"];

    #[test]
    fn sha256_is_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_configuration_hash_covers_names_contents_and_absence() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let empty = config_sha256(root, &FILES);
        std::fs::write(root.join("lakefile.toml"), "").unwrap();
        let with_empty = config_sha256(root, &FILES);
        assert_ne!(empty, with_empty, "an empty file is not an absent one");
        std::fs::write(root.join("lean-toolchain"), "leanprover/lean4:v4.24.0\n").unwrap();
        let config = LakeConfig::read(root, &FILES);
        assert_eq!(config.toolchain(), Some("leanprover/lean4:v4.24.0"));
        assert_eq!(config.sha256(), config_sha256(root, &FILES));
        assert!(!config.moved());
        std::fs::write(root.join("lakefile.toml"), "name = \"x\"\n").unwrap();
        assert!(config.moved());
        assert_ne!(config.sha256(), config_sha256(root, &FILES));
        assert_eq!(toolchain(root).as_deref(), Some("leanprover/lean4:v4.24.0"));
    }

    #[test]
    fn imports_resolve_in_the_workspace_then_its_packages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("A")).unwrap();
        std::fs::write(root.join("A/B.lean"), "def b := 1\n").unwrap();
        let package = root.join(".lake/packages/dep/Dep");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("Core.lean"), "def c := 2\n").unwrap();
        let config = LakeConfig::read(root, &FILES);
        let modules = ["Init", "A.B", "Dep.Core"].map(str::to_owned).to_vec();
        let imports = config.imports(modules.clone(), "", &root.join("Top.lean"));
        assert_eq!(imports.modules, modules);
        let named: Vec<(&str, &str)> = imports
            .files
            .iter()
            .map(|f| (f.module.as_str(), f.path.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("A.B", "A/B.lean"),
                ("Dep.Core", ".lake/packages/dep/Dep/Core.lean")
            ]
        );
        assert_eq!(&*imports.files[0].sha256, sha256_hex(b"def b := 1\n"));
        assert!(config.changed_imports(&imports).is_empty());
        // Same size, same (coarse) time: the hash tells.
        std::fs::write(root.join("A/B.lean"), "def b := 2\n").unwrap();
        assert_eq!(config.changed_imports(&imports), ["A/B.lean"]);
        std::fs::remove_file(package.join("Core.lean")).unwrap();
        assert_eq!(
            config.changed_imports(&imports),
            ["A/B.lean", ".lake/packages/dep/Dep/Core.lean"]
        );
    }

    /// Makes `file`'s modification time a minute old.
    fn age(file: &Path) {
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn a_settled_file_is_known_by_its_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("M.lean");
        std::fs::write(&file, "x").unwrap();
        age(&file);
        let config = LakeConfig::read(dir.path(), &FILES);
        let hashed = config.hash(&file, false).unwrap();
        assert!(hashed.settled);
        assert_eq!(&*hashed.sha256, sha256_hex(b"x"));
        assert_eq!(config.cache.lock().unwrap().len(), 1);
        let fresh = dir.path().join("N.lean");
        std::fs::write(&fresh, "y").unwrap();
        let hashed = config.hash(&fresh, false).unwrap();
        assert!(
            !hashed.settled,
            "a file written just now is not known by its stamp"
        );
        assert_eq!(config.cache.lock().unwrap().len(), 1);
    }

    #[test]
    fn checking_settled_files_again_reads_none_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let files = [
            ("A.lean", "import B\n"),
            ("B.lean", "import C\n"),
            ("C.lean", ""),
        ];
        for (name, text) in files {
            std::fs::write(root.join(name), text).unwrap();
            age(&root.join(name));
        }
        std::fs::write(root.join("data.txt"), "d").unwrap();
        age(&root.join("data.txt"));
        let config = LakeConfig::read(root, &FILES);
        let text = "import A\ndef s := include_str \"data.txt\"\n";
        let imports = config.imports(vec!["A".into()], text, &root.join("Top.lean"));
        assert_eq!(imports.files.len(), 3);
        assert_eq!(
            config.reads(),
            4,
            "each file read once to set the document up"
        );
        for _ in 0..3 {
            assert!(config.changed_imports(&imports).is_empty());
        }
        assert_eq!(
            config.reads(),
            4,
            "a check of unchanged files reads none of them"
        );
        // Set up again (a reopen): the cache knows every file and its imports.
        let again = config.imports(vec!["A".into()], text, &root.join("Top.lean"));
        assert_eq!(again, imports);
        assert_eq!(config.reads(), 4);
        std::fs::write(root.join("C.lean"), "-- changed\n").unwrap();
        assert_eq!(config.changed_imports(&imports), ["C.lean"]);
        assert_eq!(config.reads(), 5, "only the file whose stamp moved is read");
    }
}
