//! The projects programs run on, and where the suite keeps its temporary files.
//!
//! Contract: a project is a copy of `tests/fixtures/lean-project` (without build output) with
//! every file of `texts::FILES` at its initial text, in a directory of its own named
//! `<tmp>/project`, the name the `lake` wrapper takes each trace's name from.

use std::path::Path;

use super::texts::{self, FILES, INITIAL};
pub use crate::harness::Project;

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

/// A copy of the fixture project with every file at its initial text, on [`scratch`] space.
pub fn project() -> Project {
    let project = Project::fixture_in(scratch());
    for (file, name) in FILES.iter().enumerate() {
        project.write(name, &texts::render(file, INITIAL));
    }
    project
}
