//! Document text as the Lean server holds it: CRLF turned into LF on the way in, positions in
//! UTF-16 code units (reference §1.1), and the two `didChange` forms, full text and range edit
//! (§1.4). Every other module works on byte offsets into [`Text::as_str`] and converts at the
//! edges with [`Text::offset`] and [`Text::pos`].

use serde_json::{Value, json};

/// An LSP position: zero-based line and UTF-16 column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub character: u32,
}

impl Pos {
    pub fn new(line: u32, character: u32) -> Pos {
        Pos { line, character }
    }

    pub fn to_json(self) -> Value {
        json!({"line": self.line, "character": self.character})
    }

    /// Reads `{"line","character"}`; `None` when either field is missing or not a number.
    pub fn from_json(v: &Value) -> Option<Pos> {
        Some(Pos {
            line: u32::try_from(v.get("line")?.as_u64()?).ok()?,
            character: u32::try_from(v.get("character")?.as_u64()?).ok()?,
        })
    }
}

/// `{"start","end"}` for two positions.
pub fn range_json(start: Pos, end: Pos) -> Value {
    json!({"start": start.to_json(), "end": end.to_json()})
}

/// Reads an LSP range.
pub fn range_from_json(v: &Value) -> Option<(Pos, Pos)> {
    Some((
        Pos::from_json(v.get("start")?)?,
        Pos::from_json(v.get("end")?)?,
    ))
}

/// The text of one document version with its line index.
#[derive(Clone, Debug, Default)]
pub struct Text {
    s: String,
    line_starts: Vec<usize>,
}

impl Text {
    pub fn new(s: &str) -> Text {
        let s = normalize(s);
        let line_starts = line_starts(&s);
        Text { s, line_starts }
    }

    pub fn as_str(&self) -> &str {
        &self.s
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset where `line` starts (the text length past the last line).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts.get(line).copied().unwrap_or(self.s.len())
    }

    /// Byte offset of the end of `line`, before its newline.
    pub fn line_end(&self, line: usize) -> usize {
        match self.line_starts.get(line + 1) {
            Some(next) => next - 1,
            None => self.s.len(),
        }
    }

    pub fn line(&self, line: usize) -> &str {
        &self.s[self.line_start(line)..self.line_end(line)]
    }

    /// The zero-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Byte offset of an LSP position; columns past the line end clamp to it, lines past the
    /// end clamp to the text length.
    pub fn offset(&self, pos: Pos) -> usize {
        let line = pos.line as usize;
        if line >= self.line_starts.len() {
            return self.s.len();
        }
        let start = self.line_starts[line];
        let mut units = 0u32;
        for (i, c) in self.line(line).char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        self.line_end(line)
    }

    /// The LSP position of byte `offset` (clamped to the text).
    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.s.len());
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let character = self.s[start..offset]
            .chars()
            .map(|c| c.len_utf16() as u32)
            .sum();
        Pos::new(line as u32, character)
    }

    /// The position just past the last character.
    pub fn end_pos(&self) -> Pos {
        self.pos(self.s.len())
    }

    /// The JSON range from byte `a` to byte `b`.
    pub fn range(&self, a: usize, b: usize) -> Value {
        range_json(self.pos(a), self.pos(b))
    }

    /// The `range` and `fullRange` Lean publishes for a message from byte `a` to byte `b`
    /// (`msgToInteractiveDiagnostic`, `Lean/Widget/InteractiveDiagnostic.lean`): a message that
    /// ends on a later line than it starts has its `range` cut at the start of the next line,
    /// so that editors do not underline a block; `fullRange` keeps the extent.
    pub fn message_ranges(&self, a: usize, b: usize) -> (Value, Value) {
        let (start, end) = (self.pos(a), self.pos(b));
        let shown = if end.line > start.line {
            Pos::new(start.line + 1, 0)
        } else {
            end
        };
        (range_json(start, shown), range_json(start, end))
    }

    /// Applies one `contentChanges` entry: `{"text"}` replaces everything, `{"range","text"}`
    /// replaces the range (positions refer to the text as it is before this entry).
    pub fn apply_change(&mut self, change: &Value) -> Result<(), String> {
        let new_text = change
            .get("text")
            .and_then(Value::as_str)
            .ok_or("content change without text")?;
        let new_text = normalize(new_text);
        match change.get("range") {
            None | Some(Value::Null) => self.s = new_text,
            Some(r) => {
                let (a, b) = range_from_json(r).ok_or("malformed range in content change")?;
                let (a, b) = (self.offset(a), self.offset(b));
                if a > b {
                    return Err("content change range ends before it starts".into());
                }
                self.s.replace_range(a..b, &new_text);
            }
        }
        self.line_starts = line_starts(&self.s);
        Ok(())
    }
}

fn normalize(s: &str) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n")
    } else {
        s.to_owned()
    }
}

fn line_starts(s: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(s.match_indices('\n').map(|(i, _)| i + 1));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns() {
        let t = Text::new("def αβγ /- 😉 -/: Nat := 1\nx\n");
        // '😉' is two UTF-16 units.
        let p = t.pos(t.as_str().find(':').unwrap());
        assert_eq!(p, Pos::new(0, 16));
        assert_eq!(t.offset(p), t.as_str().find(':').unwrap());
        assert_eq!(t.end_pos(), Pos::new(2, 0));
        assert_eq!(t.offset(Pos::new(0, 999)), t.line_end(0));
    }

    #[test]
    fn edits() {
        let mut t = Text::new("#check tru\r\n#check fal\r\n");
        assert_eq!(t.as_str(), "#check tru\n#check fal\n");
        t.apply_change(
            &json!({"range": range_json(Pos::new(1, 10), Pos::new(1, 10)), "text": "s"}),
        )
        .unwrap();
        assert_eq!(t.line(1), "#check fals");
        t.apply_change(&json!({"text": "x"})).unwrap();
        assert_eq!(t.as_str(), "x");
    }
}
