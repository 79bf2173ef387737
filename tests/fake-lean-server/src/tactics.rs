//! A `:= by` block as a tree of tactic nodes with the goals before and after each, and the
//! position rule of `$/lean/plainGoal` from the reference (§B, `InfoTree.goalsAt?`).
//!
//! Layout: the first tactic after `by` fixes the block's column; each later line at that column
//! starts the next tactic, deeper lines continue it, and `;` separates tactics on a line (the
//! `;` belongs to the tactic before it). Bullets (`·`), `case … =>`, `next =>` and tactics whose
//! first line ends in `by` (`have h : T := by`) open a nested sequence on the focused goal.
//!
//! Query: a node [start, end) with trailing whitespace up to `trail_end` (comments count as
//! whitespace) is a candidate when `start ≤ h < max(end + 1, trail_end)`, or when its trailing
//! whitespace runs to EOF. Candidates at `h == trail_end` have priority 0, others 1; the
//! innermost of the highest priority wins, and an enclosing node replaces it only when
//! `h ≥ end` of the enclosing node and the inner node starts right of the cursor's column. The
//! answer is the goals *after* the node when `h > start` and no nested node ends after `h`,
//! else the goals *before* it — so exactly at a tactic's first character you get the goals
//! before it.

use crate::goals::{self, Goal};
use crate::lexer;
use crate::text::Text;
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub trail_end: usize,
    pub start_col: u32,
    pub depth: u32,
    pub parent: Option<usize>,
    pub before: Vec<Goal>,
    pub after: Vec<Goal>,
    /// For `exact t`: the span of `t` (used by `plainTermGoal`).
    pub term: Option<(usize, usize)>,
}

/// A tactic error found while running the rules.
#[derive(Clone, Debug)]
pub struct BlockError {
    pub start: usize,
    pub end: usize,
    pub message: String,
    /// Set for `unsolved goals` errors.
    pub unsolved: bool,
}

#[derive(Clone, Debug, Default)]
pub struct TacticBlock {
    pub by_start: usize,
    pub end: usize,
    pub nodes: Vec<Node>,
    pub errors: Vec<BlockError>,
    /// A tactic failed (by rule or by an error directive): later tactics did not run and no
    /// `unsolved goals` error is reported for the block.
    pub aborted: bool,
}

/// Per-line inputs from the directives.
#[derive(Default)]
pub struct Hooks {
    /// `goals` directive: the goals after the last tactic on the line.
    pub overrides: HashMap<u32, Vec<Goal>>,
    /// Lines carrying an `error` directive: the tactic there fails.
    pub failing: Vec<u32>,
}

struct Builder<'a> {
    text: &'a Text,
    code: &'a str,
    hooks: &'a Hooks,
    block: TacticBlock,
}

pub fn build(
    text: &Text,
    code: &str,
    by_at: usize,
    end: usize,
    initial: Vec<Goal>,
    hooks: &Hooks,
) -> TacticBlock {
    let mut b = Builder {
        text,
        code,
        hooks,
        block: TacticBlock {
            by_start: by_at,
            end,
            ..TacticBlock::default()
        },
    };
    let root = b.push(by_at, end, 0, None, initial.clone());
    let first = lexer::skip_ws(code, by_at + 2, end);
    let finals = if first < end {
        b.seq(first, end, 1, root, initial)
    } else {
        initial
    };
    if !b.block.aborted && !finals.is_empty() {
        let line_end = text.line_end(text.line_of(by_at)) + 1;
        b.block.errors.push(BlockError {
            start: by_at,
            end: end.min(line_end),
            message: goals::unsolved_message(&finals),
            unsolved: true,
        });
    }
    b.block.nodes[root].after = finals;
    b.block
}

