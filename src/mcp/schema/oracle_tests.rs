//! The `jsonschema` crate as the oracle of [`InputSchema`]: on generated schemas of the subset
//! and generated arguments, both must accept the same arguments and report the same violation
//! (pointer and sentence). The oracle is the validation this server shipped before its own:
//! `jsonschema` draft 2020-12 without format assertions, its violations ranked by the same
//! `report`.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use jsonschema::error::ValidationErrorKind;

use super::check::{Kind, Violation};
use super::{ArgumentError, DIALECT, InputSchema, escape_pointer, report};

fn oracle(schema: &Value, tool: &str, arguments: &Value) -> Result<(), ArgumentError> {
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(false)
        .build(schema)
        .expect("jsonschema compiles every schema of the subset");
    let violations = validator
        .iter_errors(arguments)
        .map(|error| {
            let at = error.instance_path().as_str().to_owned();
            match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => Violation {
                    at,
                    kind: Kind::Additional(unexpected.clone()),
                },
                ValidationErrorKind::Required { property } => {
                    let name = escape_pointer(property.as_str().unwrap());
                    // The missing member's `enum`, beside the `required` that names it.
                    let object = error.schema_path().as_str().trim_end_matches("/required");
                    let options = schema
                        .pointer(&format!("{object}/properties/{name}/enum"))
                        .and_then(Value::as_array)
                        .cloned();
                    Violation {
                        at: format!("{at}/{name}"),
                        kind: Kind::Required(options),
                    }
                }
                _ => Violation {
                    at,
                    kind: Kind::Other(error.to_string()),
                },
            }
        })
        .collect();
    report(tool, violations)
}

const NAMES: [&str; 5] = ["a", "b", "path", "x~y", "s/t"];

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..4).prop_map(Value::from),
        Just(json!(0.5)),
        Just(json!(-1.5)),
        Just(json!(2.0)),
        Just(json!(-0.0)),
        Just(json!(1e300)),
        Just(json!(-1e300)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(serde_json::from_str::<Value>("18446744073709551616").unwrap()),
        Just(json!(9007199254740993u64)),
        Just(json!(9007199254740992.0)),
    ]
}

fn arb_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        prop_oneof![
            Just(""),
            Just("a"),
            Just("before"),
            Just("ü€𝕏"),
            Just("\"q\"\n"),
            Just("abcd")
        ]
        .prop_map(Value::from),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    arb_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(&NAMES[..]), inner), 0..4).prop_map(
                |members| {
                    Value::Object(
                        members
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                    )
                }
            ),
        ]
    })
}

const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

fn arb_type() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => prop::sample::select(&TYPES[..]).prop_map(Value::from),
        1 => prop::sample::subsequence(&TYPES[..], 1..4)
            .prop_map(|names| Value::from(names.into_iter().map(Value::from).collect::<Vec<_>>())),
    ]
}

/// Keywords of the subset that need no subschema, each present or not.
fn arb_assertions() -> impl Strategy<Value = Map<String, Value>> {
    let limit = || prop::option::weighted(0.15, 0u64..4);
    let bound = || prop::option::weighted(0.15, arb_number());
    (
        prop::option::weighted(0.6, arb_type()),
        prop::option::weighted(0.08, arb_leaf()),
        prop::option::weighted(0.2, prop::collection::vec(arb_leaf(), 1..6)),
        (bound(), bound(), bound(), bound()),
        (limit(), limit(), limit(), limit(), limit(), limit()),
        prop::option::weighted(0.15, any::<bool>()),
    )
        .prop_map(|(ty, constant, options, bounds, sizes, unique)| {
            let mut schema = Map::new();
            let mut put = |key: &str, value: Option<Value>| {
                if let Some(value) = value {
                    schema.insert(key.to_owned(), value);
                }
            };
            put("type", ty);
            put("const", constant);
            put("enum", options.map(Value::from));
            put("minimum", bounds.0);
            put("maximum", bounds.1);
            put("exclusiveMinimum", bounds.2);
            put("exclusiveMaximum", bounds.3);
            put("minLength", sizes.0.map(Value::from));
            put("maxLength", sizes.1.map(Value::from));
            put("minItems", sizes.2.map(Value::from));
            put("maxItems", sizes.3.map(Value::from));
            put("minProperties", sizes.4.map(Value::from));
            put("maxProperties", sizes.5.map(Value::from));
            put("uniqueItems", unique.map(Value::from));
            schema
        })
}

