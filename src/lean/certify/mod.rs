//! Statement-locked certification under `lean_lock` and `lean_certify`, judged by a separate
//! checker process, never by what the file's own elaboration prints: what a lock holds and how
//! it is sealed (`lock`), names as Lean has them (`names`), one run of the checker (`runner`),
//! its answer about the built text and the answers kept (`answers`), the pre-filter and each
//! failure's reason (`checks`), and the comparator bundle (`bundle`).
//!
//! Contract: a lock is a value, never server state: it binds each theorem's full name and the
//! hash of its statement closure (the checker's) to the file's text it was taken from and to
//! the toolchain, so it survives a restart; with `LEAN_BEAM_LOCK_KEY` set it carries a MAC and a
//! lock without a valid one is refused. Certification builds the module from exactly the text
//! Lean checked (`lake build +M`) and decides from the checker's answer about what was built
//! (`importModules`, `collectAxioms`, a kernel replay), never from messages of the file.

pub mod answers;
pub mod bundle;
pub mod checker;
pub mod checks;
pub mod lock;
pub mod names;
pub mod runner;
