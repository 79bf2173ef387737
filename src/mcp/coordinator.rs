//! The coordinator: admission, request-id ownership, scheduling, cancellation and the start of
//! shutdown, around the synchronous [`Session`].
//!
//! Contract:
//! 1. A tool call's id is owned from admission until its terminal line is queued for the writer
//!    (retired first, so a client that has read the answer may reuse the id at once), or until
//!    its cancellation is handled (the client has given the id up; the call answers nothing).
//!    A request whose id is owned is ignored, so one id never gets two answers. String and
//!    integer ids never collide. Direct answers are queued as they are decided and own nothing.
//! 2. Each admitted call is a task of its own (`call`) with its own cancellation token. Calls
//!    overlap and answer in any order. At most `max_running_calls` run at once; later calls wait
//!    their turn in admission order. Waiting calls are bounded by count (`max_waiting_calls`)
//!    and by the bytes of the lines they came from (`max_waiting_bytes`): at the bound the
//!    coordinator still reads (so cancellations get through) until one more call is parked over
//!    it, and then reads nothing until a call starts.
//! 3. A [`Execution::Fence`] call starts only when no call is running (cancelled calls still
//!    cleaning up included), and every later call waits until it has answered. Fences are not
//!    cancellable.
//! 4. Backpressure: the coordinator reads the next message only while the outbound queue has
//!    room, so a client that stops reading stops being read.
//! 5. End of input, a stop request or a closed output closes admission, cancels every
//!    cancellable call, lets fences finish and waits for every call to end. The moment admission
//!    closes is reported at once (`Endings::admission_closed`): the shutdown deadline runs from
//!    then, so a call that never ends cannot hold the server past it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::call::{self, CallTask};
use super::catalog::{Execution, ToolHost};
use super::context::{CallContext, CallIdentity, CallKey, CallSink, Terminal};
use super::jsonrpc::{ErrorObject, Incoming, RequestId, Response};
use super::server::ServerOptions;
use super::session::{Action, CallPlan, Session};
use super::transport::{Inbound, InboundReceiver, OutboundSender};

/// One admitted call, until its task has ended.
struct Entry {
    id: RequestId,
    token: CancellationToken,
    sink: Arc<CallSink>,
    fence: bool,
    running: bool,
    /// The bytes of the line it came from, counted while it waits.
    bytes: usize,
}

pub(crate) struct Coordinator<H> {
    pub(crate) session: Session,
    pub(crate) host: Arc<H>,
    pub(crate) options: ServerOptions,
    pub(crate) out: OutboundSender,
    pub(crate) terminals: mpsc::UnboundedSender<Terminal>,
    calls: HashMap<CallKey, Entry>,
    owners: HashMap<RequestId, CallKey>,
    waiting: VecDeque<(CallKey, oneshot::Sender<()>)>,
    waiting_bytes: usize,
    running: usize,
    fence_running: bool,
    next_key: u64,
}

/// What ends admission, and whom to tell when it closed.
pub(crate) struct Endings {
    pub(crate) terminals: mpsc::UnboundedReceiver<Terminal>,
    pub(crate) output_closed: oneshot::Receiver<()>,
    pub(crate) stop: oneshot::Receiver<()>,
    pub(crate) admission_closed: oneshot::Sender<Instant>,
}

impl<H: ToolHost> Coordinator<H> {
    pub(crate) fn new(
        session: Session,
        host: Arc<H>,
        options: ServerOptions,
        out: OutboundSender,
        terminals: mpsc::UnboundedSender<Terminal>,
    ) -> Self {
        Coordinator {
            session,
            host,
            options,
            out,
            terminals,
            calls: HashMap::new(),
            owners: HashMap::new(),
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            running: 0,
            fence_running: false,
            next_key: 0,
        }
    }

