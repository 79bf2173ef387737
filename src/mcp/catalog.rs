//! The injected tool catalog: what a host offers ([`ToolSpec`]) and how it is called ([`ToolHost`]).
//!
//! Contract:
//! 1. The host names its tools once; [`Catalog::new`] refuses a malformed catalog at startup
//!    (bad or duplicate name, empty description, schema outside the subset) naming the tool and
//!    the offending key. Nothing about a catalog is checked lazily.
//! 2. `tools/list` and `tools/call` read the same [`Catalog`]: the listing is rendered from the
//!    compiled specs, and calls are validated against the very schema that was listed.
//! 3. A host answers a call with a JSON value (its structured result) or a [`ToolError`]; both
//!    become MCP tool results here, never JSON-RPC errors, so a client can always read why.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::context::CallContext;
use super::schema::{ArgumentError, InputSchema, SchemaError};
use super::status::StatusNotice;

/// How a tool call is scheduled relative to other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution {
    /// Runs alongside other calls, may finish in any order, and is cancellable.
    Concurrent,
    /// A full stream-order fence: waits until every earlier call has answered, holds every later
    /// call until it has answered, and cannot be cancelled once admitted.
    Fence,
}

/// MCP tool annotations: advisory hints, omitted from the listing when unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    /// A human-readable title.
    pub title: Option<String>,
    /// The tool does not modify its environment.
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive_hint: Option<bool>,
    /// Repeating the call has no additional effect.
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    fn to_json(&self) -> Option<Value> {
        let mut object = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                object.insert(key.into(), value);
            }
        };
        put("title", self.title.clone().map(Value::String));
        put("readOnlyHint", self.read_only_hint.map(Value::Bool));
        put("destructiveHint", self.destructive_hint.map(Value::Bool));
        put("idempotentHint", self.idempotent_hint.map(Value::Bool));
        put("openWorldHint", self.open_world_hint.map(Value::Bool));
        (!object.is_empty()).then_some(Value::Object(object))
    }
}

/// One tool, as the host declares it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool name: 1 to 64 characters from `A-Z a-z 0-9 _ - .`.
    pub name: String,
    /// What the tool does, for the client's model.
    pub description: String,
    /// The input schema, in the subset `schema` documents.
    pub input_schema: Value,
    /// Advisory hints.
    pub annotations: ToolAnnotations,
    /// Scheduling class.
    pub execution: Execution,
    /// Liveness notice policy.
    pub status: StatusNotice,
}

/// A tool failure the client should see as an `isError: true` result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// A stable camelCase code (`invalidInput`, `contentModified`, ...).
    pub code: String,
    /// A sentence saying what was wrong and what to do.
    pub message: String,
    /// Structured detail, if any.
    pub data: Option<Value>,
}

impl ToolError {
    /// An error with a code and a message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// The same error with structured data.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The `invalidInput` error for arguments that do not satisfy the schema.
    pub fn invalid_input(error: ArgumentError) -> Self {
        ToolError::new("invalidInput", error.message).with_data(json!({ "path": error.path }))
    }
}

/// What a host's call produces.
pub type ToolResult = Result<Value, ToolError>;

/// The host: a catalog and one async call. The MCP core owns everything else.
pub trait ToolHost: Send + Sync + 'static {
    /// The catalog, read once at startup.
    fn tools(&self) -> Vec<ToolSpec>;

    /// Called once when a call is admitted, before it waits for its turn (behind a fence or the
    /// bound on running calls) and before [`ToolHost::call`]: the place to set what the call's
    /// liveness notice says ([`CallContext::set_status`]) and to report a first progress step.
    /// It runs on the coordinator, so it must be quick and must not block.
    fn admitted(&self, tool: &str, arguments: &Value, ctx: &CallContext) {
        let _ = (tool, arguments, ctx);
    }

    /// Runs one tool call with arguments already validated against the tool's schema.
    ///
    /// When the call is cancelled (by the client, or at shutdown), [`CallContext::cancelled`]
    /// completes and the future keeps being polled for the server's cancellation grace, so the
    /// host can clean up (tell its backend to stop); then it is dropped. Either way its result
    /// is discarded: a call whose cancellation won answers nothing.
    fn call(
        &self,
        tool: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> impl Future<Output = ToolResult> + Send;

    /// Releases everything the host owns (child processes included), by `deadline`. Called once,
    /// after the last call has finished, before the server exits. A host still shutting down at
    /// the deadline is not waited for: [`ToolHost::kill`] runs instead.
    fn shutdown(&self, deadline: Instant) -> impl Future<Output = ()> + Send {
        let _ = deadline;
        async {}
    }

    /// Ends everything the host owns at once, synchronously (kill its child processes). Called
    /// when the shutdown deadline passes or a second termination signal arrives, right before
    /// the process exits.
    fn kill(&self) {}
}

/// A catalog that was refused at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// The tool concerned.
    pub tool: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {:?}: {}", self.tool, self.message)
    }
}

impl std::error::Error for CatalogError {}

/// A validated tool: its spec and its compiled schema.
#[derive(Debug)]
pub struct Tool {
    /// The spec as declared.
    pub spec: ToolSpec,
    /// The compiled schema.
    pub schema: InputSchema,
}

