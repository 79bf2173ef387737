//! Transcripts of the modern (2026-07-28) family against the shipped binary.

mod support;

use serde_json::json;
use support::*;

#[test]
fn discover_then_tools_list_then_beam_version() {
    let mut server = McpProcess::server(&[]);
    let discover = server.ask(modern(1, "server/discover", json!({})));
    assert_eq!(
        discover["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(discover["result"]["ttlMs"], 3_600_000);
    server.ask(modern(2, "tools/list", json!({})));
    server.ask(modern(3, "tools/call", call("beam_version", json!({}))));
    let finished = server.finish();
    assert!(finished.status.success());
    assert_eq!(finished.stderr, "");
    assert_transcript!("modern", "discover_list_call", finished.transcript);
}
