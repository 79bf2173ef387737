//! Just enough of Lean's lexical structure for the fake's rules: a *code view* of the text in
//! which comments (`--` and nested `/- -/`) and string-literal contents are blanked to spaces
//! (same byte length, newlines kept, so byte offsets and lines carry over to the original), the
//! list of comments (where the `-- fake:` directives live), and identifier scanning.

/// One comment of the original text.
#[derive(Clone, Debug)]
pub struct Comment {
    /// Byte offset of the first `-` (or `/`).
    pub start: usize,
    /// Byte offset just past the comment.
    pub end: usize,
    /// `--` comment (as opposed to a block comment).
    pub line_comment: bool,
    /// `/--` doc comment.
    pub doc: bool,
}

/// The code view and the comments of a text.
#[derive(Clone, Debug)]
pub struct Lexed {
    pub code: String,
    pub comments: Vec<Comment>,
}

pub fn lex(text: &str) -> Lexed {
    let b = text.as_bytes();
    let mut code = b.to_vec();
    let mut comments = Vec::new();
    let mut i = 0;
    let blank = |code: &mut Vec<u8>, a: usize, z: usize| {
        for c in &mut code[a..z] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'-' if b.get(i + 1) == Some(&b'-') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut code, i, end);
                comments.push(Comment {
                    start: i,
                    end,
                    line_comment: true,
                    doc: false,
                });
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'-') => {
                let doc = b.get(i + 2) == Some(&b'-') && b.get(i + 3) != Some(&b'/');
                let mut depth = 1;
                let mut j = i + 2;
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'-') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'-' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut code, i, j);
                comments.push(Comment {
                    start: i,
                    end: j,
                    line_comment: false,
                    doc,
                });
                i = j;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let close = j.min(b.len());
                blank(&mut code, i + 1, close);
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    Lexed {
        // Only ASCII bytes were written over whole UTF-8 sequences, so this cannot fail.
        code: String::from_utf8(code).expect("code view stays UTF-8"),
        comments,
    }
}

/// A character that may continue an identifier.
pub fn is_ident_char(c: char) -> bool {
    (c.is_alphanumeric() && !matches!(c, 'λ' | 'Π' | 'Σ'))
        || matches!(c, '_' | '\'' | '!' | '?')
        || ('\u{2080}'..='\u{209C}').contains(&c)
}

/// A character that may start an identifier.
pub fn is_ident_start(c: char) -> bool {
    is_ident_char(c) && !c.is_numeric() && !matches!(c, '\'' | '!' | '?')
}

/// The dotted identifier token covering byte `offset` of the code view (a cursor just after the
/// token also counts), as `(start, end)`.
pub fn ident_at(code: &str, offset: usize) -> Option<(usize, usize)> {
    let offset = offset.min(code.len());
    let at = |o: usize| {
        code[o..]
            .chars()
            .next()
            .filter(|&c| is_ident_char(c) || c == '.')
    };
    let mut probe = offset;
    if at(probe).is_none() || probe == code.len() {
        // Cursor just after the token.
        let prev = code[..offset].chars().next_back()?;
        if !is_ident_char(prev) {
            return None;
        }
        probe = offset - prev.len_utf8();
    }
    let mut start = probe;
    while let Some(c) = code[..start].chars().next_back() {
        if is_ident_char(c) || c == '.' {
            start -= c.len_utf8();
        } else {
            break;
        }
    }
    let mut end = probe;
    while let Some(c) = code[end..].chars().next() {
        if is_ident_char(c) || c == '.' {
            end += c.len_utf8();
        } else {
            break;
        }
    }
    // Trim dots at either end (`h.1.` or `.foo`).
    while code[start..end].starts_with('.') {
        start += 1;
    }
    while code[start..end].ends_with('.') {
        end -= 1;
    }
    let first = code[start..end].chars().next()?;
    is_ident_start(first).then_some((start, end))
}

/// All identifier tokens of `code[from..to]`, as `(start, end)`.
pub fn idents(code: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = from;
    while i < to {
        let c = code[i..].chars().next().unwrap_or(' ');
        let start = (is_ident_start(c) || c == '«') && !prev_is_ident(code, i);
        if let Some(j) = start.then(|| ident_end(code, i, to)).flatten() {
            out.push((i, j));
            i = j;
        } else {
            i += c.len_utf8();
        }
    }
    out
}

