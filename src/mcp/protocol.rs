//! MCP revisions, protocol families and the result envelopes each family requires.
//!
//! Contract:
//! 1. A request is *modern* (2026-07-28) iff its method is `server/discover` or its
//!    `params._meta` carries any reserved `io.modelcontextprotocol/*` key; otherwise it is legacy
//!    (2025-11-25) input, because stdio has no other signal for a legacy client.
//! 2. Modern metadata is validated per request and never retained: protocol version (string) and
//!    client capabilities (object) are required, client info is optional but must name itself,
//!    the log level must be an MCP level. Shape failures are -32602; a well-formed but unsupported
//!    version is -32022 with `{supported, requested}`.
//! 3. Every modern success result is decorated with `resultType: "complete"` and
//!    `_meta["io.modelcontextprotocol/serverInfo"]` ([`ServerIdentity::envelope`], the one place
//!    results get their family's envelope); `server/discover` and `tools/list` are
//!    public-cacheable for an hour.
//! 4. A client names itself with an object holding string `name` and `version`, in legacy
//!    `initialize` and in modern `_meta` alike ([`client_name`]).
//!
//! Which family a transport is locked to, and the legacy lifecycle, live in `session`.

use serde_json::{Map, Value, json};

use super::jsonrpc::{ErrorObject, code, kind_of};

/// The stateless revision, preferred by this server.
pub const MODERN_REVISION: &str = "2026-07-28";
/// The initialization-based revision served for clients that still use `initialize`.
pub const LEGACY_REVISION: &str = "2025-11-25";
/// Revisions a modern request may name in its `_meta`.
pub const MODERN_REVISIONS: &[&str] = &[MODERN_REVISION];

/// Reserved request `_meta` keys of MCP 2026-07-28.
pub mod meta_key {
    /// The prefix of every reserved key this server recognises as modern.
    pub const RESERVED_PREFIX: &str = "io.modelcontextprotocol/";
    /// The revision the request is written against.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's identity, optional.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The minimum level of log notifications the request opts into, optional.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// The server identity on every modern result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The (unreserved) progress token.
    pub const PROGRESS_TOKEN: &str = "progressToken";
}

/// The cache lifetime of results that depend on nothing but the server build: one hour.
pub const PUBLIC_TTL_MS: u64 = 3_600_000;

/// The two protocol families one stdio transport can speak (but only one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolFamily {
    /// 2025-11-25: `initialize`, then a session.
    Legacy,
    /// 2026-07-28: every request carries its own `_meta`.
    Modern,
}

impl ProtocolFamily {
    /// The family's name in error messages.
    pub fn name(self) -> &'static str {
        match self {
            ProtocolFamily::Legacy => "legacy",
            ProtocolFamily::Modern => "modern",
        }
    }

    /// The revision the family speaks.
    pub fn revision(self) -> &'static str {
        match self {
            ProtocolFamily::Legacy => LEGACY_REVISION,
            ProtocolFamily::Modern => MODERN_REVISION,
        }
    }
}

/// MCP log levels, in increasing severity (RFC 5424 order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Detailed debugging.
    Debug,
    /// Informational.
    Info,
    /// Normal but significant.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
    }

    /// Reads a level from JSON, with a -32602 naming `what` when it is not one.
    pub fn from_json(value: &Value, what: &str) -> Result<LogLevel, ErrorObject> {
        value.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
            ErrorObject::invalid_params(format!(
                "{what} must be one of {}; got {value}",
                names.join(", ")
            ))
        })
    }
}

/// The validated reserved metadata of one modern request.
#[derive(Debug, Clone, PartialEq)]
pub struct ModernMeta {
    /// The client's log level for this request; `None` means no log notifications at all.
    pub log_level: Option<LogLevel>,
    /// The client's name and version, when the request carried them.
    pub client: Option<ClientName>,
}

/// A client's own name for itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientName {
    /// `clientInfo.name`.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
}

/// Who sent a tool call, as far as the protocol tells: its family, and its name when it gave one
/// (once in a legacy `initialize`, or on each modern request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// The protocol family of the request.
    pub family: ProtocolFamily,
    /// The client's name and version, if it gave them.
    pub name: Option<ClientName>,
}

/// Reads a `clientInfo` object: `None` unless it holds string `name` and `version`.
pub fn client_name(info: &Value) -> Option<ClientName> {
    Some(ClientName {
        name: info.get("name")?.as_str()?.to_owned(),
        version: info.get("version")?.as_str()?.to_owned(),
    })
}

/// Whether a request is modern input: `server/discover`, or any reserved key in `_meta`.
pub fn is_modern(method: &str, meta: Option<&Map<String, Value>>) -> bool {
    method == "server/discover"
        || meta.is_some_and(|m| m.keys().any(|k| k.starts_with(meta_key::RESERVED_PREFIX)))
}

