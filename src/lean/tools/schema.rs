//! The pieces every Lean tool's catalog entry is made of: the schema envelope, the shared
//! properties (workspace, path, version, positions) and the description's common endings.
//!
//! Contract: every input schema is a closed draft 2020-12 object; `workspace` is on every Lean
//! tool and is the last required property; naturals are integers with `minimum: 0`; every Lean
//! tool's description ends with the progress hint and the source-edit invariant, after the
//! receipt hint when its result carries a receipt.

use serde_json::{Map, Value, json};

use crate::mcp::{Execution, StatusNotice, ToolAnnotations, ToolSpec};

/// What every `lean_*` description says about progress.
pub const PROGRESS_HINT: &str = "For detailed live updates, clients can pass `tools/call` \
    `_meta.progressToken`; without one, Beam emits one status log when setup or a long-running \
    request is detected and the request's logging policy admits notice-level events.";

/// What the description of every tool whose result carries a receipt says of it, before the
/// progress hint (the states are explained once, in `lean_check_receipt`'s description).
pub const RECEIPT_HINT: &str = "The result carries a receipt naming exactly the text Lean \
    checked and whether Lean finished it (its states: see lean_check_receipt).";

/// What every `lean_*` description ends with.
pub const INVARIANT: &str =
    "Beam never applies source edits to `.lean` files on disk; the client applies source edits.";

/// The workspace descriptor property.
pub fn workspace() -> Value {
    json!({
        "type": "object",
        "description": "Explicit local Lean workspace descriptor.",
        "properties": {
            "root": {"type": "string", "description": "Absolute Lean/Lake project root path."}
        },
        "required": ["root"],
        "additionalProperties": false
    })
}

/// The file path property.
pub fn path() -> Value {
    json!({
        "type": "string",
        "description": "Lean file path, relative to the workspace root unless absolute."
    })
}

/// The document version property.
pub fn version() -> Value {
    natural("Document version returned by a successful lean_update or lean_sync for this file.")
}

/// A zero-based natural number property.
pub fn natural(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

/// The zero-based line property.
pub fn line() -> Value {
    natural("Zero-based LSP line.")
}

/// The zero-based UTF-16 character property.
pub fn character() -> Value {
    natural("Zero-based UTF-16 LSP character.")
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
        "$schema": "https://json-schema.org/draft/2020-12/schema",
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
            description: format!("{} {PROGRESS_HINT} {INVARIANT}", self.base),
            input_schema: lean_input(self.properties, self.required),
            annotations: self.annotations.clone(),
            execution: self.execution,
            status: self.status,
        }
    }
}

/// `spec` with [`RECEIPT_HINT`] in its description, before the common endings.
pub fn with_receipt_hint(mut spec: ToolSpec) -> ToolSpec {
    let ending = format!("{PROGRESS_HINT} {INVARIANT}");
    if let Some(base) = spec.description.strip_suffix(&ending) {
        spec.description = format!("{base}{RECEIPT_HINT} {ending}");
    }
    spec
}

/// Annotations of an observational tool.
pub fn read_only() -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    }
}
