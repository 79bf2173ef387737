//! `lean_lock` and `lean_certify` (issue 18): the honest file certifies; each cheat of the suite
//! is rejected with its own reason; `.olean`s are never read; a lock survives a restart and a
//! MAC'd lock cannot be forged; the comparator bundle is pinned.

use serde_json::{Value, json};

use crate::harness::{Lean, Project, args, fake_only};

const CERT: &str = "Fixture/Cert.lean";
const THEOREM: &str = "Cert.main_thm";

const HELPER: &str = "theorem helper_ok (n : Nat) : n + 0 = n := by\n  simp\n";
const MAIN: &str = "theorem main_thm (a b : Nat) (h : a ≤ b) : a ≤ b + 1 := by\n  omega\n";

/// The honest file: `middle` between the helper and the theorem, `main` as the theorem.
fn file(before: &str, middle: &str, main: &str) -> String {
    format!("{before}namespace Cert\n\n{HELPER}\n{middle}{main}\nend Cert\n")
}

fn honest() -> String {
    file("", "", MAIN)
}

/// A project holding the honest file, the server on it, and a lock of the theorem.
fn locked(env: &[(&str, &str)]) -> (Project, Lean, Value) {
    let project = Project::fixture();
    project.write(CERT, &honest());
    let mut lean = Lean::start(&[&project], &[], env);
    let theorems = json!({"theorems": [THEOREM]});
    let lock = lean.ok("lean_lock", args(&project, CERT, theorems))["lock"].clone();
    (project, lean, lock)
}

fn certify(lean: &mut Lean, project: &Project, lock: &Value) -> Value {
    lean.ok("lean_certify", args(project, CERT, json!({"lock": lock})))
}

