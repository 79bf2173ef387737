//! Feedback reports: what `beam_feedback_report` is made of, apart from the host state it
//! reads (that is `tools::feedback`).
//!
//! A report is read and checked in full before anything is collected or written (`input`),
//! rendered as a markdown card with metadata (`card`), redacted of local paths (`redact`), and
//! optionally written as a bundle under the workspace (`bundle`). Beam never sends a report
//! anywhere: it is returned to the caller, and written only where the caller asked.

pub mod bundle;
pub mod card;
pub mod input;
pub mod redact;
