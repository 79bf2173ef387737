//! Request ids, exactly as the client wrote them.
//!
//! Contract:
//! 1. An id is a string or an integer. String and integer ids are distinct (`"7"` is not `7`).
//! 2. An integer id is the integer its JSON literal denotes, decided on the literal's digits and
//!    never on a float: `1.0e1` is 10, `9007199254740993.0` is 9007199254740993, and `1e-400`,
//!    `0.5` or `0.` followed by a million zeros and a `1` are not integers at all.
//! 3. Integer ids from -2^63 to 2^64-1 ([`MIN_INTEGER_ID`], [`MAX_INTEGER_ID`]) are accepted and
//!    answered with exactly that integer. Anything else (fractional, out of range, null, boolean,
//!    structured) is not an id.
//!
//! `serde_json` (without `arbitrary_precision`) keeps every integer literal in that range exactly
//! but rounds decimals and exponents to a float, so [`IdLiteral`] re-reads such a member's text
//! from the line it came from. A [`Value`] that no longer has its line (one built in memory) is
//! read through the float's shortest round-trip text, which is the literal that value prints as.

use std::collections::HashMap;
use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Number, Value};

/// The smallest integer id accepted.
pub const MIN_INTEGER_ID: i64 = i64::MIN;
/// The largest integer id accepted.
pub const MAX_INTEGER_ID: u64 = u64::MAX;

/// A request id: a string or an integer, never both, never null.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id, kept as the integer its literal denotes.
    Number(Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from a value that no longer has its source text; `None` when it is not one.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => exact_number(n, None).map(RequestId::Number),
            _ => None,
        }
    }

    /// Reads an id from a value whose JSON text is `literal` (as written by the client).
    pub fn from_literal(value: &Value, literal: Option<&str>) -> Option<RequestId> {
        match value {
            Value::Number(n) => exact_number(n, literal).map(RequestId::Number),
            other => RequestId::from_value(other),
        }
    }

    /// The id as the JSON value it is written as.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::String(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for RequestId {
    /// Strings are shown quoted so that `92` and `"92"` stay distinguishable in logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => n.serialize(serializer),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

/// An integer number as an exact integer; a float through its literal (or, without one, through
/// the float's own shortest text).
fn exact_number(n: &Number, literal: Option<&str>) -> Option<Number> {
    if n.is_i64() || n.is_u64() {
        return Some(n.clone());
    }
    match literal {
        Some(literal) => integer_literal(literal),
        None => integer_literal(&n.to_string()),
    }
}

/// The integer a JSON number literal denotes, if it denotes one in the accepted range.
///
/// Works on the digits alone: the value is `digits × 10^exponent`; it is an integer iff, once
/// trailing zeros move into the exponent, the exponent is not negative. Linear in the literal's
/// length; exponents of any size saturate instead of overflowing.
pub fn integer_literal(literal: &str) -> Option<Number> {
    let text = literal.trim();
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], parse_exponent(&unsigned[at + 1..])?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (mantissa, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let digits = whole.bytes().chain(fraction.bytes());
    let significant: Vec<u8> = digits.skip_while(|&b| b == b'0').collect();
    let trimmed = significant.iter().rposition(|&b| b != b'0');
    let Some(last) = trimmed else {
        return Some(Number::from(0u64)); // every digit is zero: 0, -0.0, 0e-400
    };
    let trailing = (significant.len() - 1 - last) as i64;
    let digits = &significant[..=last];
    let shift = exponent
        .saturating_sub(fraction.len() as i64)
        .saturating_add(trailing);
    // 2^64 has 20 digits: a longer integer is out of range whatever its digits are.
    if shift < 0 || digits.len() as i64 + shift > 20 {
        return None;
    }
    let mut magnitude: u128 = 0;
    for &d in digits {
        magnitude = magnitude * 10 + u128::from(d - b'0');
    }
    for _ in 0..shift {
        magnitude *= 10;
    }
    if negative {
        let value = i128::try_from(magnitude).ok()?.checked_neg()?;
        i64::try_from(value).ok().map(Number::from)
    } else {
        u64::try_from(magnitude).ok().map(Number::from)
    }
}

/// A decimal exponent, saturated far beyond anything that can still denote an accepted integer.
fn parse_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: i64 = 0;
    for d in digits.bytes() {
        value = value.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    // Saturated well inside i64 so that adding a fraction length cannot overflow.
    let value = value.min(i64::MAX / 4);
    Some(if negative { -value } else { value })
}

