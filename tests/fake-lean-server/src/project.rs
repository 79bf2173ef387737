//! The Lake project the fake serves: its root (the process cwd, reference §1.2), the mapping
//! between `file:` URIs, paths and module names, and the declaration index over every `.lean`
//! file under the root (hidden directories such as `.lake` skipped) with open documents taking
//! precedence over the disk — what the watchdog's .ilean index plus live ileans give real Lean.

use crate::analysis::Analysis;
use crate::outline::Decl;
use crate::text::Text;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// One source of declarations: an open document or a file on disk.
#[derive(Clone)]
pub struct Source {
    pub uri: String,
    pub analysis: Arc<Analysis>,
    pub module: Option<String>,
}

/// A declaration found in some source.
#[derive(Clone)]
pub struct Found {
    pub source: Source,
    pub decl: usize,
}

impl Found {
    pub fn decl(&self) -> &Decl {
        &self.source.analysis.outline.decls[self.decl]
    }
}

pub struct Project {
    pub root: PathBuf,
    cache: HashMap<PathBuf, (SystemTime, Arc<Analysis>)>,
}

impl Project {
    pub fn new(root: PathBuf) -> Project {
        Project {
            root,
            cache: HashMap::new(),
        }
    }

    /// The path of a `file:` URI (percent-decoded); `None` for other schemes.
    pub fn path_of_uri(uri: &str) -> Option<PathBuf> {
        let rest = uri.strip_prefix("file://")?;
        Some(PathBuf::from(percent_decode(rest)))
    }

    pub fn uri_of_path(path: &Path) -> String {
        let mut s = String::from("file://");
        for b in path.to_string_lossy().bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                    s.push(b as char)
                }
                _ => s.push_str(&format!("%{b:02X}")),
            }
        }
        s
    }

    /// The module name of a path under the root (`Fixture/Basic.lean` → `Fixture.Basic`),
    /// relative to its library's `srcDir` when one holds it (see `lakefile`).
    pub fn module_of_path(&self, path: &Path) -> Option<String> {
        crate::lakefile::module_of_path(&self.root, path)
    }

    pub fn module_of_uri(&self, uri: &str) -> Option<String> {
        self.module_of_path(&Self::path_of_uri(uri)?)
    }

    pub fn path_of_module(&self, module: &str) -> PathBuf {
        crate::lakefile::source_of(&self.root, module)
    }

    /// Every source: the open documents, then the files on disk that are not open.
    pub fn sources(&mut self, open: &[(String, Arc<Analysis>)]) -> Vec<Source> {
        let mut out: Vec<Source> = open
            .iter()
            .map(|(uri, a)| Source {
                uri: uri.clone(),
                analysis: a.clone(),
                module: self.module_of_uri(uri),
            })
            .collect();
        let open_paths: HashSet<PathBuf> = open
            .iter()
            .filter_map(|(u, _)| Self::path_of_uri(u))
            .collect();
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        files.sort();
        for path in files {
            if open_paths.contains(&path) {
                continue;
            }
            if let Some(a) = self.load(&path) {
                out.push(Source {
                    uri: Self::uri_of_path(&path),
                    analysis: a,
                    module: self.module_of_path(&path),
                });
            }
        }
        out
    }

    /// The analysis of a file on disk, cached by modification time.
    pub fn load(&mut self, path: &Path) -> Option<Arc<Analysis>> {
        let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        if let Some((t, a)) = self.cache.get(path)
            && *t == mtime
        {
            return Some(a.clone());
        }
        let text = std::fs::read_to_string(path).ok()?;
        let a = Arc::new(Analysis::new(Text::new(&text)));
        self.cache.insert(path.to_owned(), (mtime, a.clone()));
        Some(a)
    }

    /// The project modules `module` imports, transitively (itself excluded).
    pub fn import_closure(
        &mut self,
        imports: &[String],
        open: &[(String, Arc<Analysis>)],
    ) -> Vec<String> {
        let by_module: HashMap<String, Arc<Analysis>> = open
            .iter()
            .filter_map(|(u, a)| Some((self.module_of_uri(u)?, a.clone())))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        let mut todo: Vec<String> = imports.to_vec();
        while let Some(m) = todo.pop() {
            if seen.contains(&m) {
                continue;
            }
            let path = self.path_of_module(&m);
            let a = match by_module.get(&m) {
                Some(a) => Some(a.clone()),
                None => self.load(&path),
            };
            let Some(a) = a else { continue };
            todo.extend(a.outline.imports.iter().cloned());
            seen.push(m);
        }
        seen
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            Ok(_) if name.ends_with(".lean") && name != "lakefile.lean" => out.push(path),
            _ => {}
        }
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let p = Path::new("/tmp/a b/Ä.lean");
        let u = Project::uri_of_path(p);
        assert_eq!(u, "file:///tmp/a%20b/%C3%84.lean");
        assert_eq!(Project::path_of_uri(&u).unwrap(), p);
        let pr = Project::new(PathBuf::from("/r"));
        assert_eq!(
            pr.module_of_uri("file:///r/Fixture/Basic.lean").as_deref(),
            Some("Fixture.Basic")
        );
    }
}
