//! Everything the fake derives from one document version, computed once per version and shared
//! (behind an `Arc`) by the request handlers and the elaboration thread: the outline, the
//! directives, the tactic blocks and the elaboration plan — one [`Step`] per command, holding
//! the diagnostics that command reports (README "Diagnostics") and the gate, slow and crash
//! directives that apply to it.

use crate::directives::{self, Directive};
use crate::goals::{self, Goal};
use crate::lexer::{self, Lexed};
use crate::outline::{self, CmdKind, Decl, Outline};
use crate::tactics::{self, Hooks, TacticBlock};
use crate::text::Text;
use serde_json::{Value, json};

/// How a crash directive ends the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashKind {
    /// Killed by a signal (SIGABRT): `-32902` WorkerCrashed.
    Signal,
    /// Exit code 1 (uncaught exception): `-32901` WorkerExited.
    Exit1,
}

#[derive(Clone, Debug)]
pub struct Crash {
    pub kind: CrashKind,
    pub once: bool,
}

/// One command's share of elaboration.
#[derive(Clone, Debug, Default)]
pub struct Step {
    pub first_line: u32,
    pub last_line: u32,
    pub gates: Vec<String>,
    pub slow_ms: u64,
    pub crash: Option<Crash>,
    /// Diagnostics this command reports (silent ones carry `"isSilent": true`).
    pub messages: Vec<Value>,
    /// The files it reads (`include_str`), read each time it is elaborated (`include`).
    pub includes: Vec<crate::include::Include>,
}

#[derive(Clone, Debug, Default)]
pub struct DocFlags {
    /// `hang` directives: methods whose requests are never answered (empty: every request).
    pub hang: Option<Vec<String>>,
    pub watchdog_exit: Option<String>,
    pub setup_lines: Vec<String>,
    pub stale_imports: bool,
    pub setup_fail: Option<String>,
    /// `setup-fail … twins`: only for a copy under `.lake/beam` (a client's hidden twin).
    pub setup_fail_twins_only: bool,
    /// `explain-gate NAME`: a fatal header error's publish waits for this gate.
    pub explain_gate: Option<String>,
}

pub struct Analysis {
    pub text: Text,
    pub lexed: Lexed,
    pub outline: Outline,
    pub directives: Vec<Directive>,
    /// Tactic blocks with the index of their declaration.
    pub blocks: Vec<(usize, TacticBlock)>,
    pub steps: Vec<Step>,
    pub flags: DocFlags,
    /// The terminal `#exit` command, if the file has one: Lean elaborates nothing after it
    /// (`Parser.isTerminalCommand`).
    pub exit: Option<usize>,
}

impl Analysis {
    pub fn new(text: Text) -> Analysis {
        let lexed = lexer::lex(text.as_str());
        let outline = outline::outline(&text, &lexed);
        let directives = directives::parse(&text, &lexed);
        let mut a = Analysis {
            text,
            lexed,
            outline,
            directives,
            blocks: Vec::new(),
            steps: Vec::new(),
            flags: DocFlags::default(),
            exit: None,
        };
        a.exit = a
            .outline
            .commands
            .iter()
            .position(|c| c.kind == CmdKind::Exit { terminal: true });
        a.flags = flags(&a.directives);
        a.blocks = blocks(&a);
        a.steps = steps(&a);
        a
    }

    pub fn code(&self) -> &str {
        &self.lexed.code
    }

    /// The tactic block holding byte `offset`.
    pub fn block_at(&self, offset: usize) -> Option<&TacticBlock> {
        self.blocks
            .iter()
            .map(|(_, b)| b)
            .find(|b| b.by_start <= offset && offset <= b.nodes[0].trail_end)
    }

    /// The start of the trimmed code on `line` and its end.
    pub fn line_code_span(&self, line: u32) -> (usize, usize) {
        let (a, z) = (
            self.text.line_start(line as usize),
            self.text.line_end(line as usize),
        );
        let first = lexer::skip_ws(self.code(), a, z);
        (first, lexer::trim_end(self.code(), first, z))
    }

    /// The span a directive with an optional `on "…"` selector designates on its target line.
    pub fn directive_span(&self, d: &Directive) -> (usize, usize) {
        let (a, z) = self.line_code_span(d.target);
        if let Some(on) = d.key_str("on") {
            let line_start = self.text.line_start(d.target as usize);
            let line = self.text.line(d.target as usize);
            if let Some(i) = line.find(on) {
                return (line_start + i, line_start + i + on.len());
            }
        }
        (a, z)
    }