fn prev_is_ident(code: &str, i: usize) -> bool {
    code[..i]
        .chars()
        .next_back()
        .is_some_and(|c| is_ident_char(c) || c == '.')
}

/// Is `word` at byte `i` of `code` a whole word (not part of a longer identifier)?
pub fn word_at(code: &str, i: usize, word: &str) -> bool {
    code[i..].starts_with(word)
        && !prev_is_ident(code, i)
        && !code[i + word.len()..]
            .chars()
            .next()
            .is_some_and(is_ident_char)
}

/// Byte offset of the first whole-word occurrence of `word` in `code[from..to]`.
pub fn find_word(code: &str, from: usize, to: usize, word: &str) -> Option<usize> {
    let mut i = from;
    while let Some(n) = code[i..to].find(word) {
        if word_at(code, i + n, word) {
            return Some(i + n);
        }
        i += n + word.len();
    }
    None
}

/// Skips whitespace forwards from `i`, stopping at `to`.
pub fn skip_ws(code: &str, mut i: usize, to: usize) -> usize {
    while i < to {
        match code[i..].chars().next() {
            Some(c) if c.is_whitespace() => i += c.len_utf8(),
            _ => break,
        }
    }
    i
}

/// The end of the last non-whitespace character of `code[from..to]` (or `from`).
pub fn trim_end(code: &str, from: usize, to: usize) -> usize {
    from + code[from..to].trim_end().len()
}

/// The offset just past the bracket that closes the one at `i` (or `end`).
pub fn match_bracket(code: &str, i: usize, end: usize) -> usize {
    let mut depth = 0i32;
    for (k, c) in code[i..end].char_indices() {
        match c {
            '(' | '[' | '{' | '⦃' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⦄' | '⟩' => {
                depth -= 1;
                if depth == 0 {
                    return i + k + c.len_utf8();
                }
            }
            _ => {}
        }
    }
    end
}

/// The dotted identifier starting exactly at `i`.
pub fn ident_from(code: &str, i: usize, end: usize) -> Option<(usize, usize)> {
    ident_end(code, i, end).map(|j| (i, j))
}

/// Where a dotted identifier starting at `i` ends. Each component is plain (an identifier
/// start, then identifier characters) or quoted, `«…»` around any characters but `»` (Lean's
/// `idBeginEscape`/`idEndEscape`, `Lean/Parser/Basic.lean` `identFn`): `«main»` is the name
/// `main`, and `debug.«skipKernelTC»` the option `debug.skipKernelTC`.
fn ident_end(code: &str, i: usize, end: usize) -> Option<usize> {
    let component_start = |at: usize| {
        code[at..end]
            .chars()
            .next()
            .is_some_and(|c| c == '«' || is_ident_start(c))
    };
    if !component_start(i) {
        return None;
    }
    let mut j = i;
    loop {
        if code[j..end].starts_with('«') {
            j += code[j..end].find('»')? + '»'.len_utf8();
        } else {
            while let Some(c) = code[j..end].chars().next().filter(|&c| is_ident_char(c)) {
                j += c.len_utf8();
            }
        }
        if code[j..end].starts_with('.') && component_start(j + 1) {
            j += 1;
        } else {
            return Some(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_comments_and_strings() {
        let t = "def a := \"x -- y\" -- c\n/- a /- b -/ c -/ def b\n";
        let l = lex(t);
        assert_eq!(l.code.len(), t.len());
        assert!(l.code.starts_with("def a := \"      \"     \n"));
        assert!(l.code.ends_with(" def b\n"));
        assert_eq!(l.comments.len(), 2);
    }

    #[test]
    fn identifiers() {
        let code = "#check Foo.f₁.succ (h.1) x";
        let (a, b) = ident_at(code, 9).unwrap();
        assert_eq!(&code[a..b], "Foo.f₁.succ");
        let (a, b) = ident_at(code, code.len()).unwrap();
        assert_eq!(&code[a..b], "x");
        let all: Vec<_> = idents(code, 0, code.len())
            .into_iter()
            .map(|(a, b)| &code[a..b])
            .collect();
        assert_eq!(all, ["check", "Foo.f₁.succ", "h", "x"]);
    }
}
