//! Reading a tool's arguments into types. The core has already held them to the tool's schema;
//! this is where a number becomes a line, a column or a version, and where the schema's silence
//! (an integer the host cannot represent) gets its own answer.
//!
//! Contract:
//! 1. A required argument that is absent, or of another JSON type, is `invalidInput` naming it
//!    (`data.path`): it can only happen to a caller that bypassed the schema, and it is never
//!    read as a default (`0`, `""`).
//! 2. A natural number is a JSON integer, or a float with no fractional part (JSON Schema's
//!    integers include `100.0` and `1e2`), within the range its type holds: a line or a column
//!    `0..=2147483647` (LSP's `uinteger`), a version `0..=2^63-1`. Anything beyond is
//!    `invalidParams` naming the argument and the range (`data.reason: "numberOutOfRange"`),
//!    never cut down to fit.
//! 3. An enumerated string is one of its values, else `invalidInput`.

use serde_json::{Value, json};

use crate::lean::error::HostError;
use crate::lean::text::Position;

/// The largest line or column LSP can carry (`uinteger`).
pub const MAX_COORDINATE: u64 = i32::MAX as u64;

/// A tool's arguments, as the schema let them through.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a>(pub &'a Value);

impl<'a> Args<'a> {
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    /// A required string.
    pub fn text(&self, name: &str) -> Result<&'a str, HostError> {
        match self.get(name) {
            Some(Value::String(text)) => Ok(text),
            Some(_) => Err(wrong(name, "a string")),
            None => Err(missing(name)),
        }
    }

    /// An optional string.
    pub fn optional_text(&self, name: &str) -> Result<Option<&'a str>, HostError> {
        match self.get(name) {
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(wrong(name, "a string")),
            None => Ok(None),
        }
    }

    /// An optional boolean, `default` when absent.
    pub fn flag(&self, name: &str, default: bool) -> Result<bool, HostError> {
        match self.get(name) {
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(wrong(name, "true or false")),
            None => Ok(default),
        }
    }

    /// A required object, as given.
    pub fn object(&self, name: &str) -> Result<&'a Value, HostError> {
        match self.get(name) {
            Some(value @ Value::Object(_)) => Ok(value),
            Some(_) => Err(wrong(name, "an object")),
            None => Err(missing(name)),
        }
    }

    /// An enumerated string, `default` when absent and there is one.
    pub fn choice(
        &self,
        name: &str,
        values: &[&'static str],
        default: Option<&'static str>,
    ) -> Result<&'static str, HostError> {
        let given = match (self.optional_text(name)?, default) {
            (Some(given), _) => given,
            (None, Some(default)) => return Ok(default),
            (None, None) => return Err(missing(name)),
        };
        values.iter().copied().find(|v| *v == given).ok_or_else(|| {
            HostError::invalid_input(format!(
                "argument `{name}` is {given:?}; it must be one of {}",
                values.join(", ")
            ))
            .with_path(&format!("/{name}"))
        })
    }

    /// A required natural number of at most `max` (see the contract).
    pub fn natural(&self, name: &str, max: u64) -> Result<u64, HostError> {
        let value = self.get(name).ok_or_else(|| missing(name))?;
        let whole = match (value.as_u64(), value.as_f64()) {
            (Some(whole), _) => whole,
            // Saturates: a float beyond every u64 is beyond `max` too.
            (None, Some(float)) if float.fract() == 0.0 && float >= 0.0 => float as u64,
            _ => return Err(wrong(name, "a whole number")),
        };
        if whole > max {
            return Err(out_of_range(name, value, max));
        }
        Ok(whole)
    }

    /// The position `line`/`character` arguments name (e.g. `start_line`, `start_character`).
    pub fn position(&self, line: &str, character: &str) -> Result<Position, HostError> {
        let line = self.natural(line, MAX_COORDINATE)? as u32;
        let character = self.natural(character, MAX_COORDINATE)? as u32;
        Ok(Position::new(line, character))
    }

    /// The `version` argument: a document version a result returned.
    pub fn version(&self) -> Result<i64, HostError> {
        Ok(self.natural("version", i64::MAX as u64)? as i64)
    }
}

fn missing(name: &str) -> HostError {
    HostError::invalid_input(format!("argument `{name}` is required"))
        .with_path(&format!("/{name}"))
}

fn wrong(name: &str, what: &str) -> HostError {
    HostError::invalid_input(format!("argument `{name}` must be {what}"))
        .with_path(&format!("/{name}"))
}

fn out_of_range(name: &str, value: &Value, max: u64) -> HostError {
    HostError::invalid_params(format!(
        "argument `{name}` is {value}, beyond what it can be: a whole number from 0 to {max}"
    ))
    .with_data(json!({"path": format!("/{name}"), "reason": "numberOutOfRange", "max": max}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn natural(value: Value, max: u64) -> Result<u64, HostError> {
        Args(&json!({ "n": value })).natural("n", max)
    }

    #[test]
    fn naturals_are_whole_numbers_within_their_range_and_never_cut_to_fit() {
        assert_eq!(natural(json!(7), 10).unwrap(), 7);
        assert_eq!(natural(json!(100.0), 100).unwrap(), 100);
        assert_eq!(natural(json!(1e2), 100).unwrap(), 100);
        for beyond in [
            json!(11),
            json!(1e300),
            json!(18_446_744_073_709_551_615_u64),
            json!(4_294_967_296_u64),
        ] {
            let error = natural(beyond.clone(), 10).unwrap_err();
            assert_eq!(error.code, "invalidParams", "{beyond}");
            assert_eq!(error.data.unwrap()["reason"], "numberOutOfRange");
        }
        for bad in [json!(1.5), json!(-1), json!("3")] {
            assert_eq!(
                natural(bad.clone(), 10).unwrap_err().code,
                "invalidInput",
                "{bad}"
            );
        }
        let missing = Args(&json!({})).natural("line", 10).unwrap_err();
        assert_eq!(missing.code, "invalidInput");
        assert_eq!(missing.data.unwrap()["path"], "/line");
    }

    #[test]
    fn a_line_is_an_lsp_uinteger_and_a_version_an_i64() {
        let args = json!({"line": MAX_COORDINATE, "character": 0, "version": i64::MAX});
        let args = Args(&args);
        assert_eq!(
            args.position("line", "character").unwrap(),
            Position::new(i32::MAX as u32, 0)
        );
        assert_eq!(args.version().unwrap(), i64::MAX);
        let beyond = json!({"line": MAX_COORDINATE + 1, "character": 0});
        assert!(Args(&beyond).position("line", "character").is_err());
    }

    #[test]
    fn choices_and_flags() {
        let args = json!({"mode": "after", "all": true});
        let args = Args(&args);
        assert_eq!(
            args.choice("mode", &["before", "after"], None).unwrap(),
            "after"
        );
        assert_eq!(
            args.choice("scope", &["errors", "all"], Some("errors"))
                .unwrap(),
            "errors"
        );
        assert!(args.choice("mode", &["before"], None).is_err());
        assert!(args.choice("absent", &["a"], None).is_err());
        assert!(args.flag("all", false).unwrap());
        assert!(!args.flag("none", false).unwrap());
    }
}
