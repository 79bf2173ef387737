//! One-shot Lake commands and what they leave: running `lake` (`run`), Lake's account of where
//! modules live (`layout`), its build output (`output`), where it says a module's artifacts are
//! (`query`), the artifacts it keeps (`artifacts`), and the checkpoint behind `lean_save`
//! (`checkpoint`).

pub mod artifacts;
pub mod checkpoint;
pub mod layout;
pub mod output;
pub mod query;
pub mod run;
