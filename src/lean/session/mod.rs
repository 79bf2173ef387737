//! What Lean has open: the [`DocumentSet`] (the only code that opens, changes and closes
//! documents in Lean, with the pins and leases of the calls using them), the mirror of what Lean
//! has and has said (`mirror`, `diagnostics`), and the ways a call waits on a document: the
//! diagnostics barrier (`barrier`), one request (`ask`), the goals at a position (`goals`),
//! reported on as it goes (`report`); an on-disk twin's file (`twin_file`) and what keeps twins
//! out of Lean's reference index (`index`); reading a source
//! from disk (`source`); what a result is about, as a value a client can check later
//! (`receipt`, over the files it depends on: `fingerprint`, which are those `closure` names).

pub mod ask;
pub mod barrier;
mod closure;
pub mod diagnostics;
pub mod fingerprint;
pub mod goals;
pub mod index;
pub mod mirror;
pub mod receipt;
pub mod report;
pub mod set;
pub mod source;
pub mod twin_file;

pub use set::{DocumentSet, Limits, Pin, Placement, Synced, TwinLease};
pub use twin_file::TwinFile;
