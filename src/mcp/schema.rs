//! Tool input schemas: a small, documented JSON Schema subset, checked at load and enforced per call.
//!
//! Contract:
//! 1. *One schema, one source.* The schema `tools/list` advertises is the schema `tools/call`
//!    enforces; nothing else decides what arguments are acceptable.
//! 2. At load, [`InputSchema::compile`] refuses any keyword outside [`KEYWORDS`] and
//!    [`ANNOTATIONS`] (naming it and where it stands), a root that is not `type: "object"`, any
//!    schema with `properties` that does not close itself with `additionalProperties: false`, so an
//!    advertised constraint can never go unenforced and undeclared fields are never ignored, and
//!    any keyword whose value is malformed (naming where).
//! 3. At call time, [`InputSchema::check`] reports the first violation as an [`ArgumentError`]
//!    with a JSON Pointer to the offending argument. Undeclared fields are reported before missing
//!    ones, missing before ill-typed, so the answer names the most fundamental mistake.
//!
//! Validation is draft 2020-12 restricted to the subset (`node.rs` compiles, `check.rs` checks,
//! `json.rs` holds the JSON Schema notions of type, number and equality), with the verdicts and
//! the sentences of the `jsonschema` crate, which it replaced on the product path: that crate
//! compiles the draft's whole meta-schema the first time any schema is built (about 1 ms and
//! 3 MiB, most of a cold start) and offers no public way to skip it. `jsonschema` stays the
//! oracle: `oracle_tests.rs` checks both on generated schemas and arguments and on the Lean
//! catalog's own schemas.

mod check;
mod json;
mod node;
#[cfg(test)]
mod oracle_tests;

use std::fmt;

use serde_json::{Map, Value};

use check::{Kind, Path, Violation};
use node::Node;

/// Keywords that constrain, all of which are enforced.
pub const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// Keywords that only annotate; accepted and shown to clients, never enforced.
/// Any key starting with `x-` is an annotation too.
pub const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The only `$schema` dialect accepted.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A schema that was refused at load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON Pointer into the schema where the problem stands.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "inputSchema at {at}: {}", self.message)
    }
}

/// Arguments that do not satisfy a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// JSON Pointer to the offending argument (`""` for the arguments object itself).
    pub path: String,
    /// A sentence naming the argument and what is wrong with it.
    pub message: String,
}

/// A tool's input schema, checked against the subset and compiled for validation.
pub struct InputSchema {
    advertised: Value,
    root: Node,
}

impl fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputSchema")
            .field("advertised", &self.advertised)
            .finish()
    }
}

impl InputSchema {
    /// Checks `schema` against the subset and compiles it.
    pub fn compile(schema: Value) -> Result<InputSchema, SchemaError> {
        let root = schema
            .as_object()
            .ok_or_else(|| refuse("", "a tool input schema must be an object"))?;
        if root.get("type") != Some(&Value::String("object".into())) {
            return Err(refuse(
                "",
                "a tool input schema must have \"type\": \"object\"",
            ));
        }
        if root.get("additionalProperties") != Some(&Value::Bool(false)) {
            return Err(refuse(
                "",
                "a tool input schema must set \"additionalProperties\": false",
            ));
        }
        if let Some(dialect) = root.get("$schema")
            && dialect != DIALECT
        {
            return Err(refuse(
                "/$schema",
                format!("only the {DIALECT} dialect is supported"),
            ));
        }
        check_subschema(root, "", true)?;
        let root = Node::compile(root, "")?;
        Ok(InputSchema {
            advertised: schema,
            root,
        })
    }

    /// The schema exactly as it is advertised.
    pub fn advertised(&self) -> &Value {
        &self.advertised
    }

    /// Validates arguments, reporting the most fundamental violation.
    pub fn check(&self, tool: &str, arguments: &Value) -> Result<(), ArgumentError> {
        let mut violations = Vec::new();
        check::collect(&self.root, arguments, Path::Root, &mut violations);
        report(tool, violations)
    }
}

/// The violation to report: undeclared members first, then missing ones, then the rest, each
/// kind by pointer, the first found among equals.
fn report(tool: &str, violations: Vec<Violation>) -> Result<(), ArgumentError> {
    let mut worst: Option<(u8, ArgumentError)> = None;
    for violation in violations {
        let candidate = describe(tool, violation);
        if worst
            .as_ref()
            .is_none_or(|(rank, best)| (candidate.0, &candidate.1.path) < (*rank, &best.path))
        {
            worst = Some(candidate);
        }
    }
    match worst {
        Some((_, error)) => Err(error),
        None => Ok(()),
    }
}

