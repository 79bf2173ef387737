//! Lean's own word, on a fresh server, on whether a declaration depends on `sorry`: the
//! question the suites' oracles ask to hold a clean verdict (`lean_run_at`'s `success: true,
//! uses_sorry: false`, `lean_try_edit`'s `closed`) to Lean rather than to the host's reading.
//!
//! Contract: [`ask`] writes `text` to `path` of a prepared project, with `#print axioms <name>`
//! on a line of its own after it (the oracle's wording, not the host's), syncs the file alone on
//! a fresh server of the suite's era, and reads Lean's answer from the diagnostics on that line:
//! exactly one information, `'<name>' depends on axioms: [..]` (`Sorry` when the list holds
//! `sorryAx`, with or without `_root_.`) or `'<name>' does not depend on any axioms` (`Free`).
//! Anything else (nothing: a header that failed, a file that stopped; an error; more than one
//! message) is `Unanswered`, with what was said. Whether Lean warned about `sorry` never enters:
//! `warn.sorry`, `pp.sorrySource`, `pp.all` and `#guard_msgs` change the warning, not the axioms.

use serde_json::{Value, json};

use super::driver::Driver;
use super::era::Era;
use super::project::scratch;
use crate::harness::Project;

/// What Lean said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// The declaration depends on `sorryAx`.
    Sorry,
    /// It does not.
    Free,
    /// No answer in the shape `#print axioms` gives: what Lean said on the question's line.
    Unanswered(String),
}

/// Asks Lean about `name` after `text`, written to `path` of `project` (see the contract).
pub fn ask(project: &Project, era: Era, path: &str, text: &str, name: &str) -> Said {
    let mut asked = text.to_owned();
    if !asked.is_empty() && !asked.ends_with('\n') {
        asked.push('\n');
    }
    let line = asked.matches('\n').count() as u64;
    asked.push_str(&format!("#print axioms {name}\n"));
    project.write(path, &asked);
    let traces = scratch();
    let mut driver = Driver::start(&[project.root()], &[], era, traces.path());
    let arguments = json!({"workspace": project.descriptor(), "path": path,
                           "diagnostics_in_result": true, "diagnostic_scope": "all"});
    let call = driver.call("lean_sync", arguments);
    assert!(
        driver.wait_answered(call),
        "the axioms question was never answered"
    );
    let result = driver.sent[call].answers[0].value["result"].clone();
    driver.finish();
    let broken = crate::support::contract::fake_violations_in(traces.path(), "");
    assert!(
        broken.is_empty(),
        "the axioms oracle's Lean sent what Lean never sends:\n{}",
        broken.join("\n")
    );
    let items = result["structuredContent"]["diagnostics"]["items"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let here: Vec<&Value> = items
        .iter()
        .filter(|d| d["range"]["start"]["line"].as_u64() == Some(line))
        .collect();
    let quoted = format!("'{name}' ");
    match here[..] {
        [answer] if answer["severity"] == "information" => {
            let said = answer["message"].as_str().unwrap_or_default();
            let Some(rest) = said.strip_prefix(&quoted) else {
                return Said::Unanswered(said.to_owned());
            };
            if rest == "does not depend on any axioms" {
                Said::Free
            } else if let Some(list) = rest
                .strip_prefix("depends on axioms: [")
                .and_then(|l| l.strip_suffix(']'))
            {
                let sorry = list
                    .split(',')
                    .map(|a| a.trim().trim_start_matches("_root_."))
                    .any(|a| a == "sorryAx");
                if sorry { Said::Sorry } else { Said::Free }
            } else {
                Said::Unanswered(said.to_owned())
            }
        }
        _ => Said::Unanswered(if result["isError"] == true {
            result["structuredContent"]["code"].to_string()
        } else {
            json!(here).to_string()
        }),
    }
}
