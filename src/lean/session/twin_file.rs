//! A twin's entry on disk: the one place that makes or removes one. A twin is a link, under
//! `<root>/.lake/beam/twins`, to the real file it copies: Lean takes the twin's text from the
//! client, never from the file, but Lake sets a file up by its real path (`resolvePath` is
//! `IO.FS.realPath`, then `findModuleBySrc?`), so through the link it sets the twin up as the real
//! module, with its library's `leanOptions`, plugins and name, on every Lake era (reference
//! `lean-language-server.md` Part 3). A project is untrusted input (a checked-out repository may
//! hold any links), so nothing here follows a link but the twin's own.
//!
//! Contract:
//! 1. A twin link lives inside `<root>/.lake`, the workspace's build directory, and is reached
//!    from there one component at a time: `.lake` and every directory below it on the way must
//!    be a real directory (checked with `symlink_metadata`, never followed), and is created when
//!    missing. A link, or anything that is not a directory, on the way is refused with
//!    `invalidParams` (`twinPathUnsafe`, naming it), and nothing is made.
//! 2. The link is created new (`symlink` never replaces an entry): anything already at the
//!    twin's name is refused the same way, unless it is this twin's own link. A link that does
//!    not resolve to the real file (a file system that rewrites links) is removed and refused:
//!    Lake would not set the twin up as the real module.
//! 3. Removal removes only what [`TwinFile::link`] made: the link, if it is still a link to the
//!    real file, then its directories up to and including the per-owner one, while they are
//!    empty. A twin never made removes nothing, and nothing is ever removed through a link.
//! 4. Making and removing links are serialized within the process: twins share their owner's
//!    directories (every file's twin in one slot, `speculation/twins.rs`), so one twin's removal
//!    must never take a directory away while another is being made in it.
//!
//! A link planted between the check and the creation (by someone acting on the machine while
//! the twin is made) is outside this contract; a project's own links are not.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::lean::error::HostError;

/// Held while a link is made or removed (see the contract).
static ON_DISK: Mutex<()> = Mutex::new(());

fn on_disk() -> MutexGuard<'static, ()> {
    ON_DISK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a twin's link is, what it points to, and whether [`TwinFile::link`] made it.
#[derive(Debug, Clone)]
pub struct TwinFile {
    /// `<root>/.lake`.
    lake: PathBuf,
    /// The link, relative to `lake`: `beam/twins/<owner>/…`.
    relative: PathBuf,
    /// How many leading directories of `relative` are shared with other owners (`beam/twins`),
    /// which removal leaves.
    shared: usize,
    /// The real file the link points to.
    target: PathBuf,
    /// Set once the link is made.
    made: Arc<AtomicBool>,
}

impl TwinFile {
    /// The twin link at `<root>/.lake/<shared…>/<owned…>` to `target`: `shared` the directories
    /// other owners use too (`beam/twins`), `owned` this owner's part (`<owner>/<relative
    /// path>`).
    pub fn new(root: &Path, shared: &Path, owned: &Path, target: &Path) -> TwinFile {
        TwinFile {
            lake: root.join(".lake"),
            relative: shared.join(owned),
            shared: shared.components().count(),
            target: target.to_path_buf(),
            made: Arc::default(),
        }
    }

    /// The link's path.
    pub fn path(&self) -> PathBuf {
        self.lake.join(&self.relative)
    }

    /// Makes the link, once (see the contract).
    pub async fn link(&self) -> Result<(), HostError> {
        if self.made.load(Ordering::Acquire) {
            return Ok(());
        }
        let file = self.clone();
        let made = tokio::task::spawn_blocking(move || file.link_now()).await;
        made.unwrap_or_else(|e| Err(HostError::internal(format!("a twin's link failed: {e}"))))
    }

