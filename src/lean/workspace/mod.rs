//! Workspaces: descriptors and canonical roots (`root`), the Lake configuration a runtime loaded
//! (`config`), one Lean runtime per root (`runtime`), and the registry of runtimes
//! (`registry`: single-flight starts, budgets, retirement).

pub mod config;
pub mod registry;
pub mod root;
pub mod runtime;
