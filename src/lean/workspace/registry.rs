//! The Lean runtimes of this process, one per canonical workspace root, created lazily.
//!
//! Contract:
//! 1. [`Registry::runtime`] returns the root's runtime, starting it on first use. Concurrent
//!    first uses start exactly one: the start runs as a task of its own (a caller that is
//!    cancelled stops waiting; the start goes on for the others), and every caller waits for
//!    that one. Distinct roots (and so toolchains) start and run independently.
//! 2. A runtime whose server has exited, or whose Lake configuration (`lakefile.*`,
//!    `lake-manifest.json`, `lean-toolchain`) changed since it started, is replaced by a new one
//!    (the next epoch) on the next use, and that use gets a note saying why for its result.
//!    A runtime replaced for a configuration change is retired first: calls still using it get
//!    `contentModified` (`lakeConfigurationChanged`) rather than a Lean that seems to have died.
//! 3. A failed start is every waiting caller's error; the next use tries again. A start that
//!    panics is a failed start. A failed start holds no place: it counts against no bound.
//! 4. [`Registry::evict`] removes a root's runtime and shuts it down; [`Registry::shutdown_all`]
//!    and [`Registry::kill_all`] end every runtime at the host's end, `kill_all` also those
//!    still starting and those being retired, and every one-shot `lake` command
//!    ([`Registry::track`]) still running. [`Registry::drop_requested`], called when a drop is
//!    admitted (before the fence waits for the calls before it), stops the root's start in
//!    progress and refuses new ones (`runtimeSetup`, `workspaceDropped`) until the drop has run:
//!    a drop never waits for a Lean that will not finish starting.
//! 5. A workspace's document versions and runtime epochs continue across its runtimes (restarts
//!    and evictions): a version a caller saw is never reused for other text, and an epoch never
//!    names two runtimes.
//! 6. Lean's memory is bounded: starting a workspace beyond `--max-workspaces` first shuts down
//!    the least recently used idle one, and [`Registry::shut_down_idle`] shuts down those
//!    nobody used for `--idle-timeout-ms`. A runtime a call holds ([`InUse`]) is never idle;
//!    the next call to a shut-down workspace starts it again, its versions unchanged.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::lean::error::HostError;
use crate::lean::options::HostOptions;
use crate::lean::server::process::GroupKiller;
use crate::lean::session::mirror::VersionMemory;
use crate::lean::stats::Stats;
use crate::lean::workspace::root::WorkspaceRoot;
use crate::lean::workspace::runtime::Runtime;

/// How long the host's end waits for killed servers to die, so it can end what they left.
const ORPHAN_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone)]
enum SlotState {
    Starting,
    Ready(Arc<Runtime>),
    Failed(HostError),
}

#[derive(Debug)]
struct Slot {
    state: watch::Receiver<SlotState>,
    usage: Arc<Usage>,
    /// Stops the start while it is in progress.
    abort: CancellationToken,
}

impl Slot {
    /// Whether it holds a place (a start in progress or a runtime), unlike a failed start.
    fn holds_a_place(&self) -> bool {
        !matches!(*self.state.borrow(), SlotState::Failed(_))
    }
}

/// How a workspace's runtime is used: the calls holding it, and when the last one let go.
#[derive(Debug)]
struct Usage {
    users: AtomicUsize,
    last_used: Mutex<Instant>,
}

impl Usage {
    fn idle_for(&self) -> Option<Duration> {
        (self.users.load(Ordering::Acquire) == 0).then(|| lock(&self.last_used).elapsed())
    }
}

/// Held by a call for as long as it uses a workspace's runtime: a runtime nobody holds is idle.
#[derive(Debug)]
pub struct InUse(Arc<Usage>);