    /// Index of the step (command) covering `line`.
    pub fn step_of_line(&self, line: u32) -> Option<usize> {
        step_of_line(&self.steps, line)
    }

    /// A message of Lean's over bytes `extent`, as the worker publishes it: its `range` cut at
    /// the next line when it spans several (`Text::message_ranges`), `fullRange` the extent.
    pub fn diagnostic(&self, severity: u8, extent: (usize, usize), message: &str) -> Value {
        let (range, full) = self.text.message_ranges(extent.0, extent.1);
        json!({
            "source": "Lean 4",
            "severity": severity,
            "range": range,
            "fullRange": full,
            "message": message,
        })
    }
}

/// The key under which a diagnostic carries its `when "option=value"` condition until it is
/// reported (never published).
const WHEN: &str = "_when";

/// The key under which the `declaration uses `sorry`` warning carries what its wording depends
/// on until it is reported (never published): the first `sorry`'s line and column, and the type
/// it stands for.
const SORRY: &str = "_sorry";

/// How the fake's file is set up: Lake's options, and its module (for `pp.sorrySource`).
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    pub options: &'a [(String, String)],
    pub module: &'a str,
}

impl Analysis {
    /// The value of option `name` at command `k` (`scoped.rs`), under Lake's `options`.
    pub fn option<'a>(
        &'a self,
        name: &str,
        k: usize,
        options: &'a [(String, String)],
    ) -> Option<&'a str> {
        let earlier = self.outline.commands[..k.min(self.outline.commands.len())]
            .iter()
            .rev()
            .filter_map(|c| match &c.kind {
                CmdKind::SetOption(n, v) => Some((n, v)),
                _ => None,
            });
        let scoped = self
            .outline
            .commands
            .get(k)
            .map_or(&[][..], |c| &c.prefix.options[..]);
        crate::scoped::value(name, scoped, earlier, options)
    }

    /// Whether boolean option `name` is `true` at command `k`.
    fn on(&self, name: &str, k: usize, options: &[(String, String)]) -> bool {
        self.option(name, k, options) == Some("true")
    }

    /// Step `k`'s messages as Lean reports them in a file set up so: each `when` condition
    /// decided by the option's value at the command, the `sorry` warning as the options word it
    /// (`warnIfUsesSorry`, `delabSorry`), then what a `#guard_msgs` prefix makes of them.
    pub fn report(&self, k: usize, setup: Setup<'_>) -> Vec<Value> {
        let Some(step) = self.steps.get(k) else {
            return Vec::new();
        };
        let reported: Vec<Value> = step
            .messages
            .iter()
            .filter_map(|m| self.reported(m, k, setup))
            .collect();
        let Some(command) = self.outline.commands.get(k) else {
            return reported;
        };
        match &command.prefix.guard {
            None => reported,
            Some(guard) => {
                let expected = crate::decl::doc_comment(&self.text, &self.lexed, command.start)
                    .unwrap_or_default();
                let error = |text: String| self.diagnostic(1, guard.keyword, &text);
                guard.apply(reported, &expected, error)
            }
        }
    }

    fn reported(&self, diagnostic: &Value, k: usize, setup: Setup<'_>) -> Option<Value> {
        let when = diagnostic.get(WHEN).and_then(Value::as_str);
        let sorry = diagnostic.get(SORRY);
        if when.is_none() && sorry.is_none() {
            return Some(diagnostic.clone());
        }
        if let Some(when) = when {
            let (name, wanted) = when.split_once('=').unwrap_or((when, "true"));
            if self.option(name, k, setup.options) != Some(wanted) {
                return None;
            }
        }
        let mut shown = diagnostic.clone();
        if let Some(sorry) = sorry {
            // `warnIfUsesSorry` (`Lean/AddDecl.lean`) warns only while `warn.sorry` is true.
            if !self.on("warn.sorry", k, setup.options) {
                return None;
            }
            let explicit =
                self.on("pp.all", k, setup.options) || self.on("pp.explicit", k, setup.options);
            let term = if explicit {
                format!(
                    "sorryAx ({}) Bool.false",
                    sorry["type"].as_str().unwrap_or("_")
                )
            } else if self.on("pp.sorrySource", k, setup.options) {
                format!(
                    "sorry `«{}:{}:{}»",
                    setup.module, sorry["line"], sorry["column"]
                )
            } else {
                "sorry".to_owned()
            };
            shown["message"] = json!(format!("declaration uses `{term}`"));
        }
        if let Some(object) = shown.as_object_mut() {
            object.remove(WHEN);
            object.remove(SORRY);
        }
        Some(shown)
    }
}

