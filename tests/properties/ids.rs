//! Request ids: string and integer ids never collide, ids round-trip with their JSON type through
//! every answer shape, and integral decimals are their integer and are answered as it.

use std::collections::HashSet;

use lean_beam_mcp::mcp::{DecodeError, ErrorObject, Incoming, RequestId, Response, decode};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::config;

// ---------------------------------------------------------------------------------------------
// (c) Request ids
// ---------------------------------------------------------------------------------------------

fn check_id_round_trip(raw: &Value) -> Result<(), TestCaseError> {
    let id = RequestId::from_value(raw).expect("a valid id");
    prop_assert_eq!(&id.to_value(), raw);
    prop_assert_eq!(&serde_json::to_value(&id).expect("serializes"), raw);
    let text = serde_json::to_string(&id).expect("serializes");
    let back: Value = serde_json::from_str(&text).expect("parses");
    prop_assert_eq!(RequestId::from_value(&back), Some(id.clone()));

    let ok = Response::ok(id.clone(), json!({"x": 1})).to_line();
    let ok: Value = serde_json::from_slice(&ok).expect("a JSON line");
    prop_assert_eq!(&ok["id"], raw);
    let error = Response::error(Some(id.clone()), ErrorObject::invalid_params("no")).to_line();
    let error: Value = serde_json::from_slice(&error).expect("a JSON line");
    prop_assert_eq!(&error["id"], raw);
    let envelope = DecodeError::Envelope {
        id: Some(id.clone()),
        message: "m".into(),
    };
    let envelope: Value =
        serde_json::from_slice(&envelope.into_error_response().to_line()).expect("a JSON line");
    prop_assert_eq!(&envelope["id"], raw);

    let request = json!({"jsonrpc": "2.0", "id": raw, "method": "ping"}).to_string();
    match decode(request.as_bytes()) {
        Ok(Incoming::Request(request)) => prop_assert_eq!(request.id, id),
        other => prop_assert!(false, "not a request: {other:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn string_and_integer_ids_never_collide(n in any::<i64>(), m in any::<u64>()) {
        let int = RequestId::from_value(&json!(n)).expect("an integer id");
        let string = RequestId::from_value(&json!(n.to_string())).expect("a string id");
        prop_assert_ne!(&int, &string);
        prop_assert_ne!(
            RequestId::from_value(&json!(m)),
            RequestId::from_value(&json!(m.to_string()))
        );
        let mut set = HashSet::new();
        prop_assert!(set.insert(int));
        prop_assert!(set.insert(string));
    }

    #[test]
    fn ids_round_trip_with_their_json_type(
        raw in prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            "(?s).{0,12}".prop_map(Value::from),
        ]
    ) {
        check_id_round_trip(&raw)?;
    }

    #[test]
    fn integral_decimals_are_their_integer_and_answer_as_it(n in -(1i64 << 52)..(1i64 << 52)) {
        let decimal = RequestId::from_value(&json!(n as f64)).expect("an integral decimal");
        prop_assert_eq!(&decimal, &RequestId::from_value(&json!(n)).expect("an integer"));
        prop_assert_eq!(decimal.to_value(), json!(n));
        prop_assert_ne!(RequestId::from_value(&json!(n as f64 + 0.5)), Some(decimal));
    }
}
