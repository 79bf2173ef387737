//! A test-only tool host: slow, gated, failing, panicking, fencing, chatty and child-owning tools
//! that let the suites pin the MCP core's concurrency, cancellation, fence, progress, log,
//! liveness-notice and shutdown rules through observable events rather than sleeps. Never
//! shipped (see the `test-host` feature).
//!
//! Gates are files: `gate {gate: "a"}` announces itself with a `test.gate` log at `debug`
//! ("entered"), then waits until the file `<gate dir>/a` exists. A test opens a gate by creating
//! that file, so a gate can be opened while a fence holds every later request. A call that sees
//! its cancellation writes `<gate dir>/<gate>.cancelled` before it ends, so a suite can check
//! that the host learned of it in time to clean up.
//!
//! The host also follows the seam the Lean host uses: `admitted` sets the liveness notice's
//! subject from a `path` argument and, for fences, reports a preparation step while the fence
//! waits; `kill` kills the children `spawn_child` started; `shutdown` kills them too, unless
//! built with `hang_shutdown`, when it never returns.

use std::future::Future;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lean_beam_mcp::mcp::{
    CallContext, Execution, LogLevel, Progress, StatusNotice, ToolAnnotations, ToolError, ToolHost,
    ToolResult, ToolSpec,
};
use serde_json::{Value, json};

/// Environment variable naming the gate directory.
pub const GATE_DIR_ENV: &str = "LEAN_BEAM_MCP_TEST_GATES";

#[derive(Debug, Default)]
struct Counters {
    running: AtomicUsize,
    fence_running: AtomicBool,
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
    hang_shutdown: bool,
    counters: Arc<Counters>,
    children: Mutex<Vec<Child>>,
}

impl TestHost {
    /// A host whose gates live in `gate_dir`; `shutdown_mark`, if given, is created by `shutdown`.
    pub fn new(gate_dir: PathBuf, shutdown_mark: Option<PathBuf>) -> Self {
        TestHost {
            gate_dir,
            shutdown_mark,
            hang_shutdown: false,
            counters: Arc::default(),
            children: Mutex::default(),
        }
    }

    /// The same host, with a `shutdown` that never returns.
    pub fn hanging_shutdown(mut self) -> Self {
        self.hang_shutdown = true;
        self
    }