/// The validated catalog, shared by `tools/list` and `tools/call`.
#[derive(Debug, Clone)]
pub struct Catalog {
    tools: Arc<[Tool]>,
    by_name: Arc<HashMap<String, usize>>,
    listing: Arc<Value>,
}

/// Whether a name satisfies the MCP tool-name rule as this server applies it.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

impl Catalog {
    /// Validates and compiles a host's specs, in the order given (the listing order).
    pub fn new(specs: Vec<ToolSpec>) -> Result<Catalog, CatalogError> {
        let mut by_name = HashMap::new();
        let mut tools = Vec::with_capacity(specs.len());
        for spec in specs {
            let refuse = |message: String| CatalogError {
                tool: spec.name.clone(),
                message,
            };
            if !is_valid_tool_name(&spec.name) {
                return Err(refuse(
                    "a tool name must be 1 to 64 characters from A-Z a-z 0-9 _ - .".into(),
                ));
            }
            if spec.description.trim().is_empty() {
                return Err(refuse("a tool must have a description".into()));
            }
            if by_name.insert(spec.name.clone(), tools.len()).is_some() {
                return Err(refuse("the name is declared twice".into()));
            }
            let schema = InputSchema::compile(spec.input_schema.clone())
                .map_err(|e: SchemaError| refuse(e.to_string()))?;
            tools.push(Tool { spec, schema });
        }
        let listing = Value::Array(tools.iter().map(list_entry).collect());
        Ok(Catalog {
            tools: tools.into(),
            by_name: Arc::new(by_name),
            listing: Arc::new(listing),
        })
    }

    /// The tool of that name, if the catalog has one.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }

    /// The `tools` array of a `tools/list` result.
    pub fn listing(&self) -> &Value {
        &self.listing
    }
}

fn list_entry(tool: &Tool) -> Value {
    let mut entry = json!({
        "name": tool.spec.name,
        "description": tool.spec.description,
        "inputSchema": tool.schema.advertised(),
    });
    if let Some(annotations) = tool.spec.annotations.to_json() {
        entry["annotations"] = annotations;
    }
    entry
}

/// The `tools/call` result for a host's answer: `structuredContent` and the same JSON as text.
pub fn call_tool_result(result: ToolResult) -> Value {
    let (structured, is_error) = match result {
        Ok(Value::Object(object)) => (Value::Object(object), false),
        Ok(other) => {
            let mut object = Map::new();
            object.insert("result".into(), other);
            (Value::Object(object), false)
        }
        Err(error) => {
            let mut object = json!({ "code": error.code, "message": error.message });
            if let Some(data) = error.data {
                object["data"] = data;
            }
            (object, true)
        }
    };
    let text = serde_json::to_string(&structured).expect("serializing JSON values cannot fail");
    // Built by hand rather than with `json!`, which would deep-copy `structured` (it serializes
    // each interpolated value into a new one).
    let mut content = Map::new();
    content.insert("type".into(), Value::String("text".into()));
    content.insert("text".into(), Value::String(text));
    let mut result = Map::new();
    result.insert("content".into(), Value::Array(vec![Value::Object(content)]));
    result.insert("structuredContent".into(), structured);
    result.insert("isError".into(), Value::Bool(is_error));
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "d".into(),
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            annotations: ToolAnnotations::default(),
            execution: Execution::Concurrent,
            status: StatusNotice::Quiet,
        }
    }

    #[test]
    fn names_follow_the_mcp_rule() {
        assert!(is_valid_tool_name("lean_run_at"));
        assert!(is_valid_tool_name("a.b-c"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("$/lean/runAt"));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
    }

    #[test]
    fn refuses_duplicates_and_bad_schemas_naming_the_tool() {
        let dup = Catalog::new(vec![spec("a"), spec("a")]).unwrap_err();
        assert_eq!(dup.tool, "a");
        let mut bad = spec("b");
        bad.input_schema = json!({"type": "object", "additionalProperties": false, "anyOf": []});
        let err = Catalog::new(vec![bad]).unwrap_err();
        assert!(err.to_string().contains("\"anyOf\""), "{err}");
    }

    #[test]
    fn listing_omits_unset_annotations() {
        let mut read_only = spec("r");
        read_only.annotations.read_only_hint = Some(true);
        let catalog = Catalog::new(vec![spec("a"), read_only]).unwrap();
        assert!(catalog.listing()[0].get("annotations").is_none());
        assert_eq!(
            catalog.listing()[1]["annotations"],
            json!({"readOnlyHint": true})
        );
    }

    #[test]
    fn results_mirror_structured_content_as_text() {
        let ok = call_tool_result(Ok(json!({"a": 1})));
        assert_eq!(ok["content"][0]["text"], "{\"a\":1}");
        assert_eq!(ok["isError"], false);
        let wrapped = call_tool_result(Ok(json!(null)));
        assert_eq!(wrapped["structuredContent"], json!({"result": null}));
        let err = call_tool_result(Err(
            ToolError::new("invalidInput", "m").with_data(json!({"path": "/x"}))
        ));
        assert_eq!(err["isError"], true);
        assert_eq!(err["structuredContent"]["data"]["path"], "/x");
    }
}
