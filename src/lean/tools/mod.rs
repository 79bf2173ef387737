//! The host's tools, one file per family; each file owns its catalog entries and their
//! implementations. This file puts the catalog in its documented order and routes calls.
//!
//! Contract: every workspace-bound call validates its workspace first (nothing starts for an
//! invalid one). Every Lean operation is recorded once in the statistics with its outcome and
//! latency (a call that is cancelled counts as cancelled), and its result echoes the canonical
//! workspace descriptor. `beam_feedback_report` is no Lean operation: it is not recorded, and a
//! confidential report does not echo its workspace.
//!
//! Tools that need no Lean never start one: `beam_version`, `beam_stats` and
//! `beam_feedback_report` read what the host holds; `lean_drop_workspace` ends a runtime;
//! `lean_close` closes in a running Lean only; `lean_release` checks and forgets a handle;
//! `lean_check_receipt` reads files only. Every other tool starts the workspace's Lean on first
//! use.
//!
//! The tools of [`WITH_RECEIPT`], every Lean tool that reads a document, answer with its
//! receipt (`session/receipt.rs`) and say so in their descriptions.

pub mod admin;
pub mod args;
pub mod call;
pub mod certify;
pub mod code_actions;
pub mod defaults;
pub mod documents;
pub mod feedback;
pub mod goals;
pub mod lock;
pub mod navigation;
pub mod receipts;
pub mod save;
pub mod schema;
pub mod speculative;
pub mod todo;
pub mod try_edit;
pub mod version;

use std::time::Instant;

use serde_json::Value;

use crate::lean::error::{HostError, code};
use crate::lean::state::HostState;
use crate::lean::stats::Outcome;
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::mcp::{CallContext, ToolSpec};

/// The tools whose results carry a receipt: every Lean tool that reads a document.
pub const WITH_RECEIPT: [&str; 19] = [
    speculative::RUN_AT,
    speculative::RUN_AT_HANDLE,
    navigation::HOVER,
    navigation::SIGNATURE_HELP,
    navigation::DEFINITION,
    navigation::REFERENCES,
    navigation::DOCUMENT_SYMBOLS,
    goals::GOALS,
    todo::TODO,
    code_actions::RESOLVE,
    speculative::RUN_WITH,
    speculative::RUN_WITH_LINEAR,
    documents::UPDATE,
    documents::SYNC,
    documents::REFRESH,
    save::SAVE,
    save::CLOSE_SAVE,
    try_edit::TRY_EDIT,
    certify::CERTIFY,
];

/// Every tool, in listing order.
pub fn catalog() -> Vec<ToolSpec> {
    let mut tools = vec![
        version::spec(),
        admin::stats_spec(),
        feedback::spec(),
        admin::drop_spec(),
    ];
    tools.extend(speculative::run_at_specs());
    tools.extend(navigation::specs());
    tools.push(goals::spec());
    tools.push(todo::spec());
    tools.push(code_actions::spec());
    tools.extend(speculative::handle_specs());
    tools.push(try_edit::spec());
    tools.push(lock::spec());
    tools.push(certify::spec());
    tools.extend(documents::specs());
    // lean_save and lean_close_save sit between lean_refresh and lean_close.
    let close = tools
        .iter()
        .position(|t| t.name == documents::CLOSE)
        .unwrap_or(tools.len());
    tools.splice(close..close, save::specs());
    tools.push(receipts::spec());
    tools
        .into_iter()
        .map(|spec| {
            if WITH_RECEIPT.contains(&spec.name.as_str()) {
                schema::with_receipt_hint(spec)
            } else {
                spec
            }
        })
        .collect()
}

/// The catalog entries `selected` names (every tool when `None`), in listing order; an
/// unknown name is an error that lists the names there are.
pub fn served(selected: Option<&[String]>) -> Result<Vec<ToolSpec>, String> {
    let all = catalog();
    let Some(selected) = selected else {
        return Ok(all);
    };
    let unknown: Vec<&str> = selected
        .iter()
        .map(|name| name.trim())
        .filter(|name| !all.iter().any(|t| t.name == *name))
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "--tools (LEAN_BEAM_TOOLS) names no such tool: {}; the tools are: {}",
            unknown.join(", "),
            known.join(", ")
        ));
    }
    Ok(all
        .into_iter()
        .filter(|t| selected.iter().any(|name| name.trim() == t.name))
        .collect())
}

