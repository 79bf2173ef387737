//! LSP ranges as `lean_todo` compares them, and the rule that decides whether an item lies in
//! the queried range.
//!
//! Contract:
//! 1. Positions are the host's one position type, `text::Position` (zero-based line, UTF-16
//!    character, both `u32`), ordered by line, then character; a range Lean sends with a
//!    number beyond `u32` is no range.
//! 2. An empty query range (start = end) is a *point query*, closed: an item is in it when
//!    `item.start ≤ point ≤ item.end`, so a point at either end of a token still finds it.
//! 3. A non-empty query range `[s, e)` is half-open: an item `[a, b)` is in it when `a < e` and
//!    `s < b` (touching at an end is not overlapping); an empty item `[a, a)` is in it when
//!    `s ≤ a < e`.

use serde_json::{Value, json};

pub use crate::lean::text::Position;

/// An LSP range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (exclusive, as in LSP).
    pub end: Position,
}

impl Range {
    /// A range.
    pub fn new(start: Position, end: Position) -> Range {
        Range { start, end }
    }

    /// Reads an LSP `Range`.
    pub fn from_json(value: &Value) -> Option<Range> {
        Some(Range::new(
            Position::from_json(value.get("start")?)?,
            Position::from_json(value.get("end")?)?,
        ))
    }

    /// The LSP `Range`.
    pub fn to_json(self) -> Value {
        json!({"start": self.start.to_json(), "end": self.end.to_json()})
    }

    /// Whether it is empty (a point).
    pub fn is_empty(self) -> bool {
        self.start >= self.end
    }

    /// Whether `item` lies in this range, taken as a query (see the contract).
    pub fn admits(self, item: Range) -> bool {
        if self.is_empty() {
            let point = self.start;
            return item.start <= point && point <= item.end;
        }
        if item.is_empty() {
            return self.start <= item.start && item.start < self.end;
        }
        item.start < self.end && self.start < item.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: (u32, u32), b: (u32, u32)) -> Range {
        Range::new(Position::new(a.0, a.1), Position::new(b.0, b.1))
    }

    #[test]
    fn a_point_query_is_closed() {
        let token = r((3, 4), (3, 9));
        assert!(r((3, 4), (3, 4)).admits(token), "at its start");
        assert!(r((3, 9), (3, 9)).admits(token), "at its end");
        assert!(r((3, 6), (3, 6)).admits(token), "inside");
        assert!(!r((3, 10), (3, 10)).admits(token));
        assert!(!r((3, 3), (3, 3)).admits(token));
        assert!(r((3, 4), (3, 4)).admits(r((3, 4), (3, 4))), "a point item");
    }

    #[test]
    fn a_range_query_is_half_open() {
        let token = r((3, 4), (3, 9));
        assert!(r((0, 0), (10, 0)).admits(token));
        assert!(r((3, 8), (4, 0)).admits(token), "overlapping its last unit");
        assert!(!r((3, 0), (3, 4)).admits(token), "ending where it starts");
        assert!(!r((3, 9), (4, 0)).admits(token), "starting where it ends");
        assert!(r((3, 0), (3, 5)).admits(token));
        let point = r((5, 2), (5, 2));
        assert!(r((5, 2), (5, 3)).admits(point));
        assert!(!r((5, 0), (5, 2)).admits(point));
    }

    #[test]
    fn positions_order_by_line_then_character() {
        assert!(Position::new(1, 9) < Position::new(2, 0));
        assert!(Position::new(2, 0) < Position::new(2, 1));
        let json = r((1, 2), (3, 4)).to_json();
        assert_eq!(Range::from_json(&json), Some(r((1, 2), (3, 4))));
    }
}
