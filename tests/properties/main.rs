//! Property tests of the MCP core: the JSON-RPC decoder, the bounded line reader, request ids,
//! and the coordinator's id-ownership invariant, run in process over real OS pipes.
//!
//! No feature is needed: the test host is compiled in from `tests/test-host/host.rs`. Waiting is
//! always for an observable message; a timeout only turns a hang into a failure.
//!
//! This file holds what the properties share (the proptest configuration and the JSON
//! strategies); the properties live in modules by subject: `decoder`, `line_reader`, `ids` and
//! `coordinator`.

#[allow(dead_code)]
#[path = "../test-host/host.rs"]
mod host;

mod coordinator;
mod decoder;
mod ids;
mod line_reader;

use proptest::prelude::*;
use serde_json::{Value, json};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Minimal failing cases are pinned as plain tests (in `line_reader`), not in a
        // regressions file.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

/// Numbers whose JSON text parses back to the same `Number` (integers of every range, integral
/// and dyadic floats, and a few large magnitudes around the id cut-off at 2^63).
fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-(1i64 << 53)..(1i64 << 53)).prop_map(|n| json!(n as f64)),
        (any::<i32>(), 0u32..12).prop_map(|(n, k)| json!(f64::from(n) / f64::from(1u32 << k))),
        prop::sample::select(vec![
            0.0, -0.0, 0.5, -1.5, 1e20, -1e20, 9.2e18, -9.2e18, 9.3e18, -9.3e18, 1.5e300
        ])
        .prop_map(|f| json!(f)),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "2.0",
            "1.0",
            "1",
            "ping",
            "tools/call",
            "tools/list",
            "initialize",
            "notifications/cancelled",
            "notifications/initialized",
        ])
        .prop_map(str::to_owned),
        "(?s).{0,8}",
    ]
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "jsonrpc", "id", "method", "params", "result", "error", "_meta", "requestId", "name",
        ])
        .prop_map(str::to_owned),
        1 => "[a-zA-Z_]{0,5}",
    ]
}

/// Arbitrary JSON, shallow enough for the parser's recursion limit.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(arb_key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Objects shaped like JSON-RPC messages, each member present or not, well-typed or not.
fn arb_envelope() -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.9, prop_oneof![4 => Just(json!("2.0")), 1 => arb_json()]),
        prop::option::weighted(
            0.7,
            prop_oneof![
                arb_number(),
                arb_string().prop_map(Value::String),
                Just(Value::Null),
                arb_json(),
            ],
        ),
        prop::option::weighted(
            0.9,
            prop_oneof![4 => arb_string().prop_map(Value::String), 1 => arb_json()],
        ),
        prop::option::of(arb_json()),
        prop::collection::btree_map(arb_key(), arb_json(), 0..2),
    )
        .prop_map(|(jsonrpc, id, method, params, extra)| {
            let mut object: serde_json::Map<String, Value> = extra.into_iter().collect();
            for (key, value) in [
                ("jsonrpc", jsonrpc),
                ("id", id),
                ("method", method),
                ("params", params),
            ] {
                if let Some(value) = value {
                    object.insert(key.into(), value);
                }
            }
            Value::Object(object)
        })
}

fn arb_message_json() -> impl Strategy<Value = Value> {
    prop_oneof![3 => arb_envelope(), 1 => arb_json()]
}
