//! The watchdog's reference index (README "The reference index"): what `textDocument/references`,
//! `workspace/symbol` and the definition fast path answer from, as Lean's
//! `Server/References.lean` keeps it and `Server/Watchdog.lean` feeds it.
//!
//! Lean keys every worker's report by a *module name* (`References.workers : Name → (version,
//! refs)`), never by the document's URI, and names a document's module from its real path
//! (`searchModuleNameOfFileName` calls `IO.FS.realPath`): a link to `A.lean` is module `A`. A
//! version's final report replaces the module's entry unless the entry is of a higher version
//! (`finalizeWorkerRefs`); closing a document erases its module's entry (`removeWorkerRefs`),
//! whichever document put it there; results are located by the module's own file
//! (`findModuleWithExt` + `realPath`), never by the reporting document. Where no worker reported
//! a module, the `.ilean` index answers (`allRefs`: workers override ileans), played by the
//! files on disk ([`Ileans`]).

use crate::analysis::Analysis;
use crate::config::{Ileans, RefsEra};
use crate::project::{Project, Source};
use crate::server::Server;
use crate::text::Text;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// Lean's name for a module outside every source directory (`externalUriToName`, newer
/// `Server/Utils.lean`): such a document is indexed under its own URI.
const EXTERNAL: &str = "external:";

/// What one module's worker reported last: the version, and the text its references are of.
pub struct Reported {
    pub version: i64,
    pub text: Arc<Analysis>,
}

/// `References.workers`, in a stable order (Lean's `HashMap` has none; the fake sorts).
#[derive(Default)]
pub struct References {
    workers: BTreeMap<String, Reported>,
}

impl References {
    /// `finalizeWorkerRefs`: the final report of `version` replaces the entry unless it is of a
    /// higher version.
    pub fn finalize(&mut self, module: &str, version: i64, text: Arc<Analysis>) {
        if self
            .workers
            .get(module)
            .is_some_and(|r| version < r.version)
        {
            return;
        }
        self.workers
            .insert(module.to_owned(), Reported { version, text });
    }

    /// `removeWorkerRefs`: a closed document's module is forgotten, whoever reported it.
    pub fn remove(&mut self, module: &str) {
        self.workers.remove(module);
    }

    /// The text the index holds for `module`: its worker's, else its `.ilean` stand-in.
    pub fn text_of(
        &self,
        module: &str,
        project: &mut Project,
        ileans: Ileans,
    ) -> Option<Arc<Analysis>> {
        if let Some(reported) = self.workers.get(module) {
            return Some(reported.text.clone());
        }
        let path = project.path_of_module(module);
        has_ilean(project, ileans, module, &path).then(|| project.load(&path))?
    }

    /// Every module the index knows, each once, as a source located at its own file (`allRefs`
    /// with the URIs `findModuleWithExt` + `realPath` give): the workers' reports, then the
    /// `.ilean` stand-in for every other module.
    pub fn sources(&self, project: &mut Project, ileans: Ileans) -> Vec<Source> {
        let mut out = Vec::new();
        for (module, reported) in &self.workers {
            let uri = match module.strip_prefix(EXTERNAL) {
                Some(uri) => uri.to_owned(),
                None => {
                    let path = project.path_of_module(module);
                    if !path.exists() {
                        // `findModuleWithExt` finds no file: Lean skips the module.
                        continue;
                    }
                    project.lean_uri(&path)
                }
            };
            out.push(Source {
                uri,
                open: None,
                analysis: reported.text.clone(),
                module: Some(module.clone()),
            });
        }
        let reported: HashSet<&String> = self.workers.keys().collect();
        for (path, module) in project.files() {
            if reported.contains(&module) || !has_ilean(project, ileans, &module, &path) {
                continue;
            }
            if let Some(analysis) = project.load(&path) {
                out.push(Source {
                    uri: project.lean_uri(&path),
                    open: None,
                    analysis,
                    module: Some(module),
                });
            }
        }
        out
    }
}

/// The key Lean's watchdog gives a document at `uri` (see the module comment): its real path's
/// module, `external:<uri>` (newer watchdogs, `moduleFromDocumentUri`) or nothing (older ones,
/// `searchModuleNameOfFileName` alone) for a path outside every source directory.
pub fn module_key(project: &Project, uri: &str, external: bool) -> Option<String> {
    match project.real_module_of_uri(uri) {
        Some(module) => Some(module),
        None => external.then(|| format!("{EXTERNAL}{uri}")),
    }
}

impl Server {
    /// The module the watchdog files a report, a close or a request about `uri` under: the
    /// open document's, fixed when it opened (newer watchdogs: `fileWorkerMods`; a closed
    /// document has none), else its path's, looked up now (older ones, open or not).
    pub fn indexed_module(&self, uri: &str) -> Option<String> {
        match self.cfg.refs_era {
            RefsEra::Open => self.docs.get(uri)?.module.clone(),
            RefsEra::Path => module_key(&self.project, uri, false),
        }
    }

    /// The worker of `uri` finished `version` (`$/lean/ileanInfoFinal`): its references enter
    /// the index. A header that failed reports no command, so no references.
    pub fn ilean_final(&mut self, uri: &str, version: i64) {
        let Some(module) = self.indexed_module(uri) else {
            return;
        };
        let doc = &self.docs[uri];
        let text = match doc.header_error {
            Some(_) => Arc::new(Analysis::new(Text::new(""))),
            None => doc.analysis.clone(),
        };
        self.refs.finalize(&module, version, text);
    }

    /// The document at `uri` is closing (`eraseFileWorker`): its module leaves the index.
    pub fn ilean_closed(&mut self, uri: &str) {
        if let Some(module) = self.indexed_module(uri) {
            self.refs.remove(&module);
        }
    }

    /// The text the index holds for the module of a request about `uri`, if any.
    pub fn indexed_text(&mut self, uri: &str) -> Option<Arc<Analysis>> {
        let module = self.indexed_module(uri)?;
        self.refs
            .text_of(&module, &mut self.project, self.cfg.ileans)
    }

    /// Every module the index knows, as sources (see [`References::sources`]).
    pub fn indexed_sources(&mut self) -> Vec<Source> {
        self.refs.sources(&mut self.project, self.cfg.ileans)
    }
}

/// Whether the `.ilean` index has `module` (see [`Ileans`]).
fn has_ilean(project: &Project, ileans: Ileans, module: &str, source: &Path) -> bool {
    match ileans {
        Ileans::Sources => source.exists(),
        Ileans::Built => project.ilean_path(module).exists(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Arc<Analysis> {
        Arc::new(Analysis::new(Text::new(s)))
    }

    #[test]
    fn a_lower_final_is_ignored_an_equal_or_higher_one_replaces_and_a_close_erases() {
        let mut refs = References::default();
        refs.finalize("A", 5, text("def a := 1\n"));
        refs.finalize("A", 3, text("def lower := 1\n"));
        assert_eq!(refs.workers["A"].version, 5);
        assert!(refs.workers["A"].text.text.as_str().contains("def a"));
        refs.finalize("A", 5, text("def same := 1\n"));
        assert!(refs.workers["A"].text.text.as_str().contains("def same"));
        refs.finalize("A", 9, text("def higher := 1\n"));
        assert_eq!(refs.workers["A"].version, 9);
        refs.remove("A");
        assert!(refs.workers.is_empty());
        // After a close, any version is taken again.
        refs.finalize("A", 1, text("def again := 1\n"));
        assert_eq!(refs.workers["A"].version, 1);
    }
}
