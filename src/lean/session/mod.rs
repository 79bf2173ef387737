//! What Lean has open: the document mirror and Lean's diagnostics of each version.

pub mod diagnostics;
pub mod mirror;
