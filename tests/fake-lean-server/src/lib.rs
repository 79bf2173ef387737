//! A fake Lean 4 language server (and `lake`) for testing Lean clients without a Lean
//! toolchain. Its protocol behaviour follows the project's reference notes on Lean's server
//! (`lean-language-server.md`, `lean-stock-speculation.md`); its answers come from simple rules
//! over the document text plus `-- fake:` comment directives. The README documents every rule,
//! directive, environment switch and fault mode, with the reference line each implements.

pub mod analysis;
pub mod answer;
pub mod assist;
pub mod capabilities;
pub mod certify;
pub mod checker;
pub mod config;
pub mod contract;
pub mod decl;
pub mod directives;
pub mod documents;
pub mod elab;
pub mod event;
pub mod faults;
pub mod goals;
pub mod header;
pub mod include;
pub mod lake_build;
pub mod lake_cache;
pub mod lake_env;
pub mod lake_jobs;
pub mod lakefile;
pub mod lean_run;
pub mod lexer;
pub mod navigate;
pub mod outline;
pub mod output;
pub mod project;
pub mod references;
pub mod reports;
pub mod scoped;
pub mod server;
pub mod shapes;
pub mod signature;
pub mod tactics;
pub mod text;
pub mod trace;
pub mod wire;
pub mod worker;
