//! The server's one ordered output stream (reference §1.5: diagnostics, progress and responses
//! leave through one channel, so a response written after a diagnostic is read after it). Only
//! the main loop writes; every message is traced and held to the Lean contract (`contract`).

use crate::contract::Contract;
use crate::trace::Trace;
use crate::wire;
use serde_json::{Value, json};
use std::io::{self, Write};

pub struct Out {
    w: io::BufWriter<io::Stdout>,
    pub trace: Trace,
    pub contract: Contract,
}

impl Out {
    pub fn new(trace: Trace) -> Out {
        Out {
            w: io::BufWriter::new(io::stdout()),
            trace,
            contract: Contract::from_env(),
        }
    }

    pub fn send(&mut self, mut msg: Value) {
        self.contract.outgoing(&mut msg, &self.trace);
        self.trace.message("out", &msg);
        if wire::write_message(&mut self.w, &msg).is_err() {
            // The client is gone; the read side will see EOF and end the process.
        }
    }

    pub fn result(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub fn error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn request(&mut self, id: Value, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    /// Writes bytes that are not a well-formed message (the garbage-frame fault).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.trace
            .event("garbage", json!({"bytes": String::from_utf8_lossy(bytes)}));
        let _ = self.w.write_all(bytes);
        let _ = self.w.flush();
    }
}