    fn link_now(&self) -> Result<(), HostError> {
        let _serialized = on_disk();
        let path = self.path();
        self.directory()?;
        match path.symlink_metadata() {
            Ok(_) if self.is_ours(&path) => {}
            Ok(_) => return Err(not_ours(&path)),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                make_link(&self.target, &path).map_err(|e| match e.kind() {
                    ErrorKind::AlreadyExists => not_ours(&path),
                    _ => cannot_make(&path, &e),
                })?;
            }
            Err(e) => return Err(cannot_make(&path, &e)),
        }
        let resolves = |p: &Path| std::fs::canonicalize(p).ok();
        if resolves(&path).is_none() || resolves(&path) != resolves(&self.target) {
            let _ = std::fs::remove_file(&path);
            return Err(HostError::twin_path_unsafe(
                &path,
                "the link made there does not resolve to the real file, so Lake would not set \
                 the twin up as the real module",
            ));
        }
        self.made.store(true, Ordering::Release);
        Ok(())
    }

    /// Whether `path` is this twin's own link.
    fn is_ours(&self, path: &Path) -> bool {
        path.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::read_link(path).is_ok_and(|to| to == self.target)
    }

    /// The link's directory, every component from `.lake` down checked and made (see the
    /// contract).
    fn directory(&self) -> Result<PathBuf, HostError> {
        real_directory(&self.lake, self.relative.parent().unwrap_or(Path::new("")))
    }

    /// Whether every directory from `.lake` to the link is a real one (nothing created).
    fn directories_are_real(&self) -> bool {
        let mut dir = self.lake.clone();
        let real = |dir: &Path| dir.symlink_metadata().is_ok_and(|m| m.is_dir());
        let parents = self.relative.parent().unwrap_or(Path::new(""));
        real(&dir)
            && parents.components().all(|part| {
                dir.push(part);
                real(&dir)
            })
    }

    /// Removes what [`TwinFile::link`] made (see the contract). Never fails: a link left
    /// behind costs a directory entry under `.lake`, never a user's file.
    pub fn remove(&self) {
        let _serialized = on_disk();
        if !self.made.swap(false, Ordering::AcqRel) || !self.directories_are_real() {
            return;
        }
        let path = self.path();
        if !self.is_ours(&path) {
            return;
        }
        let _ = std::fs::remove_file(&path);
        let dirs = self.relative.components().count().saturating_sub(1);
        let owned = dirs.saturating_sub(self.shared);
        for dir in path.ancestors().skip(1).take(owned) {
            if std::fs::remove_dir(dir).is_err() {
                return;
            }
        }
    }
}

/// The directory `<lake>/<relative>`, reached from `lake` (`<root>/.lake`) one component at a
/// time, each a real directory (never a link) made when missing (see the contract, 1): where
/// twins live, and the certification checker's files (`certify/runner.rs`).
pub fn real_directory(lake: &Path, relative: &Path) -> Result<PathBuf, HostError> {
    let mut dir = lake.to_path_buf();
    let steps = std::iter::once(None).chain(relative.components().map(Some));
    for step in steps {
        if let Some(part) = step {
            dir.push(part);
        }
        match dir.symlink_metadata() {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => return Err(not_a_directory(&dir)),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(cannot_make(&dir, &e)),
        }
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            // Made meanwhile (another runtime's twin): it must be a real directory too.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                    return Err(not_a_directory(&dir));
                }
            }
            Err(e) => return Err(cannot_make(&dir, &e)),
        }
    }
    Ok(dir)
}

#[cfg(unix)]
fn make_link(target: &Path, path: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, path)
}

#[cfg(not(unix))]
fn make_link(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        ErrorKind::Unsupported,
        "twins are links, which lean-beam-mcp makes on Unix only",
    ))
}

fn not_a_directory(path: &Path) -> HostError {
    HostError::twin_path_unsafe(path, "it is a link or a file, not a directory")
}

fn not_ours(path: &Path) -> HostError {
    HostError::twin_path_unsafe(path, "something else is already there")
}