    fn wait_gate(&self, gate: &str) -> impl Future<Output = ()> + Send + use<> {
        let path = self.gate_dir.join(gate);
        async move {
            while !path.exists() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    }

    fn kill_children(&self) {
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        for child in children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        children.clear();
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

fn flag(arguments: &Value, key: &str) -> bool {
    arguments.get(key) == Some(&Value::Bool(true))
}

impl ToolHost for TestHost {
    fn tools(&self) -> Vec<ToolSpec> {
        let mut gate = spec(
            "gate",
            json!({
                "gate": {"type": "string", "minLength": 1},
                "path": {"type": "string"},
                "notice_now": {"type": "boolean"},
                "state": {"type": "string"}
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
            spec(
                "panic",
                json!({
                    "message": {"type": "string"},
                    "early": {"type": "boolean"},
                    "admitting": {"type": "boolean"}
                }),
                &[],
            ),
            spec(
                "progress",
                json!({
                    "steps": {"type": "integer", "minimum": 0, "maximum": 1000},
                    "linger": {"type": "boolean"},
                    "total": {"type": "boolean"},
                    "repeat_last": {"type": "boolean"}
                }),
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
            spec("client", json!({}), &[]),
            spec(
                "keep_context",
                json!({"gate": {"type": "string", "minLength": 1}}),
                &["gate"],
            ),
            spec("spawn_child", json!({}), &[]),
        ]
    }

    fn admitted(&self, tool: &str, arguments: &Value, ctx: &CallContext) {
        if tool == "panic" && flag(arguments, "admitting") {
            // Keeps a clone of the context alive, then panics: the clone must be inert.
            let kept = ctx.clone();
            tokio::spawn(async move {
                std::future::pending::<()>().await;
                drop(kept);
            });
            panic!("{}", str_arg(arguments, "message"));
        }
        if let Some(path) = arguments.get("path").and_then(Value::as_str) {
            ctx.set_status("running", Some(path));
        }
        if tool == "fence" {
            ctx.progress(format!(
                "fence {}: preparing (waits for earlier calls)",
                str_arg(arguments, "label")
            ));
        }
    }

    fn call(
        &self,
        tool: &str,
        arguments: Value,
        ctx: CallContext,
    ) -> impl Future<Output = ToolResult> + Send {
        // A host may panic while it builds the call's future, before any await: the core must
        // answer -32603 for that too.
        if tool == "panic" && flag(&arguments, "early") {
            panic!("{}", str_arg(&arguments, "message"));
        }
        let running_before = self.counters.running.load(Ordering::SeqCst);
        let during_fence = self.counters.fence_running.load(Ordering::SeqCst);
        let running = Running::enter(&self.counters);
        let counters = self.counters.clone();
        let gate_dir = self.gate_dir.clone();
        let gate = arguments
            .get("gate")
            .and_then(Value::as_str)
            .map(|gate| self.wait_gate(gate));
        let spawned = (tool == "spawn_child").then(|| self.spawn_child());
        let tool = tool.to_owned();
        async move {
            let _running = running;
            match tool.as_str() {
                "echo" => Ok(json!({"text": arguments["text"], "during_fence": during_fence})),
                "shape" => Ok(json!({"arguments": arguments})),
                "gate" | "quiet_gate" => {
                    let name = str_arg(&arguments, "gate").to_owned();
                    ctx.log(
                        LogLevel::Debug,
                        "test.gate",
                        json!({"gate": name, "state": "entered"}),
                    );
                    let notice_now = flag(&arguments, "notice_now");
                    // Sending the notice early is what a host does on the first sign of slow
                    // setup, so that is the state it reports unless told otherwise.
                    let state = arguments.get("state").and_then(Value::as_str);
                    if let Some(state) = state.or(notice_now.then_some("preparing_dependencies")) {
                        let path = arguments.get("path").and_then(Value::as_str);
                        ctx.set_status(state, path);
                    }
                    let notice_sent = notice_now && ctx.status_notice_now();
                    let opened = tokio::select! {
                        () = gate.expect("gate tools have a gate") => true,
                        () = ctx.cancelled() => false,
                    };
                    if !opened {
                        // Cleaning up after a cancellation: the core still polls us, for a while.
                        tokio::task::yield_now().await;
                        let _ = std::fs::write(gate_dir.join(format!("{name}.cancelled")), b"");
                        return Ok(json!({"cancelled": true}));
                    }
                    let mut result =
                        json!({"gate": name, "released": true, "during_fence": during_fence});
                    if notice_now {
                        result["notice_sent"] = json!(notice_sent);
                    }
                    Ok(result)
                }
                "fence" => {
                    counters.fence_running.store(true, Ordering::SeqCst);
                    let label = str_arg(&arguments, "label").to_string();
                    ctx.log(
                        LogLevel::Debug,
                        "test.gate",
                        json!({"fence": label, "state": "entered"}),
                    );
                    if let Some(gate) = gate {
                        gate.await;
                    }
                    counters.fence_running.store(false, Ordering::SeqCst);
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
                "progress" => Ok(progress(&ctx, &arguments).await),
                "log" => {
                    let level = LogLevel::parse(str_arg(&arguments, "level")).expect("schema enum");
                    let data = arguments.get("data").cloned().unwrap_or(Value::Null);
                    let sent = ctx.log(level, str_arg(&arguments, "logger"), data);
                    Ok(json!({"sent": sent}))
                }
                "client" => {
                    let client = ctx.client();
                    let name = client
                        .name
                        .as_ref()
                        .map(|n| json!({"name": n.name, "version": n.version}));
                    Ok(json!({"family": client.family.name(), "clientInfo": name}))
                }
                "keep_context" => {
                    // Leaves a clone of the context behind, alive until the gate opens.
                    let kept = ctx.clone();
                    let gate = gate.expect("keep_context has a gate");
                    tokio::spawn(async move {
                        gate.await;
                        drop(kept);
                    });
                    Ok(json!({"kept": true}))
                }
                "spawn_child" => spawned
                    .expect("spawned above")
                    .map(|pid| json!({"pid": pid}))
                    .map_err(|e| ToolError::new("spawnFailed", e)),
                other => Err(ToolError::new(
                    "internalError",
                    format!("{other} is not implemented"),
                )),
            }
        }
    }

    async fn shutdown(&self, deadline: Instant) {
        if let Some(mark) = &self.shutdown_mark {
            let seconds = deadline.saturating_duration_since(Instant::now()).as_secs();
            let text = format!("shut down with {seconds} s left");
            std::fs::write(mark, text).expect("write the shutdown mark");
        }
        if self.hang_shutdown {
            std::future::pending::<()>().await;
        }
        self.kill_children();
    }

    fn kill(&self) {
        self.kill_children();
    }
}

impl TestHost {
    fn spawn_child(&self) -> Result<u32, String> {
        let child = Command::new("sleep")
            .arg("3600")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("could not start sleep: {e}"))?;
        let pid = child.id();
        self.children
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child);
        Ok(pid)
    }
}

/// `progress {steps}`: one step per moment of work; with `total`, each counts toward `steps`;
/// with `repeat_last`, a last update that would not increase progress (and must be dropped).
async fn progress(ctx: &CallContext, arguments: &Value) -> Value {
    let steps = arguments["steps"].as_u64().unwrap_or(0);
    let mut sent = 0;
    for step in 1..=steps {
        let message = format!("step {step} of {steps}");
        let update = if flag(arguments, "total") {
            Progress::at(step as f64, message).of_total(steps as f64)
        } else {
            Progress::step(message)
        };
        sent += u64::from(ctx.report(update));
        // Each step is a moment of work, as in a real tool: the runtime (and the writer) get a
        // turn between two reports.
        tokio::task::yield_now().await;
    }
    let mut result = json!({"steps": steps, "sent": sent});
    if flag(arguments, "repeat_last") {
        let again = ctx.report(Progress::at(steps as f64, "again"));
        let below_total = ctx.report(Progress::at(steps as f64 + 1.0, "past").of_total(1.0));
        result["refused"] = json!([!again, !below_total]);
    }
    if flag(arguments, "linger") {
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
    result
}
