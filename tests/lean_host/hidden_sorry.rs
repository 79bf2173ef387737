//! `sorry` that Lean does not warn about is never reported clean (DESIGN.md "`sorry` is known
//! from axioms, not from warnings"): `warn.sorry false` in the file, in a `set_option … in`
//! prefix or in the lakefile's `leanOptions`; `pp.sorrySource` and `pp.all` rewording the
//! warning; `#guard_msgs (drop …)` deleting it; a lemma proved by `sorry`. A `lean_try_edit`
//! candidate is then never `closed`, a `lean_run_at` run never `success: true, uses_sorry:
//! false`; nor when Lean's answer to `#print axioms` has another shape (a file that redefines
//! the command, a file that stops at `#exit`) or cannot be asked (an `example`). Terminal
//! commands (`#exit`) in a candidate or a probe are refused before Lean is asked.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args};
use crate::try_edit::{replace, try_edit};

const PATH: &str = "Fixture/Hidden.lean";

/// A proof whose first bullet is `first` and whose second is `· exact hp`, after `setup`.
fn proof(setup: &str, first: &str) -> String {
    format!(
        "{setup}\ntheorem t (p q : Prop) (hp : p) (hq : q) : q ∧ p := by\n  constructor\n  · {first}\n  · exact hp\n"
    )
}

/// Each way Lean hides a `sorry` from its warnings, as a file of the fixture project.
fn hiding() -> Vec<(&'static str, String)> {
    vec![
        (
            "warn.sorry false",
            proof("set_option warn.sorry false", "sorry"),
        ),
        (
            "set_option … in",
            proof("set_option warn.sorry false in", "sorry"),
        ),
        (
            "pp.sorrySource",
            proof("set_option pp.sorrySource true", "sorry"),
        ),
        ("pp.all", proof("set_option pp.all true", "sorry")),
        (
            "#guard_msgs (drop …)",
            proof("#guard_msgs (drop warning) in", "sorry"),
        ),
        (
            "a lemma proved by sorry",
            proof(
                "theorem helper (p : Prop) (hp : p) : p := sorry",
                "exact helper q hq",
            ),
        ),
    ]
}

/// The lakefile of the fixture with `warn.sorry` off for its library.
const QUIET_LAKEFILE: &str = "name = \"fixture\"\nversion = \"0.1.0\"\ndefaultTargets = [\"Fixture\"]\n\n\
     [[lean_lib]]\nname = \"Fixture\"\nleanOptions = {\"warn.sorry\" = false}\n";

/// The line of the second bullet, `  · exact hp`.
fn bullet(text: &str) -> u64 {
    text.lines()
        .position(|l| l == "  · exact hp")
        .expect("a second bullet") as u64
}

/// The candidates tried on a file: its second bullet closed by another tactic, and by `sorry`
/// written in the candidate.
fn candidates(text: &str) -> Vec<Value> {
    let line = bullet(text);
    vec![
        replace((line, 4), (line, 12), "assumption"),
        replace((line, 4), (line, 12), "sorry"),
    ]
}

/// The runs tried on each file: the second bullet, closed.
const PROBES: [&str; 2] = ["· assumption", "· sorry"];

fn synced(lean: &mut Lean, project: &Project, text: &str) -> Value {
    project.write(PATH, text);
    lean.ok("lean_sync", args(project, PATH, json!({})))["version"].clone()
}

/// A run of `probe` at the second bullet of `text`, synced at `version`.
fn run(lean: &mut Lean, project: &Project, version: &Value, text: &str, probe: &str) -> Value {
    let line = bullet(text);
    lean.ok(
        "lean_run_at",
        args(
            project,
            PATH,
            json!({"version": version, "line": line, "character": 2, "text": probe}),
        ),
    )
}

/// Whether a run's result is clean: a success that does not use `sorry`.
fn clean(ran: &Value) -> bool {
    ran["success"] == true && ran["uses_sorry"] == false
}

fn assert_never_closed(result: &Value, case: &str) {
    for candidate in result["candidates"].as_array().unwrap() {
        assert_ne!(candidate["verdict"], "closed", "{case}: {candidate}");
        assert!(candidate.get("patch").is_none(), "{case}: {candidate}");
    }
}

