//! `lean_try_edit` against an oracle: several hundred generated edits over the fixture files
//! (tactic replacements, deletions, insertions, statement edits, `sorry`, errors in another
//! declaration, random ranges), each tried with `lean_try_edit` and also written to a copy on
//! disk and synced with `lean_sync` as a fresh document. The oracle here computes each verdict
//! from that sync's diagnostics and the base's, by the rules the tool documents, with its own
//! reading of where commands start and what they declare (lines, not the host's lexer): the
//! copy asks Lean `#print axioms` of the declarations the edit touches, as the tool does, and a
//! declaration closes only when Lean's answer lists no `sorryAx`. The verdicts must agree every
//! time, no candidate may be `closed` that the oracle does not close, and the candidate's
//! diagnostics must be the copy's, range for range. The oracle also reads, its own way, whether
//! each edit changes what the file states (`statements`): the gate's `statement_changed` must
//! agree, and a candidate that changes a statement is never `closed`.

mod statements;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::try_edit::{replace, try_edit};

/// A file the oracle's edits are made over, beside the fixture's own.
const PROOFS: &str = "namespace Fixture.Oracle

theorem swap (p q : Prop) (hp : p) (hq : q) : q ∧ p := by
  constructor
  · exact hq
  · exact hp

theorem imp (p q : Prop) (hq : q) : p → q := by
  intro hp
  exact hq

theorem both (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  exact hp
  exact hq

theorem left_or (p q : Prop) (hp : p) : p ∨ q := by
  left
  exact hp

def uses := 1

end Fixture.Oracle
";

/// Texts a tactic is replaced with or followed by.
const TACTICS: [&str; 16] = [
    "exact ⟨hq, hp⟩",
    "exact ⟨hp, hq⟩",
    "constructor",
    "simp",
    "sorry",
    "skip",
    "exact hp",
    "exact hq",
    "intro h",
    "left",
    "right",
    "trivial",
    "exact hq -- fake: error \"type mismatch\"",
    "done",
    "assumption",
    "constructor\n  · exact hp\n  · exact hq",
];

/// Texts a random range is replaced with.
const PIECES: [&str; 10] = [
    "",
    "x",
    " ",
    "\n",
    "sorry",
    "hp",
    "(r : Prop) ",
    "-- note\n",
    "exact hq",
    "\n  skip",
];

/// Commands inserted before a declaration.
const COMMANDS: [&str; 5] = [
    "axiom extra : False\n\n",
    "theorem extra : True := trivial\n\n",
    "open Nat\n\n",
    "example : True := trivial\n\n",
    "-- a comment alone\n\n",
];

/// A small deterministic generator (an LCG): the same edits on every run.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// One generated edit of a file.
#[derive(Debug, Clone)]
struct Edit {
    kind: &'static str,
    from: (u64, u64),
    to: (u64, u64),
    text: String,
}

/// The UTF-16 length of a line.
fn width(line: &str) -> u64 {
    line.encode_utf16().count() as u64
}

/// Edits of `text` (see the module's doc).
fn edits(text: &str, draw: &mut Draw) -> Vec<Edit> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut edits = Vec::new();
    let edit = |kind, from, to, text: &str| Edit {
        kind,
        from,
        to,
        text: text.to_owned(),
    };
    let is_declaration = |line: &str| line.starts_with("theorem ") || line.starts_with("def ");
    for (n, line) in lines.iter().enumerate() {
        let next = (n + 1..lines.len()).find(|&k| is_declaration(lines[k]));
        if let Some(next) = next.filter(|_| is_declaration(line)) {
            reaching(&lines, n, next, draw, &mut edits);
        }
        let n = n as u64;
        let indent = (line.len() - line.trim_start().len()) as u64;
        let tactic = indent == 2 && !line.trim().is_empty() && !line.contains(" : ");
        if tactic {
            let end = (n, width(line));
            for _ in 0..3 {
                let with = TACTICS[draw.below(TACTICS.len())];
                edits.push(edit("replace", (n, 2), end, with));
            }
            edits.push(edit("delete", (n, 0), (n + 1, 0), ""));
            let after = format!("\n  {}", TACTICS[draw.below(TACTICS.len())]);
            edits.push(edit("insert", end, end, &after));
            edits.push(edit("sorry", (n, 2), end, "sorry"));
        }
        if is_declaration(line) {
            let body = line
                .find(":=")
                .map_or(width(line), |b| line[..b].encode_utf16().count() as u64);
            let at = 8 + draw.below((body as usize).saturating_sub(9).max(1)) as u64;
            edits.push(edit("statement", (n, at), (n, at + 1), "x"));
            edits.push(edit("statement", (n, at), (n, at), "r"));
            edits.push(edit(
                "elsewhere",
                (n, 0),
                (n, 0),
                "-- fake: error \"boom\"\n",
            ));
            edits.push(edit(
                "elsewhere",
                (n, width(line)),
                (n, width(line)),
                " -- fake: error \"boom here\"",
            ));
        }
    }
    // Random ranges over the whole file.
    for _ in 0..24 {
        let a = draw.below(lines.len()) as u64;
        let b = (a + draw.below(3) as u64).min(lines.len() as u64 - 1);
        let ca = draw.below(width(lines[a as usize]) as usize + 1) as u64;
        let cb = draw.below(width(lines[b as usize]) as usize + 1) as u64;
        let (from, to) = if (a, ca) <= (b, cb) {
            ((a, ca), (b, cb))
        } else {
            ((b, cb), (a, ca))
        };
        let with = PIECES[draw.below(PIECES.len())];
        if utf16_boundary(&lines, from) && utf16_boundary(&lines, to) {
            edits.push(edit("random", from, to, with));
        }
    }
    edits
}

