//! What a text states, read from the lexer, and what an edit changes of it: the comparison
//! behind `lean_try_edit`'s `statement_changed`.
//!
//! Contract:
//! 1. A text *states* the sequence of its commands (`declarations::entries`, which begins one
//!    wherever Lean would, indented or inside a line; a command of comments alone states
//!    nothing), each normalized (`words`: comments and layout do not
//!    count): a declaration by its full name and its statement (everything before its body,
//!    `declarations` 2, which holds its modifiers, attributes, keyword, name, binders and type;
//!    all of a `structure`, `class`, `inductive` or `coinductive`, whose fields and constructors
//!    are declarations too); any other command whole (`namespace`, `section`, `end`, `open`,
//!    `variable`, `universe`, `set_option`, `notation`, `macro`, `attribute`, `#eval`, …: each
//!    may change what the commands after it mean).
//! 2. [`statement_changes`] of an edit of `[from, to)` of the base: none exactly when the result
//!    states the same sequence as the base and no definition's *value* changed, where a value
//!    is the body of a `def`, `abbrev`, `instance` or `opaque` that the edit meets but does not
//!    lie within (an edit of one definition's body is that definition's; one that reaches past
//!    it may not change it unseen).
//! 3. The sequences are compared by their common beginning and end and, between them, their
//!    longest common subsequence (or none, past [`MAX_CELLS`]); what is left over is paired, in
//!    the result's order: the same full name (`restated`, or `moved` when the statement is the
//!    same too; `axiom_added` when it became an `axiom`); then the same keyword and statement
//!    under another full name (`renamed`, `was` the old name; an unnamed declaration: the same
//!    statement, `moved`); then a command other than a declaration with the same first word
//!    (`scope_changed`, `command` now and `was` before). What is left is `added`
//!    (`axiom_added` for an `axiom`) or `scope_changed` with `command` alone, and, from the
//!    base, `removed` or `scope_changed` with `was` alone. Each change names the line its
//!    command starts on: in the base for what only the base has, else in the result. Changes
//!    come in the result's order, then the base's leftovers in the base's.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};

use super::declarations::{Command, entries, index_of};
use super::lexer::Lexed;
use super::names::first_word;
use super::words::normalized_range;
use crate::lean::text::Position;

/// The most cells of the longest-common-subsequence table compared (see the contract).
pub const MAX_CELLS: usize = 1 << 20;

/// The most characters of a command a change shows.
pub const MAX_COMMAND_CHARS: usize = 200;

/// Declarations whose body is part of their statement (see the contract).
const WHOLE: [&str; 4] = ["structure", "class", "inductive", "coinductive"];

/// Declarations whose body is a value later statements may depend on.
const VALUES: [&str; 4] = ["def", "abbrev", "instance", "opaque"];

/// What changed (see the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    /// A declaration only the result has.
    Added,
    /// An `axiom` only the result has, or a declaration made one.
    AxiomAdded,
    /// A declaration only the base has.
    Removed,
    /// The same full name, another statement.
    Restated,
    /// The same statement, another full name.
    Renamed,
    /// The same name and statement, elsewhere among the commands.
    Moved,
    /// A definition's value, changed by an edit reaching past it.
    ValueChanged,
    /// A command other than a declaration added, removed or changed.
    ScopeChanged,
}

impl Difference {
    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Difference::Added => "added",
            Difference::AxiomAdded => "axiom_added",
            Difference::Removed => "removed",
            Difference::Restated => "restated",
            Difference::Renamed => "renamed",
            Difference::Moved => "moved",
            Difference::ValueChanged => "value_changed",
            Difference::ScopeChanged => "scope_changed",
        }
    }
}

/// One change (see the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed.
    pub changed: Difference,
    /// The line its command starts on (see the contract).
    pub line: u32,
    /// The declaration's keyword.
    pub kind: Option<&'static str>,
    /// The declaration's full name.
    pub name: Option<String>,
    /// What it was: a renamed declaration's full name, a changed command's text.
    pub was: Option<String>,
    /// A command's text, as the result has it.
    pub command: Option<String>,
}

