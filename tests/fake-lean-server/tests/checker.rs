//! `fake-lake env lean --run <Checker.lean> <request>`: the certification checker's contract
//! (`src/lean/certify/checker/CONTRACT.md`) as the fake answers it, from what `lake build` last
//! compiled (README "The certification checker").

mod support;

use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};
use support::Project;

/// The real checker's source: the fake answers for it by its first line.
const CHECKER: &str = include_str!("../../../src/lean/certify/checker/Checker.lean");
const SOURCE: &str = ".lake/beam/certify/Checker.lean";
const REQUEST: &str = ".lake/beam/certify/requests/r.json";

fn lake(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(p, args, env).output().unwrap()
}

fn command(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(support::bin());
    cmd.args(args).current_dir(&p.root);
    for (k, _) in std::env::vars() {
        if k.starts_with("FAKE_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("FAKE_LEAN_TRACE", &p.trace);
    cmd.envs(env.iter().copied());
    cmd
}

fn build(p: &Project, module: &str) {
    let o = lake(p, &["build", &format!("+{module}")], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn request(p: &Project, module: &str, names: &[&str], replay: &[&str]) {
    let names: Vec<Vec<&str>> = names.iter().map(|n| n.split('.').collect()).collect();
    p.write(SOURCE, CHECKER);
    p.write(
        REQUEST,
        &json!({"checker": 1, "module": module, "names": names, "list_theorems": true,
                "replay_modules": replay})
        .to_string(),
    );
}

fn run(p: &Project, env: &[(&str, &str)]) -> Output {
    lake(p, &["env", "lean", "--run", SOURCE, REQUEST], env)
}

/// The checker's answer to a request about `names` of `module` (built first).
fn check(p: &Project, module: &str, names: &[&str], replay: &[&str]) -> Value {
    build(p, module);
    request(p, module, names, replay);
    let o = run(p, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let answer = last_json(&o).unwrap();
    assert_contract_shape(&answer);
    answer
}

/// The answer's shape as CONTRACT.md "Response" states it (the fake's Lean contract check covers
/// LSP traffic only, so the checker's answer is held to its contract here, on every answer).
fn assert_contract_shape(a: &Value) {
    let strings = |v: &Value| v.as_array().is_some_and(|x| x.iter().all(Value::is_string));
    let sorted = |v: &Value| {
        let x: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        x.windows(2).all(|w| w[0] <= w[1])
    };
    assert_eq!(a["checker"], 1, "{a}");
    assert!(
        a["lean_version"].is_string() && a["module"].is_string(),
        "{a}"
    );
    if let Some(declared) = a.get("declared") {
        let declared = declared.as_array().expect("declared is an array");
        assert!(
            declared.len() <= 1000 && declared.iter().all(strings),
            "{a}"
        );
    }
    for t in a["theorems"].as_array().expect("theorems") {
        assert!(strings(&t["name"]) && t["printed"].is_string(), "{t}");
        if t["found"] == false {
            assert_eq!(t.as_object().unwrap().len(), 3, "{t}");
            continue;
        }
        assert_eq!(t["found"], true, "{t}");
        let kinds = [
            "theorem",
            "axiom",
            "def",
            "opaque",
            "quot",
            "inductive",
            "ctor",
            "rec",
            "other",
        ];
        assert!(
            kinds.contains(&t["kind"].as_str().unwrap_or_default()),
            "{t}"
        );
        assert!(t["module"].is_string() || t["module"].is_null(), "{t}");
        assert!(t["type"].is_string(), "{t}");
        let closure = &t["closure"];
        assert!(
            closure["hash"]
                .as_str()
                .is_some_and(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
        );
        assert!(closure["count"].as_u64().is_some_and(|n| n >= 1), "{t}");
        assert!(strings(&closure["own"]) && sorted(&closure["own"]), "{t}");
        assert!(closure["own"].as_array().unwrap().len() <= 200);
        assert!(strings(&t["axioms"]) && sorted(&t["axioms"]), "{t}");
        let replay = &t["replay"];
        match replay["ok"].as_bool() {
            Some(true) => assert!(replay["checked"].is_u64(), "{t}"),
            Some(false) => assert!(replay["constant"].is_string() && replay["error"].is_string()),
            None => panic!("replay without ok: {t}"),
        }
    }
}

/// The fixture's `Fixture.Basic`, built, and a request about one of its theorems.
fn basic_request(p: &Project) {
    build(p, "Fixture.Basic");
    request(
        p,
        "Fixture.Basic",
        &["Fixture.double_eq"],
        &["Fixture.Basic"],
    );
}

/// The JSON of a run's last line on stdout.
fn last_json(o: &Output) -> Result<Value, serde_json::Error> {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(out.lines().last().unwrap_or_default())
}

fn theorem<'a>(answer: &'a Value, printed: &str) -> &'a Value {
    answer["theorems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["printed"] == printed)
        .unwrap_or_else(|| panic!("{printed} not in {answer}"))
}

#[test]
fn names_are_the_ones_lean_declares() {
    let p = Project::new();
    p.write(
        "Fixture/Names.lean",
        "namespace Fixture\n\
         theorem «main» : True := trivial\n\
         set_option maxHeartbeats 400000 in\n\
         theorem big : True := trivial\n\
         mutual\n\
         def even : Nat → Bool\n  | 0 => true\n  | n+1 => odd n\n\
         def odd : Nat → Bool\n  | 0 => false\n  | n+1 => even n\n\
         end\n\
         theorem after : True := trivial\n\
         theorem _root_.top : True := trivial\n\
         private theorem hidden : True := trivial\n\
         namespace Inner\n\
         theorem deep : True := trivial\n\
         end Inner\n\
         end Fixture\n",
    );
    let names = [
        "Fixture.main",
        "Fixture.big",
        "Fixture.after",
        "top",
        "Fixture.Inner.deep",
        "main",
        "Fixture.hidden",
        "Fixture.even",
    ];
    let a = check(&p, "Fixture.Names", &names, &["Fixture.Names"]);
    assert_eq!(a["checker"], 1);
    assert_eq!(a["module"], "Fixture.Names");
    assert_eq!(a["lean_version"], "4.24.0");
    for n in &names[..5] {
        let t = theorem(&a, n);
        assert_eq!(t["found"], true, "{n}: {t}");
        assert_eq!(t["kind"], "theorem", "{n}");
        assert_eq!(t["module"], "Fixture.Names", "{n}");
        assert_eq!(t["replay"]["ok"], true, "{n}");
    }
    assert_eq!(theorem(&a, "main")["found"], false);
    assert_eq!(theorem(&a, "Fixture.hidden")["found"], false);
    assert_eq!(theorem(&a, "Fixture.even")["kind"], "def");
    assert_eq!(
        theorem(&a, "Fixture.main")["name"],
        json!(["Fixture", "main"])
    );
    assert_eq!(
        a["declared"],
        json!([
            ["Fixture", "Inner", "deep"],
            ["Fixture", "after"],
            ["Fixture", "big"],
            ["Fixture", "main"],
            ["top"]
        ])
    );
}

#[test]
fn a_name_that_needs_quoting_is_printed_quoted() {
    let p = Project::new();
    p.write(
        "Fixture/Quoted.lean",
        "axiom «does not depend on any axioms» : False\n\
         theorem t : False := «does not depend on any axioms»\n",
    );
    let a = check(&p, "Fixture.Quoted", &["t"], &["Fixture.Quoted"]);
    assert_eq!(
        theorem(&a, "t")["axioms"],
        json!(["«does not depend on any axioms»"])
    );
}

#[test]
fn the_closure_holds_definitions_values_and_never_proofs() {
    let p = Project::new();
    let file = "Fixture/Goal.lean";
    let text = |goal: &str, proof: &str| {
        format!(
            "namespace Fixture\ndef Goal : Prop := {goal}\ntheorem main : Goal := {proof}\nend Fixture\n"
        )
    };
    let hash = |a: &Value| theorem(a, "Fixture.main")["closure"]["hash"].clone();
    p.write(file, &text("2 + 2 = 4", "rfl"));
    let honest = check(&p, "Fixture.Goal", &["Fixture.main"], &["Fixture.Goal"]);
    let main = theorem(&honest, "Fixture.main");
    assert_eq!(main["type"], "Goal");
    assert_eq!(
        main["closure"]["own"],
        json!(["Fixture.Goal", "Fixture.main"])
    );
    // Another proof: the same statement.
    p.write(file, &text("2 + 2 = 4", "by decide"));
    let reproved = check(&p, "Fixture.Goal", &["Fixture.main"], &["Fixture.Goal"]);
    assert_eq!(hash(&reproved), hash(&honest));
    // Another body for Goal: the printed type is the same, the statement is not.
    p.write(file, &text("True", "trivial"));
    let changed = check(&p, "Fixture.Goal", &["Fixture.main"], &["Fixture.Goal"]);
    assert_eq!(theorem(&changed, "Fixture.main")["type"], "Goal");
    assert_ne!(hash(&changed), hash(&honest));
}

#[test]
fn notations_and_instances_in_scope_are_part_of_the_statement() {
    let p = Project::new();
    let file = "Fixture/Notation.lean";
    let text = |n: &str| format!("notation \"five\" => {n}\ntheorem t : 2 + 3 = five := rfl\n");
    p.write(file, &text("5"));
    let a = check(&p, "Fixture.Notation", &["t"], &["Fixture.Notation"]);
    p.write(file, &text("4"));
    let b = check(&p, "Fixture.Notation", &["t"], &["Fixture.Notation"]);
    assert_eq!(theorem(&a, "t")["type"], theorem(&b, "t")["type"]);
    assert_ne!(
        theorem(&a, "t")["closure"]["hash"],
        theorem(&b, "t")["closure"]["hash"]
    );
}

#[test]
fn axioms_are_collected_by_full_name() {
    let p = Project::new();
    p.write(
        "Fixture/Ax.lean",
        "namespace Foo\n\
         axiom propext : False\n\
         theorem uses : False := propext\n\
         end Foo\n\
         theorem holes : 1 = 1 := sorry\n\
         theorem native : 10 < 11 := by native_decide\n\
         theorem classical (p : Prop) : p ∨ ¬p := Classical.em p\n\
         theorem clean : 1 = 1 := rfl\n\
         theorem via : 1 = 1 := holes\n",
    );
    let names = [
        "Foo.uses",
        "holes",
        "native",
        "classical",
        "clean",
        "via",
        "Foo.propext",
    ];
    let a = check(&p, "Fixture.Ax", &names, &["Fixture.Ax"]);
    let axioms = |n: &str| theorem(&a, n)["axioms"].clone();
    assert_eq!(axioms("Foo.uses"), json!(["Foo.propext"]));
    assert_eq!(axioms("holes"), json!(["sorryAx"]));
    assert_eq!(axioms("native"), json!(["Lean.ofReduceBool"]));
    assert_eq!(
        axioms("classical"),
        json!(["Classical.choice", "Quot.sound", "propext"])
    );
    assert_eq!(axioms("clean"), json!([]));
    assert_eq!(axioms("via"), json!(["sorryAx"]));
    assert_eq!(theorem(&a, "Foo.propext")["kind"], "axiom");
}

#[test]
fn partial_opaque_extern_and_unsafe_are_what_lean_makes_them() {
    let p = Project::new();
    p.write(
        "Fixture/Kinds.lean",
        "partial def loop (n : Nat) : Nat := loop (n + 1) + sorry\n\
         opaque secret : Nat\n\
         @[extern \"lean_fake\"] opaque ext : Nat → Nat\n\
         def impl (n : Nat) : Nat := n\n\
         @[implemented_by impl] def spec (n : Nat) : Nat := n\n\
         unsafe def danger : Nat := 0\n\
         theorem p1 : loop 0 = loop 0 := rfl\n\
         theorem p2 : danger = danger := rfl\n",
    );
    let names = [
        "loop",
        "loop._unsafe_rec",
        "secret",
        "ext",
        "spec",
        "danger",
        "p1",
        "p2",
    ];
    let a = check(&p, "Fixture.Kinds", &names, &["Fixture.Kinds"]);
    let kind = |n: &str| theorem(&a, n)["kind"].clone();
    assert_eq!(kind("loop"), "opaque");
    assert_eq!(kind("loop._unsafe_rec"), "def");
    assert_eq!(kind("secret"), "opaque");
    assert_eq!(kind("ext"), "opaque");
    assert_eq!(kind("spec"), "def");
    // The opaque `loop`'s value is an inhabitant: the `sorry` lives in `loop._unsafe_rec`.
    assert_eq!(theorem(&a, "p1")["axioms"], json!([]));
    assert_eq!(theorem(&a, "p1")["replay"]["ok"], true);
    let p2 = &theorem(&a, "p2")["replay"];
    assert_eq!(p2["ok"], false, "{p2}");
    assert_eq!(p2["constant"], "p2");
    assert_eq!(
        p2["error"],
        "(kernel) invalid declaration, it uses unsafe declaration 'danger'"
    );
}

#[test]
fn replay_fails_for_what_the_kernel_never_checked() {
    let p = Project::new();
    p.write(
        "Fixture/Lemmas.lean",
        "set_option debug.skipKernelTC true\ntheorem bad : 1 = 2 := rfl\n",
    );
    p.write(
        "Fixture/Main.lean",
        "import Fixture.Lemmas\n\
         set_option debug.«skipKernelTC» true in\n\
         theorem quoted : 2 = 3 := rfl\n\
         theorem main : 1 = 2 := bad\n\
         theorem honest : 1 = 1 := rfl\n\
         run_cmd pure () -- fake: add-decl \"sneaky\" theorem unchecked\n\
         theorem viaSneaky : 1 = 1 := sneaky\n",
    );
    let names = ["quoted", "main", "honest", "viaSneaky"];
    let both = ["Fixture.Main", "Fixture.Lemmas"];
    let a = check(&p, "Fixture.Main", &names, &both);
    let replay = |n: &str| theorem(&a, n)["replay"].clone();
    assert_eq!(replay("quoted")["ok"], false);
    assert_eq!(replay("quoted")["constant"], "quoted");
    assert_eq!(replay("main")["ok"], false);
    assert_eq!(replay("main")["constant"], "bad");
    assert!(
        replay("main")["error"]
            .as_str()
            .unwrap()
            .starts_with("(kernel) declaration type mismatch, 'bad'")
    );
    assert_eq!(replay("honest"), json!({"ok": true, "checked": 1}));
    assert_eq!(replay("viaSneaky")["constant"], "sneaky");
    // A module outside `replay_modules` is trusted, as a dependency package is.
    let trusted = check(&p, "Fixture.Main", &["main"], &["Fixture.Main"]);
    assert_eq!(
        theorem(&trusted, "main")["replay"],
        json!({"ok": true, "checked": 1})
    );
}

#[test]
fn constants_come_from_declarations_and_added_ones_never_from_what_a_file_prints() {
    let p = Project::new();
    p.write(
        "Fixture/Cheat.lean",
        "macro_rules | `(command| #print axioms $_) => `(command| #check 0)\n\
         -- fake: print-axioms \"'main' does not depend on any axioms\"\n\
         run_cmd pure () -- fake: add-decl \"Fixture.cheat\" axiom\n\
         theorem main : False := Fixture.cheat\n\
         #print axioms main\n",
    );
    let a = check(
        &p,
        "Fixture.Cheat",
        &["main", "Fixture.cheat"],
        &["Fixture.Cheat"],
    );
    assert_eq!(theorem(&a, "main")["axioms"], json!(["Fixture.cheat"]));
    assert_eq!(theorem(&a, "Fixture.cheat")["kind"], "axiom");
}

#[test]
fn the_answer_is_about_the_built_text_not_the_current_one() {
    let p = Project::new();
    let file = "Fixture/Built.lean";
    p.write(file, "theorem t : 1 = 1 := sorry\n");
    let a = check(&p, "Fixture.Built", &["t"], &["Fixture.Built"]);
    assert_eq!(theorem(&a, "t")["axioms"], json!(["sorryAx"]));
    // Fixed on disk but not built: importModules loads the old .olean.
    p.write(file, "theorem t : 1 = 1 := rfl\n");
    request(&p, "Fixture.Built", &["t"], &["Fixture.Built"]);
    let stale = last_json(&run(&p, &[])).unwrap();
    assert_eq!(theorem(&stale, "t")["axioms"], json!(["sorryAx"]));
    // A module never built: importModules fails, as `lean --run` reports an uncaught exception.
    p.write("Fixture/Never.lean", "theorem n : True := trivial\n");
    request(&p, "Fixture.Never", &["n"], &["Fixture.Never"]);
    let o = run(&p, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("uncaught exception: object file '")
            && err.contains("Fixture/Never.olean' of module Fixture.Never does not exist"),
        "{err}"
    );
}

#[test]
fn the_faults_fail_as_lean_fails() {
    let p = Project::new();
    basic_request(&p);
    let o = run(&p, &[("FAKE_LEAN_CHECKER", "compile-error")]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("{SOURCE}:")) && out.contains(": error: "),
        "{out}"
    );

    let o = run(&p, &[("FAKE_LEAN_CHECKER", "crash")]);
    assert_eq!(o.status.code(), None, "killed by a signal");
    assert!(String::from_utf8_lossy(&o.stderr).contains("Stack overflow detected. Aborting."));

    let o = run(&p, &[("FAKE_LEAN_CHECKER", "garbage")]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        last_json(&o).is_err(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    let o = run(&p, &[("FAKE_LEAN_CHECKER", "old-protocol")]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(last_json(&o).unwrap()["checker"], 0);

    let o = run(&p, &[]);
    assert_eq!(o.status.code(), Some(0));
    let events: Vec<Value> = p
        .trace_lines()
        .into_iter()
        .filter(|l| l["event"] == "checker")
        .collect();
    assert_eq!(events.len(), 5);
    assert_eq!(events[0]["fault"], "compile-error");
    assert_eq!(events[4]["fault"], Value::Null);
    assert_eq!(events[4]["file"], SOURCE);
}

#[test]
fn a_hanging_checker_waits_until_killed() {
    let p = Project::new();
    basic_request(&p);
    let mut child = command(
        &p,
        &["env", "lean", "--run", SOURCE, REQUEST],
        &[("FAKE_LEAN_CHECKER", "hang")],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    // Synchronised on the trace: the run is recorded before it hangs.
    support::eventually("the hanging checker's trace event", || {
        p.trace_lines().iter().any(|l| l["fault"] == "hang")
    });
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None);
}

#[test]
fn any_other_file_does_not_elaborate() {
    let p = Project::new();
    p.write("Other.lean", "def main : IO Unit := pure ()\n");
    let o = lake(&p, &["env", "lean", "--run", "Other.lean"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("Other.lean:1:0: error: "));
}

#[test]
fn imported_helpers_opens_and_exit_are_read_as_lean_reads_them() {
    let p = Project::new();
    p.write(
        "Fixture/Helpers.lean",
        "namespace Helpers\ntheorem lemma1 : 1 = 1 := by\n  exact helper\nwhere helper : 1 = 1 := sorry\nend Helpers\n",
    );
    p.write(
        "Fixture/UsesHelpers.lean",
        "import Fixture.Helpers\n\
         open Helpers\n\
         theorem viaImport : 1 = 1 := lemma1\n\
         open Classical in\n\
         theorem viaOpen (p : Prop) : p ∨ ¬p := em p\n\
         namespace Left\n\
         theorem open1 : True := trivial\n\
         #exit\n\
         theorem hidden : True := trivial\n",
    );
    let names = ["viaImport", "viaOpen", "Left.open1", "Left.hidden"];
    let replay = ["Fixture.UsesHelpers", "Fixture.Helpers"];
    let a = check(&p, "Fixture.UsesHelpers", &names, &replay);
    assert_eq!(theorem(&a, "viaImport")["axioms"], json!(["sorryAx"]));
    assert_eq!(
        theorem(&a, "viaImport")["replay"],
        json!({"ok": true, "checked": 2})
    );
    assert!(
        theorem(&a, "viaOpen")["axioms"]
            .as_array()
            .unwrap()
            .contains(&json!("Classical.choice"))
    );
    assert_eq!(theorem(&a, "Left.open1")["found"], true);
    assert_eq!(theorem(&a, "Left.hidden")["found"], false);
}

#[test]
fn a_module_left_in_lakes_artifact_cache_is_not_on_the_search_path() {
    let p = Project::new();
    let cache = p.dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    p.write("Fixture/Cached.lean", "theorem c : 1 = 1 := sorry\n");
    request(&p, "Fixture.Cached", &["c"], &["Fixture.Cached"]);
    for (mode, found) in [("fetch", false), ("restore-all", true)] {
        let env = [
            ("FAKE_LAKE_ARTIFACT_CACHE", mode),
            ("LAKE_CACHE_DIR", cache),
        ];
        let _ = std::fs::remove_dir_all(p.root.join(".lake/build"));
        let o = lake(&p, &["build", "+Fixture.Cached"], &env);
        assert!(String::from_utf8_lossy(&o.stderr).contains("Fetched Fixture.Cached"));
        let o = run(&p, &env);
        match found {
            true => assert_eq!(
                theorem(&last_json(&o).unwrap(), "c")["axioms"],
                json!(["sorryAx"])
            ),
            false => assert!(
                String::from_utf8_lossy(&o.stderr)
                    .contains("of module Fixture.Cached does not exist"),
                "{mode}"
            ),
        }
    }
}

#[test]
fn a_module_importing_a_replayed_one_is_replayed_too() {
    let p = Project::new();
    p.write("Fixture/A.lean", "theorem a : 1 = 1 := rfl\n");
    p.write(
        "Fixture/B.lean",
        "import Fixture.A\nset_option debug.skipKernelTC true in\ntheorem b : 1 = 1 := a\n",
    );
    p.write(
        "Fixture/M.lean",
        "import Fixture.B\ntheorem m : 1 = 1 := b\n",
    );
    // B is not listed, but it imports A, which is: the base environment cannot hold B.
    let a = check(&p, "Fixture.M", &["m"], &["Fixture.M", "Fixture.A"]);
    let replay = &theorem(&a, "m")["replay"];
    assert_eq!(replay["ok"], false, "{replay}");
    assert_eq!(replay["constant"], "b");
    assert_eq!(theorem(&a, "m")["closure"]["own"], json!(["m"]));
}

#[test]
fn abbrevs_and_named_instances_are_statements_by_their_bodies() {
    let p = Project::new();
    let file = "Fixture/Bodies.lean";
    // `Val.v` elaborates to `@Val.v myVal`: the instance is in the statement's closure.
    let text = |abbrev: &str, inst: &str| {
        format!(
            "abbrev Target : Nat := {abbrev}\n\
             class Val where\n  v : Nat\n\
             instance myVal : Val := ⟨{inst}⟩\n\
             theorem t : Val.v < Target := by decide\n\
             namespace N\ntheorem t : True := trivial\nend N\n\
             theorem N.t' : True := trivial\n"
        )
    };
    let hash = |a: &Value| theorem(a, "t")["closure"]["hash"].clone();
    p.write(file, &text("10", "5"));
    let names = ["t", "N.t", "N.t'", "myVal", "Target"];
    let a = check(&p, "Fixture.Bodies", &names, &["Fixture.Bodies"]);
    assert_eq!(theorem(&a, "Target")["kind"], "def");
    assert_eq!(theorem(&a, "myVal")["kind"], "def");
    assert_eq!(theorem(&a, "N.t")["found"], true);
    assert_eq!(theorem(&a, "N.t'")["found"], true);
    p.write(file, &text("11", "5"));
    let b = check(&p, "Fixture.Bodies", &names, &["Fixture.Bodies"]);
    assert_ne!(
        hash(&a),
        hash(&b),
        "the abbrev's body is part of the statement"
    );
    p.write(file, &text("10", "6"));
    let c = check(&p, "Fixture.Bodies", &names, &["Fixture.Bodies"]);
    assert_ne!(
        hash(&a),
        hash(&c),
        "the instance's body is part of the statement"
    );
}
