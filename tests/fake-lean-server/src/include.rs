//! `include_str` (README "Files a text reads"): Lean's `elabIncludeStr`
//! (`Lean/Elab/BuiltinTerm.lean`) evaluates its path term, joins it to the directory of the file
//! being elaborated (`ctx.fileName`, the document's path; `FilePath.join`: an absolute path
//! replaces it) and reads the file with `IO.FS.readFile` each time the command is elaborated.
//! The fake reads paths written as string literals, alone or joined by `/`. The file's text
//! decides what is reported there: a missing file is `IO.FS.readFile`'s error, and each
//! `-- fake: error|warning|info|hint "msg"` line of the file's text is reported on the term, so a
//! test can see that the contents Lean read matter.

use crate::analysis::Analysis;
use crate::lexer;
use crate::text::Text;
use serde_json::Value;
use std::path::Path;

/// The token of Lean's `include_str` syntax (`Init/Notation.lean`).
const KEYWORD: &str = "include_str";

/// One `include_str` with a literal path.
#[derive(Clone, Debug, PartialEq)]
pub struct Include {
    /// From the keyword through the path term, in bytes.
    pub span: (usize, usize),
    /// The path as written.
    pub path: String,
}

/// Every `include_str` of the code of `a` between bytes `from` and `to` whose path is literals.
pub fn find(a: &Analysis, from: usize, to: usize) -> Vec<Include> {
    let code = a.code();
    let text = a.text.as_str();
    let mut out = Vec::new();
    let mut at = from;
    while let Some(start) = lexer::find_word(code, at, to, KEYWORD) {
        at = start + KEYWORD.len();
        let mut path = String::new();
        let mut end = at;
        loop {
            let quote = lexer::skip_ws(code, end, to);
            let Some((part, after)) = literal(text, quote) else {
                break;
            };
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&part);
            end = after;
            let slash = lexer::skip_ws(code, end, to);
            if !code[slash..].starts_with('/') || code[slash..].starts_with("/-") {
                break;
            }
            end = slash + 1;
        }
        if !path.is_empty() {
            out.push(Include {
                span: (start, end),
                path,
            });
        }
    }
    out
}

/// The value of the string literal at byte `at` of `text` and the byte just past it.
fn literal(text: &str, at: usize) -> Option<(String, usize)> {
    let rest = text.get(at..)?.strip_prefix('"')?;
    let mut value = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, at + 1 + i + 1)),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

/// What elaborating `include` of the document at `file` reports, reading the file now.
pub fn read(a: &Analysis, file: Option<&Path>, include: &Include) -> Vec<Value> {
    let dir = file.and_then(Path::parent).unwrap_or(Path::new("/"));
    let target = dir.join(&include.path);
    let span = include.span;
    let Ok(contents) = std::fs::read_to_string(&target) else {
        let message = format!(
            "no such file or directory (error code: 2)\n  file: {}",
            target.display()
        );
        return vec![a.diagnostic(1, span, &message)];
    };
    let read = Text::new(&contents);
    let lexed = lexer::lex(read.as_str());
    crate::directives::parse(&read, &lexed)
        .iter()
        .filter_map(|d| {
            let severity = match d.name.as_str() {
                "error" => 1,
                "warning" => 2,
                "info" => 3,
                "hint" => 4,
                _ => return None,
            };
            Some(a.diagnostic(severity, span, d.str_arg(0).unwrap_or_default()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_paths_and_what_the_file_says() {
        let text = "def a := include_str \"d/a.txt\"\n-- include_str \"no\"\n\
                    def b := include_str \"d\" / \"b\\\"q.txt\"\ndef c := include_str p\n";
        let a = Analysis::new(Text::new(text));
        let found = find(&a, 0, text.len());
        let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["d/a.txt", "d/b\"q.txt"]);
        assert_eq!(
            &text[found[0].span.0..found[0].span.1],
            "include_str \"d/a.txt\""
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("M.lean");
        std::fs::create_dir_all(dir.path().join("d")).unwrap();
        let missing = read(&a, Some(&file), &found[0]);
        assert_eq!(missing[0]["severity"], 1);
        assert!(
            missing[0]["message"]
                .as_str()
                .unwrap()
                .starts_with("no such file or directory")
        );
        std::fs::write(dir.path().join("d/a.txt"), "plain data\n").unwrap();
        assert!(read(&a, Some(&file), &found[0]).is_empty());
        std::fs::write(dir.path().join("d/a.txt"), "-- fake: warning \"odd\"\n").unwrap();
        let said = read(&a, Some(&file), &found[0]);
        assert_eq!(
            (&said[0]["severity"], &said[0]["message"]),
            (&2.into(), &"odd".into())
        );
    }
}
