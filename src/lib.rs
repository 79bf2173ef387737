//! lean-beam-mcp: a Model Context Protocol server that lets coding agents work in Lean 4 projects.
//!
//! Two parts, one rule between them: [`mcp`] is the domain-free protocol core (it never imports
//! the host), and [`lean`] is the host that implements [`mcp::ToolHost`]. Around them: [`trace`]
//! writes the traffic of both to files for bug reports (neither part depends on the other
//! through it), and [`cli`] is the command line: serving, client set-up and the self-check.

#![warn(missing_docs)]

pub mod cli;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod lean;
pub mod mcp;
mod timestamp;
pub mod trace;
