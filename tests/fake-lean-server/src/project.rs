//! The Lake project the fake serves: its root (the process cwd, reference §1.2), the mapping
//! between `file:` URIs, paths and module names, and the files on disk: every `.lean` file under
//! the root (hidden directories such as `.lake` skipped), what a worker sees besides its own
//! document ([`Project::worker_sources`]) and what stands for the watchdog's `.ilean` index
//! (`references`).
//!
//! URIs Lean builds itself (import closures, locations from its index) are written as its
//! `System.Uri.pathToUri` writes them, in the era `FAKE_LEAN_URI` selects (`Init/System/Uri.lean`,
//! reference Part 3 "URIs"), of the file's real path (`documentUriFromModule`); a URI from the
//! client is read in any form, as `fileUriToPath?` reads it.

use crate::analysis::Analysis;
use crate::config::UriForm;
use crate::outline::Decl;
use crate::text::Text;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// One source of declarations: an open document or a file on disk.
#[derive(Clone)]
pub struct Source {
    /// The URI Lean's index names it by: its own `pathToUri` of the real path for a file on
    /// disk, else (a document not on disk) the client's URI.
    pub uri: String,
    /// The client's URI, when the source is an open document.
    pub open: Option<String>,
    pub analysis: Arc<Analysis>,
    pub module: Option<String>,
}

impl Source {
    /// Whether this source is the open document `uri`.
    pub fn is_document(&self, uri: &str) -> bool {
        self.open.as_deref() == Some(uri)
    }
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
    uri_form: UriForm,
    cache: HashMap<PathBuf, (SystemTime, Arc<Analysis>)>,
}

/// What Lean's `pathToUri` escapes in every era (`rfc3986ReservedChars`), besides DEL and every
/// non-ASCII byte.
const RESERVED: &[u8] = b";:?#[]@&=+$,!'()*%";

impl Project {
    pub fn new(root: PathBuf, uri_form: UriForm) -> Project {
        Project {
            root,
            uri_form,
            cache: HashMap::new(),
        }
    }

    /// The path of a `file:` URI in any form (Lean's `fileUriToPath?`: the host name dropped,
    /// `%XX` decoded in either case); `None` for other schemes.
    pub fn path_of_uri(uri: &str) -> Option<PathBuf> {
        let rest = uri.strip_prefix("file://")?;
        let path = &rest[rest.find('/')?..];
        Some(PathBuf::from(percent_decode(path)))
    }

    /// `path` as Lean's `pathToUri` of the era `form` writes it.
    pub fn uri_of_path(path: &Path, form: UriForm) -> String {
        let mut s = String::from("file://");
        for b in path.to_string_lossy().bytes() {
            let control = form == UriForm::New && b <= b' ';
            if RESERVED.contains(&b) || b >= 0x7f || control {
                match form {
                    UriForm::New => s.push_str(&format!("%{b:02X}")),
                    UriForm::Old => s.push_str(&format!("%{b:02x}")),
                }
            } else {
                s.push(b as char);
            }
        }
        s
    }

    /// The URI Lean builds itself for a file: `pathToUri (← realPath path)`.
    pub fn lean_uri(&self, path: &Path) -> String {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        Self::uri_of_path(&real, self.uri_form)
    }