/// Both tools on one file, in one server: `lean_try_edit` with [`candidates`], `lean_run_at`
/// with each of [`PROBES`].
fn judged(lean: &mut Lean, project: &Project, text: &str) -> (Value, Vec<Value>) {
    let version = synced(lean, project, text);
    judged_at(lean, project, text, &version)
}

/// [`judged`] on the text already synced at `version`.
fn judged_at(
    lean: &mut Lean,
    project: &Project,
    text: &str,
    version: &Value,
) -> (Value, Vec<Value>) {
    let result = lean.ok(
        "lean_try_edit",
        try_edit(project, PATH, text, candidates(text)),
    );
    let runs = PROBES
        .iter()
        .map(|probe| run(lean, project, version, text, probe))
        .collect();
    (result, runs)
}

#[test]
fn a_sorry_lean_does_not_warn_about_is_never_clean() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    for (case, text) in hiding() {
        let (result, runs) = judged(&mut lean, &project, &text);
        assert_never_closed(&result, case);
        let sorry_counts = &result["candidates"][0]["gate"]["sorry"]["candidate"];
        assert!(sorry_counts.as_u64() >= Some(1), "{case}: {result}");
        for ran in runs {
            assert_eq!(ran["success"], true, "{case}: {ran}");
            assert!(!clean(&ran), "{case}: {ran}");
        }
    }
    lean.finish_without_violations();
}

#[test]
fn a_library_that_turns_sorry_warnings_off_is_no_clean_verdict() {
    let project = Project::fixture();
    project.write("lakefile.toml", QUIET_LAKEFILE);
    let mut lean = Lean::start(&[&project], &[], &[]);
    let text = proof("-- warn.sorry is off in the lakefile", "sorry");
    let (result, runs) = judged(&mut lean, &project, &text);
    assert_never_closed(&result, "leanOptions");
    for ran in runs {
        assert!(!clean(&ran), "{ran}");
    }
    lean.finish_without_violations();
}

#[test]
fn an_answer_of_another_shape_or_none_is_no_clean_verdict() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let redefined = proof(
        "-- fake: print-axioms \"1 : Nat\"\nmacro_rules | `(command| #print axioms $_) => `(#check 1)",
        "exact hq",
    );
    let stopped = format!("{}#exit\n", proof("-- stops", "exact hq"));
    let example = proof("-- an example", "exact hq").replace("theorem t", "example");
    for (case, text, reason) in [
        ("a redefined #print axioms", redefined, "axiomsNotAnswered"),
        (
            "a file that stops at #exit",
            stopped.clone(),
            "axiomsNotAnswered",
        ),
        ("an example, which has no name", example, "axiomsNotAskable"),
    ] {
        let version = synced(&mut lean, &project, &text);
        let mut tried = candidates(&text);
        tried.truncate(1);
        let result = lean.ok("lean_try_edit", try_edit(&project, PATH, &text, tried));
        let candidate = &result["candidates"][0];
        assert_eq!(candidate["verdict"], "failed", "{case}: {result}");
        assert_eq!(candidate["reason"], reason, "{case}: {result}");
        let unconfirmed = &candidate["sorry_unconfirmed"];
        assert_eq!(unconfirmed["reason"], reason, "{case}: {result}");
        assert!(unconfirmed["message"].is_string(), "{case}: {result}");
        let ran = run(&mut lean, &project, &version, &text, PROBES[0]);
        if text == stopped {
            // A run sees the file up to its position only: the #exit after it is not there.
            assert!(clean(&ran), "{case}: {ran}");
            continue;
        }
        assert!(!clean(&ran), "{case}: {ran}");
        assert_eq!(ran["sorry_unconfirmed"]["reason"], reason, "{case}: {ran}");
    }
    // The same proof as a theorem, Lean's axioms confirming it, is clean.
    let theorem = proof("-- a theorem", "exact hq");
    let (result, runs) = judged(&mut lean, &project, &theorem);
    assert_eq!(result["candidates"][0]["verdict"], "closed", "{result}");
    assert!(clean(&runs[0]), "{runs:?}");
    assert_eq!(runs[0].get("sorry_unconfirmed"), None, "{runs:?}");
    lean.finish_without_violations();
}

