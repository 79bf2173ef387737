//! The directive language: line comments of the form `-- fake: NAME ARGS…` that tell the fake
//! what real Lean would report where the rules cannot derive it (README "Directives"). Being
//! comments, they leave the fixture valid Lean.
//!
//! A directive written after code on a line applies to that line; a directive on a line of its
//! own applies to the next line that has code (its *target line*). Arguments are JSON strings,
//! JSON arrays, numbers or bare words; the words `on`, `code`, `provider` and `exit` take the
//! next argument as their value, other bare words are flags.

use crate::lexer::Lexed;
use crate::text::Text;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct Directive {
    pub name: String,
    /// JSON strings, arrays and numbers, in order.
    pub positional: Vec<Value>,
    /// Bare words other than the keyed ones.
    pub flags: Vec<String>,
    /// `on "…"`, `code "…"`, `provider "…"`, `exit N`, `when "option=value"`.
    pub keyed: Vec<(String, Value)>,
    /// Line of the comment itself.
    pub line: u32,
    /// Line the directive applies to.
    pub target: u32,
}

impl Directive {
    pub fn str_arg(&self, i: usize) -> Option<&str> {
        self.positional.get(i).and_then(Value::as_str)
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    pub fn key(&self, key: &str) -> Option<&Value> {
        self.keyed.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn key_str(&self, key: &str) -> Option<&str> {
        self.key(key).and_then(Value::as_str)
    }
}

const KEYED: [&str; 5] = ["on", "code", "provider", "exit", "when"];

/// Every directive of a text, in text order. Malformed arguments are skipped, not fatal: the
/// fake must keep serving whatever the client typed.
pub fn parse(text: &Text, lexed: &Lexed) -> Vec<Directive> {
    let src = text.as_str();
    let mut out = Vec::new();
    for c in lexed.comments.iter().filter(|c| c.line_comment) {
        let body = src[c.start + 2..c.end].trim_start();
        let Some(rest) = body.strip_prefix("fake:") else {
            continue;
        };
        let line = text.line_of(c.start);
        let trailing = !lexed.code[text.line_start(line)..c.start].trim().is_empty();
        let target = if trailing {
            line
        } else {
            (line + 1..text.line_count())
                .find(|&l| {
                    !lexed.code[text.line_start(l)..text.line_end(l)]
                        .trim()
                        .is_empty()
                })
                .unwrap_or(line)
        };
        let mut tokens = tokenize(rest).into_iter();
        let Some(Value::String(name)) = tokens.next() else {
            continue;
        };
        let mut d = Directive {
            name,
            positional: Vec::new(),
            flags: Vec::new(),
            keyed: Vec::new(),
            line: line as u32,
            target: target as u32,
        };
        let mut tokens = tokens.peekable();
        while let Some(tok) = tokens.next() {
            match tok {
                Value::String(w) if w.starts_with('\u{0}') => {
                    let w = w[1..].to_owned();
                    if KEYED.contains(&w.as_str()) {
                        if let Some(v) = tokens.next() {
                            d.keyed.push((w, unword(v)));
                        }
                    } else {
                        d.flags.push(w);
                    }
                }
                v => d.positional.push(v),
            }
        }
        out.push(d);
    }
    out
}

/// Bare words come back from [`tokenize`] as strings marked with a leading NUL, so that they
/// can be told apart from quoted strings.
fn unword(v: Value) -> Value {
    match v {
        Value::String(w) if w.starts_with('\u{0}') => {
            let w = &w[1..];
            w.parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(w.to_owned()))
        }
        v => v,
    }
}

fn tokenize(s: &str) -> Vec<Value> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut first = true;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
                if let Ok(v) = serde_json::from_str::<Value>(&s[start..i]) {
                    out.push(v);
                }
            }
            b'[' | b'{' => {
                let mut depth = 0i32;
                let mut in_str = false;
                while i < b.len() {
                    match b[i] {
                        b'\\' if in_str => i += 1,
                        b'"' => in_str = !in_str,
                        b'[' | b'{' if !in_str => depth += 1,
                        b']' | b'}' if !in_str => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                if let Ok(v) = serde_json::from_str::<Value>(&s[start..i.min(b.len())]) {
                    out.push(v);
                }
            }
            _ => {
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                let w = &s[start..i];
                if first {
                    out.push(Value::String(w.to_owned()));
                } else if let Ok(n) = w.parse::<i64>() {
                    out.push(Value::from(n));
                } else {
                    out.push(Value::String(format!("\u{0}{w}")));
                }
            }
        }
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    #[test]
    fn parses_targets_and_args() {
        let src = "-- fake: gate g1\ndef a := 1\n\nexample := 2 -- fake: error \"bad \\\"x\\\"\" on \"2\" code \"lean.x\" silent\n  -- fake: goals [\"⊢ p\", \"⊢ q\"]\n  exact h\n";
        let t = Text::new(src);
        let ds = parse(&t, &lex(src));
        assert_eq!(ds.len(), 3);
        assert_eq!((ds[0].name.as_str(), ds[0].target), ("gate", 1));
        assert_eq!(ds[0].flags, ["g1"]);
        assert_eq!(ds[1].target, 3);
        assert_eq!(ds[1].str_arg(0), Some("bad \"x\""));
        assert_eq!(ds[1].key_str("on"), Some("2"));
        assert_eq!(ds[1].key_str("code"), Some("lean.x"));
        assert!(ds[1].has_flag("silent"));
        assert_eq!(ds[2].target, 5);
        assert_eq!(ds[2].positional[0].as_array().unwrap().len(), 2);
    }
}
