//! The rules about one diagnostic: its severity, how its `range` relates to its `fullRange`
//! (cut at the next line unless the message keeps its full range, header errors never), and
//! that its positions lie inside the text of the version it was published for.
//!
//! Some diagnostics are Lean's own literals rather than messages and are exempt from the cut
//! and the text bound of `range`: `range` 0:0–1:0 (0:0–0:0 in older workers) with `fullRange`
//! 0:0–end of text, past the text of a one-line file: Lake's setup lines and the stale-import
//! notice (information; `FileWorker.lean` `setupImports`, `handleStaleDependency`) and a worker
//! that failed to start (an error; `initAndRunWorker`'s `writeErrorDiag`). The stale-import
//! notice is sticky: every later version repeats it with the `fullRange` of the text it came
//! with, so an information of that shape is not bound to the version's text at all. Lake's cross-file reports
//! (`source: "Lake"`, no `fullRange`) describe a file as Lake read it from disk, not an open
//! version: only their severity is checked.

use serde_json::Value;

use crate::rules::{HEADER_ERROR, IN_TEXT, RANGE_CUT, SEVERITY};
use crate::text::{Lines, Pos};
use crate::{Found, range};

const NOTICE_RANGES: [(Pos, Pos); 2] = [((0, 0), (1, 0)), ((0, 0), (0, 0))];

/// Checks diagnostic `d` of a publish for a version whose text is `lines` (when known).
pub fn check(d: &Value, lines: Option<&Lines>, found: &mut Found) {
    if !matches!(d.get("severity").and_then(Value::as_u64), Some(1..=3)) {
        found.push(&SEVERITY, "severity is not 1, 2 or 3", d);
    }
    let Some(r) = d.get("range").and_then(range) else {
        found.push(&RANGE_CUT, "no readable `range`", d);
        return;
    };
    let full = d.get("fullRange").and_then(range);
    let Some(full) = full else {
        if d.get("source").and_then(Value::as_str) != Some("Lake") {
            cut_without_full(d, r, found);
            in_text(d, [r.0, r.1], lines, found);
        }
        return;
    };
    let literal = NOTICE_RANGES.contains(&r) && full.0 == (0, 0);
    if literal && d.get("severity").and_then(Value::as_u64) == Some(3) {
        // Sticky (`handleStaleDependency` keeps it in `stickyDiagnosticsRef`): its `fullRange`
        // ends where the text ended when the notice came, and every later version repeats it.
        return;
    }
    if literal && lines.is_none_or(|l| full.1 == l.end()) {
        in_text(d, [full.0, full.1], lines, found);
        return;
    }
    cut(d, r, full, lines, found);
    in_text(d, [r.0, r.1, full.0, full.1], lines, found);
}

/// `msgToInteractiveDiagnostic`: `range` is `fullRange` cut at the next line, or (kept full
/// range) `fullRange` itself; a header error is never kept whole.
fn cut(d: &Value, r: (Pos, Pos), full: (Pos, Pos), lines: Option<&Lines>, found: &mut Found) {
    let (start, end) = full;
    if r.0 != start {
        found.push(
            &RANGE_CUT,
            "`range` does not start where `fullRange` does",
            d,
        );
        return;
    }
    if start.0 == end.0 {
        if r != full {
            found.push(&RANGE_CUT, "one-line `fullRange`, but `range` differs", d);
        }
        return;
    }
    let next_line = (start.0 + 1, 0);
    if r.1 != next_line && r != full {
        found.push(
            &RANGE_CUT,
            "multi-line `fullRange`, but `range` ends neither at the next line's start nor \
             with `fullRange`",
            d,
        );
        return;
    }
    let header = d.get("severity").and_then(Value::as_u64) == Some(1)
        && start == (0, 0)
        && lines.is_some_and(|l| end == l.end());
    if header && r.1 != next_line {
        found.push(
            &HEADER_ERROR,
            "an error over the whole text (a header error) with `range` = `fullRange`",
            d,
        );
    }
}

/// Older Leans send no `fullRange` and cut `range` the same way.
fn cut_without_full(d: &Value, r: (Pos, Pos), found: &mut Found) {
    if r.1.0 > r.0.0 && r.1 != (r.0.0 + 1, 0) {
        found.push(
            &RANGE_CUT,
            "no `fullRange`, and `range` spans lines past the start of the next",
            d,
        );
    }
}