/// A verdict kept for a text asked again says the same, and costs Lean nothing.
#[test]
fn a_kept_verdict_keeps_its_sorry() {
    if crate::harness::fake_only("counting the messages Lean received") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let (_, text) = hiding().remove(0);
    let version = synced(&mut lean, &project, &text);
    let (result, runs) = judged_at(&mut lean, &project, &text, &version);
    let before = lean.received().len();
    let (again, runs_again) = judged_at(&mut lean, &project, &text, &version);
    assert_eq!(lean.received()[before..], [] as [String; 0]);
    assert_eq!(again["candidates"], result["candidates"]);
    assert_eq!(runs_again, runs);
    assert!(runs.iter().all(|ran| !clean(ran)), "{runs:?}");
    lean.finish_without_violations();
}

/// `#exit` ends Lean's reading of the file: in a candidate it would hide every later error, in a
/// probe every later message. Both are refused before Lean is asked.
#[test]
fn terminal_commands_in_a_candidate_or_a_probe_are_refused() {
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let text = "theorem a : 1 = 1 := by\n  skip\n\ntheorem b : True := nope -- fake: error \"unknown identifier 'nope'\"\n";
    let version = synced(&mut lean, &project, text);
    let before = lean.received().len();
    let refused = lean.fails(
        "lean_try_edit",
        try_edit(
            &project,
            PATH,
            text,
            vec![
                replace((1, 2), (1, 6), "rfl"),
                replace((1, 2), (1, 6), "rfl\n#exit"),
            ],
        ),
        "invalidParams",
    );
    assert_eq!(refused["data"]["reason"], "terminalCommand", "{refused}");
    assert_eq!(refused["data"]["candidate"], 1, "{refused}");
    assert_eq!(refused["data"]["command"], "#exit", "{refused}");
    for (line, character, probe) in [(1, 2, "rfl\n#exit"), (2, 0, "#exit")] {
        let refused = lean.fails(
            "lean_run_at",
            args(
                &project,
                PATH,
                json!({"version": version, "line": line, "character": character, "text": probe}),
            ),
            "invalidParams",
        );
        assert_eq!(refused["data"]["reason"], "terminalCommand", "{refused}");
    }
    if !crate::harness::fake_only("counting the messages Lean received") {
        let asked = &lean.received()[before..];
        assert_eq!(asked, [] as [String; 0], "refused before Lean is asked");
    }
    // Past the file's own #exit, Lean checks nothing: a run or an edit there is refused.
    let stopped = "theorem a : True := trivial\n#exit\ntheorem b : True := by\n  trivial\n";
    let version = synced(&mut lean, &project, stopped);
    let after = lean.fails(
        "lean_run_at",
        args(
            &project,
            PATH,
            json!({"version": version, "line": 3, "character": 2, "text": "trivial"}),
        ),
        "invalidParams",
    );
    assert_eq!(after["data"]["reason"], "afterTerminalCommand", "{after}");
    let edit = try_edit(
        &project,
        PATH,
        stopped,
        vec![replace((3, 2), (3, 9), "exact True.intro")],
    );
    let after = lean.fails("lean_try_edit", edit, "invalidParams");
    assert_eq!(after["data"]["reason"], "afterTerminalCommand", "{after}");
    lean.finish_without_violations();
}

/// Newer Leans print `#print axioms` names as the scope shortens them unless `pp.fullNames` is
/// set (`FAKE_LEAN_PRINT_AXIOMS=short`): inside `namespace N`, an axiom `N.sorryAx` would print
/// as `sorryAx` and Lean's own as `_root_.sorryAx`. The questions set `pp.fullNames`, so a proof
/// that uses the user's axiom, and no `sorry`, closes in either era.
#[test]
fn axioms_read_alike_in_either_era_of_print_axioms() {
    if crate::harness::fake_only("the eras of #print axioms") {
        return;
    }
    let text = proof("namespace N\naxiom sorryAx : False", "exact (sorryAx.elim)");
    for era in ["full", "short"] {
        let project = Project::fixture();
        let mut lean = Lean::start(&[&project], &[], &[("FAKE_LEAN_PRINT_AXIOMS", era)]);
        let (result, runs) = judged(&mut lean, &project, &text);
        assert_eq!(
            result["candidates"][0]["verdict"], "closed",
            "{era}: {result}"
        );
        assert!(clean(&runs[0]), "{era}: {runs:?}");
        lean.finish_without_violations();
    }
}
