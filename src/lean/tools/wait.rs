//! Waiting on Lean about one document, the way every tool does.
//!
//! Contract: [`watched`] sends one request about the document (see `Runtime::document_request`:
//! bounded, cancellable, retried once after a crash) and, while it waits, reports the
//! document's live events through the call's [`Reporter`]. When the document's worker crashes
//! during the wait (a fatal `fileProgress` that no error explains), it is revived at once, once:
//! Lean holds requests for a crashed document until a `didChange`, so without it the wait would
//! last until the Lean timeout. Events still queued when the answer arrives are reported before
//! it returns (Lean sent them first).

use std::pin::pin;

use serde_json::Value;
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use crate::lean::error::HostError;
use crate::lean::progress::{LiveDiagnostics, Reporter};
use crate::lean::session::mirror::{DocEvent, Document, EventKind};
use crate::lean::tools::call::LeanCall;
use crate::lean::workspace::runtime::Runtime;

/// Asks Lean `method` about `document` (params built from the document as it then stands),
/// reporting and reviving as the contract says. The answer, and the LSP version it concerns.
pub async fn watched(
    call: &LeanCall<'_>,
    runtime: &Runtime,
    document: &Document,
    events: &mut Receiver<DocEvent>,
    live: LiveDiagnostics,
    method: &str,
    params: impl Fn(&Document) -> Value,
) -> Result<(Value, i64), HostError> {
    let mut reporter = Reporter::new(call.ctx, call.path_argument(), document, live);
    let uri = document.uri.clone();
    let request = runtime.document_request(&uri, method, params, &call.cancel);
    let mut request = pin!(request);
    let mut revived = false;
    let answer = loop {
        tokio::select! {
            biased;
            answer = &mut request => break answer,
            event = events.recv() => match event {
                Ok(event) => {
                    reporter.report(&event);
                    let fatal = matches!(&event.kind, EventKind::Progress(p) if p.fatal);
                    if fatal && !revived && *event.uri == *uri {
                        revived = runtime.revive_if_still(&uri, event.lsp_version, false).await;
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break (&mut request).await,
            },
        }
    };
    reporter.drain(events);
    answer
}