/// Validates the reserved keys of a modern request's `_meta` (absent `_meta` counts as empty).
pub fn validate_modern_meta(meta: Option<&Map<String, Value>>) -> Result<ModernMeta, ErrorObject> {
    let empty = Map::new();
    let meta = meta.unwrap_or(&empty);
    let version = meta.get(meta_key::PROTOCOL_VERSION);
    let capabilities = meta.get(meta_key::CLIENT_CAPABILITIES);
    if version.is_none() || capabilities.is_none() {
        return Err(ErrorObject::invalid_params(format!(
            "modern MCP requests require _meta {} and {}",
            meta_key::PROTOCOL_VERSION,
            meta_key::CLIENT_CAPABILITIES
        )));
    }
    let Some(Value::String(version)) = version else {
        return Err(ErrorObject::invalid_params(format!(
            "_meta {} must be a string, not {}",
            meta_key::PROTOCOL_VERSION,
            kind_of(version.unwrap_or(&Value::Null))
        )));
    };
    if let Some(capabilities) = capabilities.filter(|c| !c.is_object()) {
        return Err(ErrorObject::invalid_params(format!(
            "_meta {} must be an object, not {}",
            meta_key::CLIENT_CAPABILITIES,
            kind_of(capabilities)
        )));
    }
    let client = match meta.get(meta_key::CLIENT_INFO) {
        None => None,
        Some(info) => Some(client_name(info).ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "_meta {} must be an object with string name and version",
                meta_key::CLIENT_INFO
            ))
        })?),
    };
    let log_level = match meta.get(meta_key::LOG_LEVEL) {
        Some(level) => Some(LogLevel::from_json(
            level,
            &format!("_meta {}", meta_key::LOG_LEVEL),
        )?),
        None => None,
    };
    if !MODERN_REVISIONS.contains(&version.as_str()) {
        return Err(unsupported_version(version));
    }
    Ok(ModernMeta { log_level, client })
}

/// -32022 for a revision this server does not serve per request.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(
        code::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({ "supported": MODERN_REVISIONS, "requested": requested }))
}

/// Who this server is, as `serverInfo` says it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerIdentity {
    /// The implementation name.
    pub name: String,
    /// The implementation version.
    pub version: String,
    /// Text for the client's model on how to use the server, if any.
    pub instructions: Option<String>,
}

impl ServerIdentity {
    fn implementation(&self) -> Value {
        json!({ "name": self.name, "version": self.version })
    }

    /// The capabilities both families advertise: tools (a fixed list) and logging.
    pub fn capabilities(&self) -> Value {
        json!({ "logging": {}, "tools": { "listChanged": false } })
    }

    /// The result of a legacy `initialize`, whatever revision the client proposed.
    pub fn initialize_result(&self) -> Value {
        let mut result = json!({
            "protocolVersion": LEGACY_REVISION,
            "capabilities": self.capabilities(),
            "serverInfo": self.implementation(),
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        result
    }

    /// The (undecorated) result of `server/discover`.
    pub fn discover_result(&self) -> Value {
        let mut result = json!({
            "supportedVersions": MODERN_REVISIONS,
            "capabilities": self.capabilities(),
        });
        if let Some(instructions) = &self.instructions {
            result["instructions"] = json!(instructions);
        }
        make_public_cacheable(&mut result);
        result
    }

    /// Gives a success result its family's envelope: a modern result gets `resultType` and
    /// `_meta` serverInfo (keeping any `_meta` keys it already has); a legacy one stays as it is.
    pub fn envelope(&self, family: ProtocolFamily, result: &mut Value) {
        let (ProtocolFamily::Modern, Value::Object(object)) = (family, result) else {
            return;
        };
        object.insert("resultType".into(), json!("complete"));
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(meta_key::SERVER_INFO.into(), self.implementation());
        }
    }
}

/// Marks a result as cacheable by anyone for an hour.
pub fn make_public_cacheable(result: &mut Value) {
    if let Value::Object(object) = result {
        object.insert("ttlMs".into(), json!(PUBLIC_TTL_MS));
        object.insert("cacheScope".into(), json!("public"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn modern_iff_discover_or_reserved_key() {
        assert!(is_modern("server/discover", None));
        assert!(is_modern(
            "ping",
            Some(&meta(json!({"io.modelcontextprotocol/logLevel": "x"})))
        ));
        assert!(!is_modern("ping", Some(&meta(json!({"progressToken": 1})))));
        assert!(!is_modern("tools/list", None));
    }

    #[test]
    fn shape_errors_come_before_version_errors() {
        let bad = meta(json!({"io.modelcontextprotocol/protocolVersion": "1900-01-01"}));
        assert_eq!(
            validate_modern_meta(Some(&bad)).unwrap_err().code,
            code::INVALID_PARAMS
        );
        let unsupported = meta(json!({
            "io.modelcontextprotocol/protocolVersion": "1900-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}
        }));
        let err = validate_modern_meta(Some(&unsupported)).unwrap_err();
        assert_eq!(err.code, code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            err.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "1900-01-01"}))
        );
    }

    #[test]
    fn log_levels_order_by_severity() {
        assert!(LogLevel::Debug < LogLevel::Notice && LogLevel::Notice < LogLevel::Warning);
        assert_eq!(LogLevel::parse("notice"), Some(LogLevel::Notice));
        assert_eq!(LogLevel::parse("NOTICE"), None);
    }

    #[test]
    fn decoration_keeps_existing_meta() {
        let identity = ServerIdentity {
            name: "n".into(),
            version: "v".into(),
            instructions: None,
        };
        let mut legacy = json!({"a": 1});
        identity.envelope(ProtocolFamily::Legacy, &mut legacy);
        assert_eq!(legacy, json!({"a": 1}));
        let mut result = json!({"_meta": {"x": 1}});
        identity.envelope(ProtocolFamily::Modern, &mut result);
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["_meta"]["x"], 1);
        assert_eq!(result["_meta"][meta_key::SERVER_INFO]["name"], "n");
    }
}
