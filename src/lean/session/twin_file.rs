//! An on-disk twin's file: the one place that writes or removes one. A project is untrusted
//! input (a checked-out repository may hold any links), so nothing here follows a link.
//!
//! Contract:
//! 1. A twin file lives inside `<root>/.lake`, the workspace's build directory, and is reached
//!    from there one component at a time: `.lake` and every directory below it on the way must
//!    be a real directory (checked with `symlink_metadata`, never followed), and is created when
//!    missing. A link, or anything that is not a directory, on the way is refused with
//!    `invalidParams` (`twinPathUnsafe`, naming it), and nothing is written.
//! 2. A text is written into a file created new beside the twin (exclusive, no-follow), then
//!    renamed over the twin's name, which replaces that name and never writes through what it
//!    held: Lean (and Lake) never see a half-written twin, and a link planted at the twin's name
//!    is refused before anything is written, as on the way.
//! 3. Removal removes only what a write made: the twin's file, if it is still a file (never
//!    through a link), then its directories up to and including the per-owner one, while they
//!    are empty. A twin never written (a refused write) removes nothing.
//!
//! A link planted between the check and the write (by someone acting on the machine while the
//! twin is written) is outside this contract; a project's own links are not.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::lean::error::HostError;

/// Where a twin's file is, and whether a write made it.
#[derive(Debug, Clone)]
pub struct TwinFile {
    /// `<root>/.lake`.
    lake: PathBuf,
    /// The file, relative to `lake`: `beam/twins/<owner>/…`.
    relative: PathBuf,
    /// How many leading directories of `relative` are shared with other owners (`beam/twins`),
    /// which removal leaves.
    shared: usize,
    /// Set once a write made the file.
    made: Arc<AtomicBool>,
}

impl TwinFile {
    /// The twin file at `<root>/.lake/<shared…>/<owned…>`: `shared` the directories other
    /// owners use too (`beam/twins`), `owned` this owner's part (`<owner>/<relative path>`).
    pub fn new(root: &Path, shared: &Path, owned: &Path) -> TwinFile {
        TwinFile {
            lake: root.join(".lake"),
            relative: shared.join(owned),
            shared: shared.components().count(),
            made: Arc::default(),
        }
    }

    /// The file's path.
    pub fn path(&self) -> PathBuf {
        self.lake.join(&self.relative)
    }

    /// Writes `text` as the twin's whole file (see the contract).
    pub async fn write(&self, text: &str) -> Result<(), HostError> {
        let (file, text) = (self.clone(), text.to_owned());
        let written = tokio::task::spawn_blocking(move || file.write_now(&text)).await;
        written.unwrap_or_else(|e| Err(HostError::internal(format!("a twin's write failed: {e}"))))
    }

    fn write_now(&self, text: &str) -> Result<(), HostError> {
        let path = self.path();
        let dir = self.directory()?;
        let name = path.file_name().unwrap_or_default();
        match path.symlink_metadata() {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(not_a_file(&path)),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(cannot_write(&path, &e)),
        }
        let mut temporary = name.to_owned();
        temporary.push(".writing");
        let temporary = dir.join(temporary);
        let created = match create_new(&temporary, text) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                // Left by a process that ended mid-write; only a file of ours is taken away.
                if !temporary.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    return Err(not_a_file(&temporary));
                }
                let _ = std::fs::remove_file(&temporary);
                create_new(&temporary, text)
            }
            other => other,
        };
        created
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&temporary);
                cannot_write(&path, &e)
            })?;
        self.made.store(true, Ordering::Release);
        Ok(())
    }

    /// The file's directory, every component from `.lake` down checked and made (see the
    /// contract).
    fn directory(&self) -> Result<PathBuf, HostError> {
        let mut dir = self.lake.clone();
        let parents = self.relative.parent().unwrap_or(Path::new(""));
        let steps = std::iter::once(None).chain(parents.components().map(Some));
        for step in steps {
            if let Some(part) = step {
                dir.push(part);
            }
            match dir.symlink_metadata() {
                Ok(meta) if meta.is_dir() => continue,
                Ok(_) => return Err(not_a_directory(&dir)),
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(cannot_write(&dir, &e)),
            }
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                // Made meanwhile (another runtime's twin): it must be a real directory too.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        return Err(not_a_directory(&dir));
                    }
                }
                Err(e) => return Err(cannot_write(&dir, &e)),
            }
        }
        Ok(dir)
    }

    /// Whether every directory from `.lake` to the file is a real one (nothing created).
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

    /// Removes what a write made (see the contract). Never fails: a twin file left behind
    /// costs a few bytes under `.lake`, never a user's file.
    pub fn remove(&self) {
        if !self.made.swap(false, Ordering::AcqRel) || !self.directories_are_real() {
            return;
        }
        let path = self.path();
        if !path.symlink_metadata().is_ok_and(|m| m.is_file()) {
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

/// Creates `path` new, never through a link, holding `text`.
fn create_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)?.write_all(text.as_bytes())
}

