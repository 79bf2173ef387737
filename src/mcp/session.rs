//! The protocol state of one transport, as a synchronous state machine: which family the
//! transport speaks, where the legacy lifecycle stands, and what each method answers.
//!
//! Contract ([`Session::handle`] maps one decoded message to one [`Action`]):
//! 1. `server/discover` is neutral: it selects nothing, and answers until the transport is
//!    locked to the legacy family (then it is -32600 like all modern traffic). The first
//!    modern `tools/list` or `tools/call` with valid metadata locks the transport to the modern
//!    family; a successful legacy `initialize` locks it to the legacy family. Afterwards the
//!    other family gets -32600 (a bare request on a modern transport gets -32602: it lacks the
//!    metadata every modern request needs).
//! 2. Modern: metadata validated per request (see `protocol`), `initialize`, `ping`,
//!    `logging/setLevel`, subscriptions and unknown methods are -32601, results decorated.
//! 3. Legacy: `initialize` (validated before any state changes, answering 2025-11-25 whatever
//!    the client proposed), then `notifications/initialized`, then tools. `ping` is answered in
//!    every state, as MCP allows; a second `initialize` is -32600.
//! 4. `tools/call` params are closed; MRTR continuation fields are -32602 (this server never
//!    returns `input_required`); unknown tools are -32602; arguments that fail the tool's schema
//!    are an `isError` result with `invalidInput`, answered without dispatch.
//!
//! Nothing here is asynchronous or touches I/O; the coordinator (`server`) runs the [`Action`]s.

use serde_json::{Map, Value, json};

use super::catalog::{Catalog, Execution, ToolError, call_tool_result};
use super::context::{LogPolicy, SessionLogLevel};
use super::jsonrpc::{
    ErrorObject, Incoming, Notification, Request, RequestId, Response, kind_of, undeclared,
};
use super::protocol::{
    self, ClientInfo, ClientName, LogLevel, ProtocolFamily, ServerIdentity, meta_key,
};
use super::status::StatusNotice;

/// What the coordinator must do with one message.
#[derive(Debug)]
pub enum Action {
    /// Write this response now.
    Reply(Response),
    /// Admit and run a tool call.
    Call(CallPlan),
    /// Cancel the call with this id, if it is still running.
    Cancel(RequestId),
    /// Nothing to do.
    Ignore,
}

/// An admitted, validated tool call, ready to run.
#[derive(Debug)]
pub struct CallPlan {
    /// The request id.
    pub id: RequestId,
    /// The tool name (present in the catalog).
    pub tool: String,
    /// Arguments that satisfy the tool's schema.
    pub arguments: Value,
    /// `_meta.progressToken`, if the request carried one.
    pub progress_token: Option<Value>,
    /// Which logs the call may send.
    pub log_policy: LogPolicy,
    /// Who asked, in which family (whose result envelope the answer gets).
    pub client: ClientInfo,
    /// Scheduling class.
    pub execution: Execution,
    /// Liveness notice policy.
    pub status: StatusNotice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    Fresh,
    AwaitingInitialized,
    Ready,
}

/// The protocol state of one transport.
#[derive(Debug)]
pub struct Session {
    identity: ServerIdentity,
    catalog: Catalog,
    family: Option<ProtocolFamily>,
    lifecycle: Lifecycle,
    session_log_level: SessionLogLevel,
    /// The name a legacy client gave in `initialize`.
    legacy_client: Option<ClientName>,
}

type Answer = Result<Outcome, ErrorObject>;

enum Outcome {
    Result(Value),
    Call(CallPlan),
}

impl Session {
    /// A fresh transport: no family selected, legacy log level `debug`.
    pub fn new(identity: ServerIdentity, catalog: Catalog) -> Self {
        Session {
            identity,
            catalog,
            family: None,
            lifecycle: Lifecycle::Fresh,
            session_log_level: SessionLogLevel::new(LogLevel::Debug),
            legacy_client: None,
        }
    }

    /// The server identity results are decorated with.
    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    /// Decides what one decoded message means.
    pub fn handle(&mut self, message: Incoming) -> Action {
        match message {
            Incoming::Notification(notification) => self.notification(notification),
            Incoming::Request(Request { id, method, params }) => {
                match self.request(&id, &method, params) {
                    Ok(Outcome::Result(result)) => Action::Reply(Response::ok(id, result)),
                    Ok(Outcome::Call(plan)) => Action::Call(plan),
                    Err(error) => Action::Reply(Response::error(Some(id), error)),
                }
            }
        }
    }

