//! The projects programs run on, and where the suite keeps its temporary files.
//!
//! Contract: a project is a copy of `tests/fixtures/lean-project` (without build output) with
//! every file of `texts::FILES` at its initial text, in a directory of its own named
//! `<tmp>/project`, the name the `lake` wrapper takes each trace's name from.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::texts::{self, FILES, INITIAL};

/// A temporary directory for a project or a trace: on tmpfs where there is one, since the suite
/// makes and removes thousands and a disk file system spends more time on that than the run.
pub fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().expect("a temporary directory")
}

/// A copy of the fixture project with every file at its initial text.
pub struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        let dir = scratch();
        let root = dir.path().join("project");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lean-project");
        crate::harness::copy_dir(&fixture, &root);
        for (file, name) in FILES.iter().enumerate() {
            std::fs::write(root.join(name), texts::render(file, INITIAL)).expect("a file");
        }
        let root = std::fs::canonicalize(root).expect("canonical root");
        Project { _dir: dir, root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn descriptor(&self) -> Value {
        json!({"root": self.root})
    }
}
