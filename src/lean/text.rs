//! Text as Lean addresses it: positions (zero-based lines, UTF-16 columns) and the byte offsets
//! they name, and the `file://` URIs of paths. This file owns how the host writes and reads URIs.
//!
//! Contract:
//! 1. A [`Position`] is an LSP position: a zero-based line and a column in UTF-16 code units.
//!    Lines end at `\n`; a `\r` before it belongs to no column Lean counts (Lean turns CRLF into
//!    LF). A [`Range`] is an LSP range, from its start to its end. Both read from Lean's JSON
//!    with serde.
//! 2. [`offset_of`] and [`position_at`] convert between positions and byte offsets of one
//!    text; a position past a line's end is its end, past the last line the text's end.
//! 3. [`file_uri`] is the one URI the host names a file by, written as Lean's own
//!    `System.Uri.pathToUri` writes it (`Init/System/Uri.lean`; reference
//!    `lean-language-server.md` Part 3, "URIs"): `; : ? # [ ] @ & = + $ , ! ' ( ) * %`, space,
//!    control characters, DEL and every non-ASCII byte as `%XX` in uppercase hex, anything else
//!    as it is. Lean's watchdog finds a saved file's importers by the exact URI string it built
//!    itself, and older Leans build it differently (lowercase hex, space and control characters
//!    left as they are), so a notification Lean matches by string is sent under every form
//!    [`lean_uris`] gives.
//! 4. A URI from Lean is read in any form — either era of Lean's, the URL library's, either hex
//!    case: [`uri_path`] is its path (escapes decoded as Lean's `fileUriToPath?` decodes them)
//!    and [`canonical_uri`] the host's URI for the same file, so that URIs are compared, and
//!    shown, in one form.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

/// An LSP position: zero-based line, UTF-16 column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Deserialize)]
pub struct Position {
    /// Zero-based line.
    pub line: u32,
    /// Zero-based UTF-16 column.
    pub character: u32,
}

impl Position {
    /// A position.
    pub fn new(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    /// `{line, character}`.
    pub fn to_json(self) -> Value {
        json!({"line": self.line, "character": self.character})
    }

    /// Reads `{line, character}` as Lean sends it.
    pub fn from_json(value: &Value) -> Option<Position> {
        let field = |name: &str| {
            value
                .get(name)?
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
        };
        Some(Position::new(field("line")?, field("character")?))
    }
}

/// An LSP range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Range {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (exclusive).
    pub end: Position,
}

impl Range {
    /// `{start, end}`.
    pub fn to_json(self) -> Value {
        json!({"start": self.start.to_json(), "end": self.end.to_json()})
    }
}

/// The position of byte `offset` of `text` (a char boundary).
pub fn position_at(text: &str, offset: usize) -> Position {
    let head = &text[..offset];
    let line = head.matches('\n').count();
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let character = head[line_start..].encode_utf16().count();
    Position::new(line as u32, character as u32)
}

/// The byte offset `position` names in `text` (see the contract).
pub fn offset_of(text: &str, position: Position) -> usize {
    let mut start = 0;
    for _ in 0..position.line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= position.character as usize || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// Why `at` lies outside `text`, if it does (a line past the last, or a column past its line's
/// end), with the number of lines the text has.
///
/// A position inside costs a scan up to its line, never of the whole text: every
/// position-bound call asks.
pub fn outside(text: &str, at: Position) -> Option<(String, usize)> {
    let count = || text.split('\n').count();
    let Some(line) = text.split('\n').nth(at.line as usize) else {
        let count = count();
        return Some((format!("it has {count} lines (0 to {})", count - 1), count));
    };
    let width = line.trim_end_matches('\r').encode_utf16().count();
    (at.character as usize > width).then(|| {
        let why = format!("line {} is {width} UTF-16 code units long", at.line);
        (why, count())
    })
}

/// The characters every era of Lean's `pathToUri` escapes (`rfc3986ReservedChars`), besides
/// DEL and every non-ASCII byte.
const RESERVED: &[u8] = b";:?#[]@&=+$,!'()*%";

/// The two ways Lean's `pathToUri` has written a path (see the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escapes {
    /// Newer copies: uppercase hex; space and control characters escaped too.
    Newer,
    /// Older copies: lowercase hex; space and control characters as they are.
    Older,
}

