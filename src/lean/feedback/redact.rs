//! Redaction: the local paths a feedback report must not carry, replaced wherever they stand.
//!
//! Contract:
//! 1. A [`Redactor`] replaces the home directory (as `HOME` spells it, and canonical) with `~`,
//!    and in confidential mode the workspace root (canonical, and as the caller spelled it) with
//!    `$WORKSPACE`. The longest path wins where several match, so a root inside the home
//!    directory becomes `$WORKSPACE`, not `~/…`.
//! 2. A path is replaced only as a whole: the match must not continue a file name on either
//!    side, so a home of `/home/al` leaves `/home/alice` and `/srv/home/al` alone.
//! 3. It works on bytes, so evidence files in any encoding are redacted without being decoded;
//!    replacing whole UTF-8 paths with ASCII keeps valid UTF-8 valid. In JSON, object keys are
//!    redacted as well as strings.
//! 4. A home of `/`, or one that is empty or relative, names nothing and is not replaced.

use std::path::Path;

use serde_json::{Map, Value};

/// What replaces the home directory.
pub const HOME: &str = "~";
/// What replaces the workspace root in confidential mode.
pub const WORKSPACE: &str = "$WORKSPACE";

/// The replacements of one report.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Paths and what replaces them, longest path first.
    rules: Vec<(Vec<u8>, &'static str)>,
}

impl Redactor {
    /// Replaces `home` (when `redact`), and the workspace root given as its canonical path and
    /// as the caller wrote it (when `workspace` is given: confidential mode).
    pub fn new(home: Option<&str>, redact: bool, workspace: Option<(&Path, &str)>) -> Redactor {
        let mut rules: Vec<(Vec<u8>, &'static str)> = Vec::new();
        let mut add = |path: &str, with: &'static str| {
            let path = path.trim_end_matches('/');
            if path.starts_with('/') && !rules.iter().any(|(p, _)| p == path.as_bytes()) {
                rules.push((path.as_bytes().to_vec(), with));
            }
        };
        if let Some((canonical, written)) = workspace {
            add(&canonical.display().to_string(), WORKSPACE);
            add(written, WORKSPACE);
        }
        if redact && let Some(home) = home {
            add(home, HOME);
            if let Ok(canonical) = std::fs::canonicalize(home) {
                add(&canonical.display().to_string(), HOME);
            }
        }
        rules.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Redactor { rules }
    }

    /// `input` with every rule applied.
    pub fn bytes(&self, input: &[u8]) -> Vec<u8> {
        if self.rules.is_empty() {
            return input.to_vec();
        }
        let mut out = Vec::with_capacity(input.len());
        let mut at = 0;
        while let Some(found) = memchr::memchr(b'/', &input[at..]) {
            let start = at + found;
            out.extend_from_slice(&input[at..start]);
            let before_ok = start == 0 || !continues_name(input[start - 1]);
            let matched = before_ok
                .then(|| {
                    self.rules.iter().find(|(path, _)| {
                        input[start..].starts_with(path)
                            && input
                                .get(start + path.len())
                                .is_none_or(|&next| !continues_name(next))
                    })
                })
                .flatten();
            match matched {
                Some((path, with)) => {
                    out.extend_from_slice(with.as_bytes());
                    at = start + path.len();
                }
                None => {
                    out.push(b'/');
                    at = start + 1;
                }
            }
        }
        out.extend_from_slice(&input[at..]);
        out
    }

    /// `input` with every rule applied.
    pub fn text(&self, input: &str) -> String {
        let bytes = self.bytes(input.as_bytes());
        // Whole UTF-8 paths were replaced with ASCII at UTF-8 boundaries ('/' and ASCII
        // neighbours), so the text is still UTF-8.
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// `value` with every string and object key redacted.
    pub fn json(&self, value: &Value) -> Value {
        if self.rules.is_empty() {
            return value.clone();
        }
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            Value::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(key, v)| (self.text(key), self.json(v)))
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }
}

/// Whether a byte next to a path would make it part of a longer name.
fn continues_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') || byte >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_home_directory_is_replaced_only_as_a_whole_path() {
        let redactor = Redactor::new(Some("/home/al/"), true, None);
        assert_eq!(
            redactor.text("/home/al/p and /home/al, /home/alice /srv/home/al file:///home/al/x"),
            "~/p and ~, /home/alice /srv/home/al file://~/x"
        );
        assert_eq!(redactor.text("\"/home/al\""), "\"~\"");
    }

    #[test]
    fn the_workspace_wins_over_the_home_that_holds_it() {
        let redactor = Redactor::new(
            Some("/home/al"),
            true,
            Some((Path::new("/home/al/work/p"), "/home/al/link/")),
        );
        assert_eq!(
            redactor.text("/home/al/work/p/A.lean /home/al/link/A.lean /home/al/work/pq"),
            "$WORKSPACE/A.lean $WORKSPACE/A.lean ~/work/pq"
        );
    }

    #[test]
    fn nothing_is_replaced_without_redaction_or_for_a_root_home() {
        assert_eq!(
            Redactor::new(Some("/home/al"), false, None).text("/home/al/x"),
            "/home/al/x"
        );
        assert_eq!(Redactor::new(Some("/"), true, None).text("/x/y"), "/x/y");
        assert_eq!(Redactor::new(Some(""), true, None).text("/x/y"), "/x/y");
    }

    #[test]
    fn bytes_in_any_encoding_and_json_keys_are_redacted() {
        let redactor = Redactor::new(Some("/home/al"), true, None);
        assert_eq!(
            redactor.bytes(b"\xff/home/al/x\xfe"),
            b"\xff/home/al/x\xfe".to_vec(),
            "a byte of a longer name before it: not a whole path"
        );
        assert_eq!(
            redactor.bytes(b"\x00/home/al/x\xfe"),
            b"\x00~/x\xfe".to_vec()
        );
        assert_eq!(
            redactor.json(&json!({"/home/al/k": ["/home/al", 1, null]})),
            json!({"~/k": ["~", 1, null]})
        );
    }
}