fn in_text<const N: usize>(d: &Value, at: [Pos; N], lines: Option<&Lines>, found: &mut Found) {
    let Some(lines) = lines else {
        return;
    };
    if let Some(p) = at.iter().find(|p| !lines.contains(**p)) {
        let why = format!(
            "position {}:{} is outside the version's text (last position {}:{})",
            p.0,
            p.1,
            lines.end().0,
            lines.end().1
        );
        found.push(&IN_TEXT, &why, d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(a: u64, b: u64, c: u64, d: u64) -> Value {
        json!({"start": {"line": a, "character": b}, "end": {"line": c, "character": d}})
    }

    fn ids(d: Value, text: &str) -> Vec<&'static str> {
        let msg = json!({});
        let mut found = Found::new(&msg);
        check(&d, Some(&Lines::of(text)), &mut found);
        found.into_vec().iter().map(|v| v.rule.id).collect()
    }

    const TEXT: &str = "import A\ntheorem t : True := by\n  trivial\n";

    #[test]
    fn lean_shapes_pass() {
        let cut = json!({"severity": 1, "range": r(1, 8, 2, 0), "fullRange": r(1, 8, 2, 9)});
        assert_eq!(ids(cut, TEXT), Vec::<&str>::new());
        let kept = json!({"severity": 1, "range": r(1, 8, 2, 9), "fullRange": r(1, 8, 2, 9)});
        assert_eq!(ids(kept, TEXT), Vec::<&str>::new());
        let header = json!({"severity": 1, "range": r(0, 0, 1, 0), "fullRange": r(0, 0, 3, 0)});
        assert_eq!(ids(header, TEXT), Vec::<&str>::new());
        let one_line = json!({"severity": 1, "range": r(0, 0, 0, 8), "fullRange": r(0, 0, 0, 8)});
        assert_eq!(ids(one_line, "import A"), Vec::<&str>::new());
        let setup = json!({"severity": 3, "range": r(0, 0, 1, 0), "fullRange": r(0, 0, 0, 8)});
        assert_eq!(ids(setup, "import A"), Vec::<&str>::new());
        let start_failed =
            json!({"severity": 1, "range": r(0, 0, 1, 0), "fullRange": r(0, 0, 0, 8)});
        assert_eq!(ids(start_failed, "import A"), Vec::<&str>::new());
        let lake = json!({"severity": 2, "source": "Lake", "range": r(7, 0, 9, 4)});
        assert_eq!(ids(lake, TEXT), Vec::<&str>::new());
        // The stale-import notice of a longer earlier version, repeated with this one.
        let sticky = json!({"severity": 3, "range": r(0, 0, 1, 0), "fullRange": r(0, 0, 21, 0)});
        assert_eq!(ids(sticky, TEXT), Vec::<&str>::new());
    }

    #[test]
    fn shapes_lean_never_sends_fail() {
        let whole = json!({"severity": 1, "range": r(0, 0, 3, 0), "fullRange": r(0, 0, 3, 0)});
        assert_eq!(ids(whole, TEXT), ["diagnostic.header-error"]);
        let uncut = json!({"severity": 2, "range": r(1, 8, 2, 3), "fullRange": r(1, 8, 2, 9)});
        assert_eq!(ids(uncut, TEXT), ["diagnostic.range-cut"]);
        let short = json!({"severity": 2, "range": r(1, 8, 1, 9), "fullRange": r(1, 8, 1, 12)});
        assert_eq!(ids(short, TEXT), ["diagnostic.range-cut"]);
        let outside =
            json!({"severity": 3, "range": r(2, 20, 2, 20), "fullRange": r(2, 20, 2, 20)});
        assert_eq!(ids(outside, TEXT), ["position.in-text"]);
        let hint = json!({"severity": 4, "range": r(0, 0, 0, 1), "fullRange": r(0, 0, 0, 1)});
        assert_eq!(ids(hint, TEXT), ["diagnostic.severity"]);
        let failed_start_elsewhere =
            json!({"severity": 1, "range": r(0, 0, 1, 0), "fullRange": r(0, 0, 21, 0)});
        assert_eq!(ids(failed_start_elsewhere, TEXT), ["position.in-text"]);
        let old = json!({"severity": 1, "range": r(0, 0, 3, 0)});
        assert_eq!(ids(old, TEXT), ["diagnostic.range-cut"]);
    }
}