impl InUse {
    fn new(usage: &Arc<Usage>) -> InUse {
        usage.users.fetch_add(1, Ordering::AcqRel);
        InUse(usage.clone())
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        *lock(&self.0.last_used) = Instant::now();
        self.0.users.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A runtime, why it is new if it replaced another, and the hold on it.
#[derive(Debug)]
pub struct Acquired {
    /// The runtime.
    pub runtime: Arc<Runtime>,
    /// A note for the caller's result when this use restarted Lean.
    pub note: Option<String>,
    /// Keeps the runtime from being shut down as idle while the call uses it.
    pub in_use: InUse,
}

/// Every workspace's runtime.
#[derive(Debug)]
pub struct Registry {
    options: HostOptions,
    slots: Mutex<HashMap<WorkspaceRoot, Slot>>,
    /// The process group of every `lake serve` started and not yet known gone (starting,
    /// running, or being shut down after a replacement or an eviction), and of every tracked
    /// one-shot `lake` command, so every one can be killed.
    groups: Arc<Mutex<Vec<(WorkspaceRoot, GroupKiller)>>>,
    /// Each workspace's document versions, kept across its runtimes.
    versions: Mutex<HashMap<WorkspaceRoot, Arc<VersionMemory>>>,
    /// Each workspace's last runtime epoch.
    epochs: Mutex<HashMap<WorkspaceRoot, u64>>,
    stats: Arc<Stats>,
    first_start: Mutex<Option<Instant>>,
    /// Roots with drops admitted and not yet run, and whether one of them stopped a start.
    dropping: Mutex<HashMap<WorkspaceRoot, (usize, bool)>>,
}

impl Registry {
    /// An empty registry.
    pub fn new(options: HostOptions, stats: Arc<Stats>) -> Self {
        Registry {
            options,
            slots: Mutex::default(),
            groups: Arc::default(),
            versions: Mutex::default(),
            epochs: Mutex::default(),
            stats,
            first_start: Mutex::default(),
            dropping: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<WorkspaceRoot, Slot>> {
        lock(&self.slots)
    }

    /// The root's runtime, started (or restarted) as needed (see the contract); `starting` is
    /// called first when the call must wait for a start, its own or another's.
    pub async fn runtime(
        &self,
        root: &WorkspaceRoot,
        starting: impl FnOnce(),
    ) -> Result<Acquired, HostError> {
        let (state, in_use, started, note) = {
            let mut slots = self.lock();

            let current = slots
                .get(root)
                .map(|slot| (slot.state.clone(), InUse::new(&slot.usage)));
            // A drop admitted and not yet run refuses new starts (see the contract).
            let refuse = || {
                if let Some((_, stopped)) = lock(&self.dropping).get_mut(root) {
                    // The drop ends what this call would have started: it counts as dropping it.
                    *stopped = true;
                    return Err(crate::lean::server::dropped(root.path()));
                }
                Ok(())
            };
            match current {
                None => {
                    refuse()?;
                    self.make_room(&mut slots);
                    let (state, in_use) = self.start(&mut slots, root);
                    (state, in_use, Some(false), None)
                }
                Some((state, in_use)) => {
                    let now = state.borrow().clone();
                    match now {
                        SlotState::Starting => (state, in_use, None, None),
                        SlotState::Failed(_) => {
                            refuse()?;
                            drop(in_use);
                            slots.remove(root);
                            self.make_room(&mut slots);
                            let (state, in_use) = self.start(&mut slots, root);
                            (state, in_use, Some(true), None)
                        }
                        SlotState::Ready(runtime) => {
                            match replacement(&runtime, self.next_epoch(root)) {
                                None => {
                                    return Ok(Acquired {
                                        runtime,
                                        note: None,
                                        in_use,
                                    });
                                }
                                Some((note, why)) => {
                                    refuse()?;
                                    if let Some(why) = why {
                                        runtime.retire(why);
                                    }
                                    tokio::spawn(async move { runtime.shutdown().await });
                                    let (state, in_use) = self.start(&mut slots, root);
                                    (state, in_use, Some(true), Some(note))
                                }
                            }
                        }
                    }
                }
            }
        };
        if let Some(restart) = started {
            self.stats.session_started(root.path(), restart);
        }
        starting();
        self.wait(state, note, in_use).await
    }

    /// Before a new workspace starts: shuts down the least recently used idle runtimes until
    /// fewer than `--max-workspaces` run (busy ones are never shut down, so a burst of calls
    /// to many workspaces may exceed the bound until they end).
    fn make_room(&self, slots: &mut HashMap<WorkspaceRoot, Slot>) {
        slots.retain(|_, slot| slot.holds_a_place());
        while slots.len() >= self.options.max_workspaces {
            let victim = slots
                .iter()
                .filter(|(_, slot)| matches!(*slot.state.borrow(), SlotState::Ready(_)))
                .filter_map(|(root, slot)| Some((root.clone(), slot.usage.idle_for()?)))
                .max_by_key(|(_, idle)| *idle);
            let Some((root, _)) = victim else {
                return;
            };
            tracing::info!(root = %root.path().display(), "shutting down the least recently used workspace's Lean (--max-workspaces)");
            self.retire(slots, &root);
            self.stats.budget_shutdown(root.path());
        }
    }

    /// Shuts down every runtime nobody has used for `idle` (see `--idle-timeout-ms`).
    pub fn shut_down_idle(&self, idle: Duration) {
        let mut slots = self.lock();
        let idle_roots: Vec<WorkspaceRoot> = slots
            .iter()
            .filter(|(_, slot)| matches!(*slot.state.borrow(), SlotState::Ready(_)))
            .filter(|(_, slot)| slot.usage.idle_for().is_some_and(|d| d >= idle))
            .map(|(root, _)| root.clone())
            .collect();
        for root in idle_roots {
            tracing::info!(root = %root.path().display(), "shutting down an idle workspace's Lean");
            self.retire(&mut slots, &root);
            self.stats.idle_shutdown(root.path());
        }
    }

    /// Removes a ready runtime and shuts it down in the background; the next use starts
    /// another.
    fn retire(&self, slots: &mut HashMap<WorkspaceRoot, Slot>, root: &WorkspaceRoot) {
        if let Some(slot) = slots.remove(root)
            && let SlotState::Ready(runtime) = &*slot.state.borrow()
        {
            let runtime = runtime.clone();
            tokio::spawn(async move { runtime.shutdown().await });
        }
    }

    /// The epoch the root's next runtime gets: epochs never repeat for a root, across drops
    /// too, so a handle of an ended runtime is always recognised as such.
    fn next_epoch(&self, root: &WorkspaceRoot) -> u64 {
        lock(&self.epochs).get(root).map_or(1, |last| last + 1)
    }

    fn start(
        &self,
        slots: &mut HashMap<WorkspaceRoot, Slot>,
        root: &WorkspaceRoot,
    ) -> (watch::Receiver<SlotState>, InUse) {
        let epoch = self.next_epoch(root);
        lock(&self.epochs).insert(root.clone(), epoch);
        let (tx, rx) = watch::channel(SlotState::Starting);
        let abort = CancellationToken::new();
        let usage = Arc::new(Usage {
            users: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
        });
        let in_use = InUse::new(&usage);
        slots.insert(
            root.clone(),
            Slot {
                state: rx.clone(),
                usage,
                abort: abort.clone(),
            },
        );
        lock(&self.first_start).get_or_insert_with(Instant::now);
        let options = self.options.clone();
        let memory = lock(&self.versions)
            .entry(root.clone())
            .or_default()
            .clone();
        let on_spawn = {
            let groups = self.groups.clone();
            let root = root.clone();
            move |killer: GroupKiller| {
                let mut groups = lock(&groups);
                groups.retain(|(_, k)| !k.is_gone());
                groups.push((root, killer));
            }
        };
        let root = root.clone();
        tokio::spawn(async move {
            let start = Runtime::start(root, epoch, &options, memory, on_spawn, &abort);
            let state = match std::panic::AssertUnwindSafe(start).catch_unwind().await {
                Ok(Ok(runtime)) => SlotState::Ready(Arc::new(runtime)),
                Ok(Err(error)) => SlotState::Failed(error),
                Err(_) => SlotState::Failed(HostError::internal(
                    "starting the Lean runtime failed inside lean-beam-mcp (a bug: see its log); \
                     the next call tries again",
                )),
            };
            let _ = tx.send(state);
        });
        (rx, in_use)
    }

    async fn wait(
        &self,
        mut state: watch::Receiver<SlotState>,
        note: Option<String>,
        in_use: InUse,
    ) -> Result<Acquired, HostError> {
        let settled = state
            .wait_for(|s| !matches!(s, SlotState::Starting))
            .await
            .map(|s| s.clone());
        match settled {
            Ok(SlotState::Ready(runtime)) => Ok(Acquired {
                runtime,
                note,
                in_use,
            }),
            Ok(SlotState::Failed(error)) => Err(error),
            Ok(SlotState::Starting) | Err(_) => Err(HostError::runtime_setup(
                "workspaceDropped",
                "the Lean runtime was dropped while it started; try again",
                Vec::new(),
            )),
        }
    }

    /// Every runtime ready now.
    pub fn running(&self) -> Vec<Arc<Runtime>> {
        self.lock()
            .values()
            .filter_map(|slot| match &*slot.state.borrow() {
                SlotState::Ready(runtime) => Some(runtime.clone()),
                _ => None,
            })
            .collect()
    }

    /// The root's runtime if one is ready, without starting or restarting anything.
    pub fn running_for(&self, root: &WorkspaceRoot) -> Option<Arc<Runtime>> {
        match &*self.lock().get(root)?.state.borrow() {
            SlotState::Ready(runtime) => Some(runtime.clone()),
            _ => None,
        }
    }

    /// Whether a Lean server is running (ready and alive) for some workspace.
    pub fn is_active(&self) -> bool {
        self.running().iter().any(|r| r.is_alive())
    }

    /// When the first runtime of this process started.
    pub fn first_start(&self) -> Option<Instant> {
        *lock(&self.first_start)
    }

    /// A drop of `root` was admitted (see the contract): its start in progress is stopped, and
    /// no new one begins until [`Registry::evict`] has run.
    pub fn drop_requested(&self, root: &WorkspaceRoot) {
        let slots = self.lock();
        let mut dropping = lock(&self.dropping);
        let (count, stopped) = dropping.entry(root.clone()).or_default();
        *count += 1;
        if let Some(slot) = slots.get(root)
            && matches!(*slot.state.borrow(), SlotState::Starting)
        {
            // The start ends itself (`server`): other process groups of the root, such as a
            // save's build on a runtime being retired, are left to finish.
            slot.abort.cancel();
            *stopped = true;
        }
    }

    /// Removes the root's runtime and shuts it down; `false` when there was none (a failed
    /// start leaves none), unless a drop of it stopped or refused a start. A runtime still
    /// starting is stopped, so its start fails at once.
    pub async fn evict(&self, root: &WorkspaceRoot) -> bool {
        let stopped = {
            let mut dropping = lock(&self.dropping);
            match dropping.get_mut(root) {
                Some((count, stopped)) => {
                    // The first drop to run took the stopped start away: it is its work.
                    let was = std::mem::take(stopped);
                    *count -= 1;
                    if *count == 0 {
                        dropping.remove(root);
                    }
                    was
                }
                None => false,
            }
        };
        let Some(slot) = self.lock().remove(root) else {
            return stopped;
        };
        self.stats.forget(root.path());
        let mut state = slot.state;
        let starting = matches!(*state.borrow(), SlotState::Starting);
        if starting {
            slot.abort.cancel();
        }
        let settled = state
            .wait_for(|s| !matches!(s, SlotState::Starting))
            .await
            .map(|s| s.clone());
        match settled {
            Ok(SlotState::Ready(runtime)) => {
                runtime.shutdown().await;
                true
            }
            _ => starting || stopped,
        }
    }

    /// Shuts every runtime down, concurrently (they stay listed, so a `kill_all` after a
    /// shutdown cut short still reaches them).
    pub async fn shutdown_all(&self) {
        let runtimes = self.running();
        futures_util::future::join_all(runtimes.iter().map(|r| r.shutdown())).await;
    }

    /// Records the process group of a one-shot `lake` command run for `root` (a checkpoint's
    /// `lake build`), so [`Registry::kill_all`] reaches it too.
    pub fn track(&self, root: &WorkspaceRoot, killer: GroupKiller) {
        let mut groups = lock(&self.groups);
        groups.retain(|(_, k)| !k.is_gone());
        groups.push((root.clone(), killer));
    }

    /// Kills every `lake serve` this registry started and has not seen end (starting, running
    /// or retiring), and every tracked `lake` command, with its process group, then ends what
    /// they leave behind.
    pub fn kill_all(&self) {
        for runtime in self.running() {
            runtime.end();
        }
        self.kill_groups(|_| true);
        crate::lean::server::orphans::sweep_after_leaders(ORPHAN_GRACE);
    }

    fn kill_groups(&self, which: impl Fn(&WorkspaceRoot) -> bool) {
        let groups = lock(&self.groups);
        for (root, killer) in groups.iter() {
            if which(root) {
                killer.kill();
            }
        }
    }
}

/// Why a running runtime must be replaced before use, if it must: the note for the result, and
/// the error calls still using it get.
fn replacement(runtime: &Runtime, next_epoch: u64) -> Option<(String, Option<HostError>)> {
    if !runtime.is_alive() {
        return Some((
            format!(
                "the Lean server for this workspace had exited; it was restarted (start \
                 {next_epoch}) and documents are reopened from disk"
            ),
            None,
        ));
    }
    let changed = runtime.config_changes();
    (!changed.is_empty()).then(|| {
        let note = format!(
            "Lake configuration changed ({}); the Lean server was restarted to load it",
            changed.join(", ")
        );
        (note, Some(HostError::lake_configuration_changed(&changed)))
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[tokio::test]
    async fn the_hosts_end_kills_a_tracked_lake_command() {
        use std::os::unix::process::ExitStatusExt;

        use crate::lean::server::process::{reap_owned, spawn_owned};

        let root = WorkspaceRoot::for_eviction(&serde_json::json!({"root": "/project"})).unwrap();
        let registry = Registry::new(HostOptions::default(), Arc::default());
        let mut command = tokio::process::Command::new("sleep");
        command.arg("600");
        let child = spawn_owned(&mut command).unwrap();
        let killer = GroupKiller::of(&child);
        registry.track(&root, killer.clone());
        registry.kill_all();
        let status = reap_owned(child, killer).await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
