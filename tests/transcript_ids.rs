//! Request ids written as decimals or exponents, against the shipped binary in both families: a
//! decimal id is answered with exactly the integer its literal denotes, and one that denotes no
//! integer in the accepted range is -32600 with `id: null`, on every method, so no request can
//! take another's id.
//! (The same rule for the `requestId` a cancellation names is pinned in `transcript_concurrency`.)

mod support;

use serde_json::{Value, json};
use support::*;

const INVALID_REQUEST: i64 = -32600;

/// Literals that are not integers (or not in range), though a float would round them to one.
const NOT_INTEGERS: &[&str] = &[
    "1e-400",
    "-1e-400",
    "0.1e-400",
    "1e-99999999999999999999",
    "9007199254740992.5",
    "18446744073709551616",
    "-9223372036854775809",
    "1e20",
    "1e400",
    "-1e400",
];

/// Literals that denote an integer a float cannot hold, with the integer each denotes.
const EXACT: &[(&str, &str)] = &[
    ("9007199254740993.0", "9007199254740993"),
    ("9007199254740993e0", "9007199254740993"),
    ("123456789012345678.0", "123456789012345678"),
    ("1.8446744073709551615e19", "18446744073709551615"),
    ("-9.223372036854775807e18", "-9223372036854775807"),
    ("0.0001e4", "1"),
];

#[derive(Clone, Copy, Debug)]
enum Family {
    Legacy,
    Modern,
}

/// The methods each family answers directly or through a tool call, with their params.
fn methods(family: Family) -> Vec<(&'static str, Value)> {
    let call = json!({"name": "beam_version", "arguments": {}});
    match family {
        Family::Legacy => vec![("ping", json!({})), ("tools/call", call)],
        Family::Modern => vec![
            ("server/discover", json!({"_meta": modern_meta(json!({}))})),
            ("tools/call", {
                let mut call = call;
                call["_meta"] = modern_meta(json!({}));
                call
            }),
        ],
    }
}

fn line(id: &str, method: &str, params: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

fn start(family: Family) -> McpProcess {
    let mut server = McpProcess::server(&[]);
    if let Family::Legacy = family {
        server.initialize_legacy();
    }
    server
}

/// The id of the answer, as the exact JSON text the server wrote.
fn id_text(response: &Value) -> String {
    response["id"].to_string()
}

#[test]
fn decimal_ids_are_answered_with_the_exact_integer_or_refused() {
    for family in [Family::Legacy, Family::Modern] {
        let mut server = start(family);
        for (method, params) in methods(family) {
            for literal in NOT_INTEGERS {
                server.send_raw(&line(literal, method, &params));
                let response = server.recv();
                assert_error_for(
                    &response,
                    INVALID_REQUEST,
                    Value::Null,
                    "request id must be",
                );
            }
            for (literal, exact) in EXACT {
                server.send_raw(&line(literal, method, &params));
                let response = server.recv();
                assert_eq!(id_text(&response), *exact, "{family:?} {method} {literal}");
                assert!(response.get("result").is_some(), "{response}");
            }
        }
        let name = format!("decimal_ids_{family:?}").to_lowercase();
        assert_transcript!("ids", name.as_str(), server.finish_clean());
    }
}

#[test]
fn a_literal_of_a_million_digits_is_not_taken_for_zero() {
    for family in [Family::Legacy, Family::Modern] {
        let mut server = start(family);
        for (method, params) in methods(family) {
            let literal = format!("0.{}1", "0".repeat(1_000_000));
            server.note(&format!("{method} with id 0.(a million zeros)1"));
            server.write_bytes(format!("{}\n", line(&literal, method, &params)).as_bytes());
            let response = server.recv();
            assert_error_for(
                &response,
                INVALID_REQUEST,
                Value::Null,
                "request id must be",
            );
        }
        server.finish_clean();
    }
}

/// Two requests whose ids a float would confuse both get their own answer, in either order.
#[test]
fn ids_a_float_would_merge_stay_two_requests() {
    let mut server = start(Family::Legacy);
    server.send_raw(&line("9007199254740992", "ping", &json!({})));
    server.send_raw(&line("9007199254740993.0", "ping", &json!({})));
    let answers = [id_text(&server.recv()), id_text(&server.recv())];
    assert_eq!(answers, ["9007199254740992", "9007199254740993"]);
    server.finish_clean();
}

/// A number beyond a float's range elsewhere in a request does not hide its id: the answer is
/// -32602 for that id, not a parse error.
#[test]
fn a_number_out_of_range_in_params_is_invalid_params_for_that_id() {
    let mut server = start(Family::Legacy);
    server.send_raw(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"beam_version","arguments":{"x":1e400}}}"#);
    let response = server.recv();
    assert_error_for(&response, -32602, 7, "beyond the range of a 64-bit float");
    server.finish_clean();
}
