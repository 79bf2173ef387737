//! Statement-locked certification under `lean_lock` and `lean_certify`: what a lock holds and
//! how it is sealed (`lock`), what is asked of Lean in a twin and read back (`ask`), the file's
//! forbidden tokens and each failure's reason (`checks`), and the comparator bundle (`bundle`).
//!
//! Contract: a lock is a value, never server state: it binds each theorem's full name, kind,
//! normalized header and elaborated type to the file's text it was taken from, so it survives
//! a restart; with `LEAN_BEAM_LOCK_KEY` set it carries a MAC and a lock without a valid one is
//! refused. Certification reads the document Lean checked and a twin of it, never `.olean`s.

pub mod ask;
pub mod bundle;
pub mod checker;
pub mod checks;
pub mod lock;
