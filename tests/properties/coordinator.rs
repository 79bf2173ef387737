//! The coordinator's id-ownership invariant, in process over real OS pipes: against a model,
//! every admitted id is answered exactly once with its own result, duplicates of an active id are
//! ignored, cancelled calls never answer, and ids are free again after completion; in both eras.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, BufReader, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use lean_beam_mcp::mcp::{ServerIdentity, ServerOptions, serve};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use crate::{config, host};

/// How long any single wait may take before the case fails.
const PATIENCE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// (d) The coordinator: id ownership, duplicates and cancellation, in process over OS pipes
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Legacy,
    Modern,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// `tools/call gate` with the pool id at this index.
    Call(usize),
    /// `notifications/cancelled` for the pool id at this index.
    Cancel(usize),
}

/// Small enough that programs collide ids often; integers and their strings side by side.
fn pool() -> [Value; 6] {
    [
        json!(1),
        json!(2),
        json!(3),
        json!("1"),
        json!("2"),
        json!("3"),
    ]
}

fn arb_program() -> impl Strategy<Value = Vec<Vec<Op>>> {
    let op = prop_oneof![
        3 => (0..6usize).prop_map(Op::Call),
        1 => (0..6usize).prop_map(Op::Cancel),
    ];
    prop::collection::vec(prop::collection::vec(op, 0..14), 1..4)
}

/// One in-process server on a pair of OS pipes, with a thread reading its output.
struct Server {
    family: Family,
    input: Option<io::PipeWriter>,
    lines: mpsc::Receiver<Value>,
    done: mpsc::Receiver<Result<(), String>>,
    gates: tempfile::TempDir,
    transcript: Vec<String>,
}

impl Server {
    fn start(family: Family) -> Server {
        let gates = tempfile::tempdir().expect("gate directory");
        let (input_r, input) = io::pipe().expect("input pipe");
        let (output_r, output_w) = io::pipe().expect("output pipe");
        let host = host::TestHost::new(gates.path().to_path_buf(), None);
        let options = ServerOptions {
            max_message_bytes: 1 << 20,
            // No liveness notices: gate calls wait as long as the test wants.
            status_delay: Duration::from_secs(3600),
            ..ServerOptions::new(ServerIdentity {
                name: "properties".into(),
                version: "0.0.0".into(),
                instructions: None,
            })
        };
        let (done_tx, done) = mpsc::channel();
        thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            let result = runtime
                .block_on(serve(host, input_r, output_w, options))
                .map(|_| ())
                .map_err(|e| e.to_string());
            let _ = done_tx.send(result);
        });
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(output_r).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or(json!({ "not JSON": line }));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Server {
            family,
            input: Some(input),
            lines,
            done,
            gates,
            transcript: Vec::new(),
        }
    }

    fn fail<T>(&self, what: impl std::fmt::Display) -> Result<T, String> {
        Err(format!("{what}\n{}", self.transcript.join("\n")))
    }

    fn send(&mut self, message: Value) {
        let line = message.to_string();
        self.transcript.push(format!("→ {line}"));
        let input = self.input.as_mut().expect("input open");
        input
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the server");
    }

    fn note(&mut self, text: String) {
        self.transcript.push(format!("# {text}"));
    }

    fn recv(&mut self) -> Result<Value, String> {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(value) => {
                self.transcript.push(format!("← {value}"));
                Ok(value)
            }
            Err(RecvTimeoutError::Timeout) => self.fail("timed out waiting for the server"),
            Err(RecvTimeoutError::Disconnected) => self.fail("the server's output ended"),
        }
    }

    fn meta(&self) -> Option<Value> {
        (self.family == Family::Modern).then(|| {
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/logLevel": "debug"
            })
        })
    }

    /// Sends a request in the server's family (modern requests carry `_meta`).
    fn request(&mut self, id: &Value, method: &str, mut params: Value) {
        if let Some(meta) = self.meta() {
            params["_meta"] = meta;
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    fn call(&mut self, id: &Value, tool: &str, arguments: Value) {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
    }

    /// Waits until the server has handled every message sent so far: messages are handled in
    /// order, so once a `tools/list` sent now is answered, every earlier message was admitted,
    /// ignored or applied. Nothing else may arrive meanwhile.
    fn sync(&mut self, id: &Value) -> Result<(), String> {
        self.request(id, "tools/list", json!({}));
        let message = self.recv()?;
        if message["id"] != *id || message["result"]["tools"].as_array().is_none() {
            return self.fail(format!("expected the answer to {id}, got {message}"));
        }
        Ok(())
    }

    fn cancel(&mut self, id: &Value) {
        self.send(json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "property test"}
        }));
    }

    fn open_gate(&self, gate: &str) {
        std::fs::write(self.gates.path().join(gate), b"open").expect("open a gate");
    }

    fn initialize_legacy(&mut self) -> Result<(), String> {
        let id = json!("init");
        self.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "properties", "version": "1.0"}
            }
        }));
        let response = self.recv()?;
        if response["id"] != id || response.get("result").is_none() {
            return self.fail("initialize failed");
        }
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        Ok(())
    }

    /// Checks a tools/call response to `id` for the gate `gate`.
    fn check_gate_response(&self, response: &Value, gate: &str) -> Result<(), String> {
        let result = &response["result"];
        let family_ok = match self.family {
            Family::Modern => result["resultType"] == "complete",
            Family::Legacy => result.get("resultType").is_none(),
        };
        if result["isError"] != false
            || result["structuredContent"]["gate"] != gate
            || result["structuredContent"]["released"] != true
            || !family_ok
        {
            return self.fail(format!("wrong answer for gate {gate}: {response}"));
        }
        Ok(())
    }

    /// Ends input, checks nothing more is written, and that `serve` returned `Ok`.
    fn finish(mut self) -> Result<(), String> {
        self.note("end of input".into());
        self.input = None;
        match self.lines.recv_timeout(PATIENCE) {
            Err(RecvTimeoutError::Disconnected) => {}
            Ok(value) => {
                return self.fail(format!("unexpected output after the last answer: {value}"));
            }
            Err(RecvTimeoutError::Timeout) => return self.fail("output did not end"),
        }
        match self.done.recv_timeout(PATIENCE) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => self.fail(format!("serve failed: {e}")),
            Err(_) => self.fail("serve did not return after end of input"),
        }
    }
}

