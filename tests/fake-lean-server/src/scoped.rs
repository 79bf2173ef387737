//! What scopes a command: its `… in` prefixes (README "Scoped commands and options"), the value
//! an option has at a command, and what `#guard_msgs` does with the messages of the command it
//! wraps.
//!
//! Contract:
//! 1. A command may begin with any number of `set_option NAME VALUE in`, `open … in` and
//!    `#guard_msgs [(spec)] in` prefixes (Lean's `in` combinator, `Lean/Elab/BuiltinCommand.lean`,
//!    and `Lean/Elab/GuardMsgs.lean`); [`prefixes`] reads them and says where the command they
//!    scope begins.
//! 2. An option's value at a command is the innermost `set_option … in` prefix of that command
//!    that sets it, else the last `set_option NAME VALUE` command before it, else the value Lake
//!    set the file up with, else Lean's default ([`DEFAULTS`]; an unlisted option is unset).
//!    Sections do not scope a `set_option` here (the fake's simplification).
//! 3. `#guard_msgs` (`elabGuardMsgs`): silent messages are neither checked nor kept; each other
//!    message is checked, dropped or passed through by the first spec element whose severity
//!    matches it (`check`, `drop`, `pass` before `info`, `warning`, `error`, `all`; a bare
//!    severity checks), and with a spec an unmatched message passes, without one every message
//!    is checked. The checked messages, as `severity: text` joined by `---`, must equal the doc
//!    comment before `#guard_msgs` (both trimmed, newlines read as spaces): then only the passed
//!    messages are reported; otherwise every message is, and an error on `#guard_msgs`.

use crate::lexer::{self, ident_from, match_bracket};

/// Lean's defaults of the options the fake reads, where nothing sets them.
pub const DEFAULTS: [(&str, &str); 3] = [
    ("autoImplicit", "true"),
    ("relaxedAutoImplicit", "true"),
    ("warn.sorry", "true"),
];

/// The `… in` prefixes of one command (see the contract).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prefix {
    /// `set_option NAME VALUE in`, outermost first.
    pub options: Vec<(String, String)>,
    /// `#guard_msgs [(spec)] in`: where its keyword is, and its spec.
    pub guard: Option<Guard>,
    /// Whether there is any prefix at all.
    pub any: bool,
}

/// A `#guard_msgs` prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    /// The byte span of `#guard_msgs`.
    pub keyword: (usize, usize),
    /// Its spec elements, in order: the action and the severity each names.
    pub spec: Option<Vec<(Action, Severity)>>,
}

/// What a spec element does with a message it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Check,
    Drop,
    Pass,
}

/// Which messages a spec element matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    Warning,
    Error,
    All,
}

impl Severity {
    fn matches(self, severity: u64) -> bool {
        match self {
            Severity::Info => severity == 3,
            Severity::Warning => severity == 2,
            Severity::Error => severity == 1,
            Severity::All => true,
        }
    }
}

/// The prefixes of the command `code[start..end]`, and where the command they scope begins.
pub fn prefixes(code: &str, start: usize, end: usize) -> (Prefix, usize) {
    let mut prefix = Prefix::default();
    let mut i = lexer::skip_ws(code, start, end);
    loop {
        let (scoped, next) = if lexer::word_at(code, i, "set_option") {
            let Some((a, b)) = ident_from(code, lexer::skip_ws(code, i + 10, end), end) else {
                break;
            };
            let v = lexer::skip_ws(code, b, end);
            let value_end = code[v..end]
                .find(char::is_whitespace)
                .map_or(end, |n| v + n);
            let option = (code[a..b].to_owned(), code[v..value_end].to_owned());
            (Some(option), value_end)
        } else if code[i..end].starts_with("#guard_msgs") {
            let keyword = (i, i + "#guard_msgs".len());
            let mut j = lexer::skip_ws(code, keyword.1, end);
            let mut spec = None;
            if code[j..end].starts_with('(') {
                let close = match_bracket(code, j, end);
                spec = Some(parse_spec(&code[j + 1..close.saturating_sub(1)]));
                j = close;
            }
            prefix.guard = Some(Guard { keyword, spec });
            (None, j)
        } else if lexer::word_at(code, i, "open") {
            match lexer::find_word(code, i, end, "in") {
                Some(at) => (None, at),
                None => break,
            }
        } else {
            break;
        };
        let j = lexer::skip_ws(code, next, end);
        if !lexer::word_at(code, j, "in") {
            // `set_option` without `in` is a command of its own; so is `open`.
            if scoped.is_none() && prefix.guard.as_ref().is_some_and(|g| g.keyword.0 == i) {
                prefix.guard = None;
            }
            break;
        }
        prefix.options.extend(scoped);
        prefix.any = true;
        i = lexer::skip_ws(code, j + 2, end);
    }
    (prefix, i)
}

