//! One Lean lexer for the whole host: what of a Lean text is code, and what the host reads from
//! it — `sorry`s and holes, where commands may start, a text's first tactic.
//!
//! Contract: see `lexer`, whose functions are the module's.

mod lexer;

pub use lexer::{Found, command_lines, first_tactic, scan};