/// The gate a `test.gate` "entered" log names, if the message is one.
fn entered_gate(message: &Value) -> Option<&str> {
    if message["method"] != "notifications/message" || message["params"]["logger"] != "test.gate" {
        return None;
    }
    let data = &message["params"]["data"];
    (data["state"] == "entered")
        .then(|| data["gate"].as_str())
        .flatten()
}

fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && message.get("id").is_some()
}

/// What the model knows about one pool id within a round.
#[derive(Debug, Clone, PartialEq)]
enum IdState {
    /// Not owned by the server (never used this round, or answered and released before it).
    Idle,
    /// Admitted and running its gate (closed during the round): owned, no answer yet.
    Active(String),
    /// Cancelled while running: it never answers, but when the server releases the id is not
    /// observable, so the model sends no new call with it until the round's barrier.
    Cancelled,
}

/// Runs one program against a fresh server and checks every answer against the model.
fn run_program(family: Family, rounds: &[Vec<Op>]) -> Result<(), String> {
    let ids = pool();
    let mut server = Server::start(family);
    if family == Family::Legacy {
        server.initialize_legacy()?;
    }
    for (round, ops) in rounds.iter().enumerate() {
        let mut state: Vec<IdState> = vec![IdState::Idle; ids.len()];
        let mut opened = Vec::new();
        for (k, op) in ops.iter().enumerate() {
            match *op {
                Op::Call(i) => match state[i].clone() {
                    IdState::Cancelled => {
                        server.note(format!("skip: {} is being released", ids[i]))
                    }
                    IdState::Active(_) => {
                        // A duplicate of an active id: ignored, so its gate never starts.
                        let gate = format!("r{round}dup{k}");
                        server.call(&ids[i], "gate", json!({"gate": gate}));
                        opened.push(gate);
                    }
                    IdState::Idle => {
                        let gate = format!("r{round}c{k}");
                        server.call(&ids[i], "gate", json!({"gate": gate}));
                        let message = server.recv()?;
                        if entered_gate(&message) != Some(gate.as_str()) {
                            return server
                                .fail(format!("expected gate {gate} to start, got {message}"));
                        }
                        state[i] = IdState::Active(gate);
                    }
                },
                Op::Cancel(i) => {
                    server.cancel(&ids[i]);
                    if let IdState::Active(_) = state[i] {
                        state[i] = IdState::Cancelled;
                    }
                }
            }
        }
        // Every admitted, uncancelled call answers exactly once, with its own id and gate.
        // Only their gates and the duplicates' open: a cancelled call's gate stays closed, so it
        // can end only through its cancellation (the barrier below waits for that), and a
        // duplicate that was wrongly admitted would answer. The sync makes sure every duplicate
        // and cancellation was handled while the originals were still running.
        server.sync(&json!(format!("sync-{round}")))?;
        let mut expected: HashMap<String, (Value, String)> = state
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                IdState::Active(gate) => Some((ids[i].to_string(), (ids[i].clone(), gate.clone()))),
                _ => None,
            })
            .collect();
        opened.extend(expected.values().map(|(_, gate)| gate.clone()));
        server.note(format!(
            "open gates {opened:?}; expecting {} answers",
            expected.len()
        ));
        for gate in &opened {
            server.open_gate(gate);
        }
        while !expected.is_empty() {
            let message = server.recv()?;
            if !is_response(&message) {
                return server.fail(format!("unexpected message: {message}"));
            }
            let Some((id, gate)) = expected.remove(&message["id"].to_string()) else {
                return server.fail(format!("unexpected or second answer: {message}"));
            };
            if message["id"] != id {
                return server.fail(format!("id {id} answered as {}", message["id"]));
            }
            server.check_gate_response(&message, &gate)?;
        }
        // Barrier: a fence starts only once every earlier call has completed and released its
        // id (a cancelled call that ignored its cancellation would hang it), so after its answer
        // every pool id is free again. Any answer before it is a surplus answer.
        let barrier = json!(format!("barrier-{round}"));
        server.call(&barrier, "fence", json!({"label": "barrier"}));
        loop {
            let message = server.recv()?;
            if is_response(&message) && message["id"] == barrier {
                if message["result"]["isError"] != false {
                    return server.fail(format!("the barrier failed: {message}"));
                }
                break;
            }
            let fence_log = message["params"]["data"]["fence"] == "barrier";
            if !fence_log {
                return server.fail(format!("unexpected message before the barrier: {message}"));
            }
        }
    }
    // Every id again, after completion: each is answered, once.
    server.note("final round: every id again, gate open".into());
    server.open_gate("final");
    for id in &ids {
        server.cancel(id);
        server.call(id, "gate", json!({"gate": "final"}));
    }
    let mut waiting: BTreeMap<String, Value> =
        ids.iter().map(|id| (id.to_string(), id.clone())).collect();
    while !waiting.is_empty() {
        let message = server.recv()?;
        if entered_gate(&message) == Some("final") {
            continue;
        }
        if !is_response(&message) || waiting.remove(&message["id"].to_string()).is_none() {
            return server.fail(format!("unexpected message: {message}"));
        }
        server.check_gate_response(&message, "final")?;
    }
    server.finish()
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn coordinator_answers_each_admitted_id_once_modern(program in arb_program()) {
        run_program(Family::Modern, &program).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn coordinator_answers_each_admitted_id_once_legacy(program in arb_program()) {
        run_program(Family::Legacy, &program).map_err(TestCaseError::fail)?;
    }
}

/// A fixed program that covers every rule at once: duplicates of both id types, cancellation,
/// cancellation of a finished call, and reuse after completion.
#[test]
fn coordinator_fixed_program() {
    use Op::*;
    let program = vec![
        vec![
            Call(0),
            Call(3),
            Call(0),
            Call(3),
            Cancel(0),
            Call(0),
            Call(1),
            Cancel(5),
        ],
        vec![Cancel(3), Call(3), Call(0), Call(0), Cancel(3), Call(3)],
    ];
    for family in [Family::Modern, Family::Legacy] {
        if let Err(e) = run_program(family, &program) {
            panic!("{family:?}: {e}");
        }
    }
}