fn describe(tool: &str, violation: Violation) -> (u8, ArgumentError) {
    let at = violation.at;
    match violation.kind {
        Kind::Additional(mut names) => {
            names.sort();
            let first = names.first().map(|n| escape_pointer(n)).unwrap_or_default();
            let message = if at.is_empty() {
                format!(
                    "{tool} accepts no undeclared input fields: {}",
                    names.join(", ")
                )
            } else {
                format!(
                    "argument {at} accepts no undeclared fields: {}",
                    names.join(", ")
                )
            };
            (
                0,
                ArgumentError {
                    path: format!("{at}/{first}"),
                    message,
                },
            )
        }
        Kind::Required(options) => {
            let message = match options {
                Some(options) => {
                    let options: Vec<String> = options.iter().map(Value::to_string).collect();
                    format!(
                        "{tool} requires argument {at}, one of {}",
                        options.join(", ")
                    )
                }
                None => format!("{tool} requires argument {at}"),
            };
            (1, ArgumentError { path: at, message })
        }
        Kind::Other(detail) => {
            let message = if at.is_empty() {
                format!("{tool} arguments is invalid: {detail}")
            } else {
                format!("argument {at} is invalid: {detail}")
            };
            (2, ArgumentError { path: at, message })
        }
    }
}

pub(super) fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

pub(super) fn refuse(pointer: &str, message: impl Into<String>) -> SchemaError {
    SchemaError {
        pointer: pointer.to_string(),
        message: message.into(),
    }
}

