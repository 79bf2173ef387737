//! Workspace descriptors: `{"root": "/absolute/path"}` on every Lean tool, resolved to one
//! canonical root per project.
//!
//! Contract:
//! 1. [`WorkspaceRoot::resolve`] accepts an absolute path to an existing directory that holds a
//!    Lake project marker (`lean-toolchain`, `lakefile.toml` or `lakefile.lean`) and returns its
//!    canonical path, so symlink aliases name one workspace. Anything else is an `invalidInput`
//!    error with the precise reason, and nothing is created.
//! 2. [`WorkspaceRoot::for_eviction`] is what `lean_drop_workspace` accepts: the same when the
//!    root still resolves, else the lexically normalized absolute path, so a root that vanished
//!    can still be evicted by the descriptor a result echoed.
//! 3. [`WorkspaceRoot::descriptor`] is the canonical descriptor results echo.
//! 4. [`canonical`] is how the host resolves a path it is given (a root, a tool's file): what
//!    `std::fs::canonicalize` and `metadata` say, with their errors.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::lean::error::HostError;

/// The files that make a directory a Lean/Lake project.
pub const PROJECT_MARKERS: [&str; 3] = ["lean-toolchain", "lakefile.toml", "lakefile.lean"];

/// A workspace root, canonical.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkspaceRoot(PathBuf);

impl WorkspaceRoot {
    /// Validates a tool's `workspace` argument.
    pub fn resolve(workspace: &Value) -> Result<WorkspaceRoot, HostError> {
        let root = root_text(workspace)?;
        let path = Path::new(root);
        if !path.is_absolute() {
            return Err(invalid(format!(
                "workspace root must be an absolute path; got {root:?}"
            )));
        }
        let (canonical, meta) = canonical(path)
            .map_err(|e| invalid(format!("workspace root does not resolve: {root}: {e}")))?;
        if !meta.is_dir() {
            return Err(invalid(format!(
                "workspace root is not a directory: {}",
                canonical.display()
            )));
        }
        if !PROJECT_MARKERS.iter().any(|m| canonical.join(m).is_file()) {
            return Err(invalid(format!(
                "workspace root is not a Lean/Lake project: expected lean-toolchain, lakefile.toml, or lakefile.lean in {}",
                canonical.display()
            )));
        }
        Ok(WorkspaceRoot(canonical))
    }

    /// Validates the descriptor of a workspace to evict: a root that no longer resolves is
    /// normalized lexically instead of refused.
    pub fn for_eviction(workspace: &Value) -> Result<WorkspaceRoot, HostError> {
        let root = root_text(workspace)?;
        let path = Path::new(root);
        if !path.is_absolute() {
            return Err(invalid(format!(
                "workspace root must be an absolute path; got {root:?}"
            )));
        }
        Ok(WorkspaceRoot(
            std::fs::canonicalize(path).unwrap_or_else(|_| normalize(path)),
        ))
    }

    /// The canonical path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The descriptor results echo.
    pub fn descriptor(&self) -> Value {
        json!({ "root": self.0.display().to_string() })
    }

    /// The key beam_stats shows for this workspace.
    pub fn key(&self) -> String {
        crate::lean::stats::workspace_key(&self.0)
    }
}

fn root_text(workspace: &Value) -> Result<&str, HostError> {
    // The schema has already required `workspace` with a string `root`; this is the host's own
    // guard, so a caller that bypassed the schema still gets a precise error.
    workspace
        .get("root")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            invalid("workspace is required: pass {\"root\": \"/absolute/project/path\"}")
        })
}

fn invalid(message: impl Into<String>) -> HostError {
    HostError::invalid_input(message).with_path("/workspace/root")
}

