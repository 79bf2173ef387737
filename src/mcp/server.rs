//! The coordinator: admission, request-id ownership, concurrent calls, cancellation, fences and
//! shutdown, around the synchronous [`Session`].
//!
//! Contract:
//! 1. A tool call's id is owned from admission until its terminal line is queued for the writer
//!    (retired first, so a client that has read the answer may reuse the id at once). A message
//!    whose id is owned is ignored, so one id never gets two answers. String and integer ids
//!    never collide. Direct answers are queued as they are decided and own nothing.
//! 2. Each admitted tool call is its own task with its own cancellation token. Calls overlap and
//!    answer in any order. `notifications/cancelled` cancels the token; when cancellation wins,
//!    the call's future is dropped and nothing is written for it.
//! 3. A [`Execution::Fence`] call starts only when every earlier call has completed, and every
//!    later call waits until the fence has completed. Fences are not cancellable.
//! 4. Without a progress token, a [`StatusNotice::WhenSlow`] call that has not answered after
//!    the status delay gets one `beam.status` notice (if its log policy admits `notice`).
//! 5. End of input (or the caller's stop signal) closes admission, cancels every cancellable
//!    call, lets fences finish, waits for every call to end, shuts the host down, flushes the
//!    output and returns. A closed output does the same, quietly. A host that panics answers
//!    -32603 and the server keeps serving.

use std::collections::{HashMap, VecDeque};
use std::future::{Future, poll_fn};
use std::io::{Read, Stdin, Stdout, Write};
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

use super::catalog::{Catalog, CatalogError, Execution, StatusNotice, ToolHost, call_tool_result};
use super::context::{CallContext, CallSink, Terminal};
use super::jsonrpc::{ErrorObject, Incoming, RequestId, Response, code};
use super::protocol::{ProtocolFamily, ServerIdentity};
use super::session::{Action, CallPlan, Session};
use super::transport::{self, Inbound};

/// The default cap on one input line: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The default delay before the `beam.status` liveness notice.
pub const DEFAULT_STATUS_DELAY: Duration = Duration::from_secs(2);
const INBOUND_QUEUE: usize = 256;

/// How a server is set up.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Who the server says it is.
    pub identity: ServerIdentity,
    /// The longest input line accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long a call runs before its liveness notice.
    pub status_delay: Duration,
}

