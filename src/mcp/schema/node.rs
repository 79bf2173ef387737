//! A subschema compiled for validation: each constraining keyword read once, at load, into the
//! form the check needs, and every malformed value refused there with its JSON Pointer (what
//! the `jsonschema` crate's meta-schema check used to catch: a `minimum` that is not a number,
//! an unknown type name, a negative `maxLength`).
//!
//! Compiling runs after the subset check of `schema.rs`, so every key met here is one of
//! [`KEYWORDS`](super::KEYWORDS) or an annotation.

use serde_json::{Map, Number, Value};

use super::json::JsonType;
use super::{SchemaError, escape_pointer, refuse};

/// What a `type` keyword allows: one type, or several (sorted, as messages list them).
#[derive(Debug)]
pub(super) enum Types {
    One(JsonType),
    Many(Vec<JsonType>),
}

/// The numeric bounds, in the order `jsonschema` evaluates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
}

/// The size limits, in the order `jsonschema` evaluates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Size {
    MinLength,
    MaxLength,
    MinItems,
    MaxItems,
    MinProperties,
    MaxProperties,
}

/// What `additionalProperties` says about members `properties` does not declare.
#[derive(Debug)]
pub(super) enum Additional {
    Allowed,
    /// `false` beside `properties`: the members it does not declare are named.
    Forbidden,
    /// `false` with no `properties` keyword, which `jsonschema` reports as its false schema
    /// meeting the first member, at the object.
    Closed,
    Schema(Box<Node>),
}

/// One compiled subschema.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) types: Option<Types>,
    pub(super) constant: Option<Value>,
    /// The `enum` array as written (its message quotes it).
    pub(super) options: Option<Vec<Value>>,
    /// Bounds in evaluation order, each with its limit as written.
    pub(super) bounds: Vec<(Bound, Number)>,
    /// Sizes in evaluation order.
    pub(super) sizes: Vec<(Size, u64)>,
    pub(super) required: Vec<String>,
    pub(super) unique_items: bool,
    /// Declared members, sorted by name for lookup.
    pub(super) properties: Vec<(String, Node)>,
    pub(super) additional: Additional,
    pub(super) items: Option<Box<Node>>,
    /// `type: "array"` beside `items` (and no `uniqueItems`): `jsonschema` checks the type and
    /// the item counts with the items, after the node's other keywords.
    pub(super) array_shape: bool,
}

impl Node {
    /// The declared member of that name.
    pub(super) fn property(&self, name: &str) -> Option<&Node> {
        self.properties
            .binary_search_by(|(declared, _)| declared.as_str().cmp(name))
            .ok()
            .map(|at| &self.properties[at].1)
    }