/// Every failure's reason, file-level first, then the theorem's.
fn reasons(result: &Value) -> Vec<String> {
    let file = result["failures"].as_array().cloned().unwrap_or_default();
    let theorems = result["theorems"].as_array().cloned().unwrap_or_default();
    let of_theorems = theorems
        .iter()
        .flat_map(|t| t["failures"].as_array().cloned().unwrap_or_default());
    file.iter()
        .cloned()
        .chain(of_theorems)
        .map(|f| f["reason"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_honest_file_certifies_with_its_lock() {
    let (project, mut lean, lock) = locked(&[]);
    let theorem = &lock["theorems"][0];
    assert_eq!(theorem["name"], THEOREM, "{lock}");
    assert_eq!(theorem["kind"], "theorem");
    assert_eq!(
        theorem["header"],
        "theorem main_thm (a b : Nat) (h : a ≤ b) : a ≤ b + 1"
    );
    assert!(theorem["type"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(lock["base_sha256"].as_str().map(str::len), Some(64));
    assert!(lock.get("mac").is_none(), "no key, no mac: {lock}");
    let result = certify(&mut lean, &project, &lock);
    assert_eq!(result["certified"], true, "{result}");
    assert_eq!(result["receipt"]["state"], "complete");
    let missing = json!({"theorems": ["Cert.nowhere"]});
    let refused = lean.fails("lean_lock", args(&project, CERT, missing), "invalidParams");
    assert_eq!(refused["data"]["reason"], "theoremMissing", "{refused}");
}

/// Each cheat, the text it writes, and the reasons it must be rejected with.
fn cheats() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let main_with =
        |body: &str| format!("theorem main_thm (a b : Nat) (h : a ≤ b) : a ≤ b + 1 := by\n{body}");
    vec![
        (
            "weakened hypothesis",
            file("", "", &MAIN.replace("(h : a ≤ b)", "(h : a + 1 ≤ b)")),
            vec!["statement_changed"],
        ),
        (
            "changed conclusion",
            file("", "", &MAIN.replace("b + 1 :=", "b + 2 :=")),
            vec!["statement_changed"],
        ),
        (
            "renamed, the old one deleted",
            file("", "", &MAIN.replace("main_thm", "main_thm'")),
            vec!["theorem_missing"],
        ),
        (
            "the statement moved into a variable",
            file(
                "",
                "variable (a b : Nat) (h : a ≤ b)\n",
                "theorem main_thm : a ≤ b + 1 := by\n  omega\n",
            ),
            vec!["statement_changed"],
        ),
        (
            "sorry in a helper lemma",
            file("", "", &main_with("  have := helper_ok a\n  omega\n"))
                .replace("n + 0 = n := by\n  simp", "n + 0 = n := by\n  sorry"),
            vec!["uses_sorry"],
        ),
        (
            "a custom axiom",
            file(
                "",
                "axiom magic (a b : Nat) : a ≤ b + 1\n\n",
                &main_with("  exact magic a b\n"),
            ),
            vec!["forbidden_declaration", "axiom_not_allowed"],
        ),
        (
            "native_decide",
            file("", "", &main_with("  native_decide\n")),
            vec!["native_decide"],
        ),
        (
            "implemented_by",
            file(
                "",
                "def fast (n : Nat) : Nat := n\n\n@[implemented_by fast]\ndef slow (n : Nat) : Nat := n\n\n",
                MAIN,
            ),
            vec!["forbidden_declaration"],
        ),
        (
            // The fake cannot elaborate instances: the directive states the type Lean prints
            // (with pp.all) once the local instance changes what `≤` means.
            "a changed local instance before the theorem",
            file(
                "",
                "local instance weirdLE : LE Nat := ⟨fun _ _ => True⟩\n\n\
                 -- fake: type \"∀ (a b : Nat), @LE.le.{0} Nat Cert.weirdLE a b → @LE.le.{0} Nat Cert.weirdLE a (b + 1)\"\n",
                MAIN,
            ),
            vec!["statement_changed"],
        ),
        (
            "set_option debug.skipKernelTC",
            file("set_option debug.skipKernelTC true\n\n", "", MAIN),
            vec!["forbidden_option"],
        ),
        (
            // As for the instance: the directive states the type the notation gives.
            "notation shadowing the header's meaning",
            file(
                "",
                "local notation:50 x \" ≤ \" y:50 => x = x ∨ y = y\n\n\
                 -- fake: type \"∀ (a b : Nat), a = a ∨ b = b → a = a ∨ b + 1 = b + 1\"\n",
                MAIN,
            ),
            vec!["statement_changed"],
        ),
        (
            // `open` brings a scoped notation into force before the theorem: the header reads
            // the same, Lean elaborates another statement (the directive states its type).
            "open shadowing the header's meaning",
            file(
                "",
                "namespace Evil\ndef weird (_ _ : Nat) : Prop := True\n\
                 scoped infix:50 \" ≤ \" => weird\nend Evil\n\nopen Evil\n\n\
                 -- fake: type \"∀ (a b : Nat), Cert.Evil.weird a b → Cert.Evil.weird a (b + 1)\"\n",
                MAIN,
            ),
            vec!["statement_changed"],
        ),
        (
            // The certifier asks `#print axioms` in the file's own environment: a file that
            // redefines the command could answer for Lean.
            "a macro redefining #print axioms",
            file(
                "",
                "macro_rules | `(#print axioms $_x) => `(#eval 0)\n\n",
                MAIN,
            ),
            vec!["forbidden_declaration"],
        ),
        (
            // The namespace left open at the end of the file: commands appended there resolve
            // `Cert.main_thm` to the shadow `Cert.Cert.main_thm` first, unless asked from the
            // root.
            "a shadow in a namespace left open",
            format!(
                "namespace Cert\n\n{HELPER}\n{}\nnamespace Cert\n\n{MAIN}",
                main_with("  sorry\n")
            ),
            vec!["uses_sorry"],
        ),
        (
            "the theorem wrapped in a namespace",
            file("", "namespace Inner\n", &format!("{MAIN}\nend Inner\n")),
            vec!["theorem_missing"],
        ),
        (
            "an error elsewhere in the file",
            file(
                "",
                "def broken : Nat := \"x\" -- fake: error \"type mismatch\"\n\n",
                MAIN,
            ),
            vec!["file_errors"],
        ),
    ]
}

#[test]
fn each_cheat_is_rejected_with_its_own_reason() {
    if fake_only("the cheat suite's directives") {
        return;
    }
    let cheats = cheats();
    let mut named: Vec<&str> = cheats.iter().map(|(cheat, _, _)| *cheat).collect();
    named.dedup();
    assert!(named.len() >= 14, "the suite has {} cheats", named.len());
    let (project, mut lean, lock) = locked(&[]);
    for (cheat, text, expected) in cheats {
        project.write(CERT, &text);
        let result = certify(&mut lean, &project, &lock);
        assert_eq!(result["certified"], false, "{cheat}: {result}");
        assert_eq!(reasons(&result), expected, "{cheat}: {result}");
    }
    project.write(CERT, &honest());
    let result = certify(&mut lean, &project, &lock);
    assert_eq!(result["certified"], true, "{result}");
}

/// Two cheats real Lean rejects as the fake does, with no directive.
#[test]
fn a_changed_statement_and_a_sorry_in_a_helper_are_rejected() {
    let (project, mut lean, lock) = locked(&[]);
    for (cheat, text, expected) in cheats()
        .into_iter()
        .filter(|(cheat, _, _)| ["weakened hypothesis", "sorry in a helper lemma"].contains(cheat))
    {
        project.write(CERT, &text);
        let result = certify(&mut lean, &project, &lock);
        assert_eq!(result["certified"], false, "{cheat}: {result}");
        assert_eq!(reasons(&result), expected, "{cheat}: {result}");
    }
}

#[test]
fn stale_oleans_are_never_read() {
    if fake_only("junk artifacts the fake never writes") {
        return;
    }
    let (project, mut lean, lock) = locked(&[]);
    // Artifacts that, were they read, would say the theorem is proved (or carries sorry).
    project.write(".lake/build/lib/lean/Fixture/Cert.olean", "junk: sorryAx");
    project.write(
        ".lake/build/lib/lean/Fixture/Cert.ilean",
        "{\"junk\": true}",
    );
    let result = certify(&mut lean, &project, &lock);
    assert_eq!(result["certified"], true, "{result}");
    let (_, sorry, _) = cheats().remove(4);
    project.write(CERT, &sorry);
    let result = certify(&mut lean, &project, &lock);
    assert_eq!(reasons(&result), ["uses_sorry"], "{result}");
}

#[test]
fn a_lock_taken_before_a_restart_certifies_after_it() {
    let (project, lean, lock) = locked(&[]);
    lean.server.finish_clean();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let result = certify(&mut lean, &project, &lock);
    assert_eq!(result["certified"], true, "{result}");
}

#[test]
fn with_a_key_a_forged_or_unsealed_lock_is_refused() {
    let key = [("LEAN_BEAM_LOCK_KEY", "a secret of the harness")];
    let (project, mut lean, lock) = locked(&key);
    assert_eq!(lock["mac"].as_str().map(str::len), Some(64), "{lock}");
    let mut forged = lock.clone();
    forged["theorems"][0]["header"] = json!("theorem main_thm : True");
    let mut unsealed = lock.clone();
    unsealed.as_object_mut().unwrap().remove("mac");
    for bad in [forged, unsealed] {
        let call = args(&project, CERT, json!({"lock": bad}));
        let refused = lean.fails("lean_certify", call, "invalidParams");
        assert_eq!(refused["data"]["reason"], "lockForged", "{refused}");
    }
    assert_eq!(certify(&mut lean, &project, &lock)["certified"], true);
}

#[test]
fn the_bundle_is_what_the_comparator_reads() {
    let (project, mut lean, lock) = locked(&[]);
    let call = args(&project, CERT, json!({"lock": lock, "bundle": true}));
    let result = lean.ok("lean_certify", call);
    assert_eq!(result["certified"], true, "{result}");
    // The transcript shows the root as [root]; so does the result.
    let shown_dir = result["bundle_dir"].as_str().expect("bundle_dir");
    let relative = shown_dir.strip_prefix("[root]/").expect("under the root");
    let sha = lock["base_sha256"].as_str().unwrap();
    assert_eq!(relative, format!(".beam/certify/{}", &sha[..12]));
    let dir = project.root().join(relative);
    let mut shown = String::new();
    for name in [
        "Challenge.lean",
        "Solution.lean",
        "config.json",
        "README.txt",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("a bundle file");
        shown.push_str(&format!("==> {name} <==\n{text}\n"));
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("Solution.lean")).unwrap(),
        honest()
    );
    crate::harness::snapshot("certify_bundle", shown);
}

#[test]
fn a_file_lean_has_not_finished_is_a_stale_snapshot() {
    if fake_only("stale imports told by the fake's watched-file rules") {
        return;
    }
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let uses = "Fixture/Uses.lean";
    let theorems = json!({"theorems": ["quadruple_eq"]});
    let lock = lean.ok("lean_lock", args(&project, uses, theorems))["lock"].clone();
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let basic = project.read("Fixture/Basic.lean");
    project.write(
        "Fixture/Basic.lean",
        &format!("{basic}\ndef extra : Nat := 0\n"),
    );
    // The saved change tells Lean that Uses' imports are out of date.
    lean.ok("lean_sync", args(&project, "Fixture/Basic.lean", json!({})));
    let result = lean.ok("lean_certify", args(&project, uses, json!({"lock": lock})));
    assert_eq!(result["certified"], false, "{result}");
    assert_eq!(reasons(&result), ["stale_snapshot"], "{result}");
    assert_eq!(result["receipt"]["state"], "stale_imports", "{result}");
}

#[test]
fn a_lock_certifies_only_the_file_it_was_taken_of() {
    let (project, mut lean, lock) = locked(&[]);
    assert_eq!(lock["path"], CERT, "{lock}");
    // The same file named another way is the same file.
    let absolute = project.root().join(CERT).display().to_string();
    let call = args(&project, &absolute, json!({"lock": lock}));
    assert_eq!(lean.ok("lean_certify", call)["certified"], true);
    // A copy of it under another name is not.
    let copy = "Fixture/Copy.lean";
    project.write(copy, &honest());
    let call = args(&project, copy, json!({"lock": lock}));
    let refused = lean.fails("lean_certify", call, "invalidParams");
    assert_eq!(refused["data"]["reason"], "lockPathMismatch", "{refused}");
    assert_eq!(refused["data"]["lock_path"], CERT, "{refused}");
}

#[test]
fn a_malformed_lock_is_refused_and_the_server_keeps_serving() {
    let (project, mut lean, lock) = locked(&[]);
    let without = |field: &str| {
        let mut bad = lock.clone();
        bad.as_object_mut().unwrap().remove(field);
        bad
    };
    let theorem_with = |field: &str, value: Value| {
        let mut bad = lock.clone();
        bad["theorems"][0][field] = value;
        bad
    };
    let mut no_theorem = lock.clone();
    no_theorem["theorems"] = json!([]);
    let mut not_a_list = lock.clone();
    not_a_list["theorems"] = json!({"name": THEOREM});
    let mut bad_path = lock.clone();
    bad_path["path"] = json!(7);
    for (what, bad) in [
        ("an empty object", json!({})),
        ("no theorems", without("theorems")),
        ("an empty theorem list", no_theorem),
        ("theorems not a list", not_a_list),
        (
            "a theorem without a type",
            theorem_with("type", Value::Null),
        ),
        (
            "a name that is not a string",
            theorem_with("name", json!(1)),
        ),
        (
            "a kind that is not a string",
            theorem_with("kind", json!(["theorem"])),
        ),
        ("no path", without("path")),
        ("a path that is not a string", bad_path),
    ] {
        let call = args(&project, CERT, json!({"lock": bad}));
        let refused = lean.fails("lean_certify", call, "invalidInput");
        assert_eq!(
            refused["data"]["reason"], "lockMalformed",
            "{what}: {refused}"
        );
        assert_eq!(refused["data"]["path"], "/lock", "{what}: {refused}");
        let message = refused["message"].as_str().unwrap_or_default();
        assert!(message.contains("lean_lock"), "{what}: {message}");
    }
    // A lock that is not an object is refused by the tool's schema.
    let call = args(&project, CERT, json!({"lock": "a lock"}));
    lean.fails("lean_certify", call, "invalidInput");
    assert_eq!(certify(&mut lean, &project, &lock)["certified"], true);
}
