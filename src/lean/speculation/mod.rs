//! Speculative runs: hidden twin documents (`twins`: where they live, what a client may see of
//! them), the text of a probe and what its result keeps (`probe`), one run (`run`), proof
//! handles (`handles`), where Lean said positions are in a proof (`modes`), the verdicts Lean
//! already gave (`verdicts`), what Lean's axioms say of `sorry` (`axioms`), and
//! `lean_try_edit`: one candidate (`edit`), one call's candidates over the twin pool (`trial`).

pub mod axioms;
pub mod edit;
pub mod handles;
pub mod modes;
pub mod probe;
pub mod run;
pub mod trial;
pub mod twins;
pub mod verdicts;
