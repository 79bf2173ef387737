//! Workspaces: descriptors and canonical roots (`root`), one Lean runtime per root
//! (`runtime`), and the registry of runtimes (`registry`).

pub mod registry;
pub mod root;
pub mod runtime;