fn check_subschema(
    schema: &Map<String, Value>,
    pointer: &str,
    root: bool,
) -> Result<(), SchemaError> {
    for (key, value) in schema {
        let here = format!("{pointer}/{}", escape_pointer(key));
        if key == "$schema" && !root {
            return Err(refuse(&here, "$schema may only stand at the root"));
        }
        if ANNOTATIONS.contains(&key.as_str()) || key.starts_with("x-") {
            continue;
        }
        if !KEYWORDS.contains(&key.as_str()) {
            return Err(refuse(
                &here,
                format!(
                    "keyword {key:?} is outside the supported subset ({}; annotations {})",
                    KEYWORDS.join(", "),
                    ANNOTATIONS.join(", ")
                ),
            ));
        }
        match key.as_str() {
            "properties" => {
                let properties = value
                    .as_object()
                    .ok_or_else(|| refuse(&here, "properties must be an object"))?;
                for (name, property) in properties {
                    let at = format!("{here}/{}", escape_pointer(name));
                    check_schema_value(property, &at)?;
                }
            }
            "items" => check_schema_value(value, &here)?,
            "additionalProperties" if !value.is_boolean() => check_schema_value(value, &here)?,
            "required" => {
                let declared = schema.get("properties").and_then(Value::as_object);
                for name in value
                    .as_array()
                    .ok_or_else(|| refuse(&here, "required must be an array"))?
                {
                    let name = name
                        .as_str()
                        .ok_or_else(|| refuse(&here, "required names must be strings"))?;
                    if !declared.is_some_and(|d| d.contains_key(name)) {
                        return Err(refuse(
                            &here,
                            format!("required property {name:?} is not declared in properties"),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if schema.contains_key("properties")
        && schema.get("additionalProperties") != Some(&Value::Bool(false))
    {
        return Err(refuse(
            pointer,
            "an object schema with properties must set \"additionalProperties\": false",
        ));
    }
    Ok(())
}

fn check_schema_value(value: &Value, pointer: &str) -> Result<(), SchemaError> {
    match value {
        Value::Object(schema) => check_subschema(schema, pointer, false),
        _ => Err(refuse(pointer, "a subschema must be an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> InputSchema {
        InputSchema::compile(json!({
            "$schema": DIALECT,
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "A file."},
                "line": {"type": "integer", "minimum": 0},
                "workspace": {
                    "type": "object",
                    "properties": {"root": {"type": "string"}},
                    "required": ["root"],
                    "additionalProperties": false
                }
            },
            "required": ["path", "workspace"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn a_missing_enum_argument_names_the_values_it_takes() {
        let schema = InputSchema::compile(json!({
            "type": "object",
            "properties": {"mode": {"type": "string", "enum": ["before", "after"]}},
            "required": ["mode"],
            "additionalProperties": false
        }))
        .unwrap();
        let error = schema.check("lean_goals", &json!({})).unwrap_err();
        assert_eq!(error.path, "/mode");
        assert_eq!(
            error.message,
            "lean_goals requires argument /mode, one of \"before\", \"after\""
        );
    }

    #[test]
    fn refuses_keywords_outside_the_subset_naming_them() {
        let err = InputSchema::compile(json!({
            "type": "object",
            "properties": {"a": {"oneOf": [{"type": "string"}]}},
            "additionalProperties": false
        }))
        .unwrap_err();
        assert_eq!(err.pointer, "/properties/a/oneOf");
        assert!(err.message.contains("\"oneOf\""), "{err}");
    }

    #[test]
    fn refuses_open_objects_and_format() {
        let open = InputSchema::compile(json!({"type": "object", "properties": {}}));
        assert!(open.unwrap_err().message.contains("additionalProperties"));
        let nested_open = InputSchema::compile(json!({
            "type": "object",
            "properties": {"w": {"type": "object", "properties": {"r": {}}}},
            "additionalProperties": false
        }));
        assert_eq!(nested_open.unwrap_err().pointer, "/properties/w");
        let format = InputSchema::compile(json!({
            "type": "object",
            "properties": {"u": {"type": "string", "format": "uri"}},
            "additionalProperties": false
        }));
        assert_eq!(format.unwrap_err().pointer, "/properties/u/format");
        // ECMA-262 patterns are not checked here, so they are refused, not ignored.
        let pattern = InputSchema::compile(json!({
            "type": "object",
            "properties": {"u": {"type": "string", "pattern": "^a"}},
            "additionalProperties": false
        }));
        assert_eq!(pattern.unwrap_err().pointer, "/properties/u/pattern");
    }

    #[test]
    fn refuses_malformed_keyword_values_naming_where() {
        for (property, pointer) in [
            (json!({"type": "strnig"}), "/properties/p/type"),
            (json!({"type": []}), "/properties/p/type"),
            (json!({"minimum": "0"}), "/properties/p/minimum"),
            (json!({"maxLength": -1}), "/properties/p/maxLength"),
            (json!({"enum": "a"}), "/properties/p/enum"),
            (json!({"uniqueItems": 1}), "/properties/p/uniqueItems"),
            (json!({"description": 1}), "/properties/p/description"),
        ] {
            let err = InputSchema::compile(json!({
                "type": "object",
                "properties": {"p": property},
                "additionalProperties": false
            }))
            .unwrap_err();
            assert_eq!(err.pointer, pointer, "{err}");
        }
    }

    #[test]
    fn undeclared_fields_win_over_missing_and_type_errors() {
        let err = schema()
            .check("t", &json!({"line": "x", "zeta": 1, "alpha": 2}))
            .unwrap_err();
        assert_eq!(err.path, "/alpha");
        assert_eq!(
            err.message,
            "t accepts no undeclared input fields: alpha, zeta"
        );
    }

    #[test]
    fn missing_and_nested_errors_carry_pointers() {
        let err = schema().check("t", &json!({"path": "a"})).unwrap_err();
        assert_eq!(err.path, "/workspace");
        let err = schema()
            .check("t", &json!({"path": "a", "workspace": {"root": 1}}))
            .unwrap_err();
        assert_eq!(err.path, "/workspace/root");
        let err = schema()
            .check(
                "t",
                &json!({"path": "a", "workspace": {"root": "/", "x": 1}}),
            )
            .unwrap_err();
        assert_eq!(err.path, "/workspace/x");
        let err = schema()
            .check(
                "t",
                &json!({"path": "a", "line": -1, "workspace": {"root": "/"}}),
            )
            .unwrap_err();
        assert_eq!(err.path, "/line");
    }

    #[test]
    fn integers_are_integers() {
        let ok = schema().check(
            "t",
            &json!({"path": "a", "line": 3, "workspace": {"root": "/"}}),
        );
        assert_eq!(ok, Ok(()));
        let fractional = schema().check(
            "t",
            &json!({"path": "a", "line": 1.5, "workspace": {"root": "/"}}),
        );
        assert_eq!(fractional.unwrap_err().path, "/line");
    }
}
