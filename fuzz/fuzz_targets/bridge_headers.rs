//! The bridge's request checks: Host/Origin, method, Content-Type, Accept, the body's shape and
//! the era's MCP headers, in the handler's order.
//!
//! Input: the era, the HTTP method, header pairs and a body. Checked: nothing panics; a refusal
//! is one of the statuses the contract names with a JSON-RPC error body whose id is the body's
//! id or null; a request forwarded in the modern era had headers that agree with its body.

#![no_main]

use arbitrary::Arbitrary;
use lean_beam_mcp_bridge::Mode;
use lean_beam_mcp_bridge::fuzzing::{Verdict, check, headers};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const PORT: u16 = 8080;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    modern: bool,
    method: &'a [u8],
    headers: Vec<(Name<'a>, &'a [u8])>,
    body: &'a [u8],
}

/// Mostly the names the checks read, so the fuzzer spends its time on their values.
#[derive(Arbitrary, Debug)]
enum Name<'a> {
    Host,
    Origin,
    ContentType,
    Accept,
    ProtocolVersion,
    McpMethod,
    McpName,
    Other(&'a [u8]),
}

impl<'a> Name<'a> {
    fn bytes(&self) -> &'a [u8] {
        match self {
            Name::Host => b"host",
            Name::Origin => b"origin",
            Name::ContentType => b"content-type",
            Name::Accept => b"accept",
            Name::ProtocolVersion => b"mcp-protocol-version",
            Name::McpMethod => b"mcp-method",
            Name::McpName => b"Mcp-Name",
            Name::Other(name) => name,
        }
    }
}

fuzz_target!(|input: Input<'_>| {
    let mode = if input.modern {
        Mode::Modern
    } else {
        Mode::Legacy
    };
    let pairs: Vec<(&[u8], &[u8])> = input
        .headers
        .iter()
        .map(|(name, value)| (name.bytes(), *value))
        .collect();
    let map = headers(&pairs);
    let body_id = serde_json::from_slice::<Value>(input.body)
        .ok()
        .and_then(|v| v.get("id").cloned());
    match check(mode, PORT, input.method, &map, input.body) {
        Verdict::Rejected { status, body } => {
            assert!(
                [400, 403, 405, 406, 415].contains(&status),
                "status {status}: {body}"
            );
            assert_eq!(body["jsonrpc"], "2.0");
            let code = body["error"]["code"].as_i64().expect("an error code");
            assert!(code < 0, "{body}");
            assert!(body["error"]["message"].is_string(), "{body}");
            let id = &body["id"];
            assert!(
                id.is_null() || Some(id) == body_id.as_ref(),
                "the rejection's id {id} is not the body's {body_id:?}"
            );
        }
        Verdict::Request { id, method } => {
            assert_eq!(Some(&id), body_id.as_ref());
            if mode == Mode::Modern {
                let header = map.get("mcp-method").and_then(|v| v.to_str().ok());
                assert_eq!(
                    header.map(|h| h.trim_matches([' ', '\t'])),
                    Some(method.as_str())
                );
            }
        }
        Verdict::Notification => assert!(body_id.is_none()),
    }
});