fn arb_schema() -> impl Strategy<Value = Map<String, Value>> {
    arb_assertions().prop_recursive(3, 16, 4, |inner| {
        (
            arb_assertions(),
            prop::collection::btree_map(prop::sample::select(&NAMES[..]), inner.clone(), 0..4),
            prop::collection::vec(prop::sample::select(&NAMES[..]), 0..3),
            prop::option::weighted(0.3, inner.clone()),
            prop::option::weighted(0.3, prop::option::of(inner)),
        )
            .prop_map(|(mut schema, properties, required, items, additional)| {
                if let Some(items) = items {
                    schema.insert("items".into(), Value::Object(items));
                }
                let required: Vec<Value> = required
                    .into_iter()
                    .filter(|name| properties.contains_key(name))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .map(Value::from)
                    .collect();
                if !properties.is_empty() {
                    let properties = properties
                        .into_iter()
                        .map(|(name, s)| (name.to_owned(), Value::Object(s)))
                        .collect();
                    schema.insert("properties".into(), Value::Object(properties));
                    schema.insert("additionalProperties".into(), Value::Bool(false));
                    schema.insert("required".into(), Value::from(required));
                } else {
                    match additional {
                        Some(Some(s)) => {
                            schema.insert("additionalProperties".into(), Value::Object(s));
                        }
                        Some(None) => {
                            schema.insert("additionalProperties".into(), Value::Bool(false));
                        }
                        None => {}
                    }
                }
                schema
            })
    })
}

/// A root the subset accepts: a closed object with generated members.
fn arb_root() -> impl Strategy<Value = Value> {
    (
        prop::collection::btree_map(prop::sample::select(&NAMES[..]), arb_schema(), 0..5),
        prop::collection::vec(prop::sample::select(&NAMES[..]), 0..3),
    )
        .prop_map(|(properties, required)| {
            let required: Vec<&str> = required
                .into_iter()
                .filter(|name| properties.contains_key(name))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            json!({
                "$schema": DIALECT,
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        })
}

/// Arguments shaped like the root's members, or anything at all.
fn arb_arguments() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::collection::vec((prop::sample::select(&NAMES[..]), arb_value()), 0..5)
            .prop_map(|members| {
                Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        1 => arb_value(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn agrees_with_jsonschema(schema in arb_root(), arguments in arb_arguments()) {
        let ours = InputSchema::compile(schema.clone()).expect("the subset compiles");
        prop_assert_eq!(ours.check("t", &arguments), oracle(&schema, "t", &arguments));
    }

    #[test]
    fn agrees_on_values_meant_to_fit(schema in arb_root(), seed in arb_arguments()) {
        // Arguments built from the schema's own members: most checks reach the nested ones.
        let ours = InputSchema::compile(schema.clone()).expect("the subset compiles");
        let mut arguments = Map::new();
        if let (Some(properties), Value::Object(values)) = (schema["properties"].as_object(), &seed) {
            for (name, value) in properties.keys().zip(values.values().cycle()) {
                arguments.insert(name.clone(), value.clone());
            }
        }
        let arguments = Value::Object(arguments);
        prop_assert_eq!(ours.check("t", &arguments), oracle(&schema, "t", &arguments));
    }
}

#[test]
fn agrees_on_the_edges_of_numbers_and_enums() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615u64},
            "m": {"type": "string", "enum": ["sorry", "hole", "diagnostic", "code_action"]},
            "k": {"type": ["integer", "string"], "exclusiveMinimum": -1.5},
            "u": {"type": "array", "items": {"type": "number"}, "uniqueItems": true, "maxItems": 3}
        },
        "required": ["n"],
        "additionalProperties": false
    });
    let ours = InputSchema::compile(schema.clone()).unwrap();
    for arguments in [
        json!({"n": 1e300}),
        json!({"n": -0.0}),
        json!({"n": 18446744073709551615u64}),
        json!({"n": 18446744073709551616.0}),
        json!({"n": -1, "m": 7}),
        json!({"n": 1, "m": "later"}),
        json!({"n": 1, "k": -1.5}),
        json!({"n": 1, "k": true}),
        json!({"n": 1, "u": [1, 1.0]}),
        json!({"n": 1, "u": [1, 2, 3, 4]}),
        json!({"n": 1, "u": ["1", 2]}),
        json!([]),
        json!({"zz": 1, "n": "x"}),
    ] {
        assert_eq!(
            ours.check("t", &arguments),
            oracle(&schema, "t", &arguments),
            "{arguments}"
        );
    }
}
