//! The protocol state machine, fed message sequences: the whole server (`serve`: line framing,
//! the session's family and lifecycle rules, the coordinator's id ownership, fences and
//! cancellation) in process, with a trivial host.
//!
//! Input: a sequence of steps (legacy and modern requests of every method, cancellations,
//! ids that repeat, raw lines). Checked: the server ends cleanly at end of input; every output
//! line is one JSON-RPC message; no id is answered more often than it was sent; and when no call
//! could still be running at a later message (the sequence has no `wait` call), every request,
//! and every line that names an id, is answered exactly once.

#![no_main]

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use arbitrary::Arbitrary;
use lean_beam_mcp::mcp::transport::{Inbound, LineReader};
use lean_beam_mcp::mcp::{
    CallContext, DecodeError, Execution, Exit, Incoming, LogLevel, Progress, ServerIdentity,
    ServerOptions, StatusNotice, ToolAnnotations, ToolError, ToolHost, ToolResult, ToolSpec, serve,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// Tools that answer at once (`echo`, `fail`, the fence `barrier`) and one that waits for its
/// cancellation (`wait`).
struct Host;

fn spec(name: &str, execution: Execution) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("fuzz tool {name}"),
        input_schema: json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 8},
                "n": {"type": "integer", "minimum": 0, "maximum": 9}
            },
            "additionalProperties": false
        }),
        annotations: ToolAnnotations::default(),
        execution,
        status: StatusNotice::WhenSlow,
    }
}