fn not_a_directory(path: &Path) -> HostError {
    HostError::twin_path_unsafe(path, "it is a link or a file, not a directory")
}

fn not_a_file(path: &Path) -> HostError {
    HostError::twin_path_unsafe(path, "it is a link or a directory, not a file")
}

fn cannot_write(path: &Path, e: &std::io::Error) -> HostError {
    HostError::internal(format!(
        "cannot write the speculative twin at {}: {e}; check that the workspace's .lake \
         directory is writable",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn twin(root: &Path) -> TwinFile {
        TwinFile::new(
            root,
            Path::new("beam/twins"),
            Path::new("7-1/Fixture/Deep/A.lean"),
        )
    }

    fn unsafe_at(error: HostError, culprit: &Path) {
        assert_eq!(error.code, "invalidParams", "{error:?}");
        let data = error.data.expect("data");
        assert_eq!(data["reason"], "twinPathUnsafe");
        assert_eq!(data["path"], culprit.display().to_string());
    }

    #[test]
    fn a_write_makes_every_directory_and_a_removal_takes_back_only_the_owners() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        file.write_now("first").unwrap();
        file.write_now("second").unwrap();
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "second");
        let owner = root.path().join(".lake/beam/twins/7-1");
        let names: Vec<_> = std::fs::read_dir(owner.join("Fixture/Deep"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["A.lean"], "no temporary file is left");
        file.remove();
        assert!(!owner.exists());
        assert!(root.path().join(".lake/beam/twins").is_dir(), "shared");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_any_directory_on_the_way_is_refused_and_nothing_is_written() {
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
            let link = root.path().join(at);
            std::fs::create_dir_all(link.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(outside.path(), &link).unwrap();
            let file = twin(root.path());
            unsafe_at(file.write_now("text").unwrap_err(), &link);
            let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
            assert!(left.is_empty(), "case {k}: {left:?}");
            file.remove();
            assert!(link.symlink_metadata().is_ok(), "case {k}: the link stays");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_a_directory_at_the_twins_name_is_refused_and_its_target_untouched() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        let victim = root.path().join("Victim.lean");
        std::fs::write(&victim, "the user's").unwrap();
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, file.path()).unwrap();
        unsafe_at(file.write_now("twin").unwrap_err(), &file.path());
        file.remove();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
        assert!(file.path().symlink_metadata().is_ok(), "the link stays");
        std::fs::remove_file(file.path()).unwrap();
        let temporary = file.path().with_file_name("A.lean.writing");
        std::os::unix::fs::symlink(&victim, &temporary).unwrap();
        unsafe_at(file.write_now("twin").unwrap_err(), &temporary);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
        std::fs::remove_file(&temporary).unwrap();
        std::fs::create_dir(file.path()).unwrap();
        unsafe_at(file.write_now("twin").unwrap_err(), &file.path());
    }

    #[test]
    fn a_twin_never_written_removes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let file = twin(root.path());
        std::fs::create_dir_all(file.path().parent().unwrap()).unwrap();
        std::fs::write(file.path(), "not ours").unwrap();
        file.remove();
        assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "not ours");
    }
}
