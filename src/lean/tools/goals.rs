//! `lean_goals`: the proof goals before or after the tactic at a position, from Lean's stock
//! `$/lean/plainGoal` (lean-stock-speculation.md §B).
//!
//! Contract:
//! 1. Lean answers goals *before* a tactic when asked at its first character, and goals *after*
//!    it when asked anywhere later in it or in its trailing whitespace. So `mode: "before"` asks
//!    at the start of the tactic the position is in, and `mode: "after"` at its end. A tactic is
//!    found on the position's line, between the line's indentation (or a `by`, a `·` bullet, a
//!    `;` or `<;>` before the position) and the next `;`/`<;>` or the end of the line's code,
//!    skipping comments and strings. A tactic spread over several lines is seen from its line.
//! 2. `null` from Lean means no tactic is there: `invalidParams`, saying Lean has no proof
//!    goals at that position.
//! 3. Goals are answered in the goal shape (`session/goals.rs`), with the position Lean was
//!    asked at.

use serde_json::{Value, json};

use super::schema::{LeanTool, character, line, path, read_only, string_enum, version};
use crate::lean::error::HostError;
use crate::lean::session::goals::plain_goals;
use crate::lean::state::HostState;
use crate::lean::text::Position;
use crate::lean::tools::call::LeanCall;
use crate::mcp::{Execution, StatusNotice, ToolSpec};

/// The tool name.
pub const GOALS: &str = "lean_goals";

/// The catalog entry.
pub fn spec() -> ToolSpec {
    LeanTool {
        name: GOALS,
        base: "Inspect Lean goals before or after the tactic at a file position.",
        properties: &[
            ("path", path()),
            ("version", version()),
            ("line", line()),
            ("character", character()),
            (
                "mode",
                string_enum(
                    &["before", "after"],
                    "Goals before the tactic at the position, or after it.",
                ),
            ),
        ],
        required: &["path", "version", "line", "character", "mode"],
        annotations: read_only(),
        execution: Execution::Concurrent,
        status: StatusNotice::WhenSlow,
    }
    .spec()
}

/// Runs `lean_goals`.
pub async fn call(state: &HostState, call: &mut LeanCall<'_>) -> Result<Value, HostError> {
    let runtime = call.runtime(&state.registry).await?;
    let (_pin, synced) = call.document(&runtime).await?;
    let document = synced.document;
    let version = call.args.version()?;
    let mode = call.args.choice("mode", &["before", "after"], None)?;
    let at = call.args.position("line", "character")?;
    call.check_version(&document, version)?;
    let position = call.inside(&document, at)?;
    let (line, character) = (position.line as usize, position.character as usize);
    let text = document.text.split('\n').nth(line).unwrap_or_default();
    let before = mode == "before";
    let column = tactic_column(text, character, before);
    let asked = Position::new(line as u32, column as u32);
    let set = runtime.documents();
    let Some(goals) = plain_goals(set, &document, asked, &call.caller()).await? else {
        return Err(HostError::invalid_params(format!(
            "Lean has no proof goals at {line}:{character} ({} the tactic there, asked at \
             {line}:{column}): the position is not inside a tactic proof",
            mode
        ))
        .with_data(json!({"position": position.to_json(), "asked": asked.to_json()})));
    };
    Ok(json!({"mode": mode, "position": asked.to_json(), "goals": goals}))
}

