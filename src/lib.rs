//! lean-beam-mcp: a Model Context Protocol server that lets coding agents work in Lean 4 projects.
//!
//! Two parts, one rule between them: [`mcp`] is the domain-free protocol core (it never imports
//! the host), and [`lean`] is the host that implements [`mcp::ToolHost`].

#![warn(missing_docs)]

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod lean;
pub mod mcp;
