//! Revivals, read from the fake's traces: a `didChange` that gives a real document the very
//! text it already had (`text_fnv`, the fake's README "Trace") is the host reviving a worker it
//! took for crashed. The suites hold them to the texts that crash.
//!
//! Contract: [`revivals`] replays each `lake serve`'s trace in its own order, per document URI
//! (twins, under `.lake/beam/`, aside: a twin may be given a text it had), from each `didOpen`;
//! it returns each same-text `didChange` with the texts given the document since its open or
//! its last revival (each by the FNV-1a 64 the fake names it by): the worker may have died
//! under any of them, since a newer text given before a crash was reported dies with the worker
//! (the host's `session/ask.rs`, contract 2), and a revival needs one of them to crash.

use std::collections::HashMap;

use serde_json::Value;

/// One revival: the document, the text given again, and the texts given since the document's
/// open or last revival (the revived one among them).
#[derive(Debug, Clone)]
pub struct Revival {
    pub uri: String,
    pub text: String,
    pub since: Vec<String>,
}

/// The same-text `didChange`s of real documents in `traces` (see the contract).
pub fn revivals(traces: &[(String, usize, Vec<Value>)]) -> Vec<Revival> {
    let mut found = Vec::new();
    for (_, _, entries) in traces {
        let mut given: HashMap<&str, Vec<String>> = HashMap::new();
        for entry in entries.iter().filter(|e| e["dir"] == "in") {
            let (Some(uri), Some(method)) = (entry["uri"].as_str(), entry["method"].as_str())
            else {
                continue;
            };
            if crate::harness::is_twin_uri(uri) {
                continue;
            }
            let text = entry["text_fnv"].as_str().map(str::to_owned);
            match (method, text) {
                ("textDocument/didOpen", Some(text)) => {
                    given.insert(uri, vec![text]);
                }
                ("textDocument/didChange", Some(text)) => {
                    let since = given.entry(uri).or_default();
                    if since.last() == Some(&text) {
                        found.push(Revival {
                            uri: uri.to_owned(),
                            text: text.clone(),
                            since: std::mem::replace(since, vec![text]),
                        });
                    } else {
                        since.push(text);
                    }
                }
                ("textDocument/didClose", _) => {
                    given.remove(uri);
                }
                _ => {}
            }
        }
    }
    found
}

/// FNV-1a 64 of `text` in 16 hex digits, as the fake's trace names a text.
pub fn fnv(text: &str) -> String {
    super::fresh::source_hash(text)
}
