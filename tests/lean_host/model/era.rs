//! The Lean and Lake eras a suite's server runs in, where they differ in what the suites
//! generate (the fake's README, "Environment"): who hears that a saved import made a document's
//! imports stale (`FAKE_LEAN_STALE_NOTICE`: the mid and newer watchdogs tell every document whose
//! import closure holds it; the 2022 watchdog tells nobody), and whether and how Lake's set-up
//! reports an import that does not build (`FAKE_LAKE_SETUP_BUILD`: new Lake's `Failed to build
//! module dependencies.` summary, the intermediate Lake's log then that line, or imports taken
//! as built).
//!
//! Contract: a unit of work runs every server of its own in one era ([`Era::of_unit`] cycles
//! through them), and every fresh server the oracles start for it in the same one, so a fresh
//! answer is the one Lean of that era gives.

/// Who hears that a saved `.lean` file made their imports stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notice {
    /// The mid and newer watchdogs: every document whose import closure holds it.
    Closure,
    /// The 2022 watchdog: nobody.
    None,
}

/// How Lake's set-up of a file treats its imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Build {
    /// Taken as built.
    Off,
    /// Built; one that fails is new Lake's `Failed to build module dependencies.`.
    New,
    /// Built; one that fails is the intermediate Lake's log, then that line.
    Intermediate,
}

/// One era.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Era {
    pub notice: Notice,
    pub build: Build,
}

impl Era {
    /// The era of unit `n` of a suite cycling through `eras`.
    pub fn of_unit(n: usize, eras: &[Era]) -> Era {
        eras[n % eras.len()]
    }

    /// The fake's environment for this era.
    pub fn env(self) -> Vec<(String, String)> {
        let notice = match self.notice {
            Notice::Closure => "closure",
            Notice::None => "none",
        };
        let mut env = vec![("FAKE_LEAN_STALE_NOTICE".to_owned(), notice.to_owned())];
        let build = match self.build {
            Build::Off => None,
            Build::New => Some("new"),
            Build::Intermediate => Some("intermediate"),
        };
        env.extend(build.map(|b| ("FAKE_LAKE_SETUP_BUILD".to_owned(), b.to_owned())));
        env
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stale notices {:?}, set-up build {:?}",
            self.notice, self.build
        )
    }
}

impl Era {
    pub fn default_for_now() -> Era {
        Era {
            notice: Notice::Closure,
            build: Build::Off,
        }
    }
}
