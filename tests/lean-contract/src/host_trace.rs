//! The contract check over a host's LSP trace: the file one Lean server start writes under
//! `--trace-dir` (`lean-beam-<pid>-lsp-…log`), one line per message, `<UTC time> <direction>
//! <message>`, where `beam→lean` is the client speaking and `lean→beam` the server (the host's
//! `src/trace/mod.rs`). The order is the client's: what it sent as it sent it, what it read as
//! it read it, which the rules allow (see the crate's contract, 1).

use serde_json::Value;

use crate::{Checker, Violation};

/// What the check of one trace found.
#[derive(Debug, Default)]
pub struct HostTrace {
    /// Messages read, both ways.
    pub messages: usize,
    /// Lines that are not a message (a frame Lean sent that is not JSON, a line cut to fit).
    pub unreadable: usize,
    pub violations: Vec<Violation>,
}

/// Runs one checker over the lines of a trace file.
pub fn check_host_trace(text: &str) -> HostTrace {
    let mut checker = Checker::new();
    let mut report = HostTrace::default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(_time), Some(direction), Some(message)) =
            (parts.next(), parts.next(), parts.next())
        else {
            report.unreadable += 1;
            continue;
        };
        if direction != "beam→lean" && direction != "lean→beam" {
            continue;
        }
        let Ok(msg) = serde_json::from_str::<Value>(message) else {
            report.unreadable += 1;
            continue;
        };
        report.messages += 1;
        if direction == "beam→lean" {
            checker.client(&msg);
        } else {
            report.violations.extend(checker.server(&msg));
        }
    }
    report
}