    fn notification(&mut self, Notification { method, params }: Notification) -> Action {
        match method.as_str() {
            "notifications/initialized" => {
                let well_formed = matches!(params, None | Some(Value::Object(_)));
                if self.lifecycle == Lifecycle::AwaitingInitialized && well_formed {
                    self.lifecycle = Lifecycle::Ready;
                } else {
                    tracing::debug!(?params, lifecycle = ?self.lifecycle, "ignoring notifications/initialized");
                }
                Action::Ignore
            }
            "notifications/cancelled" => {
                let id = params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_value);
                match id {
                    Some(id) => Action::Cancel(id),
                    None => {
                        tracing::debug!(
                            ?params,
                            "ignoring notifications/cancelled without a valid requestId"
                        );
                        Action::Ignore
                    }
                }
            }
            other => {
                tracing::debug!(method = other, "ignoring notification");
                Action::Ignore
            }
        }
    }

    fn request(&mut self, id: &RequestId, method: &str, params: Option<Value>) -> Answer {
        let params = match params {
            None => Map::new(),
            Some(Value::Object(params)) => params,
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "params of {method} must be an object, not {}",
                    kind_of(&other)
                )));
            }
        };
        let meta = match params.get("_meta") {
            None => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta must be an object, not {}",
                    kind_of(other)
                )));
            }
        };
        if protocol::is_modern(method, meta) {
            self.modern(id, method, params)
        } else {
            self.legacy(id, method, params)
        }
    }

    fn modern(&mut self, id: &RequestId, method: &str, params: Map<String, Value>) -> Answer {
        if self.family == Some(ProtocolFamily::Legacy) {
            return Err(family_conflict(
                ProtocolFamily::Legacy,
                ProtocolFamily::Modern,
            ));
        }
        let meta = protocol::validate_modern_meta(params.get("_meta").and_then(Value::as_object))?;
        let log_policy = LogPolicy::Request(meta.log_level);
        let client = ClientInfo {
            family: ProtocolFamily::Modern,
            name: meta.client,
        };
        let mut answer = match method {
            "server/discover" => {
                closed(method, &params, &["_meta"])?;
                Ok(Outcome::Result(self.identity.discover_result()))
            }
            "tools/list" => {
                self.family = Some(ProtocolFamily::Modern);
                self.tools_list(&params, ProtocolFamily::Modern)
            }
            "tools/call" => {
                self.family = Some(ProtocolFamily::Modern);
                self.tools_call(id, params, client, log_policy)
            }
            _ => Err(ErrorObject::method_not_found(
                method,
                protocol::MODERN_REVISION,
            )),
        };
        if let Ok(Outcome::Result(result)) = &mut answer {
            self.identity.envelope(ProtocolFamily::Modern, result);
        }
        answer
    }

    fn legacy(&mut self, id: &RequestId, method: &str, params: Map<String, Value>) -> Answer {
        if self.family == Some(ProtocolFamily::Modern) {
            return Err(if method == "initialize" {
                family_conflict(ProtocolFamily::Modern, ProtocolFamily::Legacy)
            } else {
                ErrorObject::invalid_params(format!(
                    "this transport speaks MCP {}: modern MCP requests require _meta {} and {}",
                    protocol::MODERN_REVISION,
                    meta_key::PROTOCOL_VERSION,
                    meta_key::CLIENT_CAPABILITIES
                ))
            });
        }
        match (method, self.lifecycle) {
            ("initialize", Lifecycle::Fresh) => {
                self.legacy_client = Some(validate_initialize(&params)?);
                self.lifecycle = Lifecycle::AwaitingInitialized;
                self.family = Some(ProtocolFamily::Legacy);
                Ok(Outcome::Result(self.identity.initialize_result()))
            }
            ("initialize", _) => Err(ErrorObject::invalid_request(
                "initialize already completed: a transport is initialized once; start a new server process for a new session",
            )),
            ("ping", _) => {
                closed(method, &params, &["_meta"])?;
                Ok(Outcome::Result(json!({})))
            }
            (_, Lifecycle::Fresh) => Err(ErrorObject::invalid_request(format!(
                "initialize must be the first MCP operation; {method} was sent before it (or send server/discover to use MCP {} without initialize)",
                protocol::MODERN_REVISION
            ))),
            ("logging/setLevel", _) => {
                closed(method, &params, &["level", "_meta"])?;
                let level = params.get("level").unwrap_or(&Value::Null);
                self.session_log_level
                    .set(LogLevel::from_json(level, "level")?);
                Ok(Outcome::Result(json!({})))
            }
            ("tools/list" | "tools/call", Lifecycle::AwaitingInitialized) => {
                Err(ErrorObject::invalid_request(format!(
                    "{method} must wait for notifications/initialized, which completes initialization"
                )))
            }
            ("tools/list", _) => self.tools_list(&params, ProtocolFamily::Legacy),
            ("tools/call", _) => {
                let policy = LogPolicy::Session(self.session_log_level.clone());
                let client = ClientInfo {
                    family: ProtocolFamily::Legacy,
                    name: self.legacy_client.clone(),
                };
                self.tools_call(id, params, client, policy)
            }
            _ => Err(ErrorObject::method_not_found(
                method,
                protocol::LEGACY_REVISION,
            )),
        }
    }

    fn tools_list(&self, params: &Map<String, Value>, family: ProtocolFamily) -> Answer {
        if params.contains_key("cursor") {
            return Err(ErrorObject::invalid_params(
                "tools/list does not paginate: the first answer holds every tool; omit cursor",
            ));
        }
        closed("tools/list", params, &["_meta"])?;
        let mut result = json!({ "tools": self.catalog.listing() });
        if family == ProtocolFamily::Modern {
            protocol::make_public_cacheable(&mut result);
        }
        Ok(Outcome::Result(result))
    }

    fn tools_call(
        &self,
        id: &RequestId,
        mut params: Map<String, Value>,
        client: ClientInfo,
        log_policy: LogPolicy,
    ) -> Answer {
        if params.contains_key("inputResponses") || params.contains_key("requestState") {
            return Err(ErrorObject::invalid_params(
                "inputResponses and requestState continue an input_required result, and this server never returns one; \
                 send the tools/call without them",
            ));
        }
        closed("tools/call", &params, &["name", "arguments", "_meta"])?;
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "tools/call name must be a string, not {}",
                    kind_of(&other)
                )));
            }
            None => {
                return Err(ErrorObject::invalid_params(
                    "tools/call requires a tool name",
                ));
            }
        };
        let Some(tool) = self.catalog.get(&name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool: {name:?}; tools/list names every tool"
            ))
            .with_data(json!({ "tool": name })));
        };
        let arguments = match params.remove("arguments") {
            None => Value::Object(Map::new()),
            Some(Value::Object(arguments)) => Value::Object(arguments),
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "tools/call arguments must be an object, not {}",
                    kind_of(&other)
                )));
            }
        };
        let progress_token = match params
            .get("_meta")
            .and_then(|m| m.get(meta_key::PROGRESS_TOKEN))
        {
            None => None,
            Some(token @ (Value::String(_) | Value::Number(_))) => Some(token.clone()),
            Some(other) => {
                return Err(ErrorObject::invalid_params(format!(
                    "_meta progressToken must be a string or a number, not {}",
                    kind_of(other)
                )));
            }
        };
        if let Err(error) = tool.schema.check(&name, &arguments) {
            // Answered here; `modern` gives it the modern envelope like any direct result.
            let result = call_tool_result(Err(ToolError::invalid_input(error)));
            return Ok(Outcome::Result(result));
        }
        Ok(Outcome::Call(CallPlan {
            id: id.clone(),
            tool: name,
            arguments,
            progress_token,
            log_policy,
            client,
            execution: tool.spec.execution,
            status: tool.spec.status,
        }))
    }
}

