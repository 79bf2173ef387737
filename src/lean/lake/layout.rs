//! Where Lake keeps a workspace's modules, as Lake itself says: `lake env` prints the
//! workspace's environment (`VAR=value` lines), whose `LEAN_SRC_PATH` lists every library's
//! source directory (`Workspace.leanSrcPath`: package directory / library `srcDir`) and whose
//! `LEAN_PATH` lists every package's library directory, where `.olean`s are written
//! (`.lake/build/lib/lean` by default). Nothing of Lake's configuration is re-implemented here.
//!
//! Contract:
//! 1. [`Layout::parse`] keeps, of both paths, the entries that lie inside the workspace root
//!    (relative entries are taken from the root, where `lake env` ran; entries are normalized
//!    lexically, then resolved through symlinks when they exist): the toolchain's own entries
//!    name no module of the workspace.
//! 2. [`Layout::modules_of`] names the modules a source file can be, the way Lake's
//!    `LeanLib.findModuleBySrc?` does: for each source directory holding the file, the file's
//!    path relative to it without `.lean`, its components joined by dots; the deepest source
//!    directory first. A file under no source directory, or whose path parts cannot be name
//!    parts (empty, or holding a dot), is no module. Whether a library actually builds a
//!    candidate is Lake's to say: `lake build +M` answers `unknown module` otherwise.
//! 3. [`Layout::library_dirs`] are the `LEAN_PATH` entries in Lake's order.

use std::path::{Path, PathBuf};

use crate::lean::workspace::root::normalize;

/// A workspace's source and library directories.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    source_dirs: Vec<PathBuf>,
    library_dirs: Vec<PathBuf>,
}

impl Layout {
    /// Reads the output of `lake env` run in `root` (see the contract).
    pub fn parse(root: &Path, env_output: &str) -> Layout {
        let entries = |name: &str| -> Vec<PathBuf> {
            let Some(value) = env_output
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            else {
                return Vec::new();
            };
            std::env::split_paths(value)
                .filter(|entry| !entry.as_os_str().is_empty())
                .map(|entry| {
                    let joined = normalize(&root.join(entry));
                    std::fs::canonicalize(&joined).unwrap_or(joined)
                })
                .filter(|entry| entry.starts_with(root))
                .collect()
        };
        Layout {
            source_dirs: entries("LEAN_SRC_PATH"),
            library_dirs: entries("LEAN_PATH"),
        }
    }

    /// The workspace's source directories.
    pub fn source_dirs(&self) -> &[PathBuf] {
        &self.source_dirs
    }

    /// The workspace's library directories, in Lake's order.
    pub fn library_dirs(&self) -> &[PathBuf] {
        &self.library_dirs
    }

    /// The module names `file` can have, deepest source directory first (see the contract).
    pub fn modules_of(&self, file: &Path) -> Vec<String> {
        let mut holding: Vec<&PathBuf> = self
            .source_dirs
            .iter()
            .filter(|dir| file.starts_with(dir))
            .collect();
        holding.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
        let mut names: Vec<String> = Vec::new();
        for dir in holding {
            let Some(name) = file
                .strip_prefix(dir)
                .ok()
                .and_then(|relative| module_name(&relative.with_extension("")))
            else {
                continue;
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

fn module_name(relative: &Path) -> Option<String> {
    let parts: Vec<&str> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    let usable = !parts.is_empty() && parts.iter().all(|p| !p.is_empty() && !p.contains('.'));
    usable.then(|| parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_inside_the_root_are_kept_and_files_named_from_the_deepest() {
        let root = Path::new("/w/project");
        let output = "LAKE=/elan/bin/lake\n\
                      LEAN_SYSROOT=/elan/toolchains/v4\n\
                      LEAN_PATH=./.lake/packages/dep/.lake/build/lib/lean:././.lake/build/lib/lean:/elan/toolchains/v4/lib/lean\n\
                      LEAN_SRC_PATH=./.:./src:/elan/toolchains/v4/src/lean\n";
        let layout = Layout::parse(root, output);
        assert_eq!(
            layout.library_dirs(),
            [
                root.join(".lake/packages/dep/.lake/build/lib/lean"),
                root.join(".lake/build/lib/lean")
            ]
        );
        assert_eq!(layout.source_dirs(), [root.to_path_buf(), root.join("src")]);
        assert_eq!(
            layout.modules_of(&root.join("src/Foo/Bar.lean")),
            ["Foo.Bar", "src.Foo.Bar"]
        );
        assert_eq!(
            layout.modules_of(&root.join("Fixture/Basic.lean")),
            ["Fixture.Basic"]
        );
        assert!(layout.modules_of(Path::new("/elsewhere/A.lean")).is_empty());
        assert!(layout.modules_of(&root.join("my.file.lean")).is_empty());
    }

    #[test]
    fn a_workspace_without_paths_has_no_modules() {
        let layout = Layout::parse(Path::new("/w"), "LAKE=/bin/lake\n");
        assert!(layout.modules_of(Path::new("/w/A.lean")).is_empty());
        assert!(layout.library_dirs().is_empty());
    }
}