/// Why a server could not start.
#[derive(Debug)]
pub enum ServeError {
    /// The host's catalog was refused.
    Catalog(CatalogError),
    /// A transport thread could not be started.
    Io(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Catalog(e) => write!(f, "the tool catalog was refused: {e}"),
            ServeError::Io(e) => write!(f, "could not start the stdio transport: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves MCP over a byte stream pair until end of input (or until output closes).
///
/// Must run inside a multi-threaded Tokio runtime; `input` and `output` are driven by two
/// dedicated threads. For the process's own stdin and stdout, [`serve_stdio_until`] is faster.
pub async fn serve<H, R, W>(
    host: H,
    input: R,
    output: W,
    options: ServerOptions,
) -> Result<(), ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    serve_until(host, input, output, options, std::future::pending()).await
}

/// As [`serve`], but `stop` completing (a termination signal, say) also ends the server, in the
/// same orderly way as end of input.
pub async fn serve_until<H, R, W>(
    host: H,
    input: R,
    output: W,
    options: ServerOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    serve_on(host, Streams::Given(input, output), options, stop).await
}

/// As [`serve_until`] on this process's stdin and stdout, driven on the runtime without
/// threads where they are pipes or Unix sockets (as under an MCP client, on Unix), and by
/// threads otherwise (a terminal, a file). Needs a Tokio runtime with I/O enabled.
pub async fn serve_stdio_until<H: ToolHost>(
    host: H,
    options: ServerOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve_on(host, Streams::<Stdin, Stdout>::Stdio, options, stop).await
}

enum Streams<R, W> {
    Given(R, W),
    Stdio,
}

async fn serve_on<H, R, W>(
    host: H,
    streams: Streams<R, W>,
    options: ServerOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError>
where
    H: ToolHost,
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let catalog = Catalog::new(host.tools()).map_err(ServeError::Catalog)?;
    let (inbound_tx, inbound) = mpsc::channel(INBOUND_QUEUE);
    let (lines, lines_rx) = mpsc::unbounded_channel();
    let (terminals_tx, terminals) = mpsc::unbounded_channel();
    let (closed_tx, closed) = oneshot::channel();
    let on_closed = move || {
        let _ = closed_tx.send(());
    };
    let limit = options.max_message_bytes;
    let transport = match streams {
        Streams::Given(input, output) => {
            transport::spawn_streams(input, output, limit, inbound_tx, lines_rx, on_closed)
        }
        Streams::Stdio => transport::spawn_stdio(limit, inbound_tx, lines_rx, on_closed),
    }
    .map_err(ServeError::Io)?;
    let host = Arc::new(host);
    let mut coordinator = Coordinator {
        session: Session::new(options.identity.clone(), catalog),
        host: host.clone(),
        options,
        lines,
        terminals: terminals_tx,
        active: HashMap::new(),
        held: VecDeque::new(),
        running: 0,
        fence_running: false,
    };
    // The coordinator runs as a task of its own, not on the caller's `block_on` thread, so the
    // calls it spawns start on the same worker without a cross-thread wake-up.
    let coordinator = tokio::spawn(async move {
        coordinator
            .run(inbound, terminals, closed, pin!(stop))
            .await;
    });
    if let Err(panic) = coordinator.await {
        tracing::error!(%panic, "the coordinator failed");
    }
    host.shutdown().await;
    // The writer ends once every line sender (ours and the finished calls') is gone.
    transport.finished().await;
    Ok(())
}

/// An admitted tool call, running or held behind a fence, until its terminal line is queued.
struct ActiveCall {
    token: CancellationToken,
    fence: bool,
    held: bool,
}

struct HeldCall {
    id: RequestId,
    fence: bool,
    start: oneshot::Sender<()>,
}

struct Coordinator<H> {
    session: Session,
    host: Arc<H>,
    options: ServerOptions,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    terminals: mpsc::UnboundedSender<Terminal>,
    active: HashMap<RequestId, ActiveCall>,
    held: VecDeque<HeldCall>,
    running: usize,
    fence_running: bool,
}

impl<H: ToolHost> Coordinator<H> {
    async fn run(
        &mut self,
        mut inbound: mpsc::Receiver<Inbound>,
        mut terminals: mpsc::UnboundedReceiver<Terminal>,
        mut output_closed: oneshot::Receiver<()>,
        mut stop: Pin<&mut impl Future<Output = ()>>,
    ) {
        let mut admitting = true;
        let mut output_open = true;
        loop {
            if !admitting && self.active.is_empty() {
                return;
            }
            tokio::select! {
                item = inbound.recv(), if admitting => match item {
                    Some(item) => self.admit(item),
                    None => {
                        tracing::debug!(active = self.active.len(), "end of input: closing admission");
                        admitting = false;
                        self.cancel_all();
                    }
                },
                Some(terminal) = terminals.recv() => self.complete(terminal),
                closed = &mut output_closed, if output_open => {
                    output_open = false;
                    if closed.is_ok() {
                        tracing::debug!("output closed: shutting down quietly");
                        admitting = false;
                        self.cancel_all();
                    }
                }
                () = &mut stop, if admitting => {
                    tracing::debug!(active = self.active.len(), "stop requested: closing admission");
                    admitting = false;
                    self.cancel_all();
                }
            }
        }
    }

    fn admit(&mut self, item: Inbound) {
        let message = match item {
            Inbound::Message(Ok(message)) => message,
            Inbound::Message(Err(error)) => {
                if error.id().is_some_and(|id| self.active.contains_key(id)) {
                    tracing::debug!(id = ?error.id(), "ignoring a malformed message reusing an active id");
                    return;
                }
                return self.reply(error.into_error_response());
            }
            Inbound::Oversized { limit } => {
                let error = ErrorObject::invalid_request(format!(
                    "message rejected: a line may hold at most {limit} bytes (set by --max-message-bytes)"
                ))
                .with_data(serde_json::json!({ "maxMessageBytes": limit }));
                return self.reply(Response::error(None, error));
            }
        };
        if let Incoming::Request(request) = &message
            && self.active.contains_key(&request.id)
        {
            tracing::debug!(id = ?request.id, "ignoring a request reusing an active id");
            return;
        }
        match self.session.handle(message) {
            Action::Reply(response) => self.reply(response),
            Action::Call(plan) => self.start_call(plan),
            Action::Cancel(id) => self.cancel(&id),
            Action::Ignore => {}
        }
    }

    /// A direct answer: queued at once, so its id is never active.
    fn reply(&mut self, response: Response) {
        let _ = self.lines.send(response.to_line());
    }

    fn start_call(&mut self, plan: CallPlan) {
        let fence = plan.execution == Execution::Fence;
        let token = CancellationToken::new();
        let must_wait = if fence {
            self.running > 0 || self.fence_running || !self.held.is_empty()
        } else {
            self.fence_running || !self.held.is_empty()
        };
        let start = if must_wait {
            let (tx, rx) = oneshot::channel();
            self.held.push_back(HeldCall {
                id: plan.id.clone(),
                fence,
                start: tx,
            });
            Some(rx)
        } else {
            self.running += 1;
            self.fence_running |= fence;
            None
        };
        self.active.insert(
            plan.id.clone(),
            ActiveCall {
                token: token.clone(),
                fence,
                held: must_wait,
            },
        );
        let sink = Arc::new(CallSink::new(
            plan.id.clone(),
            plan.tool.clone(),
            plan.progress_token.clone(),
            plan.log_policy.clone(),
            self.lines.clone(),
            self.terminals.clone(),
        ));
        let task = CallTask {
            host: self.host.clone(),
            identity: self.session.identity().clone(),
            status_delay: self.options.status_delay,
            sink,
            token,
            cancellable: !fence,
        };
        let mut call = Box::pin(task.run(plan, start));
        // A call that is done on its first poll (most quick tools) answers from here, without a
        // task switch; anything else continues as a task of its own.
        if (&mut call).now_or_never().is_none() {
            tokio::spawn(call);
        }
    }

    fn cancel(&mut self, id: &RequestId) {
        match self.active.get(id) {
            Some(call) if call.fence => tracing::debug!(%id, "fences are not cancellable"),
            Some(call) => {
                tracing::debug!(%id, "cancelling");
                call.token.cancel();
            }
            None => tracing::debug!(%id, "cancellation for a request that is not a running call"),
        }
    }

    fn cancel_all(&mut self) {
        for call in self.active.values().filter(|call| !call.fence) {
            call.token.cancel();
        }
    }

    /// Retires a finished call, then queues its terminal line: once a client can read the
    /// answer, the id is free for reuse.
    fn complete(&mut self, Terminal { id, line }: Terminal) {
        match self.active.remove(&id) {
            Some(ActiveCall { held: true, .. }) => {
                // Cancelled before it started: it was never counted as running.
                self.held.retain(|h| h.id != id);
            }
            Some(ActiveCall { fence, .. }) => {
                self.running -= 1;
                self.fence_running &= !fence;
            }
            None => {}
        }
        if !line.is_empty() {
            let _ = self.lines.send(line);
        }
        self.release_held();
    }

    /// Starts held calls in admission order, as far as the fence rule allows.
    fn release_held(&mut self) {
        while let Some(next) = self.held.front() {
            let can_start = if next.fence {
                self.running == 0
            } else {
                !self.fence_running
            };
            if !can_start {
                return;
            }
            let next = self.held.pop_front().expect("front exists");
            if let Some(call) = self.active.get_mut(&next.id) {
                call.held = false;
            }
            self.running += 1;
            self.fence_running |= next.fence;
            let _ = next.start.send(());
        }
    }
}

struct CallTask<H> {
    host: Arc<H>,
    identity: ServerIdentity,
    status_delay: Duration,
    sink: Arc<CallSink>,
    token: CancellationToken,
    cancellable: bool,
}

impl<H: ToolHost> CallTask<H> {
    async fn run(self, plan: CallPlan, start: Option<oneshot::Receiver<()>>) {
        let path = match plan.status {
            StatusNotice::WhenSlow => plan
                .arguments
                .get("path")
                .and_then(Value::as_str)
                .map(str::to_owned),
            StatusNotice::Quiet => None,
        };
        let mut notice = (plan.status == StatusNotice::WhenSlow && plan.progress_token.is_none())
            .then(|| Box::pin(tokio::time::sleep(self.status_delay)));

        if let Some(start) = start {
            // Held behind a fence. A dropped sender means the coordinator is gone: give up.
            let started = self
                .wait(start.map(|r| r.is_ok()), &mut notice, path.as_deref())
                .await;
            if started != Some(true) {
                return self.sink.finish(Vec::new());
            }
        }
        let ctx = CallContext::new(self.sink.clone(), self.token.clone());
        let call = AssertUnwindSafe(self.host.call(&plan.tool, plan.arguments, ctx)).catch_unwind();
        let line = match self.wait(call, &mut notice, path.as_deref()).await {
            None => Vec::new(),
            Some(Ok(result)) => {
                let mut result = call_tool_result(result);
                if plan.family == ProtocolFamily::Modern {
                    self.identity.decorate_modern(&mut result);
                }
                Response::ok(plan.id, result).to_line()
            }
            Some(Err(panic)) => {
                let detail = panic_message(panic.as_ref());
                tracing::error!(id = %plan.id, tool = %plan.tool, %detail, "tool call panicked");
                let error = ErrorObject::new(
                    code::INTERNAL_ERROR,
                    format!("{} failed internally: {detail}", plan.tool),
                );
                Response::error(Some(plan.id), error).to_line()
            }
        };
        self.sink.finish(line);
    }

    /// Drives `work` to completion, or to cancellation (`None`), sending the liveness notice when
    /// its timer fires first. Work that finishes on its first poll answers even if a cancellation
    /// raced it (so a quick call sent just before end of input is still answered); after that,
    /// a cancellation that has happened always wins over work that becomes ready at the same time.
    async fn wait<T>(
        &self,
        work: impl Future<Output = T>,
        notice: &mut Option<Pin<Box<Sleep>>>,
        path: Option<&str>,
    ) -> Option<T> {
        let mut work = pin!(work);
        if let Poll::Ready(output) = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
            return Some(output);
        }
        loop {
            tokio::select! {
                biased;
                _ = self.token.cancelled(), if self.cancellable => return None,
                output = &mut work => return Some(output),
                _ = async { notice.as_mut().expect("guarded").await }, if notice.is_some() => {
                    *notice = None;
                    self.sink.status_notice("running", path);
                }
            }
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
