//! lean-beam-mcp: a Model Context Protocol server that lets coding agents work in Lean 4 projects.
//!
//! Two parts, one rule between them: [`mcp`] is the domain-free protocol core (it never imports
//! the host), and [`lean`] is the host that implements [`mcp::ToolHost`]. Beside them, [`trace`]
//! writes the traffic of both to files for bug reports (neither part depends on the other
//! through it).

#![warn(missing_docs)]

pub mod lean;
pub mod mcp;
pub mod trace;