impl ToolHost for Host {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![
            spec("echo", Execution::Concurrent),
            spec("fail", Execution::Concurrent),
            spec("barrier", Execution::Fence),
            spec("wait", Execution::Concurrent),
        ]
    }

    async fn call(&self, tool: &str, arguments: Value, ctx: CallContext) -> ToolResult {
        ctx.report(Progress::at(1.0, "started").of_total(2.0));
        ctx.log(LogLevel::Info, "fuzz", json!({"tool": tool}));
        match tool {
            "fail" => Err(ToolError::new("fuzzFailure", "asked to fail")),
            "wait" => {
                ctx.cancelled().await;
                Err(ToolError::new("cancelled", "cancelled"))
            }
            _ => Ok(json!({"tool": tool, "arguments": arguments})),
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Id {
    Int(i8),
    Str(u8),
    /// An integral decimal, the same id as the integer.
    Decimal(i8),
    Fraction(i8),
    Null,
}

impl Id {
    fn render(self) -> String {
        match self {
            Id::Int(n) => n.to_string(),
            Id::Str(n) => format!("\"{}\"", n % 8),
            Id::Decimal(n) => format!("{n}.0"),
            Id::Fraction(n) => format!("{n}.5"),
            Id::Null => "null".into(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Arguments {
    Absent,
    Valid { text: bool, n: u8 },
    WrongType,
    Undeclared,
    NotAnObject,
}

impl Arguments {
    fn render(&self) -> Option<String> {
        Some(match self {
            Arguments::Absent => return None,
            Arguments::Valid { text, n } if *text => format!(r#"{{"text":"t","n":{}}}"#, n % 12),
            Arguments::Valid { n, .. } => format!(r#"{{"n":{}}}"#, n % 12),
            Arguments::WrongType => r#"{"text":7}"#.into(),
            Arguments::Undeclared => r#"{"other":true}"#.into(),
            Arguments::NotAnObject => "[1]".into(),
        })
    }
}

#[derive(Arbitrary, Debug)]
enum Step {
    Initialize {
        id: Id,
        complete: bool,
    },
    Initialized,
    Discover {
        id: Id,
    },
    List {
        id: Id,
        modern: bool,
        cursor: bool,
    },
    Call {
        id: Id,
        modern: bool,
        tool: u8,
        arguments: Arguments,
        progress: bool,
        log: bool,
        resume: bool,
    },
    Cancel {
        id: Id,
    },
    Ping {
        id: Id,
        modern: bool,
    },
    SetLevel {
        id: Id,
        level: u8,
    },
    Unknown {
        id: Option<Id>,
        modern: bool,
    },
    Response {
        id: Id,
    },
    Raw(Vec<u8>),
}

const MODERN_META: &str = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;

fn meta(modern: bool, extra: &str) -> String {
    match (modern, extra.is_empty()) {
        (true, true) => format!(r#""_meta":{{{MODERN_META}}}"#),
        (true, false) => format!(r#""_meta":{{{MODERN_META},{extra}}}"#),
        (false, true) => r#""_meta":{}"#.into(),
        (false, false) => format!(r#""_meta":{{{extra}}}"#),
    }
}

fn request(id: Id, method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{{{params}}}}}"#,
        id.render()
    )
}

impl Step {
    fn render(&self) -> Vec<u8> {
        let text = match self {
            Step::Initialize { id, complete } => {
                let info = if *complete {
                    r#","clientInfo":{"name":"fuzz","version":"1"}"#
                } else {
                    ""
                };
                request(
                    *id,
                    "initialize",
                    &format!(r#""protocolVersion":"2025-11-25","capabilities":{{}}{info}"#),
                )
            }
            Step::Initialized => r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
            Step::Discover { id } => request(*id, "server/discover", &meta(true, "")),
            Step::List { id, modern, cursor } => {
                let cursor = if *cursor { r#","cursor":"x""# } else { "" };
                request(*id, "tools/list", &format!("{}{cursor}", meta(*modern, "")))
            }
            Step::Call {
                id,
                modern,
                tool,
                arguments,
                progress,
                log,
                resume,
            } => {
                let tool = ["echo", "fail", "barrier", "wait", "nope"][usize::from(*tool) % 5];
                let mut extra = Vec::new();
                if *progress {
                    extra.push(r#""progressToken":"p""#.to_string());
                }
                if *log {
                    extra.push(r#""io.modelcontextprotocol/logLevel":"debug""#.to_string());
                }
                let mut params = format!(r#""name":"{tool}",{}"#, meta(*modern, &extra.join(",")));
                if let Some(arguments) = arguments.render() {
                    params.push_str(&format!(r#","arguments":{arguments}"#));
                }
                if *resume {
                    params.push_str(r#","requestState":"s""#);
                }
                request(*id, "tools/call", &params)
            }
            Step::Cancel { id } => format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
                id.render()
            ),
            Step::Ping { id, modern } => request(*id, "ping", &meta(*modern, "")),
            Step::SetLevel { id, level } => {
                let level = ["debug", "info", "error", "loud"][usize::from(*level) % 4];
                request(*id, "logging/setLevel", &format!(r#""level":"{level}""#))
            }
            Step::Unknown {
                id: Some(id),
                modern,
            } => request(*id, "prompts/list", &meta(*modern, "")),
            Step::Unknown { id: None, .. } => {
                r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.into()
            }
            Step::Response { id } => {
                format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id.render())
            }
            Step::Raw(bytes) => {
                return bytes.iter().copied().filter(|b| *b != b'\n').collect();
            }
        };
        text.into_bytes()
    }
}

/// The output, shared with the server's writer thread.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
});

const LIMIT: usize = 4096;

/// How many answers each id (by its JSON text; `null` included) should get: one per line the
/// server reads that names it.
fn expected(input: &[u8]) -> HashMap<String, usize> {
    let mut expected = HashMap::new();
    let mut reader = LineReader::new(input, LIMIT);
    while let Some(item) = reader.next_inbound() {
        let id = match item {
            Inbound::Message(Ok(Incoming::Request(request))) => Some(request.id),
            Inbound::Message(Ok(Incoming::Notification(_))) => continue,
            Inbound::Message(Err(
                error @ (DecodeError::Envelope { .. } | DecodeError::Params { .. }),
            ))
            | Inbound::Message(Err(error @ DecodeError::Parse(_))) => error.id().cloned(),
            Inbound::Oversized { .. } => None,
        };
        let key = id.map_or(Value::Null, |id| id.to_value()).to_string();
        *expected.entry(key).or_default() += 1;
    }
    expected
}

fuzz_target!(|steps: Vec<Step>| {
    let mut input = Vec::new();
    for step in &steps {
        input.extend(step.render());
        input.push(b'\n');
    }
    let waits = steps
        .iter()
        .any(|s| matches!(s, Step::Call { tool, .. } if usize::from(*tool) % 5 == 3));
    let output = Output::default();
    let mut options = ServerOptions::new(ServerIdentity {
        name: "fuzz".into(),
        version: "0".into(),
        instructions: None,
    });
    options.max_message_bytes = LIMIT;
    options.max_running_calls = 4096;
    options.cancel_grace = Duration::ZERO;
    options.status_delay = Duration::from_secs(3600);
    let exit = RUNTIME
        .block_on(serve(
            Host,
            std::io::Cursor::new(input.clone()),
            output.clone(),
            options,
        ))
        .expect("the server starts");
    assert_eq!(exit, Exit::Completed);
    let written = output.0.lock().unwrap().clone();
    let mut answered: HashMap<String, usize> = HashMap::new();
    for line in written.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line).expect("every output line is JSON");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if message.get("method").is_some() {
            assert!(
                message.get("id").is_none(),
                "the server sends no requests: {message}"
            );
            continue;
        }
        let outcomes = usize::from(message.get("result").is_some())
            + usize::from(message.get("error").is_some());
        assert_eq!(outcomes, 1, "exactly one of result and error: {message}");
        *answered.entry(message["id"].to_string()).or_default() += 1;
    }
    let expected = expected(&input);
    for (id, count) in &answered {
        let sent = expected.get(id).copied().unwrap_or(0);
        assert!(
            *count <= sent,
            "id {id} answered {count} times, sent {sent} times"
        );
    }
    if !waits {
        for (id, sent) in &expected {
            let count = answered.get(id).copied().unwrap_or(0);
            assert_eq!(
                count, *sent,
                "id {id} sent {sent} times, answered {count} times"
            );
        }
    }
});