/// Edits that reach from the declaration on line `n` past it, into the one on line `next`:
/// one that deletes the next one's first line, one that replaces the last tactic of the first
/// and keeps the next one as it was, an axiom indented under the first one's proof, and a
/// command inserted before the next one.
fn reaching(lines: &[&str], n: usize, next: usize, draw: &mut Draw, edits: &mut Vec<Edit>) {
    let end = |k: usize| (k as u64, width(lines[k]));
    let edit = |from, to, text: String| Edit {
        kind: "reach",
        from,
        to,
        text,
    };
    edits.push(edit(end(n), end(next), String::new()));
    let last = (n + 1..next).rev().find(|&k| !lines[k].trim().is_empty());
    if let Some(last) = last.filter(|&k| lines[k].starts_with("  ")) {
        let text = format!("sorry\n\n{}", lines[next]);
        edits.push(edit((last as u64, 2), end(next), text));
        // A command Lean begins at its keyword, indented under the proof.
        edits.push(edit(
            end(last),
            end(last),
            "\n  axiom hidden : False".into(),
        ));
    }
    let command = COMMANDS[draw.below(COMMANDS.len())].to_owned();
    edits.push(edit((next as u64, 0), (next as u64, 0), command));
}

/// Whether a position is between two characters (not inside a surrogate pair).
fn utf16_boundary(lines: &[&str], (line, character): (u64, u64)) -> bool {
    let mut at = 0u64;
    for c in lines[line as usize].chars() {
        if at == character {
            return true;
        }
        at += c.len_utf16() as u64;
    }
    at == character
}

/// `text` with `edit` applied.
fn applied(text: &str, edit: &Edit) -> String {
    let offset = |(line, character): (u64, u64)| {
        let start: usize = text
            .split('\n')
            .take(line as usize)
            .map(|l| l.len() + 1)
            .sum();
        let line_text = text.split('\n').nth(line as usize).unwrap_or("");
        let mut units = 0u64;
        let mut bytes = 0;
        for c in line_text.chars() {
            if units >= character {
                break;
            }
            units += c.len_utf16() as u64;
            bytes += c.len_utf8();
        }
        start + bytes
    };
    let (a, b) = (offset(edit.from), offset(edit.to));
    format!("{}{}{}", &text[..a], edit.text, &text[b..])
}

/// The oracle's own reading: the lines commands start on. A line opens a command when its
/// first column holds a letter, `@`, `#` or a doc comment (`/--`, `/-!`), outside a block
/// comment; plain comments and indented lines belong to the command before.
fn command_lines(text: &str) -> Vec<u64> {
    let mut starts = vec![0];
    let mut depth = 0usize;
    for (n, line) in text.split('\n').enumerate() {
        let opens = depth == 0
            && (line.starts_with(|c: char| c.is_alphabetic() || c == '@' || c == '#')
                || line.starts_with("/--")
                || line.starts_with("/-!"))
            && !["where", "deriving", "with", "then", "else", "fun", "by"]
                .iter()
                .any(|w| line.split_whitespace().next() == Some(w));
        if opens && n > 0 {
            starts.push(n as u64);
        }
        depth += line.matches("/-").count();
        depth = depth.saturating_sub(line.matches("-/").count());
    }
    starts.dedup();
    starts
}

