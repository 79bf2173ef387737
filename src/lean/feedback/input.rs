//! The arguments of `beam_feedback_report`, read and checked before anything is collected or
//! written.
//!
//! Contract:
//! 1. The schema has already closed every object (an undeclared or misspelled field is refused
//!    there) and checked types and enums; this adds what a schema cannot say. Each refusal is
//!    `invalidInput` naming its argument as a JSON Pointer in `data.path`.
//! 2. The five narrative fields must not be blank; blank tags are dropped.
//! 3. `confidential: true` with `redact: false` is refused: a confidential report is always
//!    redacted.
//! 4. Evidence: each entry has exactly one of `content` and `path`; its name is a simple file
//!    name ([`check_name`]) and no two names are equal ignoring case (they would collide on
//!    case-insensitive file systems); a `path` (relative to the root unless absolute) must
//!    resolve, symlinks followed, to a regular file inside the workspace of at most
//!    [`MAX_EVIDENCE_FILE`] bytes, and all file evidence together at most
//!    [`MAX_EVIDENCE_TOTAL`]. Every mode checks all of this, so a bad entry fails the same way
//!    whether or not a bundle was asked for. Messages repeat only what the caller wrote.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::lean::error::HostError;

/// The largest evidence file a report copies.
pub const MAX_EVIDENCE_FILE: u64 = 1024 * 1024;
/// The most file evidence one report copies, all files together.
pub const MAX_EVIDENCE_TOTAL: u64 = 8 * 1024 * 1024;
/// The longest evidence name, in bytes.
pub const MAX_NAME: usize = 100;

/// The narrative fields every report has.
pub const NARRATIVE: [&str; 5] = ["title", "summary", "reproduction", "expected", "actual"];

/// What, besides the report, is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bundle {
    /// Nothing.
    None,
    /// A directory under `<root>/.beam/feedback/`.
    Dir,
    /// That directory, and a zip of it beside it.
    Zip,
}

impl Bundle {
    /// Its name in the schema.
    pub fn name(self) -> &'static str {
        match self {
            Bundle::None => "none",
            Bundle::Dir => "dir",
            Bundle::Zip => "zip",
        }
    }
}

/// Where one piece of evidence comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Given inline: a string is written as is, any other value as formatted JSON.
    Inline(Value),
    /// A file of the workspace.
    File {
        /// The path as the caller wrote it.
        given: String,
        /// The file, canonical (inside the workspace).
        path: PathBuf,
        /// Its size when checked.
        len: u64,
    },
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// Its file name in the bundle's `evidence/`.
    pub name: String,
    /// Where it comes from.
    pub source: Source,
}

/// A report as the caller asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Short title.
    pub title: String,
    /// What went wrong.
    pub summary: String,
    /// How to reproduce it.
    pub reproduction: String,
    /// What was expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
    /// Triage category.
    pub kind: Option<String>,
    /// Triage severity.
    pub severity: Option<String>,
    /// Who is affected.
    pub impact: Option<String>,
    /// A known workaround.
    pub workaround: Option<String>,
    /// Routing labels, blank ones dropped.
    pub tags: Vec<String>,
    /// The caller's correlation id.
    pub client_request_id: Option<String>,
    /// The request the report is about.
    pub request: Option<Value>,
    /// The response the report is about.
    pub response: Option<Value>,
    /// Evidence for a bundle.
    pub evidence: Vec<Evidence>,
    /// What is written besides.
    pub bundle: Bundle,
    /// Whether the home directory is redacted.
    pub redact: bool,
    /// Whether the workspace is not public.
    pub confidential: bool,
    /// Whether the result carries the collected context.
    pub include_collected: bool,
}

impl Report {
    /// Reads and checks the arguments (see the contract).
    pub fn read(args: &Value, root: &Path) -> Result<Report, HostError> {
        let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_owned);
        let flag =
            |name: &str, default: bool| args.get(name).and_then(Value::as_bool).unwrap_or(default);
        let mut narrative = Vec::new();
        for field in NARRATIVE {
            let value = text(field).unwrap_or_default();
            if value.trim().is_empty() {
                return Err(invalid(
                    format!("/{field}"),
                    format!("{field} must not be blank"),
                ));
            }
            narrative.push(value);
        }
        let redact = flag("redact", true);
        let confidential = flag("confidential", false);
        if confidential && !redact {
            return Err(invalid(
                "/redact".into(),
                "a confidential report is always redacted: remove \"redact\": false, or leave \
                 out \"confidential\" if the workspace is public",
            ));
        }
        let bundle = match args.get("bundle").and_then(Value::as_str) {
            Some("dir") => Bundle::Dir,
            Some("zip") => Bundle::Zip,
            _ => Bundle::None,
        };
        let tags = args
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|tag| !tag.trim().is_empty())
            .map(str::to_owned)
            .collect();
        let entries = args.get("evidence").and_then(Value::as_array);
        let evidence = read_evidence(entries.map_or(&[][..], Vec::as_slice), root)?;
        let mut narrative = narrative.into_iter();
        let mut next = || narrative.next().unwrap_or_default();
        Ok(Report {
            title: next(),
            summary: next(),
            reproduction: next(),
            expected: next(),
            actual: next(),
            kind: text("kind"),
            severity: text("severity"),
            impact: text("impact").filter(|t| !t.trim().is_empty()),
            workaround: text("workaround").filter(|t| !t.trim().is_empty()),
            tags,
            client_request_id: text("client_request_id"),
            request: args.get("request").cloned(),
            response: args.get("response").cloned(),
            evidence,
            bundle,
            redact,
            confidential,
            include_collected: flag("include_collected", false),
        })
    }
}