/// `path` as one era of Lean's `pathToUri` writes it.
fn lean_path_uri(path: &Path, era: Escapes) -> String {
    use std::fmt::Write as _;
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut uri = String::with_capacity(bytes.len() + 16);
    uri.push_str(if bytes.first() == Some(&b'/') {
        "file://"
    } else {
        "file:///"
    });
    for &byte in bytes {
        let control = era == Escapes::Newer && byte <= b' ';
        if RESERVED.contains(&byte) || byte >= 0x7f || control {
            let _ = match era {
                Escapes::Newer => write!(uri, "%{byte:02X}"),
                Escapes::Older => write!(uri, "%{byte:02x}"),
            };
        } else {
            uri.push(char::from(byte));
        }
    }
    uri
}

/// The URI the host names the file at `path` by (see the contract).
pub fn file_uri(path: &Path) -> String {
    lean_path_uri(path, Escapes::Newer)
}

/// Every URI a Lean may have built for the file `uri` names, `uri` first and none twice: the
/// forms a notification Lean matches by string (`didSave`, a watched file's change) is sent
/// under. A URI that names no file is only itself.
pub fn lean_uris(uri: &str) -> Vec<String> {
    let mut forms = vec![uri.to_owned()];
    if let Some(path) = uri_path(uri) {
        for era in [Escapes::Newer, Escapes::Older] {
            let form = lean_path_uri(&path, era);
            if !forms.contains(&form) {
                forms.push(form);
            }
        }
    }
    forms
}

/// The path of a `file://` URI in any form, if it is one: the host name (empty or not) is
/// dropped and `%XX` escapes are decoded in either hex case; an escape that is not one stays
/// as it is, as in Lean's `decodeUri`.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let path = &rest[rest.find('/')?..];
    let bytes = path.as_bytes();
    let hex = |at: usize| {
        let digit = *bytes.get(at)?;
        char::from(digit).to_digit(16).map(|d| d as u8)
    };
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'%' || at + 1 == bytes.len() {
            decoded.push(bytes[at]);
            at += 1;
            continue;
        }
        // As Lean's `decodeUri`: the one or two characters after a `%` go with it, decoded
        // when both are hex digits, else kept as they are.
        let taken = match (hex(at + 1), hex(at + 2)) {
            (Some(high), Some(low)) => {
                decoded.push(high * 16 + low);
                at += 3;
                continue;
            }
            (Some(_), None) if at + 2 < bytes.len() => 3,
            _ => 2,
        };
        decoded.extend_from_slice(&bytes[at..at + taken]);
        at += taken;
    }
    String::from_utf8(decoded).ok().map(PathBuf::from)
}