/// The literal text of the id members of one line: the top-level `id`, and the `requestId` in
/// `params` (the id a cancellation names). Read only when `serde_json` rounded one of them.
#[derive(Debug, Default)]
pub struct IdLiteral<'a> {
    /// The top-level `id` member's text.
    pub id: Option<&'a str>,
    /// The text of `params.requestId`.
    pub params_request_id: Option<&'a str>,
}

impl<'a> IdLiteral<'a> {
    /// Re-reads `line` (already known to be valid JSON) for the texts of its id members. Where a
    /// key repeats, the last one counts, as it does in the parsed [`Value`].
    pub fn read(line: &'a [u8]) -> IdLiteral<'a> {
        let Ok(top) = serde_json::from_slice::<HashMap<String, &'a RawValue>>(line) else {
            return IdLiteral::default();
        };
        let params_request_id = top
            .get("params")
            .and_then(|params| {
                serde_json::from_str::<HashMap<String, &'a RawValue>>(params.get()).ok()
            })
            .and_then(|params| params.get("requestId").map(|raw| raw.get()));
        IdLiteral {
            id: top.get("id").map(|raw| raw.get()),
            params_request_id,
        }
    }
}

/// Whether a parsed number lost its literal (so reading it needs [`IdLiteral`]).
pub fn is_rounded(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::Number(n)) if n.is_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn int(literal: &str) -> Option<String> {
        integer_literal(literal).map(|n| n.to_string())
    }

    #[test]
    fn integral_literals_denote_their_exact_integer() {
        assert_eq!(int("1.0e1").as_deref(), Some("10"));
        assert_eq!(int("-3.0").as_deref(), Some("-3"));
        assert_eq!(
            int("9007199254740993.0").as_deref(),
            Some("9007199254740993")
        );
        assert_eq!(
            int("9007199254740993e0").as_deref(),
            Some("9007199254740993")
        );
        assert_eq!(
            int("123456789012345678.0").as_deref(),
            Some("123456789012345678")
        );
        assert_eq!(int("0.0001e4").as_deref(), Some("1"));
        assert_eq!(int("0.00012e4"), None);
        assert_eq!(int("-0.0").as_deref(), Some("0"));
        assert_eq!(int("0e-99999999999999999999").as_deref(), Some("0"));
        assert_eq!(
            int("1.8446744073709551615e19").as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            int("-9.223372036854775808e18").as_deref(),
            Some("-9223372036854775808")
        );
    }

    #[test]
    fn fractional_and_out_of_range_literals_are_not_integers() {
        let million_zeros = format!("0.{}1", "0".repeat(1_000_000));
        for literal in [
            "1e-400",
            "-1e-400",
            "0.1e-400",
            "1e-99999999999999999999",
            million_zeros.as_str(),
            "0.5",
            "1.5e0",
            "18446744073709551616",
            "1.8446744073709551616e19",
            "-9223372036854775809",
            "1e20",
            "1e99999999999999999999",
        ] {
            assert_eq!(int(literal), None, "{}", &literal[..literal.len().min(40)]);
        }
    }

    #[test]
    fn values_without_a_literal_read_through_their_shortest_text() {
        assert_eq!(
            RequestId::from_value(&json!(10.0)),
            RequestId::from_value(&json!(10))
        );
        assert_eq!(RequestId::from_value(&json!(0.5)), None);
        // 2^63 + 2048 prints as 9.223372036854778e18, which is the integer it denotes as text.
        let float = json!(9_223_372_036_854_777_856_f64);
        assert_eq!(
            RequestId::from_value(&float)
                .map(|id| id.to_string())
                .as_deref(),
            Some("9223372036854778000")
        );
    }

    #[test]
    fn literals_are_read_from_the_line_and_the_last_duplicate_wins() {
        let line =
            br#"{"id":1,"method":"m","id":9007199254740993.0,"params":{"requestId":1e-400}}"#;
        let literal = IdLiteral::read(line);
        assert_eq!(literal.id, Some("9007199254740993.0"));
        assert_eq!(literal.params_request_id, Some("1e-400"));
        assert!(IdLiteral::read(br#"[1]"#).id.is_none());
    }
}
