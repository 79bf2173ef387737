//! Arguments against a compiled subschema: every violation, each with the JSON Pointer of the
//! value it concerns, in the order the `jsonschema` crate reports them (per value: `type`,
//! `const`, `enum`, the numeric bounds, the sizes, `required`, `uniqueItems`, then the members
//! and items), and worded as it words them, so a client reads the same sentence whichever
//! validator produced it.
//!
//! A valid value allocates nothing: the pointer is a chain of borrowed segments on the stack,
//! written out only for a violation.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::escape_pointer;
use super::json::{Num, all_unique, equal};
use super::node::{Additional, Bound, Node, Size, Types};

/// One violation, before the caller picks the one to report.
#[derive(Debug)]
pub(super) struct Violation {
    /// JSON Pointer to the value concerned.
    pub(super) at: String,
    pub(super) kind: Kind,
}

#[derive(Debug)]
pub(super) enum Kind {
    /// Members `additionalProperties: false` refuses (as written, unsorted).
    Additional(Vec<String>),
    /// A required member that is missing (the pointer names it), with the values its schema
    /// allows when it lists them (`enum`).
    Required(Option<Vec<Value>>),
    /// Any other violation, with `jsonschema`'s sentence for it.
    Other(String),
}

/// Where a value stands: a chain of segments from the arguments object.
#[derive(Clone, Copy)]
pub(super) enum Path<'a> {
    Root,
    Member(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn pointer(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Member(parent, name) => {
                parent.write(out);
                out.push('/');
                out.push_str(&escape_pointer(name));
            }
            Path::Item(parent, index) => {
                parent.write(out);
                let _ = write!(out, "/{index}");
            }
        }
    }
}

/// Appends every violation of `value` against `node` to `out`.
pub(super) fn collect(node: &Node, value: &Value, path: Path<'_>, out: &mut Vec<Violation>) {
    let other = |out: &mut Vec<Violation>, detail: String| {
        out.push(Violation {
            at: path.pointer(),
            kind: Kind::Other(detail),
        });
    };
    if !node.array_shape
        && let Some(detail) = type_violation(node, value)
    {
        other(out, detail);
    }
    if let Some(expected) = &node.constant
        && !equal(value, expected)
    {
        other(out, format!("{expected} was expected"));
    }
    if let Some(options) = &node.options
        && !options.iter().any(|option| equal(value, option))
    {
        other(out, enum_message(value, options));
    }
    if let Value::Number(n) = value {
        for (bound, limit) in &node.bounds {
            if let Some(detail) = bound_violation(*bound, limit, n, value) {
                other(out, detail);
            }
        }
    }
    for (size, limit) in &node.sizes {
        let counted_later = node.array_shape && matches!(size, Size::MinItems | Size::MaxItems);
        if !counted_later && let Some(detail) = size_violation(*size, *limit, value) {
            other(out, detail);
        }
    }
    match value {
        Value::Object(members) => {
            for name in &node.required {
                if !members.contains_key(name) {
                    let options = node.property(name).and_then(|p| p.options.clone());
                    out.push(Violation {
                        at: Path::Member(&path, name).pointer(),
                        kind: Kind::Required(options),
                    });
                }
            }
            members_violations(node, members, path, out);
        }
        Value::Array(items) if node.unique_items && !all_unique(items) => {
            other(out, format!("{value} has non-unique elements"));
        }
        _ => {}
    }
    // `jsonschema` checks `type: "array"` and the item counts beside `items` in one validator
    // (its array-shape fusion), which reports after the node's other keywords.
    if node.array_shape {
        match type_violation(node, value) {
            Some(detail) => other(out, detail),
            None => {
                for (size, limit) in &node.sizes {
                    if matches!(size, Size::MinItems | Size::MaxItems)
                        && let Some(detail) = size_violation(*size, *limit, value)
                    {
                        other(out, detail);
                    }
                }
            }
        }
    }
    if let (Value::Array(items), Some(schema)) = (value, &node.items) {
        for (index, item) in items.iter().enumerate() {
            collect(schema, item, Path::Item(&path, index), out);
        }
    }
}

