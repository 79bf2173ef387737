//! A test-only tool host: slow, gated, failing, panicking, fencing and chatty tools that let the
//! suites pin the MCP core's concurrency, cancellation, fence, progress and log rules through
//! observable events rather than sleeps. Never shipped (see the `test-host` feature).
//!
//! Gates are files: `gate {gate: "a"}` announces itself with a `test.gate` log at `debug`
//! ("entered"), then waits until the file `<gate dir>/a` exists. A test opens a gate by creating
//! that file, so a gate can be opened while a fence holds every later request.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use lean_beam_mcp::mcp::{
    CallContext, Execution, LogLevel, StatusNotice, ToolAnnotations, ToolError, ToolHost,
    ToolResult, ToolSpec,
};
use serde_json::{Value, json};

/// Environment variable naming the gate directory.
pub const GATE_DIR_ENV: &str = "LEAN_BEAM_MCP_TEST_GATES";

#[derive(Debug, Default)]
struct Counters {
    running: AtomicUsize,
    fence_running: AtomicBool,
    shut_down: AtomicBool,
}

/// Counts a call as running in the host for as long as it lives (dropped on cancellation too).
struct Running(Arc<Counters>);

impl Running {
    fn enter(counters: &Arc<Counters>) -> Self {
        counters.running.fetch_add(1, Ordering::SeqCst);
        Running(counters.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The test host.
#[derive(Debug)]
pub struct TestHost {
    gate_dir: PathBuf,
    shutdown_mark: Option<PathBuf>,
    counters: Arc<Counters>,
}

impl TestHost {
    /// A host whose gates live in `gate_dir`; `shutdown_mark`, if given, is created by `shutdown`.
    pub fn new(gate_dir: PathBuf, shutdown_mark: Option<PathBuf>) -> Self {
        TestHost {
            gate_dir,
            shutdown_mark,
            counters: Arc::default(),
        }
    }

    /// Whether `shutdown` has run.
    #[allow(dead_code)]
    pub fn shut_down_flag(&self) -> bool {
        self.counters.shut_down.load(Ordering::SeqCst)
    }

    async fn wait_gate(&self, gate: &str) {
        let path = self.gate_dir.join(gate);
        while !path.exists() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

fn spec(name: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("Test tool {name}."),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
        annotations: ToolAnnotations::default(),
        execution: Execution::Concurrent,
        status: StatusNotice::Quiet,
    }
}

fn str_arg<'a>(arguments: &'a Value, key: &str) -> &'a str {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl ToolHost for TestHost {
    fn tools(&self) -> Vec<ToolSpec> {
        let mut gate = spec(
            "gate",
            json!({
                "gate": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z0-9_-]+$"},
                "path": {"type": "string"},
                "notice_now": {"type": "boolean"}
            }),
            &["gate"],
        );
        gate.status = StatusNotice::WhenSlow;
        let mut quiet_gate = gate.clone();
        quiet_gate.name = "quiet_gate".into();
        quiet_gate.description =
            "Test tool quiet_gate: a gate that never gets the liveness notice.".into();
        quiet_gate.status = StatusNotice::Quiet;
        let mut fence = spec(
            "fence",
            json!({"label": {"type": "string"}, "gate": {"type": "string", "minLength": 1}}),
            &[],
        );
        fence.execution = Execution::Fence;
        fence.status = StatusNotice::WhenSlow;
        let mut echo = spec(
            "echo",
            json!({"text": {"type": "string", "maxLength": 1048576}}),
            &["text"],
        );
        echo.annotations.read_only_hint = Some(true);
        vec![
            echo,
            spec(
                "shape",
                json!({
                    "path": {"type": "string"},
                    "line": {"type": "integer", "minimum": 0},
                    "mode": {"type": "string", "enum": ["before", "after"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                    "workspace": {
                        "type": "object",
                        "properties": {"root": {"type": "string"}},
                        "required": ["root"],
                        "additionalProperties": false
                    }
                }),
                &["path", "workspace"],
            ),
            gate,
            quiet_gate,
            fence,
            spec(
                "fail",
                json!({"code": {"type": "string"}, "message": {"type": "string"}}),
                &["code"],
            ),
            spec("panic", json!({"message": {"type": "string"}}), &[]),
            spec(
                "progress",
                json!({"steps": {"type": "integer", "minimum": 0, "maximum": 1000}, "linger": {"type": "boolean"}}),
                &["steps"],
            ),
            spec(
                "log",
                json!({
                    "level": {"type": "string", "enum": ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]},
                    "logger": {"type": "string"},
                    "data": {}
                }),
                &["level", "logger"],
            ),
        ]
    }

    async fn call(&self, tool: &str, arguments: Value, ctx: CallContext) -> ToolResult {
        let running_before = self.counters.running.load(Ordering::SeqCst);
        let during_fence = self.counters.fence_running.load(Ordering::SeqCst);
        let _running = Running::enter(&self.counters);
        match tool {
            "echo" => Ok(json!({"text": arguments["text"], "during_fence": during_fence})),
            "shape" => Ok(json!({"arguments": arguments})),
            "gate" | "quiet_gate" => {
                let gate = str_arg(&arguments, "gate");
                let path = arguments.get("path").and_then(Value::as_str);
                ctx.log(
                    LogLevel::Debug,
                    "test.gate",
                    json!({"gate": gate, "state": "entered"}),
                );
                let notice_now = arguments.get("notice_now") == Some(&Value::Bool(true));
                let notice_sent = notice_now && ctx.status_notice("preparing_dependencies", path);
                self.wait_gate(gate).await;
                let mut result =
                    json!({"gate": gate, "released": true, "during_fence": during_fence});
                if notice_now {
                    result["notice_sent"] = json!(notice_sent);
                }
                Ok(result)
            }
            "fence" => {
                self.counters.fence_running.store(true, Ordering::SeqCst);
                let label = str_arg(&arguments, "label").to_string();
                ctx.log(
                    LogLevel::Debug,
                    "test.gate",
                    json!({"fence": label, "state": "entered"}),
                );
                if let Some(gate) = arguments.get("gate").and_then(Value::as_str) {
                    self.wait_gate(gate).await;
                }
                self.counters.fence_running.store(false, Ordering::SeqCst);
                Ok(json!({"label": label, "running_at_start": running_before}))
            }
            "fail" => {
                let message = arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the fail tool failed");
                Err(ToolError::new(str_arg(&arguments, "code"), message)
                    .with_data(json!({"echo": arguments})))
            }
            "panic" => panic!(
                "{}",
                arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("test panic")
            ),
            "progress" => {
                let steps = arguments["steps"].as_u64().unwrap_or(0);
                let mut sent = 0;
                for step in 1..=steps {
                    sent += u64::from(ctx.progress(format!("step {step} of {steps}")));
                    // Each step is a moment of work, as in a real tool: the runtime (and the
                    // writer) get a turn between two reports.
                    tokio::task::yield_now().await;
                }
                if arguments.get("linger") == Some(&Value::Bool(true)) {
                    // Keeps trying to report after the call has answered: none of it may appear.
                    let late = ctx.clone();
                    tokio::spawn(async move {
                        for _ in 0..50 {
                            late.progress("after the answer");
                            late.log(LogLevel::Emergency, "test.late", json!("after the answer"));
                            tokio::task::yield_now().await;
                        }
                    });
                }
                Ok(json!({"steps": steps, "sent": sent}))
            }
            "log" => {
                let level = LogLevel::parse(str_arg(&arguments, "level")).expect("schema enum");
                let data = arguments.get("data").cloned().unwrap_or(Value::Null);
                let sent = ctx.log(level, str_arg(&arguments, "logger"), data);
                Ok(json!({"sent": sent}))
            }
            other => Err(ToolError::new(
                "internalError",
                format!("{other} is not implemented"),
            )),
        }
    }

    async fn shutdown(&self) {
        self.counters.shut_down.store(true, Ordering::SeqCst);
        if let Some(mark) = &self.shutdown_mark {
            std::fs::write(mark, b"shut down").expect("write the shutdown mark");
        }
    }
}
