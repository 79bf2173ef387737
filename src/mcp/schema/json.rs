//! JSON as JSON Schema reads it: the seven types, integers by value (`1.0` is an integer),
//! numbers compared exactly across `u64`, `i64` and `f64` (`1 == 1.0`, and no rounding through
//! `f64` for large integers), and equality of whole values for `const`, `enum` and
//! `uniqueItems`.
//!
//! These are the semantics of draft 2020-12 as the `jsonschema` crate implements them (its
//! `jsonschema-value` comparisons use the same `num-cmp` crate), so a verdict never depends on
//! which validator gave it; the oracle tests in `oracle_tests.rs` hold the two together.

use std::cmp::Ordering;
use std::collections::HashSet;

use num_cmp::NumCmp;
use serde_json::{Number, Value};

/// A JSON Schema type name, in the order `jsonschema` lists several (`null` first, `object`
/// last), which is the order of a multi-type error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum JsonType {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    pub(super) fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "null" => JsonType::Null,
            "boolean" => JsonType::Boolean,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "string" => JsonType::String,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// Whether `value` is of this type (`integer` includes floats without a fraction).
    pub(super) fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (JsonType::Null, Value::Null)
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Number, Value::Number(_))
            | (JsonType::String, Value::String(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Object, Value::Object(_)) => true,
            (JsonType::Integer, Value::Number(n)) => is_integer(n),
            _ => false,
        }
    }
}

fn is_integer(n: &Number) -> bool {
    n.is_u64() || n.is_i64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// A JSON number as serde_json holds it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    pub(super) fn of(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::U(u)
        } else if let Some(i) = n.as_i64() {
            Num::I(i)
        } else {
            // Without `arbitrary_precision` every other number is an f64.
            Num::F(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// The exact order of two numbers (`None` only for a NaN, which JSON cannot write).
    pub(super) fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::U(a), Num::U(b)) => Some(a.cmp(&b)),
            (Num::U(a), Num::I(b)) => a.num_cmp(b),
            (Num::U(a), Num::F(b)) => a.num_cmp(b),
            (Num::I(a), Num::U(b)) => a.num_cmp(b),
            (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
            (Num::I(a), Num::F(b)) => a.num_cmp(b),
            (Num::F(a), Num::U(b)) => a.num_cmp(b),
            (Num::F(a), Num::I(b)) => a.num_cmp(b),
            (Num::F(a), Num::F(b)) => a.partial_cmp(&b),
        }
    }
}

/// JSON Schema equality: numbers by value, objects regardless of member order.
pub(super) fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Number(a), Value::Number(b)) => Num::of(a).cmp(Num::of(b)) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| equal(x, y)))
        }
        _ => false,
    }
}

/// Whether no two items are [`equal`]. Items go through a canonical text in which equal values
/// coincide (integral numbers as integers, members sorted), so a long array costs one pass.
pub(super) fn all_unique(items: &[Value]) -> bool {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().all(|item| {
        let mut key = String::new();
        canonical(item, &mut key);
        seen.insert(key)
    })
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => match Num::of(n) {
            Num::U(u) => out.push_str(&u.to_string()),
            Num::I(i) => out.push_str(&i.to_string()),
            // An integral float equals the integer of the same value; exact for every f64
            // (an integral f64 is an integer of at most 309 digits).
            Num::F(0.0) => out.push('0'),
            Num::F(f) if f.fract() == 0.0 => out.push_str(&format!("{f:.0}")),
            Num::F(f) => out.push_str(&format!("{f:e}")),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (key, member) in sorted {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(member, out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_across_representations() {
        assert!(equal(&json!(1), &json!(1.0)));
        assert!(equal(&json!(-3), &json!(-3.0)));
        assert!(!equal(&json!(u64::MAX), &json!(18446744073709551615.0)));
        assert!(equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!equal(&json!("1"), &json!(1)));
    }

    #[test]
    fn uniqueness_follows_equality() {
        assert!(all_unique(&[
            json!(1),
            json!("1"),
            json!([1]),
            json!({"1": 1})
        ]));
        assert!(!all_unique(&[json!(1), json!(1.0)]));
        assert!(!all_unique(&[json!(0), json!(-0.0)]));
        assert!(!all_unique(&[
            json!({"a": 1, "b": 2}),
            json!({"b": 2.0, "a": 1})
        ]));
        assert!(all_unique(&[
            json!(0.5),
            json!(0.25),
            json!(1e300),
            json!(-1e300)
        ]));
        assert!(!all_unique(&[
            json!(1e20),
            json!(100000000000000000000u128 as f64)
        ]));
    }

    #[test]
    fn integers_are_integral_values() {
        assert!(JsonType::Integer.admits(&json!(3)));
        assert!(JsonType::Integer.admits(&json!(3.0)));
        assert!(JsonType::Integer.admits(&json!(1e300)));
        assert!(!JsonType::Integer.admits(&json!(1.5)));
        assert!(JsonType::Number.admits(&json!(1.5)));
    }
}