/// The lines `[first, end)` of the commands from the one holding `from` to the one holding
/// the character before `to` (the oracle's reading).
fn declaration(text: &str, from: (u64, u64), to: (u64, u64)) -> (u64, u64) {
    let cuts = command_lines(text);
    let last = if to > from {
        if to.1 == 0 {
            (to.0 - 1, u64::MAX)
        } else {
            (to.0, to.1 - 1)
        }
    } else {
        from
    };
    let holding = |line: u64| cuts.iter().rposition(|&c| c <= line).unwrap_or(0);
    let (a, b) = (holding(from.0), holding(last.0.max(from.0)));
    let end = cuts.get(b + 1).copied().unwrap_or(u64::MAX);
    (cuts[a], end)
}

/// A diagnostic of a sync: `(start line, start character, severity, message, range)`.
type Item = (u64, u64, String, String, Value);

fn items(synced: &Value) -> Vec<Item> {
    synced["diagnostics"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {synced}"))
        .iter()
        .map(|d| {
            (
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["range"]["start"]["character"].as_u64().unwrap(),
                d["severity"].as_str().unwrap().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
                d["range"].clone(),
            )
        })
        .collect()
}

fn goals(items: &[&Item]) -> Vec<String> {
    items
        .iter()
        .filter(|d| d.2 == "error" && d.3.starts_with("unsolved goals"))
        .flat_map(|d| {
            let rest = d.3.split_once('\n').map_or("", |(_, r)| r);
            rest.split("\n\n")
                .filter(|g| !g.trim().is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn uses_sorry(item: &Item) -> bool {
    item.3.starts_with("declaration uses ") && item.3.contains("sorry")
}

/// The line of the last character an edit replaces (its start's, when it replaces nothing).
fn last_line(edit: &Edit) -> u64 {
    match edit.to {
        to if to == edit.from => to.0,
        (line, 0) => line - 1,
        (line, _) => line,
    }
}

/// Where an edit's text ends once applied.
fn edit_end(edit: &Edit) -> (u64, u64) {
    let inserted: Vec<&str> = edit.text.split('\n').collect();
    let line = edit.from.0 + inserted.len() as u64 - 1;
    let last = width(inserted.last().unwrap());
    let character = if inserted.len() == 1 {
        edit.from.1 + last
    } else {
        last
    };
    (line, character)
}

/// The oracle's own reading of what the commands on lines `[a, b)` of `text` declare: a
/// command line (`command_lines`) whose first word is a declaration keyword declares the word
/// after it, in the namespaces the `namespace`/`end` command lines above it leave open; an
/// `example` declares nothing Lean can be asked about (`None`).
fn declared(text: &str, (a, b): (u64, u64)) -> Vec<Option<String>> {
    const KEYWORDS: [&str; 4] = ["theorem", "lemma", "def", "example"];
    let lines: Vec<&str> = text.split('\n').collect();
    let mut namespaces: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for n in command_lines(text) {
        let mut words = lines[n as usize].split_whitespace();
        match words.next() {
            Some("namespace") => namespaces.extend(words.next().map(str::to_owned)),
            Some("end") => {
                namespaces.pop();
            }
            Some(keyword) if n >= a && n < b && KEYWORDS.contains(&keyword) => {
                let name: Option<String> = words.next().map(|w| {
                    w.chars()
                        .take_while(|c| c.is_alphanumeric() || "_'.!?".contains(*c))
                        .collect()
                });
                out.push(match (keyword, name) {
                    ("example", _) | (_, None) => None,
                    (_, Some(name)) => Some(
                        namespaces
                            .iter()
                            .map(String::as_str)
                            .chain([name.as_str()])
                            .collect::<Vec<_>>()
                            .join("."),
                    ),
                });
            }
            _ => {}
        }
    }
    out
}

/// The copy of `text` the oracle syncs: with the tool's `#print axioms` question about each of
/// `names` appended, one a line, and the line of the first.
fn with_questions(text: &str, names: &[Option<String>]) -> (String, u64) {
    let mut copy = text.to_owned();
    if names.iter().any(Option::is_some) && !copy.is_empty() && !copy.ends_with('\n') {
        copy.push('\n');
    }
    let first = copy.matches('\n').count() as u64;
    for name in names.iter().flatten() {
        copy.push_str(&format!(
            "set_option pp.fullNames true in #print axioms _root_.{name}\n"
        ));
    }
    (copy, first)
}

/// What Lean's answers to the questions say of `sorry`.
#[derive(Debug, PartialEq)]
enum Axioms {
    /// Every declaration was asked about and answered; whether one lists `sorryAx`.
    Answered(bool),
    /// A declaration has no name, or an answer is not `'N' depends on …`/`… does not depend …`.
    Unconfirmed,
}

/// Takes the answers (on a question line, at or after its `#print`) out of `copy` and reads them.
fn answers(copy: &mut Vec<Item>, names: &[Option<String>], first: u64) -> Axioms {
    let asked: Vec<&String> = names.iter().flatten().collect();
    let is_answer = |d: &Item| d.0 >= first && d.0 < first + asked.len() as u64 && d.1 >= 32;
    let said: Vec<Item> = copy.iter().filter(|d| is_answer(d)).cloned().collect();
    copy.retain(|d| !is_answer(d));
    if asked.len() < names.len() {
        return Axioms::Unconfirmed;
    }
    let mut sorry = false;
    for (k, name) in asked.iter().enumerate() {
        let here: Vec<&Item> = said.iter().filter(|d| d.0 == first + k as u64).collect();
        let [answer] = here[..] else {
            return Axioms::Unconfirmed;
        };
        let shaped = answer.2 == "information"
            && (answer.3 == format!("'{name}' does not depend on any axioms")
                || answer
                    .3
                    .starts_with(&format!("'{name}' depends on axioms: [")));
        if !shaped {
            return Axioms::Unconfirmed;
        }
        sorry |= answer.3.contains("sorryAx");
    }
    Axioms::Answered(sorry)
}

/// Whether the edit's own text writes `sorry` or `admit` (outside a line comment).
fn writes_sorry(edit: &Edit) -> bool {
    edit.text.lines().any(|line| {
        let code = line.split("--").next().unwrap_or_default();
        code.split(|c: char| !(c.is_alphanumeric() || "_'.!?".contains(c)))
            .any(|w| w == "sorry" || w == "admit")
    })
}

/// The verdict the tool's rules give, from the copy's diagnostics (and Lean's answers about its
/// axioms) and the base's.
fn oracle(
    base_text: &str,
    base: &[Item],
    text: &str,
    (copy, axioms): (&[Item], &Axioms),
    edit: &Edit,
) -> &'static str {
    let end = edit_end(edit);
    let (a, b) = declaration(text, edit.from, end);
    let (base_a, base_b) = declaration(base_text, edit.from, edit.to);
    let ours = |d: &&Item| d.0 >= a && d.0 < b;
    let base_ours = |d: &&Item| d.0 >= base_a && d.0 < base_b;
    let own_error = copy
        .iter()
        .filter(ours)
        .any(|d| d.2 == "error" && !d.3.starts_with("unsolved goals"));
    // A base error elsewhere is where it was before the edit, or moved with the edit's lines.
    let moved = |d: &Item| -> (u64, u64) {
        if (d.0, d.1) < edit.to {
            (d.0, d.1)
        } else if d.0 == edit.to.0 {
            (end.0, d.1 - edit.to.1 + end.1)
        } else {
            (d.0 - edit.to.0 + end.0, d.1)
        }
    };
    let mut base_elsewhere: Vec<((u64, u64), &str)> = base
        .iter()
        .filter(|d| d.2 == "error" && !base_ours(d))
        .map(|d| (moved(d), d.3.as_str()))
        .collect();
    let mut new_elsewhere = false;
    for d in copy.iter().filter(|d| d.2 == "error" && !ours(d)) {
        match base_elsewhere
            .iter()
            .position(|b| *b == ((d.0, d.1), d.3.as_str()))
        {
            Some(k) => {
                base_elsewhere.swap_remove(k);
            }
            None => new_elsewhere = true,
        }
    }
    let ours_items: Vec<&Item> = copy.iter().filter(ours).collect();
    let base_items: Vec<&Item> = base.iter().filter(base_ours).collect();
    let mut left = (
        goals(&ours_items),
        ours_items.iter().any(|d| uses_sorry(d)) || writes_sorry(edit),
    );
    let before = (goals(&base_items), base_items.iter().any(|d| uses_sorry(d)));
    let would_close = !own_error && !new_elsewhere && left.0.is_empty() && !left.1;
    if would_close {
        match axioms {
            Axioms::Unconfirmed => return "failed",
            Axioms::Answered(sorry) => left.1 = *sorry,
        }
    }
    if own_error || new_elsewhere {
        "failed"
    } else if left.0.is_empty() && !left.1 {
        match statements::changed(base_text, text, edit.from.0, last_line(edit)) {
            true => "failed",
            false => "closed",
        }
    } else if left != before {
        "progressed"
    } else {
        "failed"
    }
}

fn sync_all(lean: &mut Lean, project: &Project, path: &str) -> Value {
    lean.ok(
        "lean_sync",
        args(
            project,
            path,
            json!({"diagnostic_scope": "all", "diagnostics_in_result": true}),
        ),
    )
}

#[test]
fn try_edit_agrees_with_lean_on_the_edited_file_every_time() {
    let project = Project::fixture();
    project.write("Fixture/Oracle.lean", PROOFS);
    let mut lean = Lean::start(&[&project], &["--max-twins", "4"], &[]);
    let files = [
        "Fixture/Oracle.lean",
        "Fixture/Basic.lean",
        "Fixture/TypeError.lean",
        "Fixture/Holes.lean",
    ];
    let mut draw = Draw(17);
    let (mut total, mut by_verdict, mut by_kind) = (0, BTreeMap::new(), BTreeMap::new());
    let (mut disagreements, mut false_closed) = (Vec::new(), 0);
    // Edits that keep what the file states, and edits that change it.
    let mut statements_changed = [0; 2];
    for path in files {
        let base_text = project.read(path);
        let base = items(&sync_all(&mut lean, &project, path));
        let edits = edits(&base_text, &mut draw);
        for chunk in edits.chunks(16) {
            let candidates = chunk
                .iter()
                .map(|e| replace(e.from, e.to, &e.text))
                .collect();
            let tried = lean.ok(
                "lean_try_edit",
                try_edit(&project, path, &base_text, candidates),
            );
            for (edit, shown) in chunk.iter().zip(tried["candidates"].as_array().unwrap()) {
                total += 1;
                let text = applied(&base_text, edit);
                let names = declared(&text, declaration(&text, edit.from, edit_end(edit)));
                let (asked, first) = with_questions(&text, &names);
                let copy_path = format!("Fixture/Copy{total}.lean");
                project.write(&copy_path, &asked);
                let mut copy = items(&sync_all(&mut lean, &project, &copy_path));
                let axioms = answers(&mut copy, &names, first);
                let expected = oracle(&base_text, &base, &text, (&copy, &axioms), edit);
                let verdict = shown["verdict"].as_str().unwrap();
                let changed = statements::changed(&base_text, &text, edit.from.0, last_line(edit));
                if shown["gate"]["statement_changed"] != changed {
                    disagreements.push(format!(
                        "{path} {edit:?}: statement_changed, the oracle {changed}\n{text}\n{shown}"
                    ));
                }
                statements_changed[usize::from(changed)] += 1;
                if verdict != expected {
                    false_closed += usize::from(verdict == "closed");
                    disagreements.push(format!(
                        "{path} {edit:?}: {verdict}, the oracle {expected}\n{text}\ncopy: \
                         {copy:?}\nbase: {base:?}\n{shown}"
                    ));
                }
                let mut ours: Vec<(String, String, Value)> = shown["diagnostics"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| {
                        let severity = d["severity"].as_str().unwrap().to_owned();
                        let message = d["message"].as_str().unwrap().to_owned();
                        (severity, message, d["range"].clone())
                    })
                    .collect();
                let mut theirs: Vec<(String, String, Value)> = copy
                    .iter()
                    .map(|d| (d.2.clone(), d.3.clone(), d.4.clone()))
                    .collect();
                let key = |d: &(String, String, Value)| d.2.to_string() + &d.0 + &d.1;
                ours.sort_by_key(key);
                theirs.sort_by_key(key);
                assert_eq!(ours, theirs, "{path} {edit:?}: diagnostics");
                *by_verdict.entry(verdict.to_owned()).or_insert(0) += 1;
                *by_kind.entry(edit.kind).or_insert(0) += 1;
                // Fresh documents each time: close the copy once judged.
                lean.ok("lean_close", args(&project, &copy_path, json!({})));
            }
        }
    }
    println!(
        "{total} edits; {} disagreements ({false_closed} false closed); verdicts \
         {by_verdict:?}; kinds {by_kind:?}; statements kept and changed {statements_changed:?}",
        disagreements.len()
    );
    assert_eq!(
        false_closed, 0,
        "closed where Lean's sync of the copy is not"
    );
    assert!(
        disagreements.is_empty(),
        "{} of {total} verdicts disagree with the oracle; the first:\n{}",
        disagreements.len(),
        disagreements[0]
    );
    assert!(total >= 300, "only {total} edits");
    assert!(
        statements_changed.iter().all(|&n| n >= 50),
        "{statements_changed:?}"
    );
    for verdict in ["closed", "progressed", "failed"] {
        assert!(
            by_verdict.get(verdict).copied().unwrap_or(0) >= 10,
            "{by_verdict:?}"
        );
    }
    lean.finish_without_violations();
}
