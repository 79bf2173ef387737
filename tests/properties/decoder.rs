//! The JSON-RPC decoder: `decode` never panics on arbitrary or mangled bytes, reports parse
//! errors exactly for non-JSON, answers every rejection with one `id`-correct error line, and
//! `decode_value` agrees with `decode` on the same JSON.

use lean_beam_mcp::mcp::{DecodeError, Incoming, RequestId, code, decode, decode_value};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::{arb_envelope, arb_message_json, config};

// ---------------------------------------------------------------------------------------------
// (a) The decoder
// ---------------------------------------------------------------------------------------------

/// Checks what `decode` promises for one input, and that its error answer is one line.
fn check_decoded(
    bytes: &[u8],
    decoded: &Result<Incoming, DecodeError>,
) -> Result<(), TestCaseError> {
    let parsed = serde_json::from_slice::<Value>(bytes);
    // JSON with a number beyond a float (`1e400`), or a string escape that names no character
    // (`"\ud800"`), is JSON that serde_json cannot hold.
    let unrepresentable = parsed.as_ref().is_err_and(|e| {
        let e = e.to_string();
        e.contains("number out of range") || e.contains("surrogate") || e.contains("hex escape")
    });
    match decoded {
        Err(DecodeError::Parse(_)) => {
            prop_assert!(parsed.is_err(), "JSON reported as a parse error")
        }
        Err(DecodeError::Params { .. } | DecodeError::Envelope { .. }) if unrepresentable => {}
        _ => prop_assert!(parsed.is_ok(), "non-JSON accepted: {decoded:?}"),
    }
    if let Err(error) = decoded {
        let line = error.clone().into_error_response().to_line();
        prop_assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        let answer: Value = serde_json::from_slice(&line).expect("the error answer is JSON");
        let expected_id = error.id().map_or(Value::Null, RequestId::to_value);
        prop_assert_eq!(&answer["id"], &expected_id);
        let expected_code = match error {
            DecodeError::Parse(_) => code::PARSE_ERROR,
            DecodeError::Envelope { .. } => code::INVALID_REQUEST,
            DecodeError::Params { .. } => code::INVALID_PARAMS,
        };
        prop_assert_eq!(&answer["error"]["code"], &json!(expected_code));
    }
    Ok(())
}

/// Checks that an accepted message is what the JSON says it is.
fn check_accepted(
    value: &Value,
    decoded: &Result<Incoming, DecodeError>,
) -> Result<(), TestCaseError> {
    match decoded {
        Ok(Incoming::Request(request)) => {
            prop_assert_eq!(&value["jsonrpc"], &json!("2.0"));
            prop_assert_eq!(
                RequestId::from_value(&value["id"]),
                Some(request.id.clone())
            );
            prop_assert_eq!(&value["method"], &json!(request.method));
            prop_assert_eq!(value.get("params"), request.params.as_ref());
            for key in value.as_object().expect("an object").keys() {
                prop_assert!(["jsonrpc", "id", "method", "params"].contains(&key.as_str()));
            }
        }
        Ok(Incoming::Notification(notification)) => {
            prop_assert_eq!(&value["jsonrpc"], &json!("2.0"));
            prop_assert_eq!(&value["method"], &json!(notification.method));
            for key in value.as_object().expect("an object").keys() {
                prop_assert!(["jsonrpc", "method", "params"].contains(&key.as_str()));
            }
        }
        Err(_) => {}
    }
    Ok(())
}

/// A JSON text with one byte replaced, inserted or the text cut short.
fn arb_mangled_json() -> impl Strategy<Value = Vec<u8>> {
    (
        arb_envelope(),
        any::<prop::sample::Index>(),
        any::<u8>(),
        0u8..3,
    )
        .prop_map(|(value, at, byte, how)| {
            let mut bytes = value.to_string().into_bytes();
            let at = at.index(bytes.len() + 1);
            match how {
                0 if at < bytes.len() => bytes[at] = byte,
                1 => bytes.insert(at, byte),
                _ => bytes.truncate(at),
            }
            bytes
        })
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn decode_never_panics_on_arbitrary_bytes(
        bytes in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            arb_mangled_json(),
        ]
    ) {
        let decoded = decode(&bytes);
        check_decoded(&bytes, &decoded)?;
    }

    #[test]
    fn decode_value_never_panics_and_agrees_with_decode(value in arb_message_json()) {
        let text = value.to_string();
        let from_text = decode(text.as_bytes());
        check_decoded(text.as_bytes(), &from_text)?;
        let reparsed: Value = serde_json::from_str(&text).expect("a JSON text");
        // The strategy only makes numbers that survive a text round trip.
        prop_assume!(reparsed == value);
        let from_value = decode_value(value.clone());
        check_accepted(&value, &from_value)?;
        prop_assert_eq!(from_text, from_value);
    }
}
