//! Text as Lean addresses it: positions (zero-based lines, UTF-16 columns) and the byte offsets
//! they name, and the `file://` URIs of paths.
//!
//! Contract:
//! 1. A [`Position`] is an LSP position: a zero-based line and a column in UTF-16 code units.
//!    Lines end at `\n`; a `\r` before it belongs to no column Lean counts (Lean turns CRLF into
//!    LF).
//! 2. [`offset_of`] and [`position_at`] convert between positions and byte offsets of one
//!    text; a position past a line's end is its end, past the last line the text's end.
//! 3. [`file_uri`] is the URI the host sends Lean for a path; [`uri_path`] reads a `file://` URI
//!    back.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// An LSP position: zero-based line, UTF-16 column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
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
pub fn outside(text: &str, at: Position) -> Option<(String, usize)> {
    let count = text.split('\n').count();
    let Some(line) = text.split('\n').nth(at.line as usize) else {
        return Some((format!("it has {count} lines (0 to {})", count - 1), count));
    };
    let width = line.trim_end_matches('\r').encode_utf16().count();
    (at.character as usize > width).then(|| {
        let why = format!("line {} is {width} UTF-16 code units long", at.line);
        (why, count)
    })
}

/// The `file://` URI of a path.
pub fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file://` URI, if it is one.
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
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
    fn uris_round_trip_with_escapes() {
        let path = Path::new("/tmp/a b/Ünïcode#1.lean");
        let uri = file_uri(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%9Cn%C3%AFcode%231.lean");
        assert_eq!(uri_path(&uri).as_deref(), Some(path));
    }
}
