//! An MCP client session with a server running in this process, over a pair of pipes.
//!
//! Contract: the self-check's calls take the path a real client's take — the line transport,
//! the coordinator, the session's lifecycle, schema validation and the host behind the
//! `ToolHost` seam — because the server is the real one, only its stdio replaced by pipes. The
//! session speaks the 2025-11-25 revision (`initialize` first), as today's clients do. Each call
//! carries a progress token; its progress messages go to the caller as they arrive. A call that
//! outlives its deadline is cancelled (`notifications/cancelled`) and reported as timed out.
//! Closing the session ends the server's input, so the server shuts the host down as it does
//! when a client goes away.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::lean::LeanHost;
use crate::mcp::{Exit, LEGACY_REVISION, ServeError, ServerOptions, serve};

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The tool answered: its structured content.
    Answered(Value),
    /// The tool failed: its structured error `{code, message, data?}`.
    Failed(Value),
    /// No answer before the deadline; the call was cancelled.
    TimedOut,
    /// The server answered with a protocol error, or went away.
    Broken(String),
}

/// A client connected to an in-process server.
pub struct Session {
    to_server: Option<std::io::PipeWriter>,
    from_server: mpsc::UnboundedReceiver<Value>,
    next_id: i64,
    serving: tokio::task::JoinHandle<Result<Exit, ServeError>>,
}

impl Session {
    /// Starts `host` behind a server with `options` and initializes a session with it.
    pub async fn start(host: LeanHost, options: ServerOptions) -> std::io::Result<Session> {
        let (server_in, to_server) = std::io::pipe()?;
        let (from_server_pipe, server_out) = std::io::pipe()?;
        let serving = tokio::spawn(serve(host, server_in, server_out, options));
        let (lines, from_server) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("self-check-client".into())
            .spawn(move || {
                for line in BufReader::new(from_server_pipe).lines() {
                    let Ok(line) = line else { return };
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if lines.send(message).is_err() {
                        return;
                    }
                }
            })?;
        let mut session = Session {
            to_server: Some(to_server),
            from_server,
            next_id: 0,
            serving,
        };
        session.initialize().await?;
        Ok(session)
    }

    async fn initialize(&mut self) -> std::io::Result<()> {
        let id = self.id();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": LEGACY_REVISION,
            "capabilities": {},
            "clientInfo": {"name": "lean-beam-mcp-self-check", "version": env!("CARGO_PKG_VERSION")}
        }}))?;
        loop {
            match self.from_server.recv().await {
                Some(answer) if answer["id"] == id && answer.get("result").is_some() => break,
                Some(answer) if answer["id"] == id => {
                    return Err(std::io::Error::other(format!(
                        "the server refused initialize: {answer}"
                    )));
                }
                Some(_) => {}
                None => return Err(std::io::Error::other("the server ended during initialize")),
            }
        }
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    }

    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn send(&mut self, message: &Value) -> std::io::Result<()> {
        let writer = self
            .to_server
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the session is closed"))?;
        let mut line = serde_json::to_vec(message).expect("serializing JSON values cannot fail");
        line.push(b'\n');
        writer.write_all(&line)
    }

    /// Calls `tool` with `arguments`, waiting at most `timeout`; `progress` gets each progress
    /// message as it arrives.
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: Value,
        timeout: Duration,
        mut progress: impl FnMut(&str),
    ) -> Outcome {
        let id = self.id();
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": id}
        }});
        if let Err(e) = self.send(&request) {
            return Outcome::Broken(format!("cannot write to the server: {e}"));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let message = match tokio::time::timeout_at(deadline, self.from_server.recv()).await {
                Ok(Some(message)) => message,
                Ok(None) => return Outcome::Broken("the server ended".into()),
                Err(_) => {
                    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id, "reason": "the self-check phase timed out"}});
                    let _ = self.send(&cancel);
                    return Outcome::TimedOut;
                }
            };
            if message["method"] == "notifications/progress" {
                if message["params"]["progressToken"] == id
                    && let Some(text) = message["params"]["message"].as_str()
                {
                    progress(text);
                }
                continue;
            }
            if message["id"] != id {
                continue;
            }
            let result = &message["result"];
            return match (result.get("structuredContent"), result["isError"].as_bool()) {
                (Some(content), Some(true)) => Outcome::Failed(content.clone()),
                (Some(content), Some(false)) => Outcome::Answered(content.clone()),
                _ => Outcome::Broken(format!("an answer that is not a tool result: {message}")),
            };
        }
    }

    /// Ends the server's input and waits, at most `timeout`, for the server to shut down; how
    /// it ended, if it did.
    pub async fn close(mut self, timeout: Duration) -> Option<Exit> {
        self.to_server = None;
        let started = Instant::now();
        let ended = tokio::time::timeout(timeout, &mut self.serving).await;
        tracing::debug!(elapsed = ?started.elapsed(), "the self-check's server ended");
        match ended {
            Ok(Ok(Ok(exit))) => Some(exit),
            _ => {
                self.serving.abort();
                None
            }
        }
    }
}