    /// The URI Lean's index names an open document by: its own for a file on disk (whatever
    /// form the client opened it under), else the client's.
    fn indexed_uri(&self, uri: &str) -> String {
        match Self::path_of_uri(uri) {
            Some(path) if path.exists() => self.lean_uri(&path),
            _ => uri.to_owned(),
        }
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

    /// The module Lean's watchdog names the document at `uri` by: its real path's
    /// (`searchModuleNameOfFileName` resolves links with `IO.FS.realPath`, so a link is its
    /// target's module); `None` when the path does not resolve.
    pub fn real_module_of_uri(&self, uri: &str) -> Option<String> {
        let real = std::fs::canonicalize(Self::path_of_uri(uri)?).ok()?;
        self.module_of_path(&real)
    }

    /// Where a build leaves `module`'s `.ilean` (`.lake/build/lib/lean/A/B.ilean`).
    pub fn ilean_path(&self, module: &str) -> PathBuf {
        let relative = format!("{}.ilean", module.replace('.', "/"));
        self.root.join(".lake/build/lib/lean").join(relative)
    }

    /// Every `.lean` file under the root, hidden directories skipped, with its module.
    pub fn files(&self) -> Vec<(PathBuf, String)> {
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        files.sort();
        files
            .into_iter()
            .filter_map(|path| Some((path.clone(), self.module_of_path(&path)?)))
            .collect()
    }

    /// What a worker's own answers (hover, completion, highlights, signature help, its
    /// definitions) see: its document, and the files on disk (the modules Lake built for it);
    /// never another open document, whose text is another worker's.
    pub fn worker_sources(&mut self, uri: &str, own: &Arc<Analysis>) -> Vec<Source> {
        let mut out = vec![Source {
            uri: self.indexed_uri(uri),
            open: Some(uri.to_owned()),
            analysis: own.clone(),
            module: self.module_of_uri(uri),
        }];
        let own_path = Self::path_of_uri(uri).and_then(|p| std::fs::canonicalize(p).ok());
        for (path, module) in self.files() {
            if own_path.as_ref() == Some(&path) {
                continue;
            }
            if let Some(analysis) = self.load(&path) {
                out.push(Source {
                    uri: self.lean_uri(&path),
                    open: None,
                    analysis,
                    module: Some(module),
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

    /// The URIs of the project modules `imports` reach, transitively, as the worker reports them
    /// (`$/lean/importClosure`: `documentUriFromModule` of each, those without a file left out):
    /// what the watchdog's `importedBy` is keyed by.
    pub fn import_closure_uris(
        &mut self,
        imports: &[String],
        open: &[(String, Arc<Analysis>)],
    ) -> Vec<String> {
        self.import_closure(imports, open)
            .iter()
            .map(|m| self.path_of_module(m))
            .filter(|path| path.exists())
            .map(|path| self.lean_uri(&path))
            .collect()
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

/// Lean's `decodeUri`: `%XX` in either case is a byte; the one or two characters after a `%`
/// that does not start one go with it as they are.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let digit = |i: usize| b.get(i).and_then(|&c| hex(c));
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let taken = match (digit(i + 1), digit(i + 2)) {
            (Some(h), Some(l)) => {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
            (Some(_), None) if i + 2 < b.len() => 3,
            _ => 2,
        };
        out.extend_from_slice(&b[i..i + taken]);
        i += taken;
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
        let new = Project::uri_of_path(p, UriForm::New);
        assert_eq!(new, "file:///tmp/a%20b/%C3%84.lean");
        let old = Project::uri_of_path(p, UriForm::Old);
        assert_eq!(old, "file:///tmp/a b/%c3%84.lean");
        let reserved = Path::new("/w/proofs+(v2)@x/;:?#[]&=$,!'*%.lean");
        assert_eq!(
            Project::uri_of_path(reserved, UriForm::New),
            "file:///w/proofs%2B%28v2%29%40x/%3B%3A%3F%23%5B%5D%26%3D%24%2C%21%27%2A%25.lean"
        );
        for u in [&new, &old, "file://localhost/tmp/a%20b/%c3%84.lean"] {
            assert_eq!(Project::path_of_uri(u).unwrap(), p, "{u}");
        }
        assert_eq!(
            Project::path_of_uri("file:///w/%zz%4").unwrap(),
            Path::new("/w/%zz%4")
        );
        let pr = Project::new(PathBuf::from("/r"), UriForm::New);
        assert_eq!(
            pr.module_of_uri("file:///r/Fixture/Basic.lean").as_deref(),
            Some("Fixture.Basic")
        );
    }
}
