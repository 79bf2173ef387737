//! Speculative runs: hidden twin documents, the text of a probe and what its result keeps,
//! proof handles, and where Lean said positions are in a proof.

pub mod handles;
pub mod modes;
pub mod probe;
pub mod twins;