/// The UTF-16 column to ask Lean at, for the tactic around `character` on `line`.
pub fn tactic_column(line: &str, character: usize, before: bool) -> usize {
    let code = code_units(line);
    // `character` is a UTF-16 column; `at` the index of the code unit there.
    let at = code.iter().take_while(|c| c.1 < character).count();
    // Tactic boundaries: `;`, `<;>`, `by`, and a leading `·`/`.` bullet.
    let is_separator = |i: usize| code[i].0 == ';';
    if before {
        let mut start = 0;
        for i in 0..at.min(code.len()) {
            if is_separator(i) {
                start = i + 1;
            }
            if code[i].0 == 'b' && code.get(i + 1).map(|c| c.0) == Some('y') {
                let boundary_before = i == 0 || !is_ident(code[i - 1].0);
                let boundary_after = code.get(i + 2).is_none_or(|c| !is_ident(c.0));
                if boundary_before && boundary_after && i + 2 <= at {
                    start = i + 2;
                }
            }
        }
        let mut i = start;
        let bullet = |i: usize| {
            matches!(code[i].0, '·' | '>')
                || (code[i].0 == '.' && code.get(i + 1).is_some_and(|c| c.0.is_whitespace()))
        };
        while i < code.len() && (code[i].0.is_whitespace() || bullet(i)) {
            i += 1;
        }
        // A position in the indentation still means the tactic that follows it.
        code.get(i.min(code.len().saturating_sub(1)))
            .map_or(character, |c| c.1)
    } else {
        let mut end = code.len();
        for i in at..code.len() {
            if is_separator(i) || (code[i].0 == '<' && code.get(i + 1).map(|c| c.0) == Some(';')) {
                end = i;
                break;
            }
        }
        while end > 0 && code[end - 1].0.is_whitespace() {
            end -= 1;
        }
        match end {
            0 => character,
            // Just past the tactic's last character: still "after" it (its trailing position).
            _ => code[end - 1].1 + code[end - 1].0.len_utf16(),
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '\'' || c == '.'
}

/// The line's code (a line comment cut, block comments and strings blanked, so they never look
/// like separators), each character with its UTF-16 column.
fn code_units(line: &str) -> Vec<(char, usize)> {
    let mut out = Vec::new();
    let mut column = 0;
    let mut in_string = false;
    // Lean's block comments nest; one left open runs to the end of the line (and beyond).
    let mut comment_depth = 0usize;
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    let mut push = |out: &mut Vec<(char, usize)>, shown: char, width: usize| {
        out.push((shown, column));
        column += width;
    };
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        if comment_depth > 0 {
            push(&mut out, ' ', c.len_utf16());
            if c == '-' && next == Some('/') {
                chars.next();
                push(&mut out, ' ', 1);
                comment_depth -= 1;
            } else if c == '/' && next == Some('-') {
                chars.next();
                push(&mut out, ' ', 1);
                comment_depth += 1;
            }
            continue;
        }
        if !in_string && c == '-' && next == Some('-') {
            break;
        }
        if !in_string && c == '/' && next == Some('-') {
            chars.next();
            push(&mut out, ' ', 1);
            push(&mut out, ' ', 1);
            comment_depth = 1;
            continue;
        }
        if c == '"' {
            in_string = !in_string;
            push(&mut out, c, 1);
        } else if in_string && c == '\\' {
            push(&mut out, 'x', 1);
            if let Some(escaped) = chars.next() {
                push(&mut out, 'x', escaped.len_utf16());
            }
        } else if in_string {
            push(&mut out, 'x', c.len_utf16());
        } else {
            push(&mut out, c, c.len_utf16());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_asks_at_the_tactics_first_character() {
        assert_eq!(tactic_column("  intro a", 5, true), 2);
        assert_eq!(tactic_column("  intro a; apply a", 14, true), 11);
        assert_eq!(tactic_column("example : p := by exact h", 21, true), 18);
        assert_eq!(tactic_column("  · simp", 6, true), 4);
        assert_eq!(tactic_column("  simp [\"a;b\"] -- x; y", 4, true), 2);
        assert_eq!(tactic_column("  . simp", 6, true), 4, "an ASCII bullet");
        assert_eq!(tactic_column("  /- a; b -/ simp", 14, true), 13);
    }

    #[test]
    fn after_asks_at_the_tactics_end() {
        assert_eq!(tactic_column("  intro a", 2, false), 9);
        assert_eq!(tactic_column("  intro a; apply a", 3, false), 9);
        assert_eq!(tactic_column("  rfl  -- done", 2, false), 5);
        assert_eq!(tactic_column("  exact f₁", 2, false), 10);
        assert_eq!(tactic_column("  simp /- x; y -/", 2, false), 6);
        assert_eq!(
            tactic_column("  simp /- x; y", 2, false),
            6,
            "a comment going on"
        );
        assert_eq!(tactic_column("  simp /- x -/ <;> rfl", 2, false), 6);
        assert_eq!(
            tactic_column("  exact 𝓝 x; rfl", 2, false),
            12,
            "UTF-16 columns"
        );
        assert_eq!(tactic_column("  exact 𝓝 x; rfl", 15, true), 14);
    }
}