fn parse_spec(text: &str) -> Vec<(Action, Severity)> {
    text.split(',')
        .filter_map(|element| {
            let words: Vec<&str> = element.split_whitespace().collect();
            let (action, severity) = match words[..] {
                [severity] => (Action::Check, severity),
                [action, severity] => (
                    match action {
                        "drop" => Action::Drop,
                        "pass" => Action::Pass,
                        _ => Action::Check,
                    },
                    severity,
                ),
                _ => return None,
            };
            let severity = match severity {
                "info" => Severity::Info,
                "warning" => Severity::Warning,
                "error" => Severity::Error,
                "all" => Severity::All,
                // `trace`, `whitespace := …`, `ordering := …`: not the fake's concern.
                _ => return None,
            };
            Some((action, severity))
        })
        .collect()
}

impl Guard {
    /// What the messages `reported` (as Lean would report them without the guard) become under
    /// it, given the doc comment before it (see the contract).
    pub fn apply(
        &self,
        reported: Vec<serde_json::Value>,
        expected: &str,
        error: impl FnOnce(String) -> serde_json::Value,
    ) -> Vec<serde_json::Value> {
        let mut checked = Vec::new();
        let mut passed = Vec::new();
        for message in &reported {
            if message.get("isSilent") == Some(&serde_json::Value::Bool(true)) {
                continue;
            }
            let severity = message["severity"].as_u64().unwrap_or(3);
            let action = match &self.spec {
                None => Action::Check,
                Some(spec) => spec
                    .iter()
                    .find(|(_, s)| s.matches(severity))
                    .map_or(Action::Pass, |(a, _)| *a),
            };
            match action {
                Action::Check => checked.push(render(message, severity)),
                Action::Drop => {}
                Action::Pass => passed.push(message.clone()),
            }
        }
        let result = checked.join("---\n");
        let normal = |s: &str| s.trim().replace('\n', " ");
        if normal(expected) == normal(&result) {
            return passed;
        }
        let mut all = reported;
        all.push(error(format!(
            "❌️ Docstring on `#guard_msgs` does not match generated message:\n\n{}",
            result.trim()
        )));
        all
    }
}

/// A message as `#guard_msgs` writes it (`messageToStringWithoutPos`).
fn render(message: &serde_json::Value, severity: u64) -> String {
    let text = message["message"].as_str().unwrap_or_default();
    let label = match severity {
        1 => "error",
        2 => "warning",
        _ => "info",
    };
    let sep = if text.starts_with('\n') { "" } else { " " };
    let mut out = format!("{label}:{sep}{text}");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The value of option `name` given, in order of precedence, the command's own prefixes, the
/// `set_option` commands before it (latest first), and Lake's options (see the contract).
pub fn value<'a>(
    name: &str,
    scoped: &'a [(String, String)],
    earlier: impl Iterator<Item = (&'a String, &'a String)>,
    lake: &'a [(String, String)],
) -> Option<&'a str> {
    let named = |(n, v): (&'a String, &'a String)| (n == name).then_some(v.as_str());
    let pairs = |list: &'a [(String, String)]| list.iter().rev().map(|(n, v)| (n, v));
    pairs(scoped)
        .find_map(named)
        .or_else(|| earlier.into_iter().find_map(named))
        .or_else(|| pairs(lake).find_map(named))
        .or_else(|| DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefixes_are_read_up_to_the_command_they_scope() {
        let code =
            "set_option warn.sorry false in\nset_option pp.all true in theorem t : True := trivial";
        let (prefix, at) = prefixes(code, 0, code.len());
        assert_eq!(
            prefix.options,
            [
                ("warn.sorry".to_owned(), "false".to_owned()),
                ("pp.all".to_owned(), "true".to_owned())
            ]
        );
        assert!(code[at..].starts_with("theorem"));
        let plain = "set_option warn.sorry false";
        let (prefix, at) = prefixes(plain, 0, plain.len());
        assert_eq!((prefix, at), (Prefix::default(), 0), "a command of its own");
        let guarded = "#guard_msgs (drop warning) in\nopen Nat in\n#exit";
        let (prefix, at) = prefixes(guarded, 0, guarded.len());
        assert_eq!(&guarded[at..], "#exit");
        let guard = prefix.guard.unwrap();
        assert_eq!(guard.spec, Some(vec![(Action::Drop, Severity::Warning)]));
    }

    #[test]
    fn a_guard_drops_checks_and_passes() {
        let warning = json!({"severity": 2, "message": "declaration uses `sorry`"});
        let info = json!({"severity": 3, "message": "hi"});
        let silent = json!({"severity": 3, "message": "Goals accomplished!", "isSilent": true});
        let error = |text: String| json!({"severity": 1, "message": text});
        let drop = Guard {
            keyword: (0, 11),
            spec: Some(vec![(Action::Drop, Severity::Warning)]),
        };
        let all = vec![warning.clone(), info.clone(), silent.clone()];
        assert_eq!(drop.apply(all.clone(), "", error), [info]);
        let check = Guard {
            keyword: (0, 11),
            spec: None,
        };
        let expected = "warning: declaration uses `sorry`\n---\ninfo: hi";
        assert!(check.apply(all.clone(), expected, error).is_empty());
        let failed = check.apply(all, "info: other", error);
        assert_eq!(failed.len(), 4);
        assert!(failed[3]["message"].as_str().unwrap().starts_with("❌️"));
    }
}