impl Builder<'_> {
    fn push(
        &mut self,
        start: usize,
        end: usize,
        depth: u32,
        parent: Option<usize>,
        before: Vec<Goal>,
    ) -> usize {
        let trail_end = lexer::skip_ws(self.code, end, self.code.len());
        self.block.nodes.push(Node {
            start,
            end,
            trail_end,
            start_col: self.col(start),
            depth,
            parent,
            after: before.clone(),
            before,
            term: None,
        });
        self.block.nodes.len() - 1
    }

    fn col(&self, offset: usize) -> u32 {
        self.text.pos(offset).character
    }

    /// Runs the sequence starting at `start`; returns the goals left at its end.
    fn seq(
        &mut self,
        start: usize,
        limit: usize,
        depth: u32,
        parent: usize,
        mut goals: Vec<Goal>,
    ) -> Vec<Goal> {
        let col0 = self.col(start);
        let mut item = start;
        while item < limit {
            let item_end = self.item_end(item, col0, limit);
            goals = self.item(item, item_end, depth, parent, goals);
            let next = lexer::skip_ws(self.code, item_end, limit);
            if next >= limit || self.col(next) != col0 {
                break;
            }
            item = next;
        }
        goals
    }

    /// The end of the item starting at `start`: its first line plus every following line
    /// indented deeper than `col0`.
    fn item_end(&self, start: usize, col0: u32, limit: usize) -> usize {
        let mut line = self.text.line_of(start);
        let mut end = lexer::trim_end(self.code, start, self.text.line_end(line).min(limit));
        loop {
            line += 1;
            if line >= self.text.line_count() || self.text.line_start(line) >= limit {
                return end;
            }
            let (a, z) = (
                self.text.line_start(line),
                self.text.line_end(line).min(limit),
            );
            let first = lexer::skip_ws(self.code, a, z);
            if first == z {
                continue;
            }
            if self.col(first) <= col0 {
                return end;
            }
            end = lexer::trim_end(self.code, first, z);
        }
    }

    fn item(
        &mut self,
        start: usize,
        end: usize,
        depth: u32,
        parent: usize,
        goals: Vec<Goal>,
    ) -> Vec<Goal> {
        let code = self.code;
        let first_line_end = lexer::trim_end(
            code,
            start,
            self.text.line_end(self.text.line_of(start)).min(end),
        );
        let head = &code[start..first_line_end];
        let bullet = head.starts_with('·') || head.starts_with(". ") || head == ".";
        let arrow = (lexer::word_at(code, start, "case") || lexer::word_at(code, start, "next"))
            && head.contains("=>");
        let nested_by = head.ends_with(" by") || head == "by";
        if bullet || arrow || nested_by {
            let inner_from = if bullet {
                start + head.chars().next().map_or(1, char::len_utf8)
            } else if arrow {
                start + head.find("=>").unwrap_or(0) + 2
            } else {
                first_line_end
            };
            return self.nested(start, end, inner_from, depth, parent, goals, head);
        }
        // Plain tactics, separated by top-level `;` (the `;` stays with the tactic before it).
        let mut goals = goals;
        let mut from = start;
        for piece_end in semicolons(code, start, end) {
            let t_end = lexer::trim_end(code, from, piece_end);
            let node = self.push(from, t_end, depth, Some(parent), goals.clone());
            let tactic = code[from..t_end].trim_end_matches(';').trim();
            if let Some(rest) = tactic.strip_prefix("exact ") {
                let a = from + (tactic.len() - rest.len());
                self.block.nodes[node].term = Some((a, lexer::trim_end(code, a, t_end)));
            }
            if !self.block.aborted {
                let line = self.text.line_of(from) as u32;
                let last_on_line = self.text.line_of(piece_end) as u32 != line || piece_end == end;
                let failing_here = (line..=self.text.line_of(t_end) as u32)
                    .any(|l| self.hooks.failing.contains(&l));
                let ruled = goals::apply(tactic, &goals);
                goals = match (self.hooks.overrides.get(&line), ruled) {
                    (Some(o), _) if last_on_line => o.clone(),
                    (_, Ok(g)) => g,
                    (_, Err(message)) => {
                        self.fail(from, t_end, message);
                        goals
                    }
                };
                if failing_here {
                    self.block.aborted = true;
                }
            }
            self.block.nodes[node].after = goals.clone();
            from = lexer::skip_ws(code, piece_end, end);
        }
        goals
    }

    #[allow(clippy::too_many_arguments)]
    fn nested(
        &mut self,
        start: usize,
        end: usize,
        inner_from: usize,
        depth: u32,
        parent: usize,
        goals: Vec<Goal>,
        head: &str,
    ) -> Vec<Goal> {
        let code = self.code;
        if goals.is_empty() && !self.block.aborted {
            self.fail(start, end, "no goals to be proved".to_owned());
        }
        let (focus, rest, outer_after): (Vec<Goal>, Vec<Goal>, Option<Goal>) = match goals.first() {
            None => (Vec::new(), Vec::new(), None),
            Some(main) if head.ends_with("by") => {
                // `have h : T := by`: prove T, then continue with `h : T`.
                let decl = head
                    .trim_end_matches("by")
                    .trim_end()
                    .trim_end_matches(":=");
                let decl = decl.split_once(char::is_whitespace).map_or("", |x| x.1);
                let (name, ty) = goals::split_top(decl, ":")
                    .map(|(n, t)| (n.trim(), t.trim()))
                    .unwrap_or(("this", decl.trim()));
                let name = if name.is_empty() { "this" } else { name };
                let mut with_hyp = main.clone();
                with_hyp.hyps.push((name.to_owned(), ty.to_owned()));
                let sub = Goal {
                    case: None,
                    hyps: main.hyps.clone(),
                    target: ty.to_owned(),
                };
                (vec![sub], goals[1..].to_vec(), Some(with_hyp))
            }
            Some(_) if lexer::word_at(code, start, "case") => {
                let tag = head[4..].split("=>").next().unwrap_or("").trim();
                let tag = tag.split_whitespace().next().unwrap_or("");
                let i = goals
                    .iter()
                    .position(|g| g.case.as_deref() == Some(tag))
                    .unwrap_or(0);
                let mut rest = goals.clone();
                let picked = rest.remove(i);
                (vec![picked], rest, None)
            }
            Some(main) => (vec![main.clone()], goals[1..].to_vec(), None),
        };
        let node = self.push(start, end, depth, Some(parent), focus.clone());
        let inner = lexer::skip_ws(code, inner_from, end);
        let left = if inner < end {
            self.seq(inner, end, depth + 1, node, focus)
        } else {
            focus
        };
        if !self.block.aborted && !left.is_empty() {
            let line_end = self.text.line_end(self.text.line_of(start)) + 1;
            self.block.errors.push(BlockError {
                start,
                end: end.min(line_end),
                message: goals::unsolved_message(&left),
                unsolved: true,
            });
        }
        let mut after: Vec<Goal> = outer_after.into_iter().collect();
        after.extend(rest);
        self.block.nodes[node].after = after.clone();
        after
    }

    fn fail(&mut self, start: usize, end: usize, message: String) {
        self.block.errors.push(BlockError {
            start,
            end,
            message,
            unsolved: false,
        });
        self.block.aborted = true;
    }
}

