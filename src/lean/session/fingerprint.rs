//! The files a Lean result depends on besides the document's own text, hashed: the Lake
//! configuration a runtime loaded ([`LakeConfig`]) and a document's direct imports
//! ([`Imports`]). Receipts (`receipt`) name them; `lean_check_receipt` hashes them again.
//!
//! Contract:
//! 1. Hashes are SHA-256 in lowercase hex ([`sha256_hex`]).
//! 2. [`LakeConfig::read`] reads the configuration files once (a runtime does it once per start,
//!    after its handshake, when it also stamps them for change detection): first each file's
//!    stamp (modification time and size), then its contents, so a change after the stamp is
//!    always seen by a later stamp. Its hash covers, for each file in the given order, the
//!    file's name, a 0 byte, then 1 and the contents' length (8 bytes, little-endian) and the
//!    contents, or 0 for a file that is absent ([`config_sha256`]). The toolchain is the trimmed
//!    contents of `lean-toolchain` as read then, none when there is no such file.
//! 3. A direct import `A.B` is a file of the workspace when `<root>/A/B.lean` exists, else of a
//!    package when `<root>/.lake/packages/<package>/A/B.lean` does (packages in name order);
//!    anything else (the toolchain's `Init`, `Lean`, `Std`, or a library whose `srcDir` is not
//!    its package's directory) is not named: the toolchain covers the first. [`LakeConfig::imports`]
//!    resolves and hashes them when Lean sets a document up.
//! 4. Files are hashed through a cache keyed by path, modification time and size; an entry is
//!    trusted only when the file's modification time was at least [`SETTLED`] old when it was
//!    read (a write within the same clock tick keeps both), so a file written just now is read
//!    again. [`LakeConfig::changed_imports`] names the imports whose source differs from the
//!    hash recorded at set-up (or that are gone); [`LakeConfig::moved`] whether a configuration
//!    file's stamp differs from the one read at start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
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
    config_contents(root, files).0
}

/// The configuration hash and the toolchain, from one read of each file.
fn config_contents(root: &Path, files: &[&str]) -> (String, Option<String>) {
    let mut hasher = Sha256::new();
    let mut toolchain = None;
    for name in files {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        match std::fs::read(root.join(name)) {
            Ok(contents) => {
                hasher.update([1]);
                hasher.update((contents.len() as u64).to_le_bytes());
                hasher.update(&contents);
                if *name == "lean-toolchain" {
                    toolchain = Some(String::from_utf8_lossy(&contents).trim().to_owned());
                }
            }
            Err(_) => hasher.update([0]),
        }
    }
    (hex(&hasher.finalize()), toolchain)
}

/// The toolchain `root` names now: `lean-toolchain` trimmed, none without one.
pub fn toolchain(root: &Path) -> Option<String> {
    let contents = std::fs::read(root.join("lean-toolchain")).ok()?;
    Some(String::from_utf8_lossy(&contents).trim().to_owned())
}

/// One direct import of a document that is a file of the workspace or a package, hashed.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportFile {
    /// Its module name.
    pub module: String,
    /// Its path relative to the workspace root.
    pub path: String,
    /// Its contents' hash when Lean set the document up.
    pub sha256: Arc<str>,
    file: PathBuf,
    /// Its stamp then, and whether that stamp alone vouches for the hash (see the contract).
    stamp: Stamp,
    settled: bool,
}

/// A document's direct imports as Lean set it up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imports {
    /// Every module the header names, in order (the toolchain's included).
    pub modules: Vec<String>,
    /// Those that are files of the workspace or its packages.
    pub files: Vec<ImportFile>,
}

#[derive(Debug, Clone)]
struct Cached {
    stamp: (SystemTime, u64),
    sha256: Arc<str>,
}

/// The Lake configuration a runtime loaded, and the cache it hashes the workspace's files with
/// (see the contract).
#[derive(Debug)]
pub struct LakeConfig {
    root: PathBuf,
    files: Vec<(String, Stamp)>,
    sha256: String,
    toolchain: Option<String>,
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

impl LakeConfig {
    /// Reads the configuration files `files` of `root` (see the contract).
    pub fn read(root: &Path, files: &[&str]) -> LakeConfig {
        let stamps = files
            .iter()
            .map(|name| ((*name).to_owned(), stamp(&root.join(name))))
            .collect();
        let (sha256, toolchain) = config_contents(root, files);
        LakeConfig {
            root: root.to_path_buf(),
            files: stamps,
            sha256,
            toolchain,
            cache: Mutex::default(),
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

    /// Resolves and hashes the direct imports `modules` (see the contract).
    pub fn imports(&self, modules: Vec<String>) -> Imports {
        let packages = self.packages();
        let files = modules
            .iter()
            .filter_map(|module| {
                let relative: PathBuf = module
                    .split('.')
                    .collect::<PathBuf>()
                    .with_extension("lean");
                let file = std::iter::once(self.root.clone())
                    .chain(packages.iter().cloned())
                    .map(|dir| dir.join(&relative))
                    .find(|file| file.is_file())?;
                let (sha256, stamp, settled) = self.hash(&file)?;
                let path = file.strip_prefix(&self.root).ok()?.display().to_string();
                Some(ImportFile {
                    module: module.clone(),
                    path,
                    sha256,
                    file,
                    stamp,
                    settled,
                })
            })
            .collect();
        Imports { modules, files }
    }

    /// The workspace's packages' directories, in name order.
    fn packages(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(self.root.join(".lake/packages"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        found.sort();
        found
    }

    /// The relative paths of the imports whose source differs from their recorded hash, or is
    /// gone (see the contract).
    pub fn changed_imports(&self, imports: &Imports) -> Vec<String> {
        imports
            .files
            .iter()
            .filter(|import| {
                let now = stamp(&import.file);
                if now.is_some() && now == import.stamp && import.settled {
                    return false;
                }
                self.hash(&import.file)
                    .is_none_or(|(sha256, _, _)| sha256 != import.sha256)
            })
            .map(|import| import.path.clone())
            .collect()
    }

    /// `file`'s hash, its stamp, and whether the stamp vouches for it (see the contract).
    fn hash(&self, file: &Path) -> Option<(Arc<str>, Stamp, bool)> {
        let before = stamp(file)?;
        let settled = SystemTime::now()
            .duration_since(before.0)
            .is_ok_and(|age| age >= SETTLED);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(known) = cache.get(file).filter(|c| c.stamp == before && settled) {
            return Some((known.sha256.clone(), Some(before), true));
        }
        drop(cache);
        let contents = std::fs::read(file).ok()?;
        let sha256: Arc<str> = sha256_hex(&contents).into();
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
            };
            cache.insert(file.to_path_buf(), entry);
        }
        Some((sha256, Some(before), settled))
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
        let imports = config.imports(modules.clone());
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

    #[test]
    fn a_settled_file_is_known_by_its_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("M.lean");
        std::fs::write(&file, "x").unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let config = LakeConfig::read(dir.path(), &FILES);
        let (sha, _, settled) = config.hash(&file).unwrap();
        assert!(settled);
        assert_eq!(&*sha, sha256_hex(b"x"));
        assert_eq!(config.cache.lock().unwrap().len(), 1);
        let fresh = dir.path().join("N.lean");
        std::fs::write(&fresh, "y").unwrap();
        let (_, _, settled) = config.hash(&fresh).unwrap();
        assert!(
            !settled,
            "a file written just now is not known by its stamp"
        );
        assert_eq!(config.cache.lock().unwrap().len(), 1);
    }
}
