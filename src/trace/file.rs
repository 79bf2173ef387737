//! One trace stream: timestamped lines appended to a file that rotates (see the module contract).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use time::OffsetDateTime;

use super::{SUFFIX, TraceDir};

/// The bytes of a line besides its direction and message, the cut marker included.
const LINE_OVERHEAD: usize = 64;

/// Where one stream's lines go. Cheap to clone; the file is released when the last clone drops.
#[derive(Debug, Clone)]
pub struct Stream {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: TraceDir,
    path: PathBuf,
    rotated: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    file: Option<File>,
    written: u64,
    /// Set after the first failure: the stream writes nothing more.
    failed: bool,
}

impl Stream {
    pub(super) fn new(dir: TraceDir, stem: String) -> Stream {
        let path = dir.dir().join(format!("{stem}{SUFFIX}"));
        let rotated = dir.dir().join(format!("{stem}.1{SUFFIX}"));
        Stream {
            inner: Arc::new(Inner {
                dir,
                path,
                rotated,
                state: Mutex::default(),
            }),
        }
    }

    /// The file this stream writes now.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Appends one line: now, `direction`, then `message` on one line.
    pub fn write(&self, direction: &str, message: &[u8]) {
        let inner = &*self.inner;
        // Room for the time, the direction and the cut marker within one rotation size.
        let limit = usize::try_from(inner.dir.rotate_at())
            .unwrap_or(usize::MAX)
            .saturating_sub(LINE_OVERHEAD + direction.len());
        let line = format_line(OffsetDateTime::now_utc(), direction, message, limit);
        let mut state = inner.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.failed {
            return;
        }
        if let Err(e) = inner.append(&mut state, line.as_bytes()) {
            state.failed = true;
            state.file = None;
            tracing::warn!(path = %inner.path.display(), error = %e, "cannot write the trace; this stream stops");
        }
    }
}

impl Inner {
    fn append(&self, state: &mut State, line: &[u8]) -> std::io::Result<()> {
        let len = line.len() as u64;
        if state.file.is_some() && state.written + len > self.dir.rotate_at() {
            state.file = None;
            match std::fs::rename(&self.path, &self.rotated) {
                // Deleted by someone else: nothing to keep, and the stream goes on.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        if state.file.is_none() {
            // Appended to: a file an earlier process with this pid left is kept, not truncated.
            let file = File::options().create(true).append(true).open(&self.path)?;
            state.written = file.metadata()?.len();
            state.file = Some(file);
            self.dir.set_active(&self.path, true);
            self.dir.prune();
        }
        let file = state.file.as_mut().expect("opened above");
        // One write per line: the file holds whole lines even if the process dies.
        file.write_all(line)?;
        state.written += len;
        Ok(())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.dir.set_active(&self.path, false);
    }
}

/// `<time> <direction> <message>\n`, the message's line breaks escaped, and the message cut
/// (with `[… N bytes cut]`, N counted in the message) once the escaped text reaches `limit`
/// bytes, so that one line never outgrows a file.
fn format_line(at: OffsetDateTime, direction: &str, message: &[u8], limit: usize) -> String {
    let kept = message.len()
        - message
            .iter()
            .rev()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
    let message = &message[..kept];
    let mut line = format!("{} {direction} ", crate::timestamp::iso_micros(at));
    let end = line.len() + limit;
    let mut read = 0;
    for chunk in message.utf8_chunks() {
        for c in chunk.valid().chars() {
            if line.len() >= end {
                break;
            }
            match c {
                '\n' => line.push_str("\\n"),
                '\r' => line.push_str("\\r"),
                c => line.push(c),
            }
            read += c.len_utf8();
        }
        if !chunk.invalid().is_empty() && line.len() < end {
            line.push(char::REPLACEMENT_CHARACTER);
            read += chunk.invalid().len();
        }
    }
    if read < message.len() {
        line.push_str(&format!("[… {} bytes cut]", message.len() - read));
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_time_direction_and_the_message_on_one_line() {
        let date = time::Date::from_calendar_date(2026, time::Month::December, 1).unwrap();
        let at = date.with_hms_micro(9, 8, 7, 42).unwrap().assume_utc();
        assert_eq!(
            format_line(at, "lean→beam", b"{\"a\":\n1}\r\n", 100),
            "2026-12-01T09:08:07.000042Z lean→beam {\"a\":\\n1}\n"
        );
        assert_eq!(
            format_line(at, "lean-stderr", b"bad \xff byte", 100),
            "2026-12-01T09:08:07.000042Z lean-stderr bad \u{fffd} byte\n"
        );
        assert_eq!(
            format_line(at, "x", b"ab\ncdef", 4),
            "2026-12-01T09:08:07.000042Z x ab\\n[… 4 bytes cut]\n"
        );
    }
}