/// Ends of the `;`-separated pieces of `code[start..end]` (each end just past its `;`).
fn semicolons(code: &str, start: usize, end: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for (k, c) in code[start..end].char_indices() {
        let at = start + k;
        match c {
            '(' | '[' | '{' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⟩' => depth -= 1,
            ';' if depth == 0 && !code[..at].ends_with("<") => out.push(at + 1),
            _ => {}
        }
    }
    if out.last() != Some(&end) {
        out.push(end);
    }
    out
}

impl TacticBlock {
    /// The goals shown at byte `h` (column `h_col`), or `None` when no tactic covers it.
    pub fn goals_at(&self, h: usize, h_col: u32, eof: usize) -> Option<&[Goal]> {
        let best = self.node_at(h, h_col, eof)?;
        let n = &self.nodes[best];
        let nested_after = self
            .nodes
            .iter()
            .enumerate()
            .any(|(i, d)| i != best && self.descends(i, best) && d.end > h);
        Some(if h > n.start && !nested_after {
            &n.after
        } else {
            &n.before
        })
    }

    /// The node chosen for byte `h` by the candidate, priority and innermost rules.
    pub fn node_at(&self, h: usize, h_col: u32, eof: usize) -> Option<usize> {
        let cands: Vec<(usize, u8)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                n.start <= h && (h < (n.end + 1).max(n.trail_end) || n.trail_end >= eof)
            })
            .map(|(i, n)| (i, u8::from(h != n.trail_end)))
            .collect();
        let top = cands.iter().map(|c| c.1).max()?;
        let mut cands: Vec<usize> = cands
            .into_iter()
            .filter(|c| c.1 == top)
            .map(|c| c.0)
            .collect();
        cands.sort_by_key(|&i| {
            (
                std::cmp::Reverse(self.nodes[i].depth),
                std::cmp::Reverse(self.nodes[i].start),
            )
        });
        let mut best = cands[0];
        for &outer in &cands[1..] {
            let o = &self.nodes[outer];
            if o.depth < self.nodes[best].depth && h >= o.end && self.nodes[best].start_col > h_col
            {
                best = outer;
            }
        }
        Some(best)
    }

    fn descends(&self, mut i: usize, ancestor: usize) -> bool {
        while let Some(p) = self.nodes[i].parent {
            if p == ancestor {
                return true;
            }
            i = p;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::text::Pos;

    fn block(src: &str, hooks: &Hooks) -> (Text, TacticBlock) {
        let t = Text::new(src);
        let l = lex(src);
        let by = l.code.find(" by").unwrap() + 1;
        let initial = vec![goals::initial_goal(
            "(p q : Prop) (hp : p) (hq : q)",
            "p ∧ q",
        )];
        let b = build(
            &t,
            &l.code,
            by,
            lexer::trim_end(&l.code, 0, src.len()),
            initial,
            hooks,
        );
        (t, b)
    }

    fn at(t: &Text, b: &TacticBlock, line: u32, ch: u32) -> Option<String> {
        let h = t.offset(Pos::new(line, ch));
        b.goals_at(h, ch, t.as_str().len())
            .map(|g| g.iter().map(Goal::render).collect::<Vec<_>>().join(" | "))
    }

    #[test]
    fn before_and_after() {
        let src = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  · exact hp\n  · exact hq\n";
        let (t, b) = block(src, &Hooks::default());
        assert!(b.errors.is_empty(), "{:?}", b.errors);
        let initial = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q";
        assert_eq!(at(&t, &b, 0, 52).as_deref(), Some(initial));
        assert_eq!(at(&t, &b, 1, 2).as_deref(), Some(initial));
        let split = at(&t, &b, 1, 3).unwrap();
        assert!(split.starts_with("case left") && split.contains(" | case right"));
        assert_eq!(
            at(&t, &b, 2, 4).unwrap(),
            "case left\np q : Prop\nhp : p\nhq : q\n⊢ p"
        );
        assert_eq!(at(&t, &b, 2, 6).unwrap(), "");
        assert_eq!(at(&t, &b, 3, 12).unwrap(), "");
        assert_eq!(at(&t, &b, 0, 3), None);
    }

    #[test]
    fn unsolved_and_override() {
        let src =
            "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact hp\n";
        let (_, b) = block(src, &Hooks::default());
        assert_eq!(b.errors.len(), 1);
        assert!(b.errors[0].unsolved);
        assert!(
            b.errors[0]
                .message
                .starts_with("unsolved goals\ncase right")
        );
        let mut hooks = Hooks::default();
        hooks.overrides.insert(2, vec![]);
        let (_, b) = block(src, &hooks);
        assert!(b.errors.is_empty());
    }

    #[test]
    fn semicolon_positions() {
        let src = "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  intro a; exact hp\n";
        let (t, b) = block(src, &Hooks::default());
        let after_intro = at(&t, &b, 1, 9).unwrap();
        assert_eq!(at(&t, &b, 1, 10).unwrap(), after_intro);
        assert_eq!(at(&t, &b, 1, 11).unwrap(), after_intro);
        assert_eq!(at(&t, &b, 1, 12).unwrap(), "");
    }
}