fn members_violations(
    node: &Node,
    members: &Map<String, Value>,
    path: Path<'_>,
    out: &mut Vec<Violation>,
) {
    if let (Additional::Closed, Some(first)) = (&node.additional, members.values().next()) {
        out.push(Violation {
            at: path.pointer(),
            kind: Kind::Other(format!("False schema does not allow {first}")),
        });
        return;
    }
    let mut unexpected = Vec::new();
    for (name, member) in members {
        let here = Path::Member(&path, name);
        match (node.property(name), &node.additional) {
            (Some(declared), _) => collect(declared, member, here, out),
            (None, Additional::Allowed | Additional::Closed) => {}
            (None, Additional::Forbidden) => unexpected.push(name.clone()),
            (None, Additional::Schema(schema)) => collect(schema, member, here, out),
        }
    }
    if !unexpected.is_empty() {
        out.push(Violation {
            at: path.pointer(),
            kind: Kind::Additional(unexpected),
        });
    }
}

fn type_violation(node: &Node, value: &Value) -> Option<String> {
    match node.types.as_ref()? {
        Types::One(t) if !t.admits(value) => {
            Some(format!("{value} is not of type \"{}\"", t.name()))
        }
        Types::Many(types) if !types.iter().any(|t| t.admits(value)) => {
            let names: Vec<String> = types.iter().map(|t| format!("\"{}\"", t.name())).collect();
            Some(format!("{value} is not of types {}", names.join(", ")))
        }
        _ => None,
    }
}

fn bound_violation(bound: Bound, limit: &Number, n: &Number, value: &Value) -> Option<String> {
    let order = Num::of(n).cmp(Num::of(limit));
    let (fits, words) = match bound {
        Bound::Minimum => (order != Some(Ordering::Less), "is less than the minimum"),
        Bound::Maximum => (
            order != Some(Ordering::Greater),
            "is greater than the maximum",
        ),
        Bound::ExclusiveMinimum => (
            order == Some(Ordering::Greater),
            "is less than or equal to the minimum",
        ),
        Bound::ExclusiveMaximum => (
            order == Some(Ordering::Less),
            "is greater than or equal to the maximum",
        ),
    };
    (!fits).then(|| format!("{value} {words} of {limit}"))
}

fn size_violation(size: Size, limit: u64, value: &Value) -> Option<String> {
    let (fits, words, unit) = match (size, value) {
        (Size::MinLength | Size::MaxLength, Value::String(s)) => {
            let n = s.chars().count() as u64;
            match size {
                Size::MinLength => (n >= limit, "is shorter than", "character"),
                _ => (n <= limit, "is longer than", "character"),
            }
        }
        (Size::MinItems | Size::MaxItems, Value::Array(items)) => {
            let n = items.len() as u64;
            match size {
                Size::MinItems => (n >= limit, "has less than", "item"),
                _ => (n <= limit, "has more than", "item"),
            }
        }
        (Size::MinProperties | Size::MaxProperties, Value::Object(members)) => {
            let n = members.len() as u64;
            match size {
                Size::MinProperties => (n >= limit, "has less than", "propert"),
                _ => (n <= limit, "has more than", "propert"),
            }
        }
        _ => return None,
    };
    if fits {
        return None;
    }
    let plural = match (unit, limit) {
        ("propert", 1) => "y",
        ("propert", _) => "ies",
        (_, 1) => "",
        _ => "s",
    };
    Some(format!("{value} {words} {limit} {unit}{plural}"))
}

/// `jsonschema`'s sentence for a value outside an `enum`: up to three options in full, else
/// the first two and how many more.
fn enum_message(value: &Value, options: &[Value]) -> String {
    let mut out = format!("{value} is not one of ");
    if options.len() <= 3 {
        for (i, option) in options.iter().enumerate() {
            let joint = match i {
                0 => "",
                _ if i == options.len() - 1 => " or ",
                _ => ", ",
            };
            let _ = write!(out, "{joint}{option}");
        }
    } else {
        let _ = write!(
            out,
            "{}, {} or {} other candidates",
            options[0],
            options[1],
            options.len() - 2
        );
    }
    out
}