/// `path` with `.`, `..` and every link resolved, and what it names, as
/// `std::fs::canonicalize` and `std::fs::metadata` give them (and with their errors).
///
/// On Linux it costs one open, one `fstat` and one read of the descriptor's `/proc` link (one
/// walk of the path) instead of a `readlink` per component, as `realpath` does: every Lean call
/// resolves its root and its file, and on a shared machine each of those system calls costs
/// microseconds. Where the link cannot be read (no `/proc`, a file removed meanwhile), it falls
/// back to `canonicalize`.
pub fn canonical(path: &Path) -> std::io::Result<(PathBuf, std::fs::Metadata)> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        // O_PATH opens nothing for reading: a FIFO does not block it, and no read permission
        // is needed, as with `realpath`.
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open(path)?;
        let meta = opened.metadata()?;
        let link = std::fs::read_link(format!("/proc/self/fd/{}", opened.as_raw_fd()));
        if let Ok(resolved) = link
            && resolved.is_absolute()
            && meta.nlink() > 0
            && !resolved
                .as_os_str()
                .as_encoded_bytes()
                .ends_with(b" (deleted)")
        {
            return Ok((resolved, meta));
        }
    }
    let resolved = std::fs::canonicalize(path)?;
    let meta = std::fs::metadata(&resolved)?;
    Ok((resolved, meta))
}

/// `.` and `..` resolved without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("lean-toolchain"),
            "leanprover/lean4:v4.24.0\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn canonical_paths_are_what_canonicalize_gives() {
        let dir = project();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(base.join("Sub")).unwrap();
        std::fs::write(base.join("Sub/A.lean"), "").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("Sub"), base.join("link")).unwrap();
        for given in [
            base.clone(),
            base.join("Sub/../Sub/./A.lean"),
            #[cfg(unix)]
            base.join("link/A.lean"),
            #[cfg(unix)]
            base.join("link"),
        ] {
            let (resolved, meta) = canonical(&given).unwrap();
            assert_eq!(resolved, std::fs::canonicalize(&given).unwrap());
            assert_eq!(meta.is_dir(), std::fs::metadata(&given).unwrap().is_dir());
        }
        let missing = canonical(&base.join("Sub/B.lean")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let through_a_file = canonical(&base.join("Sub/A.lean/x")).unwrap_err();
        assert_eq!(
            through_a_file.raw_os_error(),
            std::fs::canonicalize(base.join("Sub/A.lean/x"))
                .unwrap_err()
                .raw_os_error()
        );
    }

    fn message(result: Result<WorkspaceRoot, HostError>) -> String {
        result.unwrap_err().message
    }

    #[test]
    fn a_project_resolves_to_its_canonical_path_and_aliases_agree() {
        let dir = project();
        let link = dir.path().join("alias");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let direct = WorkspaceRoot::resolve(&json!({"root": dir.path()})).unwrap();
        let aliased = WorkspaceRoot::resolve(&json!({"root": link})).unwrap();
        assert_eq!(direct, aliased);
        assert_eq!(
            direct.path(),
            std::fs::canonicalize(dir.path()).unwrap().as_path()
        );
    }

    #[test]
    fn bad_roots_say_exactly_what_is_wrong() {
        let dir = project();
        let file = dir.path().join("lean-toolchain");
        let plain = tempfile::tempdir().unwrap();
        assert!(message(WorkspaceRoot::resolve(&json!({"root": "rel/path"}))).contains("absolute"));
        assert!(
            message(WorkspaceRoot::resolve(&json!({"root": "/no/such/dir"})))
                .starts_with("workspace root does not resolve: /no/such/dir")
        );
        assert!(
            message(WorkspaceRoot::resolve(&json!({"root": file})))
                .starts_with("workspace root is not a directory")
        );
        assert!(
            message(WorkspaceRoot::resolve(&json!({"root": plain.path()})))
                .starts_with("workspace root is not a Lean/Lake project")
        );
    }

    #[test]
    fn eviction_accepts_a_root_that_vanished() {
        let root = WorkspaceRoot::for_eviction(&json!({"root": "/gone/a/../b/./c"})).unwrap();
        assert_eq!(root.path(), Path::new("/gone/b/c"));
    }
}
