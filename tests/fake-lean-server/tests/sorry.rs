//! What Lean says of `sorry`, by the options in force (README "Scoped commands and options",
//! "Axioms and elaborated types"): `warn.sorry` from the file, a scoped prefix or the lakefile;
//! `pp.sorrySource` and `pp.all` rewording the warning; `#guard_msgs (drop …)`; no warning where
//! only a lemma uses `sorry`, nor where the declaration has an error; `#print axioms` under
//! `pp.fullNames`, redefined, or in the newer short form; `#exit` ending the file.

mod support;

use serde_json::Value;
use support::{Client, Opts, Project};

/// The messages of `text`, written at `rel` (on disk, so Lake sets it up as a module) and opened.
fn messages(c: &mut Client, rel: &str, text: &str) -> Vec<String> {
    c.project.write(rel, text);
    let uri = c.project.uri(rel);
    c.open_text(&uri, text, 1, Some("never"));
    Client::last_diagnostics(&c.sync(&uri, 1))
        .iter()
        .filter(|d| d.get("isSilent") != Some(&Value::Bool(true)))
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect()
}

const PROOF: &str = "theorem t (p : Prop) (hp : p) : p := by\n  sorry\n";

#[test]
fn the_sorry_warning_follows_the_options_in_force() {
    let mut c = Client::ready(Opts::default());
    let plain = messages(&mut c, "Fixture/A.lean", PROOF);
    assert_eq!(plain, ["declaration uses `sorry`"]);
    for (n, hidden) in [
        format!("set_option warn.sorry false\n{PROOF}"),
        format!("set_option warn.sorry false in\n{PROOF}"),
        format!("set_option warn.sorry false in {PROOF}"),
        format!("#guard_msgs (drop warning) in\n{PROOF}"),
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(
            messages(&mut c, &format!("Fixture/H{n}.lean"), hidden),
            [] as [&str; 0],
            "{hidden}"
        );
    }
    let later = format!("{PROOF}set_option warn.sorry false\n");
    assert_eq!(
        messages(&mut c, "Fixture/Later.lean", &later),
        ["declaration uses `sorry`"],
        "an option set after the declaration"
    );
    let sourced = messages(
        &mut c,
        "Fixture/Sourced.lean",
        &format!("set_option pp.sorrySource true\n{PROOF}"),
    );
    assert_eq!(sourced, ["declaration uses `sorry `«Fixture.Sourced:3:2»`"]);
    let explicit = messages(
        &mut c,
        "Fixture/All.lean",
        &format!("set_option pp.all true in\n{PROOF}"),
    );
    assert_eq!(explicit, ["declaration uses `sorryAx (p) Bool.false`"]);
    let checked = messages(
        &mut c,
        "Fixture/Checked.lean",
        &format!("/-- warning: declaration uses `sorry` -/\n#guard_msgs in\n{PROOF}"),
    );
    assert_eq!(checked, [] as [&str; 0], "a matching #guard_msgs");
    let mismatch = messages(
        &mut c,
        "Fixture/Mismatch.lean",
        &format!("/-- info: other -/\n#guard_msgs in\n{PROOF}"),
    );
    assert_eq!(mismatch.len(), 2, "{mismatch:?}");
    assert!(mismatch[1].starts_with("❌️ Docstring on `#guard_msgs` does not match"));
    let user = "theorem helper (p : Prop) (hp : p) : p := sorry\n\
                theorem u (p : Prop) (hp : p) : p := helper p hp\n#print axioms u\n";
    assert_eq!(
        messages(&mut c, "Fixture/User.lean", user),
        [
            "declaration uses `sorry`",
            "'u' depends on axioms: [sorryAx]"
        ],
        "only where sorry is written; the axioms see through"
    );
    let failing = "theorem f (p q : Prop) (hp : p) : p ∧ q := by\n  constructor\n  · sorry\n\
                   #print axioms f\n";
    let said = messages(&mut c, "Fixture/Failing.lean", failing);
    assert!(said[0].starts_with("unsolved goals"), "{said:?}");
    assert_eq!(
        said[1..],
        ["'f' depends on axioms: [sorryAx]"],
        "no warning beside an error"
    );
}

#[test]
fn a_file_set_up_without_sorry_warnings_says_nothing() {
    let project = Project::new();
    project.write(
        "lakefile.toml",
        "name = \"fixture\"\n\n[[lean_lib]]\nname = \"Fixture\"\nleanOptions = {\"warn.sorry\" = false}\n",
    );
    let mut c = Client::start(project, Opts::default());
    c.handshake(serde_json::json!({}));
    assert_eq!(
        messages(&mut c, "Fixture/Quiet.lean", PROOF),
        [] as [&str; 0]
    );
    let loud = format!("set_option warn.sorry true\n{PROOF}");
    assert_eq!(
        messages(&mut c, "Fixture/Loud.lean", &loud),
        ["declaration uses `sorry`"]
    );
}

#[test]
fn print_axioms_names_in_full_or_as_the_scope_shortens_them() {
    let text = "namespace Foo\naxiom propext : True\ntheorem t : True := by\n  have := Classical.choice\n  exact Foo.propext\n\
                #print axioms t\nset_option pp.fullNames true in #print axioms _root_.Foo.t\nend Foo\n";
    let mut full = Client::ready(Opts::default());
    assert_eq!(
        messages(&mut full, "Fixture/Names.lean", text),
        [
            "'Foo.t' depends on axioms: [Classical.choice, Foo.propext, Quot.sound, propext]",
            "'Foo.t' depends on axioms: [Classical.choice, Foo.propext, Quot.sound, propext]"
        ]
    );
    let mut short = Client::ready(Opts::default().env("FAKE_LEAN_PRINT_AXIOMS", "short"));
    assert_eq!(
        messages(&mut short, "Fixture/Names.lean", text),
        [
            "'Foo.t' depends on axioms: [Classical.choice, propext, Quot.sound, _root_.propext]",
            "'Foo.t' depends on axioms: [Classical.choice, Foo.propext, Quot.sound, propext]"
        ]
    );
    let redefined = "theorem t : True := trivial\n\
                     -- fake: print-axioms \"1 : Nat\"\n\
                     macro_rules | `(command| #print axioms $_) => `(#check 1)\n#print axioms t\n";
    assert_eq!(
        messages(&mut full, "Fixture/Redefined.lean", redefined),
        ["1 : Nat"]
    );
}

#[test]
fn exit_ends_the_file_unless_it_is_scoped() {
    let mut c = Client::ready(Opts::default());
    let text = "theorem a : True := trivial\n#exit\ntheorem b : True := by\n  trivial -- fake: error \"nope\"\n#print axioms a\n";
    assert_eq!(
        messages(&mut c, "Fixture/Exit.lean", text),
        ["using 'exit' to interrupt Lean"]
    );
    let scoped = "theorem a : True := trivial\nset_option pp.all true in #exit\ntheorem b : True := nope -- fake: error \"unknown identifier 'nope'\"\n";
    assert_eq!(
        messages(&mut c, "Fixture/Scoped.lean", scoped),
        [
            "using 'exit' to interrupt Lean",
            "unknown identifier 'nope'"
        ]
    );
    let uri = c.project.uri("Fixture/Exit.lean");
    let goal = c.call("$/lean/plainGoal", Client::at(&uri, 3, 4));
    assert_eq!(goal, Value::Null, "nothing after #exit is elaborated");
}