fn read_evidence(entries: &[Value], root: &Path) -> Result<Vec<Evidence>, HostError> {
    let mut evidence: Vec<Evidence> = Vec::with_capacity(entries.len());
    let mut total = 0u64;
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("/evidence/{index}");
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        check_name(name).map_err(|why| {
            invalid(
                format!("{at}/name"),
                format!("evidence name {name:?} {why}"),
            )
        })?;
        if let Some(earlier) = evidence.iter().find(|e| e.name.eq_ignore_ascii_case(name)) {
            return Err(invalid(
                format!("{at}/name"),
                format!(
                    "evidence name {name:?} repeats {:?}: names must differ, ignoring case",
                    earlier.name
                ),
            ));
        }
        let source = match (entry.get("content"), entry.get("path")) {
            (Some(content), None) => Source::Inline(content.clone()),
            (None, Some(Value::String(given))) => {
                let (path, len) = check_file(given, root).map_err(|why| {
                    invalid(
                        format!("{at}/path"),
                        format!("evidence path {given:?} {why}"),
                    )
                })?;
                total += len;
                if total > MAX_EVIDENCE_TOTAL {
                    return Err(invalid(
                        format!("{at}/path"),
                        format!(
                            "evidence path {given:?} makes the file evidence larger than the \
                             {} MiB a report copies",
                            MAX_EVIDENCE_TOTAL >> 20
                        ),
                    ));
                }
                Source::File {
                    given: given.clone(),
                    path,
                    len,
                }
            }
            _ => {
                return Err(invalid(
                    at,
                    format!("evidence {name:?} needs exactly one of content or path"),
                ));
            }
        };
        evidence.push(Evidence {
            name: name.to_owned(),
            source,
        });
    }
    Ok(evidence)
}

/// Why `name` is not a simple file name, if it is not: ASCII letters, digits, `.`, `_` and
/// `-` only, starting with a letter, digit or `_`, no `..`, not ending with `.`, not a device
/// name Windows reserves, at most [`MAX_NAME`] bytes. So no path separator, no hidden file, no
/// `.` or `..`, nothing a shell or another system reads differently.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > MAX_NAME {
        return Err(format!("is longer than {MAX_NAME} bytes"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(
            "may hold only ASCII letters, digits, '.', '_' and '-' (no path \
                    separators, spaces or control characters)"
                .into(),
        );
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        return Err(
            "must start with a letter, a digit or '_' (no hidden files, no '.' or '..')".into(),
        );
    }
    if name.contains("..") {
        return Err("must not contain '..'".into());
    }
    if name.ends_with('.') {
        return Err("must not end with '.'".into());
    }
    let stem = name
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    let device = matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit());
    if device {
        return Err("is a device name Windows reserves".into());
    }
    Ok(())
}

/// The canonical file and its size, if `given` names a regular file inside the workspace.
fn check_file(given: &str, root: &Path) -> Result<(PathBuf, u64), String> {
    let joined = if Path::new(given).is_absolute() {
        PathBuf::from(given)
    } else {
        root.join(given)
    };
    let canonical = std::fs::canonicalize(&joined).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_owned(),
        _ => format!("cannot be resolved: {e}"),
    })?;
    if !canonical.starts_with(root) {
        return Err(
            "is outside the workspace (symlinks followed): evidence files are read \
                    only from inside it"
                .into(),
        );
    }
    let meta = std::fs::metadata(&canonical).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_EVIDENCE_FILE {
        return Err(format!(
            "is {} bytes, larger than the {} MiB a report copies of one file",
            meta.len(),
            MAX_EVIDENCE_FILE >> 20
        ));
    }
    Ok((canonical, meta.len()))
}

fn invalid(pointer: String, message: impl Into<String>) -> HostError {
    HostError::invalid_input(message).with_path(&pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_names_pass_and_tricks_do_not() {
        for good in [
            "notes.txt",
            "Basic.lean",
            "_x",
            "a-b_c.1.json",
            "console.log",
            "COM10",
        ] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "", " ", ".", "..", ".x", "../x", "a/b", "a\\b", "/x", "a..b", "x.", "-x", "a b",
            "a:b", "nul", "Con.txt", "com1", "LPT9.log", "é",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"a".repeat(MAX_NAME)).is_ok());
        assert!(check_name(&"a".repeat(MAX_NAME + 1)).is_err());
    }
}
