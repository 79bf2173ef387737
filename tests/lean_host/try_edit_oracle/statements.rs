//! The oracle's own reading of what a text states, from characters (not the host's lexer):
//! comments (`--`, nested `/- -/`) and string literals (over lines too) told from code; a
//! command starts at a line that begins, outside them, with a letter, `@` or `#` (but not with
//! a word that continues a command: `where`, `by`, …), and at a word Lean reserves for
//! commands (or `#` and a word) outside brackets after a command's first word, as Lean ends a
//! proof there (not `open` or `set_option` with `in` later on their line, nor `#check`);
//! per command, comments dropped and blank
//! space collapsed, a declaration (a keyword first, after attributes) by its full
//! name (the namespaces open around it) and what comes before its first `:=` or `where` at
//! bracket depth 0 outside literals (all of a `structure`, `class` or `inductive`), any other
//! command whole. An edit changes a statement when the two texts state different sequences, or
//! when it reaches past a command (its range meets more than one) and changes the body of a
//! `def`, `abbrev`, `instance` or `opaque` it meets.

/// The declaration keywords the fixtures and the generated edits write.
const KEYWORDS: [&str; 6] = [
    "def",
    "theorem",
    "structure",
    "axiom",
    "example",
    "instance",
];

/// The words the oracle knows Lean reserves for commands, besides declarations' keywords.
const RESERVED: [&str; 8] = [
    "namespace",
    "section",
    "end",
    "open",
    "set_option",
    "attribute",
    "variable",
    "notation",
];

/// Words that continue a command at a line's start.
const CONTINUING: [&str; 9] = [
    "where",
    "deriving",
    "with",
    "then",
    "else",
    "fun",
    "by",
    "termination_by",
    "decreasing_by",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Code,
    Comment,
    Literal,
}

/// Each character's class.
fn classes(chars: &[char]) -> Vec<Class> {
    let mut classes = vec![Class::Code; chars.len()];
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        let from = i;
        let class = match chars[i] {
            '-' if next == Some('-') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                Class::Comment
            }
            '/' if next == Some('-') => {
                let mut depth = 0;
                while i < chars.len() {
                    match (chars[i], chars.get(i + 1)) {
                        ('/', Some('-')) => (depth, i) = (depth + 1, i + 2),
                        ('-', Some('/')) => {
                            (depth, i) = (depth - 1, i + 2);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => i += 1,
                    }
                }
                Class::Comment
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                Class::Literal
            }
            _ => {
                i += 1;
                continue;
            }
        };
        i = i.min(chars.len());
        classes[from..i].fill(class);
    }
    classes
}