fn step_of_line(steps: &[Step], line: u32) -> Option<usize> {
    if steps.is_empty() {
        return None;
    }
    Some(
        steps
            .iter()
            .position(|s| line <= s.last_line)
            .unwrap_or(steps.len() - 1),
    )
}

fn flags(ds: &[Directive]) -> DocFlags {
    let mut f = DocFlags::default();
    for d in ds {
        match d.name.as_str() {
            "hang" => f
                .hang
                .get_or_insert_with(Vec::new)
                .extend(d.flags.iter().cloned()),
            "watchdog-exit" => {
                f.watchdog_exit = Some(d.str_arg(0).unwrap_or("fake watchdog exit").to_owned())
            }
            "setup-line" => f.setup_lines.extend(d.str_arg(0).map(str::to_owned)),
            "stale-imports" => f.stale_imports = true,
            "setup-fail" => {
                f.setup_fail = Some(d.str_arg(0).unwrap_or_default().to_owned());
                f.setup_fail_twins_only = d.has_flag("twins");
            }
            "explain-gate" => f.explain_gate = d.flags.first().cloned(),
            _ => {}
        }
    }
    f
}

fn blocks(a: &Analysis) -> Vec<(usize, TacticBlock)> {
    let mut out = Vec::new();
    for (i, d) in a.outline.decls.iter().enumerate() {
        let Some(by_at) = d.by_at else { continue };
        if a.exit.is_some_and(|exit| d.cmd > exit) {
            continue;
        }
        let cmd = a.outline.decl_command(d);
        let by_line = a.text.line_of(by_at) as u32;
        let last_line = a.text.line_of(cmd.end) as u32;
        let mut hooks = Hooks::default();
        for dir in &a.directives {
            if dir.target < by_line || dir.target > last_line {
                continue;
            }
            match dir.name.as_str() {
                "goals" => {
                    let gs: Vec<Goal> = dir
                        .positional
                        .first()
                        .and_then(Value::as_array)
                        .map(|v| {
                            v.iter()
                                .filter_map(Value::as_str)
                                .map(Goal::parse)
                                .collect()
                        })
                        .unwrap_or_default();
                    hooks.overrides.insert(dir.target, gs);
                }
                "error" => hooks.failing.push(dir.target),
                _ => {}
            }
        }
        let initial = vec![goals::initial_goal(
            &d.binders,
            d.ty.as_deref().unwrap_or("?"),
        )];
        out.push((
            i,
            tactics::build(&a.text, a.code(), by_at, cmd.end, initial, &hooks),
        ));
    }
    out
}

fn severity_of(name: &str) -> Option<u8> {
    match name {
        "error" => Some(1),
        "warning" => Some(2),
        // No `hint`: Lean's messages have three severities (`msgToInteractiveDiagnostic`).
        "info" => Some(3),
        _ => None,
    }
}