/// The host's URI for the file a URI from Lean names, in whatever form Lean wrote it; a URI
/// that names no file is kept as it is.
pub fn canonical_uri(uri: &str) -> String {
    uri_path(uri).map_or_else(|| uri.to_owned(), |path| file_uri(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_utf16_and_clamp_to_the_line() {
        let text = "def 𝓝 := 1\nx";
        assert_eq!(
            position_at(text, text.find(':').unwrap()),
            Position::new(0, 7)
        );
        assert_eq!(
            offset_of(text, Position::new(0, 7)),
            text.find(':').unwrap()
        );
        assert_eq!(offset_of(text, Position::new(1, 1)), text.len());
        assert_eq!(
            offset_of(text, Position::new(0, 99)),
            text.find('\n').unwrap()
        );
        assert_eq!(offset_of(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn a_position_is_inside_up_to_each_lines_end() {
        let text = "ab\r\n𝓝\n";
        assert_eq!(outside(text, Position::new(0, 2)), None);
        assert_eq!(outside(text, Position::new(1, 2)), None);
        assert_eq!(
            outside(text, Position::new(2, 0)),
            None,
            "the empty last line"
        );
        let (why, lines) = outside(text, Position::new(0, 3)).unwrap();
        assert_eq!(
            (why.as_str(), lines),
            ("line 0 is 2 UTF-16 code units long", 3)
        );
        let (why, _) = outside(text, Position::new(3, 0)).unwrap();
        assert_eq!(why, "it has 3 lines (0 to 2)");
    }

    #[test]
    fn uris_are_written_as_lean_writes_them() {
        for (c, escaped) in [
            (';', "%3B"),
            (':', "%3A"),
            ('?', "%3F"),
            ('#', "%23"),
            ('[', "%5B"),
            (']', "%5D"),
            ('@', "%40"),
            ('&', "%26"),
            ('=', "%3D"),
            ('+', "%2B"),
            ('$', "%24"),
            (',', "%2C"),
            ('!', "%21"),
            ('\'', "%27"),
            ('(', "%28"),
            (')', "%29"),
            ('*', "%2A"),
            ('%', "%25"),
            (' ', "%20"),
            ('\t', "%09"),
            ('\u{7f}', "%7F"),
        ] {
            let path = format!("/w/a{c}b.lean");
            assert_eq!(
                file_uri(Path::new(&path)),
                format!("file:///w/a{escaped}b.lean"),
                "{c:?}"
            );
        }
        assert_eq!(
            file_uri(Path::new("/w/Beweise-ü/𝓝.lean")),
            "file:///w/Beweise-%C3%BC/%F0%9D%93%9D.lean"
        );
        let plain = "/w/a-b_c.d~e/\"<>`{}|^/F.lean";
        assert_eq!(file_uri(Path::new(plain)), format!("file://{plain}"));
    }

    #[test]
    fn a_saved_file_is_named_in_every_form_lean_builds() {
        let uri = file_uri(Path::new("/w/My Proofs/proofs+(v2)@x/ü.lean"));
        assert_eq!(
            lean_uris(&uri),
            [
                "file:///w/My%20Proofs/proofs%2B%28v2%29%40x/%C3%BC.lean",
                "file:///w/My Proofs/proofs%2b%28v2%29%40x/%c3%bc.lean",
            ]
        );
        let plain = file_uri(Path::new("/w/A.lean"));
        assert_eq!(lean_uris(&plain), [plain]);
        assert_eq!(lean_uris("untitled:A"), ["untitled:A"]);
    }

    #[test]
    fn uris_from_lean_are_read_in_any_form_and_hex_case() {
        let path = Path::new("/w/My Proofs/proofs+(v2)@x/Ünï#1.lean");
        let ours = file_uri(path);
        for theirs in [
            "file:///w/My%20Proofs/proofs%2B%28v2%29%40x/%C3%9Cn%C3%AF%231.lean",
            "file:///w/My Proofs/proofs%2b%28v2%29%40x/%c3%9cn%c3%af%231.lean",
            "file:///w/My%20Proofs/proofs+(v2)@x/%C3%9Cn%C3%AF%231.lean",
            "file://localhost/w/My%20Proofs/proofs+(v2)@x/%c3%9Cn%C3%aF%231.lean",
        ] {
            assert_eq!(uri_path(theirs).as_deref(), Some(path), "{theirs}");
            assert_eq!(canonical_uri(theirs), ours, "{theirs}");
        }
        assert_eq!(uri_path(&ours).as_deref(), Some(path));
        assert_eq!(
            uri_path("file:///w/100%/%zz%4").as_deref(),
            Some(Path::new("/w/100%/%zz%4")),
            "what is not an escape stays as it is"
        );
        assert_eq!(uri_path("untitled:A"), None);
        assert_eq!(canonical_uri("untitled:A"), "untitled:A");
    }
}