fn cannot_make(path: &Path, e: &std::io::Error) -> HostError {
    HostError::internal(format!(
        "cannot make the speculative twin at {}: {e}; check that the workspace's .lake \
         directory is writable",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twin(root: &Path) -> TwinFile {
        std::fs::create_dir_all(root.join("Fixture/Deep")).unwrap();
        let target = root.join("Fixture/Deep/A.lean");
        if !target.exists() {
            std::fs::write(&target, "the user's").unwrap();
        }
        TwinFile::new(
            root,
            Path::new("beam/twins"),
            Path::new("7-1/Fixture/Deep/A.lean"),
            &target,
        )
    }

    fn unsafe_at(error: HostError, culprit: &Path) {
        assert_eq!(error.code, "invalidParams", "{error:?}");
        let data = error.data.expect("data");
        assert_eq!(data["reason"], "twinPathUnsafe");
        assert_eq!(data["path"], culprit.display().to_string());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_the_real_file_is_made_once_and_its_removal_takes_back_only_the_owners() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        file.link_now().unwrap();
        file.link_now().unwrap();
        assert_eq!(std::fs::read_link(file.path()).unwrap(), file.target);
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "the user's");
        let owner = root.path().join(".lake/beam/twins/7-1");
        file.remove();
        assert!(!owner.exists());
        assert!(root.path().join(".lake/beam/twins").is_dir(), "shared");
        assert_eq!(std::fs::read_to_string(&file.target).unwrap(), "the user's");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_any_directory_on_the_way_is_refused_and_nothing_is_made() {
        for (k, at) in [
            ".lake",
            ".lake/beam",
            ".lake/beam/twins",
            ".lake/beam/twins/7-1",
            ".lake/beam/twins/7-1/Fixture",
            ".lake/beam/twins/7-1/Fixture/Deep",
        ]
        .into_iter()
        .enumerate()
        {
            let root = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            let file = twin(root.path());
            let link = root.path().join(at);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(outside.path(), &link).unwrap();
            unsafe_at(file.link_now().unwrap_err(), &link);
            let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
            assert!(left.is_empty(), "case {k}: {left:?}");
            file.remove();
            assert!(link.symlink_metadata().is_ok(), "case {k}: the link stays");
        }
    }

    #[cfg(unix)]
    #[test]
    fn anything_else_at_the_twins_name_is_refused_and_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        let victim = root.path().join("Victim.lean");
        std::fs::write(&victim, "the user's").unwrap();
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, file.path()).unwrap();
        unsafe_at(file.link_now().unwrap_err(), &file.path());
        file.remove();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
        assert!(file.path().symlink_metadata().is_ok(), "the link stays");
        std::fs::remove_file(file.path()).unwrap();
        std::fs::write(file.path(), "a file").unwrap();
        unsafe_at(file.link_now().unwrap_err(), &file.path());
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "a file");
        std::fs::remove_file(file.path()).unwrap();
        std::fs::create_dir(file.path()).unwrap();
        unsafe_at(file.link_now().unwrap_err(), &file.path());
    }

    /// Twins of one owner share its directories: removing one (an evicted twin) while another
    /// is being made must never take a directory away from under the one being made.
    #[cfg(unix)]
    #[test]
    fn twins_sharing_an_owner_directory_are_made_while_others_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let at = |name: &str| {
            let target = root.path().join(format!("Fixture/{name}.lean"));
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, "x").unwrap();
            let owned = format!("7-1/Fixture/{name}.lean");
            TwinFile::new(
                root.path(),
                Path::new("beam/twins"),
                Path::new(&owned),
                &target,
            )
        };
        let (a, b) = (at("A"), at("B"));
        let remover = std::thread::spawn(move || {
            for _ in 0..1000 {
                a.link_now().unwrap();
                a.remove();
            }
        });
        for n in 0..1000 {
            let made = b.link_now();
            assert!(made.is_ok(), "round {n}: {made:?}");
            b.remove();
        }
        remover.join().unwrap();
    }

    #[test]
    fn a_twin_never_made_removes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::fs::write(file.path(), "not ours").unwrap();
        file.remove();
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "not ours");
    }
}
