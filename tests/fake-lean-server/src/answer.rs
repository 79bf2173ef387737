//! Request routing to answers: which document requests exist, what each waits for (reference
//! §1.8: position requests wait until elaboration reaches the position; document-wide ones for
//! the whole version; `waitForDiagnostics` for its version), and the answer computed from the
//! document's current analysis when it is released.

use crate::assist;
use crate::config::DefinitionMode;
use crate::documents::Need;
use crate::navigate::{self, Index};
use crate::server::Server;
use crate::signature;
use crate::text::{Pos, range_from_json};
use serde_json::{Value, json};

/// What a document request waits for; `None` for a method the server does not know.
pub fn need_of(method: &str, params: &Value) -> Option<Need> {
    let line = || {
        Pos::from_json(&params["position"])
            .map(|p| p.line)
            .unwrap_or(0)
    };
    Some(match method {
        "textDocument/hover"
        | "textDocument/definition"
        | "textDocument/declaration"
        | "textDocument/typeDefinition"
        | "textDocument/signatureHelp"
        | "textDocument/completion"
        | "textDocument/documentHighlight"
        | "textDocument/prepareRename"
        | "textDocument/rename"
        | "textDocument/prepareCallHierarchy"
        | "$/lean/plainGoal"
        | "$/lean/plainTermGoal"
        | "$/lean/rpc/call" => Need::Line(line()),
        "textDocument/codeAction" => Need::Line(
            range_from_json(&params["range"])
                .map(|r| r.1.line)
                .unwrap_or(0),
        ),
        "textDocument/documentSymbol"
        | "textDocument/foldingRange"
        | "textDocument/semanticTokens/full"
        | "textDocument/semanticTokens/range"
        | "textDocument/inlayHint"
        | "textDocument/documentColor"
        | "textDocument/selectionRange" => Need::Complete,
        "textDocument/waitForDiagnostics" => Need::Version(params["version"].as_i64().unwrap_or(0)),
        "$/lean/rpc/connect" | "codeAction/resolve" | "completionItem/resolve" => Need::Now,
        _ => return None,
    })
}

/// The document a request is about.
pub fn uri_of(method: &str, params: &Value) -> Option<String> {
    let v = match method {
        "codeAction/resolve" => &params["data"]["params"]["textDocument"]["uri"],
        "completionItem/resolve" => &params["data"][0],
        "$/lean/rpc/connect" | "textDocument/waitForDiagnostics" => &params["uri"],
        _ => &params["textDocument"]["uri"],
    };
    v.as_str().map(str::to_owned)
}

impl Server {
    /// What the worker of `uri` answers from: its own text and the files on disk.
    fn worker_index(&mut self, uri: &str) -> Index {
        let own = self.docs[uri].analysis.clone();
        Index::new(self.project.worker_sources(uri, &own))
    }

    /// What the watchdog answers from: its reference index (`references`).
    fn watchdog_index(&mut self) -> Index {
        Index::new(self.indexed_sources())
    }

