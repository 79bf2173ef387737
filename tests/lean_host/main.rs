//! The Lean host end to end: the shipped server over stdio, the fake Lean behind it (`fake-lake`,
//! `tests/fake-lean-server`), on fresh copies of `tests/fixtures/lean-project`. Each module pins
//! one concern; snapshots pin the result shapes with machine paths redacted.

#[path = "../support/mod.rs"]
mod support;

mod artifact_cache;
mod budget;
mod capabilities;
mod catalog;
mod certify;
mod certify_cheats;
mod checker_real;
mod contract_check;
mod crash_codes;
mod crash_race;
mod documents;
mod failures;
mod faults;
mod feedback;
mod harness;
mod heartbeat;
mod hidden_sorry;
mod hostile;
mod imports;
mod lifecycle;
mod logging;
mod model;
mod navigation;
mod no_false_complete;
mod ownership;
mod receipt_check;
mod receipts;
mod save;
mod self_check;
mod speculative;
mod storm;
mod todo;
mod trace;
mod try_edit;
mod try_edit_oracle;
mod uris;
