//! The shape of the code, held by a test so it cannot drift: the MCP core never imports the Lean
//! host; the Lean host's wings only ever import the wings below them (so there is no circle);
//! no tool file imports another; and one file alone tells Lean what it has open.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Lean host's wings, from the top floor down (DESIGN.md, "Layout: wings"). A wing may
/// import only wings on lower floors.
const FLOORS: [&[&str]; 12] = [
    &["mod"],
    &["tools"],
    &["state"],
    &["certify"],
    &["lake"],
    &["speculation"],
    &["workspace"],
    &["session"],
    &["server"],
    &["feedback", "syntax"],
    &["json", "options", "progress", "stats", "tail", "text"],
    &["error"],
];

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)
        .expect("a source directory")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The code of a file, without its unit tests (they may reach anywhere).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn floor(wing: &str) -> usize {
    FLOORS
        .iter()
        .position(|floor| floor.contains(&wing))
        .unwrap_or_else(|| panic!("src/lean/{wing} is on no floor of FLOORS: add it"))
}

fn lean_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lean")
}

/// The wing a file of `src/lean` belongs to.
fn wing_of(path: &Path) -> String {
    let relative = path.strip_prefix(lean_dir()).expect("under src/lean");
    let first = relative.components().next().expect("a component");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

#[test]
fn the_mcp_core_never_imports_the_lean_host() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp");
    for file in sources(&core) {
        assert!(
            !code(&file).contains("crate::lean"),
            "{} imports the Lean host",
            file.display()
        );
    }
}

#[test]
fn each_wing_imports_only_the_wings_below_it() {
    let mut wrong = BTreeSet::new();
    for file in sources(&lean_dir()) {
        let wing = wing_of(&file);
        let text = code(&file);
        for (at, _) in text.match_indices("crate::lean::") {
            let rest = &text[at + "crate::lean::".len()..];
            let used: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let is_item = used.chars().next().is_some_and(char::is_uppercase);
            if used == wing || is_item {
                continue;
            }
            if floor(&used) <= floor(&wing) {
                let shown = file.strip_prefix(lean_dir()).unwrap().display().to_string();
                wrong.insert(format!("{shown} ({wing}) imports {used}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the floors: {wrong:#?}");
}

/// The modules a `use` path names first: `a::b` names `a`; `{a, b::c}` names `a` and `b`.
fn first_segments(path: &str) -> Vec<String> {
    let path = path.trim().trim_end_matches(';');
    let Some(group) = path.strip_prefix('{') else {
        return vec![path.split("::").next().unwrap_or("").to_owned()];
    };
    group
        .trim_end_matches('}')
        .split(',')
        .map(|item| item.trim().split("::").next().unwrap_or("").to_owned())
        .filter(|segment| !segment.is_empty() && segment != "self")
        .collect()
}

#[test]
fn no_tool_file_imports_another() {
    // What every tool is made of, not a tool.
    let shared = ["mod", "schema", "args", "call"];
    let tools = lean_dir().join("tools");
    for file in sources(&tools) {
        let relative = file.strip_prefix(&tools).unwrap();
        let name = relative
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if shared.contains(&name.as_str()) {
            continue;
        }
        // A tool split into a directory (todo/) may use its own parts.
        let family = name.split('/').next().unwrap().to_owned();
        let text = code(&file);
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let mut imported = Vec::new();
            if let Some(rest) = line.split("crate::lean::tools::").nth(1) {
                imported.extend(first_segments(rest));
            }
            if !name.contains('/')
                && let Some(rest) = line.trim_start().strip_prefix("use super::")
            {
                imported.extend(first_segments(rest));
            }
            for used in imported {
                assert!(
                    shared.contains(&used.as_str()) || used == family,
                    "{} imports the tool {used}",
                    relative.display()
                );
            }
        }
    }
}

#[test]
fn only_the_document_set_tells_lean_what_it_has_open() {
    let owner = lean_dir().join("session/set.rs");
    for file in sources(&lean_dir()) {
        if file == owner {
            continue;
        }
        let text = code(&file);
        for method in [
            "textDocument/didOpen",
            "textDocument/didChange",
            "textDocument/didClose",
            "textDocument/didSave",
        ] {
            assert!(
                !text.contains(&format!("\"{method}\"")),
                "{} sends {method}: only session/set.rs may",
                file.display()
            );
        }
    }
}
