//! What this Lean offers: the capabilities of its `initialize` result, kept for the server's
//! life, and the one table of which request needs which of them.
//!
//! Contract: LSP makes every `…Provider` of `ServerCapabilities` optional, and Lean's vary by
//! release: the 2025 watchdog advertises no `signatureHelpProvider` and answers
//! `textDocument/signatureHelp` with -32601 (reference `lean-language-server.md` §1.2 "Read
//! capabilities at runtime rather than hard-coding them", Part 3 "Capabilities vary"). A request
//! in [`NEEDS`] is sent only when the capability it needs is there (present and not `false`, and
//! for a nested one such as `codeActionProvider.resolveProvider`, `true`); otherwise
//! [`Capabilities::lacks`] names it, and the caller gets `invalidParams` with
//! `reason: "leanLacksFeature"` without Lean being asked. Lean's own extensions
//! (`textDocument/waitForDiagnostics`, `$/lean/…`) are advertised by no capability: they are
//! always asked.

use serde_json::Value;

/// A capability a request needs: its path in `ServerCapabilities`, and what to try without it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// The capability, as a dotted path (`codeActionProvider.resolveProvider`).
    pub capability: &'static str,
    /// What a caller can do instead, if anything.
    pub instead: Option<&'static str>,
}

const fn need(capability: &'static str) -> Need {
    Need {
        capability,
        instead: None,
    }
}

/// The requests whose support a server advertises, and the capability each needs (LSP 3.17,
/// `ServerCapabilities`).
pub const NEEDS: &[(&str, Need)] = &[
    ("textDocument/hover", need("hoverProvider")),
    (
        "textDocument/signatureHelp",
        Need {
            capability: "signatureHelpProvider",
            instead: Some("lean_hover on the function's name shows its signature"),
        },
    ),
    ("textDocument/definition", need("definitionProvider")),
    ("textDocument/declaration", need("declarationProvider")),
    (
        "textDocument/typeDefinition",
        need("typeDefinitionProvider"),
    ),
    ("textDocument/references", need("referencesProvider")),
    (
        "textDocument/documentHighlight",
        need("documentHighlightProvider"),
    ),
    (
        "textDocument/documentSymbol",
        need("documentSymbolProvider"),
    ),
    ("workspace/symbol", need("workspaceSymbolProvider")),
    ("textDocument/codeAction", need("codeActionProvider")),
    (
        "codeAction/resolve",
        need("codeActionProvider.resolveProvider"),
    ),
    ("textDocument/completion", need("completionProvider")),
    (
        "completionItem/resolve",
        need("completionProvider.resolveProvider"),
    ),
    (
        "textDocument/semanticTokens/full",
        need("semanticTokensProvider.full"),
    ),
    (
        "textDocument/semanticTokens/range",
        need("semanticTokensProvider.range"),
    ),
    ("textDocument/foldingRange", need("foldingRangeProvider")),
    ("textDocument/rename", need("renameProvider")),
    ("textDocument/inlayHint", need("inlayHintProvider")),
];

/// The `initialize` result of one server.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capabilities {
    /// `capabilities`, as Lean sent them.
    capabilities: Value,
    /// `serverInfo` (`{name, version}`), or `null`.
    server_info: Value,
}

impl Capabilities {
    /// Reads an `initialize` result.
    pub fn from_initialize(result: &Value) -> Capabilities {
        Capabilities {
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        }
    }

    /// `serverInfo` as Lean sent it (`null` when it sent none).
    pub fn server_info(&self) -> &Value {
        &self.server_info
    }

    /// What `method` needs and this Lean does not offer (see the contract), if anything.
    pub fn lacks(&self, method: &str) -> Option<Need> {
        let (_, need) = NEEDS.iter().find(|(m, _)| *m == method)?;
        (!self.offers(need.capability)).then_some(*need)
    }

    /// Whether the capability at the dotted `path` is offered: there, and neither `false` nor
    /// `null` (a provider is `true` or its options object; a flag such as `resolveProvider`
    /// is `true`).
    fn offers(&self, path: &str) -> bool {
        let found = path
            .split('.')
            .try_fold(&self.capabilities, |at, part| at.get(part));
        !matches!(found, None | Some(Value::Null | Value::Bool(false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lean(capabilities: Value) -> Capabilities {
        Capabilities::from_initialize(&json!({
            "capabilities": capabilities,
            "serverInfo": {"name": "Lean 4 Server", "version": "0.3.0"},
        }))
    }

    #[test]
    fn a_provider_is_offered_as_true_or_as_its_options() {
        let caps = lean(json!({
            "hoverProvider": true,
            "signatureHelpProvider": {"triggerCharacters": [" "]},
            "referencesProvider": false,
            "codeActionProvider": {"resolveProvider": true},
            "completionProvider": {"triggerCharacters": ["."]},
            "semanticTokensProvider": {"full": true, "range": false},
        }));
        assert_eq!(caps.lacks("textDocument/hover"), None);
        assert_eq!(caps.lacks("textDocument/signatureHelp"), None);
        assert_eq!(caps.lacks("codeAction/resolve"), None);
        assert_eq!(caps.lacks("textDocument/semanticTokens/full"), None);
        let lacking = |method| caps.lacks(method).map(|n| n.capability);
        assert_eq!(
            lacking("textDocument/references"),
            Some("referencesProvider")
        );
        assert_eq!(
            lacking("textDocument/definition"),
            Some("definitionProvider")
        );
        assert_eq!(
            lacking("completionItem/resolve"),
            Some("completionProvider.resolveProvider")
        );
        assert_eq!(
            lacking("textDocument/semanticTokens/range"),
            Some("semanticTokensProvider.range")
        );
        assert_eq!(caps.server_info()["name"], "Lean 4 Server");
    }

    #[test]
    fn the_2025_watchdog_has_no_signature_help_and_lean_extensions_are_always_asked() {
        let caps = lean(json!({"hoverProvider": true, "definitionProvider": true}));
        let need = caps.lacks("textDocument/signatureHelp").expect("lacking");
        assert_eq!(need.capability, "signatureHelpProvider");
        assert!(need.instead.unwrap().contains("lean_hover"));
        for method in [
            "textDocument/waitForDiagnostics",
            "$/lean/plainGoal",
            "$/lean/plainTermGoal",
        ] {
            assert_eq!(caps.lacks(method), None, "{method}");
        }
        assert!(
            Capabilities::default()
                .lacks("textDocument/hover")
                .is_some()
        );
    }
}
