//! The `lake serve` child (`process`, `orphans`) and the LSP client over it (`lsp`).

pub mod lsp;
pub mod orphans;
pub mod process;
