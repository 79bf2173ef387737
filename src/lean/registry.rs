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
//! 3. A failed start is every waiting caller's error; the next use tries again.
//! 4. [`Registry::evict`] removes a root's runtime and shuts it down; [`Registry::shutdown_all`]
//!    and [`Registry::kill_all`] end every runtime at the host's end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;

use super::error::HostError;
use super::options::HostOptions;
use super::process::GroupKiller;
use super::runtime::Runtime;
use super::stats::Stats;
use super::workspace::WorkspaceRoot;

#[derive(Debug, Clone)]
enum SlotState {
    Starting,
    Ready(Arc<Runtime>),
    Failed(HostError),
}

#[derive(Debug)]
struct Slot {
    epoch: u64,
    state: watch::Receiver<SlotState>,
}

/// A runtime, and why it is new if it replaced another.
#[derive(Debug, Clone)]
pub struct Acquired {
    /// The runtime.
    pub runtime: Arc<Runtime>,
    /// A note for the caller's result when this use restarted Lean.
    pub note: Option<String>,
}

/// Every workspace's runtime.
#[derive(Debug)]
pub struct Registry {
    options: HostOptions,
    slots: Mutex<HashMap<WorkspaceRoot, Slot>>,
    /// The process groups of runtimes still starting, so they can be killed too.
    starting: Arc<Mutex<HashMap<WorkspaceRoot, GroupKiller>>>,
    stats: Arc<Stats>,
    first_start: Mutex<Option<Instant>>,
}

impl Registry {
    /// An empty registry.
    pub fn new(options: HostOptions, stats: Arc<Stats>) -> Self {
        Registry {
            options,
            slots: Mutex::default(),
            starting: Arc::default(),
            stats,
            first_start: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<WorkspaceRoot, Slot>> {
        lock(&self.slots)
    }

    /// The root's runtime, started (or restarted) as needed (see the contract).
    pub async fn runtime(&self, root: &WorkspaceRoot) -> Result<Acquired, HostError> {
        let (state, note) = {
            let mut slots = self.lock();
            let current = slots.get(root).map(|slot| (slot.epoch, slot.state.clone()));
            match current {
                None => (self.start(&mut slots, root, 1), None),
                Some((epoch, state)) => {
                    let now = state.borrow().clone();
                    match now {
                        SlotState::Starting => (state, None),
                        SlotState::Failed(_) => (self.start(&mut slots, root, epoch + 1), None),
                        SlotState::Ready(runtime) => match replacement(&runtime, epoch + 1) {
                            None => {
                                return Ok(Acquired {
                                    runtime,
                                    note: None,
                                });
                            }
                            Some(note) => {
                                tokio::spawn(async move { runtime.shutdown().await });
                                (self.start(&mut slots, root, epoch + 1), Some(note))
                            }
                        },
                    }
                }
            }
        };
        self.wait(state, note).await
    }

    fn start(
        &self,
        slots: &mut HashMap<WorkspaceRoot, Slot>,
        root: &WorkspaceRoot,
        epoch: u64,
    ) -> watch::Receiver<SlotState> {
        let (tx, rx) = watch::channel(SlotState::Starting);
        slots.insert(
            root.clone(),
            Slot {
                epoch,
                state: rx.clone(),
            },
        );
        self.stats.session_started(root, epoch > 1);
        lock(&self.first_start).get_or_insert_with(Instant::now);
        let options = self.options.clone();
        let starting = self.starting.clone();
        let key = root.clone();
        let root = root.clone();
        tokio::spawn(async move {
            let on_spawn = {
                let starting = starting.clone();
                let key = key.clone();
                move |killer: GroupKiller| {
                    lock(&starting).insert(key, killer);
                }
            };
            let state = match Runtime::start(root, epoch, options, on_spawn).await {
                Ok(runtime) => SlotState::Ready(Arc::new(runtime)),
                Err(error) => SlotState::Failed(error),
            };
            lock(&starting).remove(&key);
            let _ = tx.send(state);
        });
        rx
    }

    async fn wait(
        &self,
        mut state: watch::Receiver<SlotState>,
        note: Option<String>,
    ) -> Result<Acquired, HostError> {
        let settled = state
            .wait_for(|s| !matches!(s, SlotState::Starting))
            .await
            .map(|s| s.clone());
        match settled {
            Ok(SlotState::Ready(runtime)) => Ok(Acquired { runtime, note }),
            Ok(SlotState::Failed(error)) => Err(error),
            Ok(SlotState::Starting) | Err(_) => Err(HostError::new(
                super::error::code::RUNTIME_SETUP,
                "the Lean runtime was dropped while it started; try again",
            )),
        }
    }

    /// The root's runtime if one is running now (never starts one).
    pub fn current(&self, root: &WorkspaceRoot) -> Option<Arc<Runtime>> {
        match &*self.lock().get(root)?.state.borrow() {
            SlotState::Ready(runtime) => Some(runtime.clone()),
            _ => None,
        }
    }

    /// Every running runtime.
    pub fn running(&self) -> Vec<Arc<Runtime>> {
        self.lock()
            .values()
            .filter_map(|slot| match &*slot.state.borrow() {
                SlotState::Ready(runtime) => Some(runtime.clone()),
                _ => None,
            })
            .collect()
    }

    /// Whether any runtime exists (started, starting, or failed and kept).
    pub fn is_active(&self) -> bool {
        !self.lock().is_empty()
    }

    /// When the first runtime of this process started.
    pub fn first_start(&self) -> Option<Instant> {
        *lock(&self.first_start)
    }

    /// Removes the root's runtime and shuts it down; `false` when there was none. A runtime that
    /// is still starting is shut down once it has.
    pub async fn evict(&self, root: &WorkspaceRoot) -> bool {
        let Some(slot) = self.lock().remove(root) else {
            return false;
        };
        self.stats.forget(root);
        let mut state = slot.state;
        let settled = state
            .wait_for(|s| !matches!(s, SlotState::Starting))
            .await
            .map(|s| s.clone());
        if let Ok(SlotState::Ready(runtime)) = settled {
            runtime.shutdown().await;
        }
        true
    }

    /// Shuts every runtime down, concurrently (they stay listed, so a `kill_all` after a
    /// shutdown cut short still reaches them).
    pub async fn shutdown_all(&self) {
        let runtimes = self.running();
        futures_util::future::join_all(runtimes.iter().map(|r| r.shutdown())).await;
    }

    /// Kills every runtime's process group at once, those still starting included.
    pub fn kill_all(&self) {
        let mut killers: Vec<GroupKiller> = self.running().iter().map(|r| r.killer()).collect();
        killers.extend(lock(&self.starting).values().cloned());
        for killer in killers {
            killer.kill();
        }
    }
}

/// Why a running runtime must be replaced before use, if it must.
fn replacement(runtime: &Runtime, next_epoch: u64) -> Option<String> {
    if !runtime.is_alive() {
        return Some(format!(
            "the Lean server for this workspace had exited; it was restarted (start {next_epoch}) \
             and documents are reopened from disk"
        ));
    }
    let changed = runtime.config_changes();
    (!changed.is_empty()).then(|| {
        format!(
            "Lake configuration changed ({}); the Lean server was restarted to load it",
            changed.join(", ")
        )
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