    /// Serves until admission has closed and every call has ended.
    pub(crate) async fn run(mut self, mut inbound: InboundReceiver, endings: Endings) {
        let Endings {
            mut terminals,
            mut output_closed,
            mut stop,
            admission_closed,
        } = endings;
        let mut admission_closed = Some(admission_closed);
        let mut closed_at: Option<Instant> = None;
        let mut output_open = true;
        let mut stop_open = true;
        loop {
            if closed_at.is_some() && self.calls.is_empty() {
                break;
            }
            let admitting = closed_at.is_none();
            // `<=`: at the bound one more message is read, so a cancellation still gets through;
            // a call read then is parked over the bound and reading stops.
            let can_read = admitting
                && self.waiting.len() <= self.options.max_waiting_calls
                && self.waiting_bytes <= self.options.max_waiting_bytes;
            let out = self.out.clone();
            tokio::select! {
                biased;
                Some(terminal) = terminals.recv() => self.complete(terminal),
                closed = &mut output_closed, if output_open => {
                    output_open = false;
                    if closed.is_ok() && admitting {
                        tracing::debug!("output closed: shutting down quietly");
                        closed_at = Some(self.close_admission(&mut admission_closed));
                    }
                }
                stopped = &mut stop, if stop_open && admitting => {
                    stop_open = false;
                    if stopped.is_ok() {
                        tracing::debug!(calls = self.calls.len(), "stop requested: closing admission");
                        closed_at = Some(self.close_admission(&mut admission_closed));
                    }
                }
                item = async { out.ready().await; inbound.recv_sized().await }, if can_read => match item {
                    Some((item, bytes)) => self.admit(item, bytes),
                    None => {
                        tracing::debug!(calls = self.calls.len(), "end of input: closing admission");
                        closed_at = Some(self.close_admission(&mut admission_closed));
                    }
                },
            }
        }
    }

    fn close_admission(&mut self, tell: &mut Option<oneshot::Sender<Instant>>) -> Instant {
        let now = Instant::now();
        if let Some(tell) = tell.take() {
            let _ = tell.send(now);
        }
        let cancellable: Vec<RequestId> = self.owners.keys().cloned().collect();
        for id in cancellable {
            self.cancel(&id);
        }
        now
    }

    fn admit(&mut self, item: Inbound, bytes: usize) {
        let message = match item {
            Inbound::Message(Ok(message)) => message,
            Inbound::Message(Err(error)) => {
                if error.id().is_some_and(|id| self.owners.contains_key(id)) {
                    tracing::debug!(id = ?error.id(), "ignoring a malformed message reusing an active id");
                    return;
                }
                return self.reply(error.into_error_response());
            }
            Inbound::Oversized { limit } => {
                let error = ErrorObject::invalid_request(format!(
                    "message rejected: a line may hold at most {limit} bytes; send a smaller message, or start the server with a higher line limit"
                ))
                .with_data(serde_json::json!({ "maxMessageBytes": limit }));
                return self.reply(Response::error(None, error));
            }
        };
        if let Incoming::Request(request) = &message
            && self.owners.contains_key(&request.id)
        {
            tracing::debug!(id = ?request.id, "ignoring a request reusing an active id");
            return;
        }
        match self.session.handle(message) {
            Action::Reply(response) => self.reply(response),
            Action::Call(plan) => self.start_call(plan, bytes),
            Action::Cancel(id) => self.cancel(&id),
            Action::Ignore => {}
        }
    }

    /// A direct answer: queued at once, so its id is never owned.
    fn reply(&mut self, response: Response) {
        let line = response.to_line();
        let bytes = line.len();
        self.out.push(line, bytes);
    }