fn family_conflict(selected: ProtocolFamily, attempted: ProtocolFamily) -> ErrorObject {
    ErrorObject::invalid_request(format!(
        "MCP transport already selected the {} protocol family; {} {} traffic is not allowed on it",
        selected.name(),
        attempted.name(),
        attempted.revision()
    ))
}

fn closed(method: &str, params: &Map<String, Value>, allowed: &[&str]) -> Result<(), ErrorObject> {
    match undeclared(params, allowed) {
        None => Ok(()),
        Some(extra) => Err(ErrorObject::invalid_params(format!(
            "{method} accepts only {} in params; undeclared: {extra}",
            allowed.join(", ")
        ))),
    }
}

fn validate_initialize(params: &Map<String, Value>) -> Result<ClientName, ErrorObject> {
    closed(
        "initialize",
        params,
        &["protocolVersion", "capabilities", "clientInfo", "_meta"],
    )?;
    if !params.get("protocolVersion").is_some_and(Value::is_string) {
        return Err(ErrorObject::invalid_params(
            "initialize requires a protocolVersion string",
        ));
    }
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Err(ErrorObject::invalid_params(
            "initialize requires a capabilities object",
        ));
    }
    params
        .get("clientInfo")
        .and_then(protocol::client_name)
        .ok_or_else(|| {
            ErrorObject::invalid_params(
                "initialize requires clientInfo with string name and version",
            )
        })
}
