//! What a dead `lake serve` leaves behind. Lean starts each file worker in a process group of
//! its own (reference §1.1), so killing `lake serve`'s group does not reach the workers: they
//! normally exit when their stdin closes, but a worker busy in native code may not.
//!
//! Contract:
//! 1. [`adopt_orphans`] (called once, by the binary) makes this process a child subreaper
//!    (Linux): a process whose parent dies becomes our child instead of init's, so whatever a
//!    `lake serve` tree leaves behind stays within reach. Without it (a library user, another
//!    OS) nothing here does anything.
//! 2. Every child the host starts is spawned through [`spawn_leader`], which records it as a
//!    leader while it lives ([`leader_exited`] forgets it); spawning and sweeping exclude each
//!    other, so a newborn leader is never taken for an orphan.
//! 3. [`sweep`] kills, with its process group, every child of ours that is not a live leader,
//!    and reaps it; since a killed orphan's own children become ours in turn, it repeats until
//!    none is left. Every child of ours that is not a leader is an orphan: a live `lake serve`
//!    still parents its own tree. [`sweep_after_leaders`] first waits (bounded) for every leader
//!    already sent SIGKILL to die, so the host's end leaves nothing behind.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

static ADOPTING: AtomicBool = AtomicBool::new(false);
/// The live leaders' pids (a count, in case a pid is reused before its exit is recorded).
static LEADERS: Mutex<Option<HashMap<u32, usize>>> = Mutex::new(None);

/// Sweeps give up after this many rounds (each round ends one level of a tree).
const MAX_ROUNDS: usize = 64;

/// Makes this process adopt the orphans of its descendants (see the contract).
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        ADOPTING.store(true, Ordering::Release);
    }
    Ok(())
}

fn leaders() -> MutexGuard<'static, Option<HashMap<u32, usize>>> {
    LEADERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Spawns a child the host owns and records it as a leader (see the contract).
pub fn spawn_leader<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    pid: impl Fn(&T) -> Option<u32>,
) -> std::io::Result<T> {
    let mut leaders = leaders();
    let child = spawn()?;
    if let Some(pid) = pid(&child) {
        *leaders.get_or_insert_default().entry(pid).or_default() += 1;
    }
    Ok(child)
}

/// Forgets a leader that has exited and been reaped.
pub fn leader_exited(pid: u32) {
    let mut leaders = leaders();
    let Some(map) = leaders.as_mut() else { return };
    if let Some(count) = map.get_mut(&pid) {
        *count -= 1;
        if *count == 0 {
            map.remove(&pid);
        }
    }
}

/// Kills and reaps every orphan we adopted (see the contract). Blocking, briefly: the orphans
/// are sent SIGKILL before they are waited for.
pub fn sweep() {
    if !ADOPTING.load(Ordering::Acquire) {
        return;
    }
    #[cfg(target_os = "linux")]
    for _ in 0..MAX_ROUNDS {
        let orphans: Vec<u32> = {
            let leaders = leaders();
            let me = std::process::id();
            children_of(me)
                .into_iter()
                .filter(|pid| !leaders.as_ref().is_some_and(|l| l.contains_key(pid)))
                .collect()
        };
        if orphans.is_empty() {
            return;
        }
        tracing::debug!(?orphans, "ending processes a dead Lean server left behind");
        for &pid in &orphans {
            // SAFETY: only signals; each pid is our unreaped child, so it names that process
            // (and, as a group id, its group) until we reap it below.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        for pid in orphans {
            let mut status = 0;
            // SAFETY: waits for one specific child of ours, which no one else waits for.
            unsafe {
                libc::waitpid(pid as libc::pid_t, &mut status, 0);
            }
        }
    }
}

/// At the host's end, once every leader was sent SIGKILL: waits at most `bound` for them to die
/// (their orphans become ours as they do), then sweeps.
pub fn sweep_after_leaders(bound: std::time::Duration) {
    if !ADOPTING.load(Ordering::Acquire) {
        return;
    }
    let deadline = std::time::Instant::now() + bound;
    #[cfg(target_os = "linux")]
    loop {
        let me = std::process::id();
        let pending: Vec<u32> = leaders()
            .as_ref()
            .map(|l| l.keys().copied().collect())
            .unwrap_or_default();
        let alive = pending.into_iter().any(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| state_and_parent(&stat))
                .is_some_and(|(state, parent)| parent == me && state != 'Z')
        });
        if !alive || std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    sweep();
}

/// The pids whose parent is `parent`, from `/proc`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| state_and_parent(&stat))
                .is_some_and(|(_, p)| p == parent)
        })
        .collect()
}

/// The state letter and parent pid in a `/proc/<pid>/stat` line (the command name may hold
/// spaces and parens).
fn state_and_parent(stat: &str) -> Option<(char, u32)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_a_name_with_parens_and_spaces() {
        assert_eq!(state_and_parent("42 (a) b (c) S 7 42 42 0"), Some(('S', 7)));
        assert_eq!(state_and_parent("42 (lean) Z 1 1 1"), Some(('Z', 1)));
        assert_eq!(state_and_parent("garbage"), None);
    }
}
