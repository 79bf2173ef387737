//! A document's text as Lean holds it, and the one fact the rules need of each version: how long
//! each line is in UTF-16 units. Lean turns CRLF into LF on the way in (`String.crlfToLf` in
//! `didOpen`, `replaceLspRange` and full changes, `src/Lean/Server/Utils.lean`) and splits lines
//! at LF only (`FileMap`), so a position is inside a version's text when its line exists and its
//! column is at most that line's length.

use std::sync::Arc;

/// An LSP position: zero-based line and UTF-16 column.
pub type Pos = (u64, u64);

/// The UTF-16 length of each line of one version (never empty: an empty text has one line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lines(Arc<[u64]>);

impl Lines {
    pub fn of(text: &str) -> Lines {
        // UTF-16 units are the UTF-8 lead bytes, two for a 4-byte character: one pass, no
        // decoding.
        let mut lines = Vec::new();
        let mut units = 0;
        for &b in text.as_bytes() {
            if b == b'\n' {
                lines.push(units);
                units = 0;
            } else if b & 0xC0 != 0x80 {
                units += if b >= 0xF0 { 2 } else { 1 };
            }
        }
        lines.push(units);
        Lines(lines.into())
    }

    pub fn contains(&self, (line, character): Pos) -> bool {
        usize::try_from(line)
            .ok()
            .and_then(|l| self.0.get(l))
            .is_some_and(|&len| character <= len)
    }

    /// The position after the last character.
    pub fn end(&self) -> Pos {
        let last = self.0.len() - 1;
        (last as u64, self.0[last])
    }
}

/// `text` with every CRLF turned into LF, as Lean stores it.
pub fn lean_text(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n")
    } else {
        text.to_owned()
    }
}

/// Applies one `contentChanges` entry: a full text, or a range (UTF-16 positions, clamped to
/// the text as Lean's `lspPosToUtf8Pos` does) replaced by `text`.
pub fn apply_change(doc: &mut String, range: Option<(Pos, Pos)>, text: &str) {
    let new = lean_text(text);
    match range {
        None => *doc = new,
        Some((start, end)) => {
            let from = offset(doc, start);
            let to = offset(doc, end).max(from);
            doc.replace_range(from..to, &new);
        }
    }
}

/// The byte offset of a position: a column past its line's end is the line's end, a line past
/// the last is the end of the text.
fn offset(doc: &str, (line, character): Pos) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match doc[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return doc.len(),
        }
    }
    let line_end = doc[start..].find('\n').map_or(doc.len(), |i| start + i);
    let mut units = 0;
    for (i, c) in doc[start..line_end].char_indices() {
        if units >= character {
            return start + i;
        }
        units += c.len_utf16() as u64;
    }
    line_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_utf16_units_and_the_line_after_a_final_newline() {
        let lines = Lines::of("a😉b\n\nαβ\n");
        assert!(lines.contains((0, 4)));
        assert!(!lines.contains((0, 5)));
        assert!(lines.contains((3, 0)));
        assert!(!lines.contains((4, 0)));
        assert_eq!(lines.end(), (3, 0));
        assert_eq!(Lines::of("").end(), (0, 0));
    }

    #[test]
    fn changes_apply_as_lean_applies_them() {
        let mut doc = lean_text("ab\r\ncd😉e\n");
        assert_eq!(doc, "ab\ncd😉e\n");
        apply_change(&mut doc, Some(((1, 4), (1, 5))), "E\r\n");
        assert_eq!(doc, "ab\ncd😉E\n\n");
        apply_change(&mut doc, Some(((0, 9), (9, 0))), "");
        assert_eq!(doc, "ab");
        apply_change(&mut doc, None, "x");
        assert_eq!(doc, "x");
    }
}
