//! Heartbeats on a call that waits a minute while its backend says nothing new, measured on a
//! clock the test controls.
//!
//! Why this design: the property is about time (no gap between progress notifications longer
//! than 10 s), and a test must neither take a minute of wall time nor assert on the wall clock.
//! So the call runs in a runtime whose clock is paused (`start_paused`): Tokio advances it only
//! when every task is idle, straight to the next timer, so the 60 s "elaboration" (the host's
//! own timer) takes no wall time and every notification is stamped, on arrival, with the exact
//! virtual instant it was queued at. The server's heartbeat timers run on that same clock, as
//! they do in production. The end-to-end counterpart against the fake Lean, driven by a gate
//! rather than a clock, is `tests/lean_host/heartbeat.rs`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::CallTask;
use crate::mcp::catalog::{Execution, ToolAnnotations, ToolHost, ToolResult, ToolSpec};
use crate::mcp::context::{CallContext, CallIdentity, CallKey, CallSink, LogPolicy};
use crate::mcp::jsonrpc::RequestId;
use crate::mcp::protocol::{ClientInfo, ProtocolFamily, ServerIdentity};
use crate::mcp::status::{DEFAULT_HEARTBEAT, StatusNotice};
use crate::mcp::transport::{QueueLimits, bounded};

/// A backend that works for 60 s and reports one step of its own, at 7 s.
struct Elaborating;

impl ToolHost for Elaborating {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "elaborate".into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            annotations: ToolAnnotations::default(),
            execution: Execution::Concurrent,
            status: StatusNotice::WhenSlow,
        }]
    }

    async fn call(&self, _tool: &str, _arguments: Value, ctx: CallContext) -> ToolResult {
        tokio::time::sleep(Duration::from_secs(7)).await;
        ctx.progress("Lean reports a line");
        tokio::time::sleep(Duration::from_secs(53)).await;
        Ok(json!({"done": true}))
    }
}

/// Runs one `elaborate` call with `token`; every line it wrote, each with its virtual instant
/// (seconds after the call started) and whether it is the answer.
async fn run(token: Option<Value>) -> Vec<(f64, Value)> {
    let (out, mut lines) = bounded(QueueLimits {
        items: 1024,
        bytes: 1 << 20,
    });
    let (terminal, mut terminals) = tokio::sync::mpsc::unbounded_channel();
    let id = RequestId::from_value(&json!(1)).unwrap();
    let identity = CallIdentity {
        key: CallKey(1),
        id: id.clone(),
        tool: "elaborate".into(),
        progress_token: token,
        log_policy: LogPolicy::Request(None),
        client: ClientInfo {
            family: ProtocolFamily::Legacy,
            name: None,
        },
    };
    let sink = Arc::new(CallSink::new(identity, out, terminal));
    let task = CallTask {
        host: Arc::new(Elaborating),
        identity: ServerIdentity {
            name: "t".into(),
            version: "0".into(),
            instructions: None,
        },
        id,
        tool: "elaborate".into(),
        family: ProtocolFamily::Legacy,
        status: StatusNotice::WhenSlow,
        status_delay: Duration::from_secs(3600),
        heartbeat: DEFAULT_HEARTBEAT,
        cancel_grace: Duration::from_secs(1),
        sink,
        token: CancellationToken::new(),
        cancellable: true,
    };
    let started = Instant::now();
    let call = tokio::spawn(task.run(json!({}), None));
    let mut seen = Vec::new();
    loop {
        tokio::select! {
            Some(line) = lines.recv() => {
                let at = (Instant::now() - started).as_secs_f64();
                seen.push((at, serde_json::from_slice(&line).unwrap()));
            }
            Some(end) = terminals.recv() => {
                // Every notification was queued before the answer was handed over.
                while let Some(line) = lines.try_recv() {
                    let at = (Instant::now() - started).as_secs_f64();
                    seen.push((at, serde_json::from_slice(&line).unwrap()));
                }
                let at = (Instant::now() - started).as_secs_f64();
                seen.push((at, serde_json::from_slice(&end.line).unwrap()));
                break;
            }
        }
    }
    call.await.unwrap();
    seen
}

#[tokio::test(start_paused = true)]
async fn a_minute_of_silence_never_leaves_a_gap_over_ten_seconds() {
    let seen = run(Some(json!("p"))).await;
    let (answer_at, answer) = seen.last().unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["done"], true,
        "{answer}"
    );
    assert_eq!(*answer_at, 60.0);
    let progress: Vec<(f64, f64)> = seen[..seen.len() - 1]
        .iter()
        .map(|(at, line)| {
            assert_eq!(line["method"], "notifications/progress", "{line}");
            (*at, line["params"]["progress"].as_f64().unwrap())
        })
        .collect();
    // From the call's start through each notification to the answer: no gap over 10 s.
    let instants: Vec<f64> = std::iter::once(0.0)
        .chain(progress.iter().map(|(at, _)| *at))
        .chain(std::iter::once(*answer_at))
        .collect();
    let widest = instants.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(widest <= 10.0, "a gap of {widest} s: {instants:?}");
    // Strictly increasing, the host's own step among them, and the beats timed from it.
    assert!(progress.windows(2).all(|w| w[1].1 > w[0].1), "{progress:?}");
    let at: Vec<f64> = progress.iter().map(|(at, _)| *at).collect();
    assert_eq!(
        at,
        [
            5.0, 7.0, 12.0, 17.0, 22.0, 27.0, 32.0, 37.0, 42.0, 47.0, 52.0, 57.0
        ]
    );
    assert_eq!(
        seen[0].1["params"]["message"],
        "elaborate is still working."
    );
    assert_eq!(seen[1].1["params"]["message"], "Lean reports a line");
}

#[tokio::test(start_paused = true)]
async fn without_a_progress_token_there_are_no_heartbeats() {
    let seen = run(None).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
}