/// What an edit of `[from, to)` of `base` that made `result` changes of what it states (see
/// the contract).
pub fn statement_changes(base: &str, result: &str, from: Position, to: Position) -> Vec<Change> {
    let (base_lexed, result_lexed) = (Lexed::new(base), Lexed::new(result));
    let (b, r) = (stated(&base_lexed), stated(&result_lexed));
    let same = |i: usize, j: usize| b[i].hash == r[j].hash && b[i].key() == r[j].key();
    let mut head = 0;
    while head < b.len().min(r.len()) && same(head, head) {
        head += 1;
    }
    let mut tail = 0;
    while tail < (b.len() - head).min(r.len() - head)
        && same(b.len() - 1 - tail, r.len() - 1 - tail)
    {
        tail += 1;
    }
    let (b_mid, r_mid) = (head..b.len() - tail, head..r.len() - tail);
    let common = common_subsequence(b_mid.clone(), r_mid.clone(), same);
    let mut pairs: Vec<(usize, usize)> = (0..head).map(|k| (k, k)).collect();
    pairs.extend(common.iter().copied());
    pairs.extend((0..tail).map(|k| (b.len() - 1 - k, r.len() - 1 - k)));
    let (mut b_common, mut r_common) = (vec![false; b.len()], vec![false; r.len()]);
    for &(i, j) in &common {
        (b_common[i], r_common[j]) = (true, true);
    }
    let mut b_left: Vec<Option<usize>> = b_mid.filter(|&i| !b_common[i]).map(Some).collect();
    let r_left: Vec<usize> = r_mid.filter(|&j| !r_common[j]).collect();
    let mut paired: Vec<Option<usize>> = vec![None; r_left.len()];
    for key in [Stated::by_name, Stated::by_statement, Stated::by_word] {
        pair_by(
            &mut b_left,
            &r_left,
            &mut paired,
            |i| key(&b[i]),
            |j| key(&r[j]),
        );
    }
    let mut changes: Vec<Change> = r_left
        .iter()
        .zip(&paired)
        .map(|(&j, was)| change(was.map(|i| &b[i]), &r[j]))
        .collect();
    let own = b
        .iter()
        .position(|s| s.command.start <= from && last(from, to) < s.command.end);
    for (i, j) in pairs {
        let meets = b[i].command.start <= to && from < b[i].command.end;
        if Some(i) != own && meets && b[i].value(&base_lexed) != r[j].value(&result_lexed) {
            changes.push(Change {
                changed: Difference::ValueChanged,
                line: r[j].command.start.line,
                kind: r[j].kind,
                name: r[j].full.clone(),
                was: None,
                command: None,
            });
        }
    }
    changes.sort_by_key(|c| c.line);
    changes.extend(b_left.iter().flatten().map(|&i| gone(&b[i])));
    changes
}

/// Pairs each result leftover not paired yet with the first base leftover not paired yet of
/// the same key, if any.
fn pair_by<K: Hash + Eq>(
    b_left: &mut [Option<usize>],
    r_left: &[usize],
    paired: &mut [Option<usize>],
    b_key: impl Fn(usize) -> Option<K>,
    r_key: impl Fn(usize) -> Option<K>,
) {
    let mut unpaired: HashMap<K, VecDeque<usize>> = HashMap::new();
    for (k, i) in b_left.iter().enumerate() {
        if let Some(key) = i.and_then(&b_key) {
            unpaired.entry(key).or_default().push_back(k);
        }
    }
    for (k, &j) in r_left.iter().enumerate() {
        if paired[k].is_some() {
            continue;
        }
        let found = r_key(j).and_then(|key| unpaired.get_mut(&key)?.pop_front());
        paired[k] = found.and_then(|at| b_left[at].take());
    }
}

/// The last character of an edit of `[from, to)`, or `from` when it is empty (as near as
/// positions tell: the edit's last line is enough to know the command holding it).
fn last(from: Position, to: Position) -> Position {
    if to > from && to.character == 0 {
        Position::new(to.line - 1, u32::MAX)
    } else if to > from {
        Position::new(to.line, to.character - 1)
    } else {
        from
    }
}

