//! Heartbeats end to end: a `lean_sync` with a progress token whose elaboration the fake Lean
//! holds (a gate), so Lean reports nothing new for as long as the test likes.
//!
//! Why this design: the server is run with a short heartbeat period (`--heartbeat-ms 20`), and
//! the "minute of elaboration" is measured in heartbeat ticks, not in time: the gate stays shut
//! until twelve heartbeats (a minute's worth at the default 5 s period) have arrived, then opens.
//! Nothing here waits on or asserts about the clock; the test synchronises on the gate and on
//! the notifications themselves. What it checks is what the stream must hold whatever the
//! timing: heartbeats flow while Lean is silent, every progress value is larger than the one
//! before, and nothing follows the answer. The gap bound itself (never over 10 s) is measured on
//! a paused clock in `src/mcp/heartbeat_tests.rs`.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::support::{call, request};

const BEAT: &str = "lean_sync on Fixture/Gated.lean is still working.";

fn progress_values(seen: &[Value]) -> Vec<f64> {
    seen.iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().expect("numeric progress"))
        .collect()
}

#[test]
fn a_call_held_by_lean_hears_heartbeats_until_its_answer() {
    if crate::harness::fake_only("a_call_held_by_lean_hears_heartbeats_until_its_answer") {
        return;
    }
    let project = Project::fixture();
    project.write(
        "Fixture/Gated.lean",
        "def held : Nat := 1 -- fake: gate minute\n",
    );
    let mut lean = Lean::start(&[&project], &["--heartbeat-ms", "20"], &[]);
    let mut params = call("lean_sync", args(&project, "Fixture/Gated.lean", json!({})));
    params["_meta"] = json!({"progressToken": "hb"});
    lean.server.send(&request(7, "tools/call", params));
    lean.gate_entered("minute");
    let mut seen = Vec::new();
    let mut beats = 0;
    while beats < 12 {
        let message = lean.server.recv();
        assert!(
            message.get("id").is_none(),
            "answered while held: {message}"
        );
        beats += usize::from(message["params"]["message"] == BEAT);
        seen.push(message);
    }
    lean.open_gate("minute");
    let rest = lean.server.until_response(&json!(7));
    let (answer, before) = rest.split_last().expect("the answer");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    seen.extend_from_slice(before);
    let values = progress_values(&seen);
    assert!(values.len() >= 12, "{values:?}");
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    // Nothing for this call after its answer, in the whole transcript.
    let transcript = lean.server.finish_clean();
    let lines: Vec<&str> = transcript.lines().collect();
    let answered = lines
        .iter()
        .position(|l| l.contains("\"id\":7") && l.contains("\"result\""))
        .expect("the answer in the transcript");
    let last_progress = lines
        .iter()
        .rposition(|l| l.contains("\"progressToken\":\"hb\""))
        .expect("progress in the transcript");
    assert!(last_progress < answered, "progress after the answer");
}
