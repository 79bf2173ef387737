//! The server capabilities of the `initialize` result, per Lean era (`FAKE_LEAN_CAPABILITIES`,
//! README "Environment"), and the requests a Lean without their provider does not handle.
//!
//! Capabilities vary by release (LLS Part 3 "Capabilities vary"): the 2025 watchdog advertises
//! no `signatureHelpProvider` (LLS:52–60 list what it does advertise) and answers
//! `textDocument/signatureHelp` with -32601, as any method without a handler (LLS:264); newer
//! releases add it (LLS:259). The default is the newer set. `-<provider>` drops a provider more
//! (a nested one, `-codeActionProvider.resolveProvider`, becomes `false`), so a client can be
//! tested against a Lean that lacks any optional feature: every provider of LSP's
//! `ServerCapabilities` is optional.

use serde_json::Value;

/// Which Lean's capabilities the server advertises.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// The 2025 watchdog: no `signatureHelpProvider`.
    pub era_2025: bool,
    /// Providers dropped besides (dotted paths).
    pub dropped: Vec<String>,
}

/// Which provider each request needs (LSP 3.17 `ServerCapabilities`).
const PROVIDERS: &[(&str, &str)] = &[
    ("textDocument/hover", "hoverProvider"),
    ("textDocument/signatureHelp", "signatureHelpProvider"),
    ("textDocument/definition", "definitionProvider"),
    ("textDocument/declaration", "declarationProvider"),
    ("textDocument/typeDefinition", "typeDefinitionProvider"),
    ("textDocument/references", "referencesProvider"),
    (
        "textDocument/documentHighlight",
        "documentHighlightProvider",
    ),
    ("textDocument/documentSymbol", "documentSymbolProvider"),
    ("workspace/symbol", "workspaceSymbolProvider"),
    ("textDocument/codeAction", "codeActionProvider"),
    ("codeAction/resolve", "codeActionProvider.resolveProvider"),
    ("textDocument/completion", "completionProvider"),
    (
        "completionItem/resolve",
        "completionProvider.resolveProvider",
    ),
    ("textDocument/semanticTokens/full", "semanticTokensProvider"),
    (
        "textDocument/semanticTokens/range",
        "semanticTokensProvider",
    ),
    ("textDocument/foldingRange", "foldingRangeProvider"),
    ("textDocument/prepareRename", "renameProvider"),
    ("textDocument/rename", "renameProvider"),
    ("textDocument/inlayHint", "inlayHintProvider"),
    ("textDocument/prepareCallHierarchy", "callHierarchyProvider"),
];

impl Capabilities {
    /// `FAKE_LEAN_CAPABILITIES=[2025|newest][,-<provider>…]`.
    pub fn parse(spec: &str) -> Capabilities {
        let mut caps = Capabilities::default();
        for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.strip_prefix('-') {
                Some(provider) => caps.dropped.push(provider.to_owned()),
                None => caps.era_2025 = word == "2025",
            }
        }
        caps
    }

    fn dropped_paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self.dropped.iter().map(String::as_str).collect();
        if self.era_2025 {
            paths.push("signatureHelpProvider");
        }
        paths
    }

    /// Applies the era and the dropped providers to the newest `capabilities` object.
    pub fn apply(&self, capabilities: &mut Value) {
        for path in self.dropped_paths() {
            match path.split_once('.') {
                None => {
                    if let Some(object) = capabilities.as_object_mut() {
                        object.remove(path);
                    }
                }
                Some((provider, flag)) => {
                    if let Some(options) = capabilities.get_mut(provider)
                        && options.is_object()
                    {
                        options[flag] = Value::Bool(false);
                    }
                }
            }
        }
    }

    /// Whether this Lean has a handler for `method` (a method no provider advertises always has
    /// one here; the server decides whether it knows it).
    pub fn handles(&self, method: &str) -> bool {
        let Some((_, provider)) = PROVIDERS.iter().find(|(m, _)| *m == method) else {
            return true;
        };
        !self
            .dropped_paths()
            .iter()
            .any(|dropped| provider == dropped || provider.starts_with(&format!("{dropped}.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_2025_era_has_no_signature_help_and_providers_can_be_dropped() {
        let newest = Capabilities::parse("");
        assert!(newest.handles("textDocument/signatureHelp"));
        let old = Capabilities::parse("2025");
        assert!(!old.handles("textDocument/signatureHelp"));
        assert!(old.handles("textDocument/hover"));
        assert!(old.handles("$/lean/plainGoal"));
        let mut caps = json!({
            "signatureHelpProvider": {"triggerCharacters": [" "]},
            "hoverProvider": true,
            "codeActionProvider": {"resolveProvider": true},
        });
        let some = Capabilities::parse("2025,-hoverProvider,-codeActionProvider.resolveProvider");
        some.apply(&mut caps);
        assert_eq!(
            caps,
            json!({"codeActionProvider": {"resolveProvider": false}})
        );
        assert!(!some.handles("codeAction/resolve"));
        assert!(some.handles("textDocument/codeAction"));
        assert!(!Capabilities::parse("-codeActionProvider").handles("codeAction/resolve"));
    }
}