/// Whether a tool reports nothing while it runs: the process-wide ones, and
/// `lean_check_receipt`, which reads a few files and never waits on Lean.
pub fn is_quiet(tool: &str) -> bool {
    matches!(tool, version::NAME | admin::STATS | receipts::CHECK)
}

/// Runs one call.
pub async fn dispatch(
    state: &HostState,
    tool: &str,
    arguments: Value,
    ctx: &CallContext,
) -> Result<Value, HostError> {
    match tool {
        version::NAME => Ok(state.identity()),
        admin::STATS => Ok(state.stats_report()),
        admin::DROP => Box::pin(admin::drop_workspace(state, &arguments)).await,
        // Not a Lean operation: it starts nothing and is not counted in the statistics.
        feedback::NAME => Box::pin(feedback::report(state, &arguments, ctx.client())).await,
        _ => {
            let mut call = LeanCall::new(ctx, &arguments)?;
            let recorded = Recorded::new(state, &call.root, tool);
            // Each tool's future is boxed on its own: inline, every call's future would be as
            // large as the largest tool's (lean_try_edit's, lean_certify's), and the MCP core
            // moves it to the heap by copying it whole on every call.
            let result = match tool {
                goals::GOALS => Box::pin(goals::call(state, &mut call)).await,
                speculative::RUN_AT
                | speculative::RUN_AT_HANDLE
                | speculative::RUN_WITH
                | speculative::RUN_WITH_LINEAR
                | speculative::RELEASE => Box::pin(speculative::call(tool, state, &mut call)).await,
                todo::TODO => Box::pin(todo::call(state, &mut call)).await,
                try_edit::TRY_EDIT => Box::pin(try_edit::call(state, &mut call)).await,
                lock::LOCK => Box::pin(lock::call(state, &mut call)).await,
                certify::CERTIFY => Box::pin(certify::call(state, &mut call)).await,
                code_actions::RESOLVE => Box::pin(code_actions::call(state, &mut call)).await,
                documents::UPDATE | documents::SYNC | documents::REFRESH | documents::CLOSE => {
                    Box::pin(documents::call(tool, state, &mut call)).await
                }
                save::SAVE | save::CLOSE_SAVE => Box::pin(save::call(tool, state, &mut call)).await,
                receipts::CHECK => receipts::call(&call),
                _ if tool.starts_with("lean_") => {
                    Box::pin(navigation::call(tool, state, &mut call)).await
                }
                other => Err(HostError::internal(format!(
                    "{other} is listed but not implemented"
                ))),
            };
            recorded.finish(match &result {
                Ok(_) => Outcome::Success,
                Err(error) => Outcome::Error(error.code),
            });
            result
                .map(|value| call.finish(value))
                .map_err(|error| call.with_receipt(error))
        }
    }
}

/// Records a call in the statistics when it ends; a call dropped before it ended (cancelled)
/// is recorded as cancelled.
struct Recorded<'a> {
    state: &'a HostState,
    root: WorkspaceRoot,
    op: &'a str,
    started: Instant,
    done: bool,
}

impl<'a> Recorded<'a> {
    fn new(state: &'a HostState, root: &WorkspaceRoot, tool: &'a str) -> Self {
        Recorded {
            state,
            root: root.clone(),
            op: tool.strip_prefix("lean_").unwrap_or(tool),
            started: Instant::now(),
            done: false,
        }
    }

    fn finish(mut self, outcome: Outcome) {
        self.done = true;
        let outcome = match outcome {
            Outcome::Error(code::REQUEST_CANCELLED) => Outcome::Cancelled,
            other => other,
        };
        self.state
            .stats
            .record(self.root.path(), self.op, outcome, self.started.elapsed());
    }
}

impl Drop for Recorded<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.state.stats.record(
                self.root.path(),
                self.op,
                Outcome::Cancelled,
                self.started.elapsed(),
            );
        }
    }
}