    pub fn answer(
        &mut self,
        uri: &str,
        method: &str,
        params: &Value,
    ) -> Result<Value, (i64, String)> {
        let doc = &self.docs[uri];
        let a = doc.analysis.clone();
        let version = doc.version;
        let failed_header = doc.header_error.is_some();
        let offset = Pos::from_json(&params["position"]).map(|p| a.text.offset(p));
        let at = offset.unwrap_or(0);
        if failed_header && method != "textDocument/waitForDiagnostics" {
            return Ok(match method {
                "textDocument/hover"
                | "textDocument/signatureHelp"
                | "$/lean/plainGoal"
                | "$/lean/plainTermGoal" => Value::Null,
                _ => json!([]),
            });
        }
        Ok(match method {
            "textDocument/waitForDiagnostics" => json!({}),
            "textDocument/hover" => navigate::hover(&self.worker_index(uri), &a, uri, at),
            "textDocument/definition"
            | "textDocument/declaration"
            | "textDocument/typeDefinition" => {
                self.definition_counter += 1;
                let (mode, n) = (self.cfg.definition, self.definition_counter);
                let type_of = method == "textDocument/typeDefinition";
                navigate::definition(&self.worker_index(uri), &a, uri, at, mode, n, type_of)
            }
            "textDocument/documentHighlight" => {
                navigate::highlights(&self.worker_index(uri), &a, uri, at)
            }
            "textDocument/documentSymbol" => navigate::document_symbols(&a),
            "textDocument/completion" => navigate::completion(&self.worker_index(uri), &a, uri, at),
            "completionItem/resolve" => {
                navigate::completion_resolve(&self.worker_index(uri), params)
            }
            "textDocument/signatureHelp" => {
                signature::signature_help(&self.worker_index(uri), &a, at)
            }
            "$/lean/plainGoal" => assist::plain_goal(&a, at),
            "$/lean/plainTermGoal" => assist::plain_term_goal(&a, at),
            "textDocument/codeAction" => assist::code_actions(&a, uri, version, params),
            "codeAction/resolve" => {
                assist::resolve_code_action(&a, uri, version, params).map_err(|m| (-32602, m))?
            }
            "textDocument/semanticTokens/full" => assist::semantic_tokens(&a, None),
            "textDocument/semanticTokens/range" => {
                let lines = range_from_json(&params["range"]).map(|(s, e)| (s.line, e.line));
                assist::semantic_tokens(&a, lines)
            }
            "$/lean/rpc/connect" => {
                self.rpc_sessions += 1;
                json!({"sessionId": format!("{}", 1_000_000_007u64 * self.rpc_sessions)})
            }
            "$/lean/rpc/call" => {
                let m = params["method"].as_str().unwrap_or_default();
                return Err((-32601, format!("No RPC method '{m}' found")));
            }
            "textDocument/prepareRename" | "textDocument/rename" => Value::Null,
            _ => json!([]),
        })
    }

    /// `textDocument/references`, answered by the watchdog from its index (`references`): the
    /// identifiers at the position in the text the index holds for the request's module (which
    /// need not be the document's), then every use of them the index knows.
    pub fn references(&mut self, params: &Value) -> Value {
        let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
        let (Some(a), Some(pos)) = (self.indexed_text(uri), Pos::from_json(&params["position"]))
        else {
            return json!([]);
        };
        let include = params["context"]["includeDeclaration"]
            .as_bool()
            .unwrap_or(true);
        let index = self.watchdog_index();
        navigate::references(&index, &a, a.text.offset(pos), include)
    }

    /// The watchdog's definition fast path (`findDefinitions`): the definitions its index has
    /// of the identifiers at the position, in the text it holds for the request's module;
    /// `None` when it has none, and the worker answers. Played in `FAKE_LEAN_DEFINITION`'s
    /// `locations` form, and in `mixed` for definitions in another module (its own are the
    /// worker's links there).
    pub fn indexed_definitions(&mut self, params: &Value) -> Option<Value> {
        let others_only = match self.cfg.definition {
            DefinitionMode::Locations => false,
            DefinitionMode::Mixed => true,
            DefinitionMode::Links | DefinitionMode::Alternate => return None,
        };
        let uri = params["textDocument"]["uri"].as_str()?;
        let module = self.indexed_module(uri)?;
        let a = self.indexed_text(uri)?;
        let pos = Pos::from_json(&params["position"])?;
        let index = self.watchdog_index();
        let found = navigate::indexed_definitions(&index, &a, a.text.offset(pos))?;
        let own = found.source.module.as_deref() == Some(module.as_str());
        if others_only && own {
            return None;
        }
        Some(json!([navigate::location(found)]))
    }

    pub fn workspace_symbols(&mut self, params: &Value) -> Value {
        let q = params["query"].as_str().unwrap_or_default();
        if q.is_empty() {
            return json!([]);
        }
        navigate::workspace_symbols(&self.watchdog_index(), q)
    }
}
