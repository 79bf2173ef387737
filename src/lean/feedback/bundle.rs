//! Writing a report's bundle: `<root>/.beam/feedback/<id>/`, and `<id>.zip` beside it.
//!
//! Contract:
//! 1. Only inside the workspace: `.beam` and `.beam/feedback` must be real directories of the
//!    workspace (created when missing, never entered through a symlink). When this creates
//!    `feedback/`, it also writes a `.gitignore` of `*` there, so bundles (which may hold
//!    private data) stay out of version control.
//! 2. The id is `<yyyymmdd>-<hhmmss>-<slug>` (UTC; the slug is the title in lowercase ASCII
//!    letters, digits and dashes, `feedback` when nothing is left), followed by `-2`, `-3`, …
//!    when taken. The directory is claimed atomically (`mkdir`), and a zip's name must be free
//!    too, so concurrent reports never share or overwrite a bundle.
//! 3. Every file is created new (never written through an existing file or link); the zip
//!    holds the same files, in the same order, under `<id>/`.
//! 4. A failure removes what this call created and is `feedbackBundleFailed`, naming the
//!    bundle's place relative to the workspace.

use std::io::Write;
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use crate::lean::error::HostError;

/// The bundles' directory, relative to the workspace root.
pub const FEEDBACK_DIR: &str = ".beam/feedback";

/// The longest slug taken from a title.
const MAX_SLUG: usize = 48;
/// How many ids one claim tries before it gives up.
const MAX_TRIES: u32 = 1000;

/// Where a bundle goes, claimed.
#[derive(Debug)]
pub struct Claimed {
    /// The bundle directory (created, empty).
    pub dir: PathBuf,
    /// The zip, when one is asked for (not created yet; its name was free).
    pub zip: Option<PathBuf>,
}

/// Claims a new bundle directory for a report made at `at` with `title` (see the contract).
pub fn claim(
    root: &Path,
    title: &str,
    at: OffsetDateTime,
    zip: bool,
) -> Result<Claimed, HostError> {
    let parent = feedback_dir(root)?;
    let base = format!("{}-{}", crate::timestamp::compact(at), slug(title));
    for n in 1..=MAX_TRIES {
        let id = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let dir = parent.join(&id);
        let zip_path = zip.then(|| parent.join(format!("{id}.zip")));
        if zip_path
            .as_ref()
            .is_some_and(|z| z.symlink_metadata().is_ok())
        {
            continue;
        }
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                return Ok(Claimed { dir, zip: zip_path });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(format!("could not create {FEEDBACK_DIR}/{id}: {e}"))),
        }
    }
    Err(failed(format!(
        "{FEEDBACK_DIR} already holds {MAX_TRIES} bundles named {base}"
    )))
}

/// Writes `files` (relative names, contents) into the claimed directory, and the zip; on
/// failure removes both.
pub fn write(
    claimed: &Claimed,
    files: &[(String, Vec<u8>)],
    at: OffsetDateTime,
) -> Result<(), HostError> {
    let written = write_dir(&claimed.dir, files).and_then(|()| match &claimed.zip {
        Some(zip) => write_zip(zip, &claimed.dir, files, at),
        None => Ok(()),
    });
    if let Err(why) = written {
        let _ = std::fs::remove_dir_all(&claimed.dir);
        if let Some(zip) = &claimed.zip {
            let _ = std::fs::remove_file(zip);
        }
        return Err(failed(why));
    }
    Ok(())
}

fn feedback_dir(root: &Path) -> Result<PathBuf, HostError> {
    let mut dir = root.to_path_buf();
    for part in [".beam", "feedback"] {
        dir.push(part);
        let relative = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        match dir.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(failed(format!(
                    "{relative} in the workspace is not a directory (a symlink or a file); \
                     bundles are written only inside the workspace: move it away to write one"
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::create_dir(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(failed(format!("could not create {relative}: {e}"))),
                }
                if part == "feedback" {
                    // Best effort: a concurrent report may have written it first.
                    let _ = create_new(&dir.join(".gitignore"), b"*\n");
                }
                // Whatever raced us there must be a real directory too.
                if !dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                    return Err(failed(format!("{relative} changed while it was created")));
                }
            }
            Err(e) => return Err(failed(format!("could not inspect {relative}: {e}"))),
        }
    }
    Ok(dir)
}

fn write_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    for (name, content) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent()
            && parent != dir
            && !parent.exists()
        {
            std::fs::create_dir(parent)
                .map_err(|e| format!("could not create {name}'s directory: {e}"))?;
        }
        create_new(&path, content).map_err(|e| format!("could not write {name}: {e}"))?;
    }
    Ok(())
}

fn write_zip(
    zip: &Path,
    dir: &Path,
    files: &[(String, Vec<u8>)],
    at: OffsetDateTime,
) -> Result<(), String> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(zip)
        .map_err(|e| format!("could not create {id}.zip: {e}"))?;
    let modified = zip::DateTime::from_date_and_time(
        u16::try_from(at.year()).unwrap_or(1980),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
    )
    .unwrap_or_default();
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(modified)
        .unix_permissions(0o644);
    let mut archive = zip::ZipWriter::new(file);
    let fail = |e: &dyn std::fmt::Display| format!("could not write {id}.zip: {e}");
    for (name, content) in files {
        archive
            .start_file(format!("{id}/{name}"), options)
            .map_err(|e| fail(&e))?;
        archive.write_all(content).map_err(|e| fail(&e))?;
    }
    archive.finish().map_err(|e| fail(&e))?;
    Ok(())
}

fn create_new(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(content)
}

/// The title as a file-name slug.
pub fn slug(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= MAX_SLUG {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "feedback".into()
    } else {
        slug.into()
    }
}

fn failed(why: String) -> HostError {
    HostError::feedback_bundle_failed(&why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::error::code;

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug("Hover shows nothing!"), "hover-shows-nothing");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("¿Qué?"), "qu");
        assert_eq!(slug("!!!"), "feedback");
        assert_eq!(slug(&"ab ".repeat(40)).len(), MAX_SLUG - 1);
    }

    #[test]
    fn claims_never_share_a_directory_or_a_zip_name() {
        let root = tempfile::tempdir().unwrap();
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let first = claim(root.path(), "t", at, true).unwrap();
        std::fs::write(
            root.path().join(".beam/feedback/20270115-080000-t-3.zip"),
            b"",
        )
        .unwrap();
        let second = claim(root.path(), "t", at, true).unwrap();
        let third = claim(root.path(), "t", at, false).unwrap();
        let fourth = claim(root.path(), "t", at, true).unwrap();
        let name = |c: &Claimed| c.dir.file_name().unwrap().to_str().unwrap().to_owned();
        assert_eq!(name(&first), "20270115-080000-t");
        assert_eq!(name(&second), "20270115-080000-t-2");
        assert_eq!(
            name(&third),
            "20270115-080000-t-3",
            "no zip asked: the zip name is no matter"
        );
        assert_eq!(name(&fourth), "20270115-080000-t-4");
        assert_eq!(
            std::fs::read_to_string(root.path().join(".beam/feedback/.gitignore")).unwrap(),
            "*\n"
        );
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let claimed = claim(root.path(), "t", at, true).unwrap();
        let files = vec![
            ("card.md".to_owned(), b"x".to_vec()),
            ("card.md".to_owned(), b"again".to_vec()),
        ];
        let error = write(&claimed, &files, at).unwrap_err();
        assert_eq!(error.code, code::FEEDBACK_BUNDLE_FAILED);
        assert!(!claimed.dir.exists());
        assert!(!claimed.zip.unwrap().exists());
    }
}
