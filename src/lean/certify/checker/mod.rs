//! The certification checker's source (`Checker.lean`, Lean 4), embedded so the host can write
//! it into the workspace and run it with `lake env lean --run`. What it answers, and how, is
//! `CONTRACT.md` beside it; the fake Lean answers the same contract (`tests/fake-lean-server`).

/// The checker's source; its first line names the protocol it answers.
pub const CHECKER_SOURCE: &str = include_str!("Checker.lean");

#[cfg(test)]
mod tests {
    #[test]
    fn the_source_names_its_protocol_on_its_first_line() {
        assert_eq!(
            super::CHECKER_SOURCE.lines().next(),
            Some("-- lean-beam certification checker, protocol 1")
        );
    }
}