    fn start_call(&mut self, plan: CallPlan, bytes: usize) {
        let key = CallKey(self.next_key);
        self.next_key += 1;
        let fence = plan.execution == Execution::Fence;
        let token = CancellationToken::new();
        let call = CallIdentity {
            key,
            id: plan.id.clone(),
            tool: plan.tool.clone(),
            progress_token: plan.progress_token,
            log_policy: plan.log_policy,
            client: plan.client.clone(),
        };
        let sink = Arc::new(CallSink::new(
            call,
            self.out.clone(),
            self.terminals.clone(),
        ));
        let ctx = CallContext::new(sink.clone(), token.clone());
        let admitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.host.admitted(&plan.tool, &plan.arguments, &ctx)
        }));
        if let Err(panic) = admitted {
            // Answered like any panic of the host, and nothing of the call is kept: the sink
            // gives up its senders (its terminal reaches no entry), so no context clone the host
            // kept can write.
            sink.finish(Vec::new());
            let error = call::internal_error(&plan.tool, &plan.id, panic.as_ref());
            return self.reply(Response::error(Some(plan.id), error));
        }
        let start = if self.can_start(fence) && self.waiting.is_empty() {
            self.running += 1;
            self.fence_running |= fence;
            None
        } else {
            let (tx, rx) = oneshot::channel();
            self.waiting.push_back((key, tx));
            self.waiting_bytes += bytes;
            Some(rx)
        };
        self.owners.insert(plan.id.clone(), key);
        self.calls.insert(
            key,
            Entry {
                id: plan.id.clone(),
                token: token.clone(),
                sink: sink.clone(),
                fence,
                running: start.is_none(),
                bytes,
            },
        );
        let task = CallTask {
            host: self.host.clone(),
            identity: self.session.identity().clone(),
            id: plan.id,
            tool: plan.tool,
            family: plan.client.family,
            status: plan.status,
            status_delay: self.options.status_delay,
            heartbeat: self.options.heartbeat,
            cancel_grace: self.options.cancel_grace,
            sink,
            token,
            cancellable: !fence,
        };
        let mut run = Box::pin(task.run(plan.arguments, start));
        // A call that is done on its first poll (most quick tools) answers from here, without a
        // task switch; anything else continues as a task of its own. The task guards its own
        // end (see `call`), so even a panic that escapes it cannot take the coordinator down.
        let first_poll = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            futures_util::FutureExt::now_or_never(&mut run)
        }));
        match first_poll {
            Ok(Some(())) => {}
            Ok(None) => {
                tokio::spawn(run);
            }
            Err(_) => tracing::error!("a call's task panicked on its first poll"),
        }
    }

    fn can_start(&self, fence: bool) -> bool {
        if fence {
            self.running == 0
        } else {
            !self.fence_running && self.running < self.options.max_running_calls
        }
    }

    /// Cancels the call that owns `id`, if it is cancellable: the id is free again at once, and
    /// the call answers nothing.
    fn cancel(&mut self, id: &RequestId) {
        let Some(&key) = self.owners.get(id) else {
            tracing::debug!(%id, "cancellation for a request that is not a running call");
            return;
        };
        let entry = self.calls.get(&key).expect("an owned id has an entry");
        if entry.fence {
            tracing::debug!(%id, "fences are not cancellable");
            return;
        }
        tracing::debug!(%id, "cancelling");
        self.owners.remove(id);
        entry.sink.close();
        entry.token.cancel();
        if !entry.running {
            // Its start signal is dropped: the task ends without starting.
            self.waiting.retain(|(waiting, _)| *waiting != key);
            self.waiting_bytes -= entry.bytes;
        }
    }

    /// Retires a finished call; queues its terminal line if it still owns its id, so once a
    /// client can read the answer, the id is free for reuse.
    fn complete(&mut self, Terminal { key, line }: Terminal) {
        let Some(entry) = self.calls.remove(&key) else {
            return;
        };
        if entry.running {
            self.running -= 1;
            self.fence_running &= !entry.fence;
        } else if let Some(at) = self.waiting.iter().position(|(waiting, _)| *waiting == key) {
            // Ended while still waiting (its task failed before it could start).
            self.waiting.remove(at);
            self.waiting_bytes -= entry.bytes;
        }
        if self.owners.get(&entry.id) == Some(&key) {
            self.owners.remove(&entry.id);
            if !line.is_empty() {
                let bytes = line.len();
                self.out.push(line, bytes);
            }
        }
        self.start_waiting();
    }

    /// Starts waiting calls in admission order, as far as the fence rule and the bound allow.
    fn start_waiting(&mut self) {
        while let Some((key, _)) = self.waiting.front() {
            let Some(entry) = self.calls.get(key) else {
                self.waiting.pop_front(); // ended without starting
                continue;
            };
            let fence = entry.fence;
            if !self.can_start(fence) {
                return;
            }
            let (key, start) = self.waiting.pop_front().expect("front exists");
            if let Some(entry) = self.calls.get_mut(&key) {
                entry.running = true;
                self.waiting_bytes -= entry.bytes;
            }
            self.running += 1;
            self.fence_running |= fence;
            let _ = start.send(());
        }
    }
}
