//! Reading a Lean source from disk, as every sync does (Beam never keeps a text it did not
//! just read).
//!
//! Contract: [`read_source`] returns the file's text, or the error reading it gave. A source of
//! up to [`READ_IN_PLACE`] bytes is read on the calling task: a trip to Tokio's blocking pool
//! (a thread woken, then the worker woken again) costs more than reading such a file from the
//! page cache, and every call that names a file pays it. A larger one is read on the blocking
//! pool, so it never holds a worker for long.

use std::io::Read;
use std::path::Path;

/// The largest source read in place (Mathlib's largest files are well below it).
pub const READ_IN_PLACE: u64 = 512 << 10;

/// The text of the file at `path` (see the contract).
pub async fn read_source(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len <= READ_IN_PLACE {
        return read_all(&mut file, len);
    }
    tokio::task::spawn_blocking(move || read_all(&mut file, len))
        .await
        .map_err(std::io::Error::other)?
}

/// Reads to the end into a buffer sized from `len`, with no system call but the reads
/// (`File::read_to_string` asks for the size again, and the position; `Take` does not).
fn read_all(file: &mut std::fs::File, len: u64) -> std::io::Result<String> {
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    file.take(u64::MAX).read_to_end(&mut bytes)?;
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn small_and_large_sources_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("A.lean");
        std::fs::write(&small, "theorem t : True := trivial\n").unwrap();
        assert_eq!(
            read_source(&small).await.unwrap(),
            "theorem t : True := trivial\n"
        );
        let large = dir.path().join("B.lean");
        let text = "-- ü\n".repeat(200_000);
        std::fs::write(&large, &text).unwrap();
        assert!(text.len() as u64 > READ_IN_PLACE);
        assert_eq!(read_source(&large).await.unwrap(), text);
        std::fs::write(&small, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_source(&small).await.unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
    }
}