    /// Compiles a subschema the subset check has accepted.
    pub(super) fn compile(schema: &Map<String, Value>, pointer: &str) -> Result<Node, SchemaError> {
        let mut node = Node {
            types: None,
            constant: None,
            options: None,
            bounds: Vec::new(),
            sizes: Vec::new(),
            required: Vec::new(),
            unique_items: false,
            properties: Vec::new(),
            additional: Additional::Allowed,
            items: None,
            array_shape: false,
        };
        for (key, value) in schema {
            let here = format!("{pointer}/{}", escape_pointer(key));
            match key.as_str() {
                "type" => node.types = Some(types(value, &here)?),
                "const" => node.constant = Some(value.clone()),
                "enum" => {
                    let options = value
                        .as_array()
                        .ok_or_else(|| refuse(&here, "enum must be an array"))?;
                    node.options = Some(options.clone());
                }
                "minimum" => node.bounds.push((Bound::Minimum, number(value, &here)?)),
                "maximum" => node.bounds.push((Bound::Maximum, number(value, &here)?)),
                "exclusiveMinimum" => node
                    .bounds
                    .push((Bound::ExclusiveMinimum, number(value, &here)?)),
                "exclusiveMaximum" => node
                    .bounds
                    .push((Bound::ExclusiveMaximum, number(value, &here)?)),
                "minLength" => node.sizes.push((Size::MinLength, count(value, &here)?)),
                "maxLength" => node.sizes.push((Size::MaxLength, count(value, &here)?)),
                "minItems" => node.sizes.push((Size::MinItems, count(value, &here)?)),
                "maxItems" => node.sizes.push((Size::MaxItems, count(value, &here)?)),
                "minProperties" => node.sizes.push((Size::MinProperties, count(value, &here)?)),
                "maxProperties" => node.sizes.push((Size::MaxProperties, count(value, &here)?)),
                "uniqueItems" => {
                    node.unique_items = value
                        .as_bool()
                        .ok_or_else(|| refuse(&here, "uniqueItems must be a boolean"))?;
                }
                "required" => node.required = required(value, &here)?,
                "properties" => {
                    // The subset check has made sure each member is an object.
                    for (name, property) in value.as_object().into_iter().flatten() {
                        let at = format!("{here}/{}", escape_pointer(name));
                        let property = property.as_object().expect("checked: an object");
                        node.properties
                            .push((name.clone(), Node::compile(property, &at)?));
                    }
                    node.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "additionalProperties" => {
                    node.additional = match value {
                        Value::Bool(true) => Additional::Allowed,
                        Value::Bool(false) => Additional::Forbidden,
                        Value::Object(schema) => {
                            Additional::Schema(Box::new(Node::compile(schema, &here)?))
                        }
                        _ => return Err(refuse(&here, "a subschema must be an object")),
                    };
                }
                "items" => {
                    let schema = value
                        .as_object()
                        .ok_or_else(|| refuse(&here, "a subschema must be an object"))?;
                    node.items = Some(Box::new(Node::compile(schema, &here)?));
                }
                _ => annotation(key, value, &here)?,
            }
        }
        node.array_shape = node.items.is_some()
            && schema.get("type").and_then(Value::as_str) == Some("array")
            && !schema.contains_key("uniqueItems");
        if matches!(node.additional, Additional::Forbidden) && !schema.contains_key("properties") {
            node.additional = Additional::Closed;
        }
        node.bounds.sort_by_key(|(bound, _)| *bound as u8);
        node.sizes.sort_by_key(|(size, _)| *size as u8);
        Ok(node)
    }
}

fn types(value: &Value, here: &str) -> Result<Types, SchemaError> {
    let name = |v: &Value| {
        v.as_str().and_then(JsonType::parse).ok_or_else(|| {
            refuse(
                here,
                "type must name null, boolean, integer, number, string, array or object",
            )
        })
    };
    match value {
        Value::Array(names) => {
            let mut types = names.iter().map(name).collect::<Result<Vec<_>, _>>()?;
            let written = types.len();
            types.sort();
            types.dedup();
            match types.as_slice() {
                [] => Err(refuse(here, "a type array must name at least one type")),
                _ if types.len() != written => {
                    Err(refuse(here, "a type array must not repeat a type"))
                }
                [one] => Ok(Types::One(*one)),
                _ => Ok(Types::Many(types)),
            }
        }
        other => Ok(Types::One(name(other)?)),
    }
}

fn number(value: &Value, here: &str) -> Result<Number, SchemaError> {
    match value {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(refuse(here, "the limit must be a number")),
    }
}

fn count(value: &Value, here: &str) -> Result<u64, SchemaError> {
    value
        .as_u64()
        .ok_or_else(|| refuse(here, "the limit must be a non-negative integer"))
}

fn required(value: &Value, here: &str) -> Result<Vec<String>, SchemaError> {
    let names: Vec<String> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_owned))
        .collect();
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort();
    sorted.dedup();
    if sorted.len() != names.len() {
        return Err(refuse(here, "required must not name a property twice"));
    }
    Ok(names)
}

/// Annotations carry no constraint, but the ones the dialect types must have their type.
fn annotation(key: &str, value: &Value, here: &str) -> Result<(), SchemaError> {
    let fits = match key {
        "title" | "description" | "$comment" | "$schema" => value.is_string(),
        "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
        "examples" => value.is_array(),
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        Err(refuse(here, format!("{key} has the wrong type")))
    }
}