fn steps(a: &Analysis) -> Vec<Step> {
    let text = &a.text;
    // Lean elaborates nothing after a terminal command (`#exit`).
    let elaborated = a.exit.map_or(a.outline.commands.len(), |exit| exit + 1);
    let mut steps: Vec<Step> = a.outline.commands[..elaborated]
        .iter()
        .map(|c| Step {
            first_line: text.line_of(c.start) as u32,
            last_line: text.line_of(c.span_end.saturating_sub(1).max(c.start)) as u32,
            ..Step::default()
        })
        .collect();
    if steps.is_empty() {
        return steps;
    }
    let mut per_cmd: Vec<Vec<(usize, Value)>> = vec![Vec::new(); steps.len()];
    let last_line = steps.last().map_or(0, |s| s.last_line);
    for d in &a.directives {
        let Some(k) = step_of_line(&steps, d.target) else {
            continue;
        };
        if a.exit.is_some() && d.target > last_line {
            continue;
        }
        match d.name.as_str() {
            "gate" => steps[k].gates.extend(d.flags.first().cloned()),
            "slow" => steps[k].slow_ms += d.positional.first().and_then(Value::as_u64).unwrap_or(0),
            "crash" => {
                steps[k].crash = Some(Crash {
                    kind: if d.has_flag("exit1") {
                        CrashKind::Exit1
                    } else {
                        CrashKind::Signal
                    },
                    once: d.has_flag("once"),
                })
            }
            name => {
                let Some(sev) = severity_of(name) else {
                    continue;
                };
                let span = a.directive_span(d);
                let mut v = a.diagnostic(sev, span, d.str_arg(0).unwrap_or_default());
                if let Some(code) = d.key_str("code") {
                    v["code"] = json!(code);
                }
                if d.has_flag("silent") {
                    v["isSilent"] = json!(true);
                }
                if let Some(when) = d.key_str("when") {
                    v[WHEN] = json!(when);
                }
                per_cmd[k].push((span.0, v));
            }
        }
    }
    for (i, decl) in a.outline.decls.iter().enumerate() {
        if decl.parent.is_some() {
            continue;
        }
        let k = decl.cmd;
        if k >= per_cmd.len() {
            continue;
        }
        let block = a.blocks.iter().find(|(d, _)| *d == i).map(|(_, b)| b);
        decl_messages(a, decl, block, &mut per_cmd[k]);
    }
    for (k, c) in a.outline.commands[..elaborated].iter().enumerate() {
        if let CmdKind::Exit { .. } = c.kind {
            // `elabExit` (`Lean/Elab/BuiltinCommand.lean`), also for a scoped `#exit`.
            let kw = (c.body, c.body + "#exit".len());
            let warning = a.diagnostic(2, kw, "using 'exit' to interrupt Lean");
            per_cmd[k].push((c.body, warning));
        }
        if let CmdKind::Check(x, y) = c.kind {
            let name = &a.code()[x..y];
            let found = a.outline.decls.iter().find(|d| {
                d.full_name.as_deref() == Some(name)
                    || d.full_name.as_deref() == Some(&outline::qualify(&c.ns, name))
            });
            if let Some(d) = found {
                let kw = (c.start, c.start + "#check".len());
                per_cmd[k].push((c.start, a.diagnostic(3, kw, &d.signature())));
            }
        }
        crate::certify::messages(a, c, &mut per_cmd[k]);
    }
    for (step, mut msgs) in steps.iter_mut().zip(per_cmd) {
        msgs.sort_by_key(|m| m.0);
        step.messages = msgs.into_iter().map(|m| m.1).collect();
    }
    for (step, c) in steps.iter_mut().zip(&a.outline.commands) {
        step.includes = crate::include::find(a, c.start, c.span_end.min(a.code().len()));
    }
    steps
}

fn decl_messages(
    a: &Analysis,
    d: &Decl,
    block: Option<&TacticBlock>,
    out: &mut Vec<(usize, Value)>,
) {
    let cmd = a.outline.decl_command(d);
    let code = a.code();
    if let Some(b) = block {
        for e in &b.errors {
            // An unsolved-goals error shows its first line; its full range is the whole block
            // (for the `by` block itself) or the bullet/`case` it belongs to.
            let full = match (e.unsolved, e.start == b.by_start) {
                (true, true) => (e.start, b.end),
                (true, false) => (e.start, node_end(b, e.start)),
                (false, _) => (e.start, e.end),
            };
            let mut v = a.diagnostic(1, full, &e.message);
            if e.unsolved {
                v["leanTags"] = json!([1]);
            }
            out.push((e.start, v));
        }
    }
    let sorry_at = lexer::find_word(code, cmd.start, cmd.end, "sorry")
        .or_else(|| lexer::find_word(code, cmd.start, cmd.end, "admit"));
    let sorry = sorry_at.is_some();
    let anchor = d
        .name_span
        .unwrap_or((d.kw_start, d.kw_start + d.keyword.len()));
    let has_error = out
        .iter()
        .any(|(at, v)| v["severity"] == 1 && (cmd.start..=cmd.end).contains(at));
    // `warnIfUsesSorry` (`Lean/AddDecl.lean`) warns only when the command logged no error.
    if let Some(at) = sorry_at.filter(|_| !has_error) {
        let line = a.text.line_of(at);
        let column = a.text.as_str()[a.text.line_start(line)..at].chars().count();
        let mut v = a.diagnostic(2, anchor, "declaration uses `sorry`");
        v[SORRY] = json!({"line": line + 1, "column": column, "type": d.ty});
        out.push((anchor.0, v));
    }
    if d.is_proof() && !sorry && !has_error {
        let mut v = a.diagnostic(3, (cmd.start, cmd.end), "Goals accomplished!");
        v["leanTags"] = json!([2]);
        v["isSilent"] = json!(true);
        out.push((usize::MAX, v));
    }
}

fn node_end(b: &TacticBlock, start: usize) -> usize {
    b.nodes
        .iter()
        .find(|n| n.start == start)
        .map_or(b.end, |n| n.end)
}
