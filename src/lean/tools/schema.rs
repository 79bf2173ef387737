//! The pieces every Lean tool's catalog entry is made of: the schema envelope, the shared
//! properties (workspace, path, version, positions) and the description's common endings.
//!
//! Contract: every input schema is a closed draft 2020-12 object (without `$schema`, which is
//! the MCP default and which some clients refuse); `workspace` is on every Lean tool and is the
//! last required property; naturals are integers with `minimum: 0`. What every tool shares (the
//! workspace descriptor, positions, progress, the source-edit invariant, receipts) is said once,
//! in the server's instructions (`lean/mod.rs`), so descriptions are short: what the tool does
//! and when to use it, and the receipt hint when its result carries a receipt.

use serde_json::{Map, Value, json};

use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// What the description of every tool whose result carries a receipt says of it (receipts
/// themselves are explained once, in the server's instructions and `lean_check_receipt`).
pub const RECEIPT_HINT: &str = "Its result carries a receipt.";

/// The workspace descriptor property.
pub fn workspace() -> Value {
    json!({
        "type": "object",
        "properties": {"root": {"type": "string"}},
        "required": ["root"],
        "additionalProperties": false
    })
}

/// The file path property.
pub fn path() -> Value {
    json!({"type": "string"})
}

/// The document version property.
pub fn version() -> Value {
    json!({"type": "integer", "minimum": 0})
}

/// A zero-based natural number property.
pub fn natural(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

/// The zero-based line property.
pub fn line() -> Value {
    natural("0-based.")
}

/// The zero-based UTF-16 character property.
pub fn character() -> Value {
    natural("0-based, in UTF-16 code units.")
}

/// A string enum property.
pub fn string_enum(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

/// A closed object schema with `properties` in order and `required` in order, `workspace`
/// appended last to both.
pub fn lean_input(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, schema) in properties {
        props.insert((*name).to_owned(), schema.clone());
    }
    props.insert("workspace".into(), workspace());
    let mut required: Vec<&str> = required.to_vec();
    required.push("workspace");
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false
    })
}

/// How a Lean tool is listed.
pub struct LeanTool<'a> {
    /// Its name.
    pub name: &'a str,
    /// What it does (the description's first sentences).
    pub base: &'a str,
    /// Its properties, in order (without `workspace`).
    pub properties: &'a [(&'a str, Value)],
    /// Its required properties, in order (without `workspace`).
    pub required: &'a [&'a str],
    /// Its hints.
    pub annotations: ToolAnnotations,
    /// Whether it is a fence.
    pub execution: Execution,
    /// Whether a slow call gets the liveness notice.
    pub status: StatusNotice,
}

impl LeanTool<'_> {
    /// The catalog entry of a tool that runs beside others and gets the liveness notice when
    /// slow, as most Lean tools do.
    pub fn concurrent(
        name: &str,
        base: &str,
        properties: &[(&str, Value)],
        required: &[&str],
        annotations: ToolAnnotations,
    ) -> ToolSpec {
        LeanTool {
            name,
            base,
            properties,
            required,
            annotations,
            execution: Execution::Concurrent,
            status: StatusNotice::WhenSlow,
        }
        .spec()
    }

    /// The catalog entry.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: self.base.to_owned(),
            input_schema: lean_input(self.properties, self.required),
            annotations: self.annotations.clone(),
            execution: self.execution,
            status: self.status,
        }
    }
}

/// `spec` with [`RECEIPT_HINT`] at the end of its description.
pub fn with_receipt_hint(mut spec: ToolSpec) -> ToolSpec {
    spec.description = format!("{} {RECEIPT_HINT}", spec.description);
    spec
}

/// Annotations of an observational tool.
pub fn read_only() -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    }
}
