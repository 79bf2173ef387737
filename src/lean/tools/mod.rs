//! The host's tools, one file per family. Each file owns its specs and its implementations.

pub mod version;