/// What the result `now` has in place of the base's `was`, if any (see the contract).
fn change(was: Option<&Stated>, now: &Stated) -> Change {
    let axiom = now.kind == Some("axiom") && was.is_none_or(|was| was.kind != Some("axiom"));
    let changed = match (was, now.kind) {
        (_, Some(_)) if axiom => Difference::AxiomAdded,
        (None, Some(_)) => Difference::Added,
        (Some(was), Some(_)) if was.full != now.full => Difference::Renamed,
        (Some(was), Some(_)) if was.statement == now.statement => Difference::Moved,
        (Some(_), Some(_)) => Difference::Restated,
        (_, None) => Difference::ScopeChanged,
    };
    let declaration = now.kind.is_some();
    Change {
        changed,
        line: now.command.start.line,
        kind: now.kind,
        name: now.full.clone(),
        was: match (changed, was) {
            (Difference::Renamed, Some(was)) => was.full.clone(),
            (Difference::ScopeChanged, Some(was)) => Some(bounded(&was.statement)),
            _ => None,
        },
        command: (!declaration).then(|| bounded(&now.statement)),
    }
}

/// What only the base has.
fn gone(was: &Stated) -> Change {
    let declaration = was.kind.is_some();
    Change {
        changed: match declaration {
            true => Difference::Removed,
            false => Difference::ScopeChanged,
        },
        line: was.command.start.line,
        kind: was.kind,
        name: was.full.clone(),
        was: (!declaration).then(|| bounded(&was.statement)),
        command: None,
    }
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_COMMAND_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// One command as a text states it (see the contract).
struct Stated {
    /// A declaration's keyword; `None` for another command.
    kind: Option<&'static str>,
    /// A declaration's full name.
    full: Option<String>,
    /// Its statement, normalized.
    statement: String,
    /// Its statement without its name, normalized (to know a renamed declaration).
    unnamed: String,
    /// Its first word, of a command other than a declaration.
    first: Option<String>,
    /// The command.
    command: Command,
    /// A definition's value: the characters of its body.
    value: Option<(usize, usize)>,
    /// A hash of [`Stated::key`].
    hash: u64,
}

impl Stated {
    /// What two texts compare.
    fn key(&self) -> (&Option<String>, &str) {
        (&self.full, &self.statement)
    }

    /// A declaration's full name, to pair the restated and the moved.
    fn by_name(&self) -> Option<String> {
        self.full.clone().filter(|_| self.kind.is_some())
    }

    /// A declaration's keyword and statement without its name, to pair the renamed.
    fn by_statement(&self) -> Option<String> {
        self.kind.map(|kind| format!("{kind} {}", self.unnamed))
    }

    /// Another command's first word, to pair a command with what it was.
    fn by_word(&self) -> Option<String> {
        match self.kind {
            Some(_) => None,
            None => Some(self.first.clone().unwrap_or_default()),
        }
    }

    /// Its value, normalized.
    fn value(&self, lexed: &Lexed) -> Option<String> {
        self.value
            .map(|(from, to)| normalized_range(lexed, from, to))
    }
}

/// What `lexed` states, in order (see the contract).
fn stated(lexed: &Lexed) -> Vec<Stated> {
    let mut out = Vec::new();
    for entry in entries(lexed) {
        let command = entry.command;
        let (from, code_end) = (
            index_of(lexed, command.start),
            index_of(lexed, command.code_end),
        );
        let kind = entry.declared.as_ref().map(|d| d.kind);
        let whole = kind.is_none_or(|kind| WHOLE.contains(&kind));
        let body = command.body.map(|b| index_of(lexed, b)).filter(|_| !whole);
        let end = body.unwrap_or(code_end);
        let statement = normalized_range(lexed, from, end);
        if statement.is_empty() {
            continue;
        }
        let name = entry.declared.as_ref().and_then(|d| d.name.as_ref());
        let unnamed = name.map_or_else(
            || statement.clone(),
            |name| {
                let before = normalized_range(lexed, from, name.from);
                format!("{before} {}", normalized_range(lexed, name.to, end))
            },
        );
        let first = match kind {
            Some(_) => None,
            None => {
                first_word(lexed, from, code_end).map(|(a, b)| lexed.chars[a..b].iter().collect())
            }
        };
        let mut hasher = DefaultHasher::new();
        (&entry.full, &statement).hash(&mut hasher);
        out.push(Stated {
            kind,
            value: body
                .filter(|_| kind.is_some_and(|k| VALUES.contains(&k)))
                .map(|b| (b, code_end)),
            full: entry.full,
            statement,
            unnamed,
            first,
            command,
            hash: hasher.finish(),
        });
    }
    out
}

/// The longest common subsequence of `b` and `r` under `same`, as index pairs in order (none
/// past [`MAX_CELLS`]).
fn common_subsequence(
    b: std::ops::Range<usize>,
    r: std::ops::Range<usize>,
    same: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let (n, m) = (b.len(), r.len());
    if n == 0 || m == 0 || n.saturating_mul(m) > MAX_CELLS {
        return Vec::new();
    }
    // lengths[x * (m + 1) + y]: the longest common subsequence of b[x..] and r[y..].
    let mut lengths = vec![0u32; (n + 1) * (m + 1)];
    let at = |x: usize, y: usize| x * (m + 1) + y;
    for x in (0..n).rev() {
        for y in (0..m).rev() {
            lengths[at(x, y)] = if same(b.start + x, r.start + y) {
                lengths[at(x + 1, y + 1)] + 1
            } else {
                lengths[at(x + 1, y)].max(lengths[at(x, y + 1)])
            };
        }
    }
    let (mut x, mut y, mut pairs) = (0, 0, Vec::new());
    while x < n && y < m {
        if same(b.start + x, r.start + y) {
            pairs.push((b.start + x, r.start + y));
            (x, y) = (x + 1, y + 1);
        } else if lengths[at(x + 1, y)] >= lengths[at(x, y + 1)] {
            x += 1;
        } else {
            y += 1;
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lean::text::position_at;

    const BASE: &str = "namespace N\n\n/-- One more. -/\ndef f (n : Nat) : Nat := n + 1\n\ntheorem a : f 0 = 1 := rfl\n\ntheorem b (p : Prop) (hp : p) : p := hp\n\nexample : True := trivial\n\nend N\n";

    /// `BASE` with `old` (once in it) replaced by `new`: each change as `(change, line, name,
    /// was, command)`.
    fn edited(old: &str, new: &str) -> Vec<(&'static str, u32, Option<String>, Option<String>)> {
        edit(BASE, old, new)
            .into_iter()
            .map(|c| {
                let detail = c
                    .command
                    .or(c.was.filter(|_| c.changed != Difference::Renamed));
                (c.changed.name(), c.line, c.name, detail)
            })
            .collect()
    }

    fn edit(base: &str, old: &str, new: &str) -> Vec<Change> {
        assert_eq!(base.matches(old).count(), 1, "{old}");
        let at = base.find(old).unwrap();
        let result = format!("{}{new}{}", &base[..at], &base[at + old.len()..]);
        let (from, to) = (position_at(base, at), position_at(base, at + old.len()));
        statement_changes(base, &result, from, to)
    }

    fn one(
        change: &'static str,
        line: u32,
        name: &str,
    ) -> (&'static str, u32, Option<String>, Option<String>) {
        (change, line, Some(name.to_owned()), None)
    }

    #[test]
    fn bodies_comments_and_layout_state_nothing_new() {
        assert_eq!(edited("rfl", "by simp"), []);
        assert_eq!(
            edited("n + 1", "1 + n"),
            [],
            "an edit of f's value alone is f's"
        );
        assert_eq!(
            edited(" : p := hp", "\n    : p -- why\n    := by exact hp"),
            []
        );
        assert_eq!(edited("/-- One more. -/\n", ""), []);
        assert_eq!(
            edited("rfl\n\ntheorem b", "rfl\n-- note\n/- c -/\ntheorem b"),
            []
        );
        let both = "rfl\n\ntheorem b (p : Prop) (hp : p) : p := id hp";
        assert_eq!(
            edited("rfl\n\ntheorem b (p : Prop) (hp : p) : p := hp", both),
            []
        );
    }

    #[test]
    fn an_edit_reaching_past_its_declaration_shows_what_it_did_there() {
        let reach = "rfl\n\ntheorem b (p : Prop) (hp : p) : p := hp";
        assert_eq!(edited(reach, "rfl"), [one("removed", 7, "N.b")]);
        let restated = "rfl\n\ntheorem b : True := trivial";
        assert_eq!(edited(reach, restated), [one("restated", 7, "N.b")]);
        let from_axiom = "rfl\n\naxiom cheat (p : Prop) : p → p\n\ntheorem b (p : Prop) (hp : p) : p := cheat p hp";
        let added = ("axiom_added", 7, Some("N.cheat".to_owned()), None);
        assert_eq!(edited(reach, from_axiom), [added]);
        assert_eq!(
            edited(
                "theorem b (p : Prop) (hp : p) : p := hp",
                "axiom b (p : Prop) (hp : p) : p"
            ),
            [one("axiom_added", 7, "N.b")]
        );
        let inserted = "rfl\n\ntheorem x : False := sorry";
        assert_eq!(edited("rfl", inserted), [one("added", 7, "N.x")]);
        assert_eq!(
            edited("rfl\n\ntheorem b", "rfl\n\ntheorem c"),
            [one("renamed", 7, "N.c")]
        );
        let renamed = edit(BASE, "rfl\n\ntheorem b", "rfl\n\ntheorem c");
        assert_eq!(renamed[0].was.as_deref(), Some("N.b"));
        assert_eq!(
            edited("\n\nexample : True := trivial", ""),
            [("removed", 9, None, None)]
        );
        assert_eq!(
            edited("theorem a :", "private theorem a :"),
            [one("restated", 5, "N.a")]
        );
        let prefixed = "set_option pp.all true in\ntheorem b";
        assert_eq!(edited("theorem b", prefixed), [one("restated", 7, "N.b")]);
        assert_eq!(
            edited("theorem b", "@[simp] theorem b"),
            [one("restated", 7, "N.b")]
        );
    }

    #[test]
    fn a_command_hidden_inside_another_is_read_where_lean_begins_it() {
        // Lean begins a command at its reserved word wherever it stands: indented, or on the
        // line of the proof before it.
        let hidden = [
            ("rfl\n  axiom cheat : False", 6),
            ("rfl axiom cheat : False", 5),
            (
                "by\n    exact rfl\n  @[simp] private axiom cheat : False",
                7,
            ),
        ];
        for (text, line) in hidden {
            assert_eq!(
                edited("rfl", text),
                [("axiom_added", line, Some("N.cheat".to_owned()), None)],
                "{text}"
            );
        }
        let eval = edit(BASE, "rfl", "rfl\n  #eval 1");
        assert_eq!(eval[0].command.as_deref(), Some("#eval 1"), "{eval:?}");
        assert_eq!(
            edited("rfl", "by\n  exact rfl\n  theorem x : False := sorry"),
            [one("added", 7, "N.x")]
        );
        // Scoping a tactic is no command, nor a `#` tactic.
        assert_eq!(edited("rfl", "by\n  #check f\n  rfl"), []);
        assert_eq!(edited("rfl", "by\n  open Nat in\n  simp"), []);
        assert_eq!(
            edited("rfl", "by\n  set_option maxHeartbeats 400 in simp"),
            []
        );
        // Nor a reserved word inside brackets or a literal.
        assert_eq!(edited("rfl", "by\n  exact (show True from trivial)"), []);
        let quoted = "class inductive C | a\n\nderiving instance Repr for C\n";
        assert_eq!(
            edit(quoted, "| a", "| a | b")[0].changed,
            Difference::Restated
        );
        assert_eq!(
            edit(quoted, "Repr", "BEq")[0].was.as_deref(),
            Some("deriving instance Repr for C")
        );
    }

    #[test]
    fn commands_that_change_what_later_statements_mean_are_changes() {
        let command = |change, line, text: &str| (change, line, None, Some(text.to_owned()));
        assert_eq!(
            edited("rfl\n", "rfl\n\nopen Nat\n"),
            [command("scope_changed", 7, "open Nat")]
        );
        assert_eq!(
            edited("rfl\n", "rfl\n\nattribute [simp] a\n"),
            [command("scope_changed", 7, "attribute [simp] a")]
        );
        assert_eq!(
            edited("rfl\n", "rfl\n\ninstance : Inhabited Nat := ⟨1⟩\n"),
            [("added", 7, None, None)]
        );
        assert_eq!(
            edited("rfl\n", "rfl\n\nnotation \"𝟙\" => 2\n"),
            [command("scope_changed", 7, "notation \"𝟙\" => 2")]
        );
        // A namespace renamed: each declaration in it, and the commands that name it.
        let renamed = edit(BASE, "namespace N", "namespace M");
        let names: Vec<(&str, Option<&str>, Option<&str>)> = renamed
            .iter()
            .map(|c| (c.changed.name(), c.name.as_deref(), c.was.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("scope_changed", None, Some("namespace N")),
                ("renamed", Some("M.f"), Some("N.f")),
                ("renamed", Some("M.a"), Some("N.a")),
                ("renamed", Some("M.b"), Some("N.b")),
            ],
            "{renamed:?}"
        );
        let closed_early = edit(BASE, "rfl\n", "rfl\n\nend N\n");
        let changed: Vec<&str> = closed_early.iter().map(|c| c.changed.name()).collect();
        assert_eq!(changed, ["scope_changed", "renamed"], "{closed_early:?}");
        assert_eq!(closed_early[1].name.as_deref(), Some("b"));
    }

    #[test]
    fn a_value_changed_by_an_edit_reaching_past_it_is_a_change() {
        let reach = "n + 1\n\ntheorem a : f 0 = 1 := rfl";
        assert_eq!(
            edited(reach, "n + 2\n\ntheorem a : f 0 = 1 := by decide"),
            [one("value_changed", 2, "N.f")],
            "its command starts at its doc comment"
        );
        assert_eq!(
            edited(reach, "n + 1\n\ntheorem a : f 0 = 1 := by decide"),
            []
        );
    }

    #[test]
    fn moves_are_changes() {
        let text = "theorem a : True := trivial\n\ntheorem b : True := trivial\n\ntheorem c : True := trivial\n";
        let swapped = edit(
            text,
            "theorem a : True := trivial\n\ntheorem b",
            "theorem b : True := trivial\n\ntheorem a",
        );
        let changed: Vec<(&str, Option<&str>)> = swapped
            .iter()
            .map(|c| (c.changed.name(), c.name.as_deref()))
            .collect();
        assert_eq!(changed, [("moved", Some("a"))], "{swapped:?}");
        let open = "open Nat\n\ntheorem a : True := trivial\n";
        let below = edit(
            open,
            "open Nat\n\ntheorem a : True := trivial",
            "theorem a : True := trivial\n\nopen Nat",
        );
        assert!(!below.is_empty(), "a statement moved out of an `open`");
    }

    #[test]
    fn declarations_are_read_where_lean_files_put_them() {
        // Inside an indented `mutual` block, after `noncomputable section` (which `end` closes,
        // not the namespace), quoted, from the root, structures whole.
        let text = "namespace N\nnoncomputable section\nmutual\n  def even : Nat → Bool\n    | 0 => true\n    | n + 1 => odd n\n  def odd : Nat → Bool\n    | 0 => false\n    | n + 1 => even n\nend\nend\ntheorem «my thm» : True := trivial\ntheorem _root_.top : True := trivial\nstructure P where\n  x : Nat\nend N\n";
        let restated = edit(text, "def odd : Nat → Bool", "def odd : Nat → Nat");
        assert_eq!(restated[0].name.as_deref(), Some("N.odd"), "{restated:?}");
        assert_eq!(restated[0].changed, Difference::Restated);
        assert_eq!(edit(text, "| 0 => false", "| 0 => true"), []);
        let quoted = edit(text, "«my thm» : True", "«my thm» : False");
        assert_eq!(quoted[0].name.as_deref(), Some("N.«my thm»"));
        let rooted = edit(text, "top : True", "top : False");
        assert_eq!(rooted[0].name.as_deref(), Some("top"));
        let field = edit(text, "x : Nat", "x : Int");
        assert_eq!(
            (field[0].changed, field[0].name.as_deref()),
            (Difference::Restated, Some("N.P"))
        );
    }
}
