//! JSON objects built by moving their members in.
//!
//! `serde_json::json!` serializes every interpolated expression into a new value, so a member
//! that is already a `Value` (a receipt, a diagnostics summary, Lean's goals) is copied whole
//! and the original dropped. On the per-call path of the Lean tools that copying cost more than
//! building the rest of the result; [`object`] moves the members instead. Literal parts stay
//! with `json!`, which builds them in place.

use serde_json::{Map, Value};

/// An object of `members`, in order (later keys win, as in `json!`).
pub fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_same_object_as_json_builds() {
        let receipt = json!({"version": 3, "state": "complete", "imports": [{"m": "A"}]});
        let built = object([
            ("path", json!("A.lean")),
            ("receipt", receipt.clone()),
            ("empty", Value::Null),
        ]);
        assert_eq!(
            built,
            json!({"path": "A.lean", "receipt": receipt, "empty": null})
        );
    }
}