/// The lines commands start on (see the module's doc).
fn cuts(chars: &[char], classes: &[Class]) -> Vec<usize> {
    let mut starts = vec![0];
    for s in 1..chars.len() {
        if chars[s - 1] != '\n' || classes[s - 1] != Class::Code || classes[s] != Class::Code {
            continue;
        }
        let c = chars[s];
        let word: String = chars[s..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        if (c.is_alphabetic() || c == '@' || c == '#') && !CONTINUING.contains(&word.as_str()) {
            starts.push(s);
        }
    }
    let mut all = Vec::new();
    for (k, &from) in starts.iter().enumerate() {
        let to = starts.get(k + 1).copied().unwrap_or(chars.len());
        all.push(from);
        all.extend(inside(chars, classes, from, to));
    }
    all
}

/// Where commands start inside the command of characters `[from, to)`, past its first word.
fn inside(chars: &[char], classes: &[Class], from: usize, to: usize) -> Vec<usize> {
    let ident = |c: char| c.is_alphanumeric() || "_'.!?".contains(c);
    let (mut depth, mut first, mut i, mut starts) = (0usize, true, from, Vec::new());
    while i < to {
        let c = chars[i];
        if classes[i] != Class::Code {
            i += 1;
            continue;
        }
        match c {
            '(' | '[' | '{' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⟩' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let word_start =
            (c.is_alphabetic() || c == '_' || c == '#') && (i == 0 || !ident(chars[i - 1]));
        if !word_start {
            i += 1;
            continue;
        }
        let hash = c == '#';
        let at = i + usize::from(hash);
        let word: String = chars[at..to]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        i = at + word.chars().count().max(1);
        if depth > 0 {
            continue;
        }
        if std::mem::take(&mut first) {
            continue;
        }
        let rest_of_line: String = chars[i..to].iter().take_while(|c| **c != '\n').collect();
        let scoping = ["open", "set_option"].contains(&word.as_str())
            && rest_of_line.split_whitespace().any(|w| w == "in");
        let reserved = match hash {
            true => !["check", "find"].contains(&word.as_str()),
            false => KEYWORDS.contains(&word.as_str()) || RESERVED.contains(&word.as_str()),
        };
        if reserved && !scoping && !word.is_empty() {
            starts.push(at - usize::from(hash));
        }
    }
    starts
}

/// Characters `[from, to)`, comments blanked, blank space collapsed.
fn collapsed(chars: &[char], classes: &[Class], from: usize, to: usize) -> String {
    let code: String = (from..to)
        .map(|i| match classes[i] {
            Class::Comment => ' ',
            _ => chars[i],
        })
        .collect();
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the body of `[from, to)` begins: its first `:=` or word `where` at bracket depth 0.
fn body(chars: &[char], classes: &[Class], from: usize, to: usize) -> Option<usize> {
    let mut depth = 0usize;
    let ident = |i: usize| {
        chars
            .get(i)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    };
    for i in from..to {
        if classes[i] != Class::Code {
            continue;
        }
        match chars[i] {
            '(' | '[' | '{' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⟩' => depth = depth.saturating_sub(1),
            ':' if depth == 0 && chars.get(i + 1) == Some(&'=') => return Some(i),
            'w' if depth == 0
                && chars[i..].starts_with(&['w', 'h', 'e', 'r', 'e'])
                && !ident(i.wrapping_sub(1))
                && !ident(i + 5) =>
            {
                return Some(i);
            }
            _ => {}
        }
    }
    None
}

/// One command as the oracle reads it.
#[derive(Debug, PartialEq)]
struct Stated {
    name: Option<String>,
    statement: String,
    /// A definition's body, normalized.
    value: Option<String>,
    /// Its lines, `[first, end)`.
    lines: (u64, u64),
}

fn stated(text: &str) -> Vec<Stated> {
    let chars: Vec<char> = text.chars().collect();
    let classes = classes(&chars);
    let cuts = cuts(&chars, &classes);
    let line = |i: usize| chars[..i].iter().filter(|c| **c == '\n').count() as u64;
    let mut namespaces: Vec<Option<String>> = Vec::new();
    let mut out = Vec::new();
    for (k, &first) in cuts.iter().enumerate() {
        let end = cuts.get(k + 1).copied().unwrap_or(chars.len());
        let whole = collapsed(&chars, &classes, first, end);
        if whole.is_empty() {
            continue;
        }
        let mut words = whole.split(' ').skip_while(|w| w.starts_with("@["));
        let keyword = words.next().unwrap_or("");
        match keyword {
            "namespace" => namespaces.push(words.next().map(str::to_owned)),
            "section" | "mutual" => namespaces.push(None),
            "end" => {
                namespaces.pop();
            }
            _ => {}
        }
        let declaration = KEYWORDS.contains(&keyword);
        let name = words
            .next()
            .filter(|_| declaration && keyword != "example")
            .map(|w| {
                let name: String = w
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "_'.!?".contains(*c))
                    .collect();
                match name.strip_prefix("_root_.") {
                    Some(rooted) => rooted.to_owned(),
                    None => {
                        let mut parts: Vec<&str> =
                            namespaces.iter().flatten().map(String::as_str).collect();
                        parts.push(&name);
                        parts.join(".")
                    }
                }
            })
            .filter(|name| !name.is_empty() && !name.ends_with('.'));
        let all = !declaration || ["structure", "class", "inductive"].contains(&keyword);
        let split = body(&chars, &classes, first, end).filter(|_| !all);
        let statement = collapsed(&chars, &classes, first, split.unwrap_or(end));
        let value = split
            .filter(|_| ["def", "abbrev", "instance", "opaque"].contains(&keyword))
            .map(|at| collapsed(&chars, &classes, at, end));
        out.push(Stated {
            name,
            statement,
            value,
            lines: (line(first), line(end) + u64::from(end == chars.len())),
        });
    }
    out
}

/// Whether the edit of base lines `from..=to` (its range's first and last lines) that made
/// `result` changes what `base` states (see the module's doc).
pub fn changed(base: &str, result: &str, from: u64, to: u64) -> bool {
    let (b, r) = (stated(base), stated(result));
    let key = |s: &Stated| (s.name.clone(), s.statement.clone());
    if b.iter().map(key).ne(r.iter().map(key)) {
        return true;
    }
    let meets = |s: &Stated| s.lines.0 <= to && from < s.lines.1;
    let reaching = b.iter().filter(|s| meets(s)).count() > 1;
    reaching
        && b.iter()
            .zip(&r)
            .any(|(b, r)| meets(b) && b.value != r.value)
}
