//! The cheat suite of `lean_certify` (issue 26): each cheat, a few ordinary lines of Lean that
//! would make a file look proved, is refused with its own reason; each honest control locks
//! and certifies. Certification asks a separate checker about the built module, so what a
//! file's own macros, elaborators or messages say never counts.
//!
//! One server and one lock serve every cheat (the lock of the honest file below); an import a
//! cheat needs is a module of its own, so the certified file's header changes with it and Lean
//! sets it up afresh.

use serde_json::{Value, json};

use crate::certify::{CERT, reasons};
use crate::harness::{Lean, Project, args, fake_only};

/// The locked file's declarations before its theorems.
const DEFS: &str = "class Bound where
  bound : Nat

instance bound5 : Bound := ⟨5⟩

def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6

theorem helper (n : Nat) (h : n < 5) : n < 6 := by omega
";

/// The two locked theorems: `bounded` states its hypothesis itself, `main` through `Goal`.
const BOUNDED: &str = "theorem bounded (n : Nat) (h : n < Bound.bound) : n < 6 :=
  helper n h
";
const MAIN: &str = "theorem main : Goal := by
  intro n h
  exact helper n h
";

const LOCKED: [&str; 2] = ["Cert.bounded", "Cert.main"];

/// The file: `header`, then the namespace with the definitions, `before`, `bounded` and `main`.
fn cert(header: &str, before: &str, main: &str) -> String {
    format!("{header}namespace Cert\n\n{DEFS}\n{before}{BOUNDED}\n{main}\nend Cert\n")
}

fn honest() -> String {
    cert("", "", MAIN)
}

/// The honest file with `from` replaced by `to`.
fn edited(from: &str, to: &str) -> String {
    let text = honest();
    assert!(text.contains(from), "{from:?} is not in the honest file");
    text.replace(from, to)
}

/// What a cheat must get.
enum Expect {
    /// `certified: false` with exactly these reasons, file-level first.
    Refused(&'static [&'static str]),
    /// The call's error, with this `data.reason`.
    Error(&'static str),
}

/// A cheat: why it is one, the certified file's text, an imported module it needs
/// (`Fixture/CheatLib<n>.lean`, imported as `Fixture.CheatLib<n>`), what must be certified
/// (`None`: `CERT`; else another path), and what it gets.
struct Cheat {
    why: &'static str,
    text: String,
    lib: Option<&'static str>,
    path: Option<&'static str>,
    lock: Option<fn(&mut Value)>,
    expect: Expect,
}

fn cheat(why: &'static str, text: String, expect: &'static [&'static str]) -> Cheat {
    Cheat {
        why,
        text,
        lib: None,
        path: None,
        lock: None,
        expect: Expect::Refused(expect),
    }
}

/// A cheat whose certified file imports `lib` (a module of its own) with `main` as its proof.
fn imported(
    why: &'static str,
    lib: &'static str,
    main: &'static str,
    expect: &'static [&'static str],
) -> Cheat {
    Cheat {
        lib: Some(lib),
        ..cheat(why, cert("", "", main), expect)
    }
}

const SORRY_MAIN: &str = "theorem main : Goal := by\n  sorry\n";

fn cheats() -> Vec<Cheat> {
    let with_main = |before: &str, main: &str| cert("", before, main);
    vec![
        // The proof, or something it uses, is `sorry`: Lean.collectAxioms finds sorryAx.
        cheat(
            "the proof is sorry",
            with_main("", SORRY_MAIN),
            &["usesSorry"],
        ),
        cheat(
            "admit",
            with_main("", "theorem main : Goal := by\n  admit\n"),
            &["usesSorry"],
        ),
        cheat(
            "sorry in a helper lemma the proof uses",
            edited("n < 6 := by omega", "n < 6 := by sorry"),
            &["usesSorry", "usesSorry"],
        ),
        cheat(
            "sorry in a where helper",
            with_main(
                "",
                "theorem main : Goal := fun n h => aux n h\nwhere\n  aux (n : Nat) (h : n < Bound.bound) : n < 6 := sorry\n",
            ),
            &["usesSorry"],
        ),
        imported(
            "sorry in an imported helper",
            "theorem Cert.libHelper (n : Nat) (h : n < 5) : n < 6 := sorry\n",
            "theorem main : Goal := fun n h => libHelper n h\n",
            &["usesSorry"],
        ),
        cheat(
            "decreasing_by sorry in a definition the proof unfolds",
            with_main(
                "def down : Nat → Nat\n  | 0 => 0\n  | n + 1 => down (n + 2)\ndecreasing_by sorry\n\n",
                "theorem main : Goal := by\n  intro n h\n  have : down 0 = 0 := by simp [down]\n  exact helper n h\n",
            ),
            &["usesSorry"],
        ),
        cheat(
            "sorry with its warning switched off",
            with_main("set_option warn.sorry false in\n", SORRY_MAIN),
            &["usesSorry"],
        ),
        cheat(
            "sorry under #guard_msgs",
            with_main(
                "/-- warning: declaration uses 'sorry' -/\n#guard_msgs in\n",
                SORRY_MAIN,
            ),
            &["usesSorry"],
        ),
        cheat(
            "a macro that expands to sorry",
            with_main(
                "macro \"trust_me\" : term => `(sorry)\n\n",
                "theorem main : Goal := trust_me\n",
            ),
            &["usesSorry"],
        ),
        cheat(
            "by blocks elaborated as sorry through a quoted option name",
            with_main("set_option debug.«byAsSorry» true in\n", MAIN),
            &["usesSorry"],
        ),
        cheat(
            "native_decide",
            with_main(
                "",
                "theorem main : Goal := by\n  intro n h\n  have : (5 : Nat) < 6 := by native_decide\n  exact helper n h\n",
            ),
            &["nativeDecide"],
        ),
        // Redefining the commands an older certifier asked with changes nothing now.
        cheat(
            "macro_rules redefining #print axioms",
            with_main(
                "macro_rules | `(command| #print axioms $_) => `(command| #eval 0)\n\n",
                SORRY_MAIN,
            ),
            &["usesSorry"],
        ),
        cheat(
            "elab_rules redefining #print axioms",
            with_main(
                "open Lean Elab Command in\nelab_rules : command | `(#print axioms $_) => pure ()\n\n",
                SORRY_MAIN,
            ),
            &["usesSorry"],
        ),
        cheat(
            "@[macro printAxioms]",
            with_main(
                "@[macro Lean.Parser.Command.printAxioms] def quiet : Lean.Macro := fun _ => `(#eval 0)\n\n",
                SORRY_MAIN,
            ),
            &["usesSorry"],
        ),
        imported(
            "#print axioms redefined in an imported module",
            "macro_rules | `(command| #print axioms $_) => `(command| #eval 0)\n",
            SORRY_MAIN,
            &["usesSorry"],
        ),
        cheat(
            "@[macro «in»] answering set_option pp.all in #check",
            with_main(
                "@[macro Lean.Parser.Command.«in»] def answer : Lean.Macro := fun _ => `(#eval 0)\n\n",
                SORRY_MAIN,
            ),
            &["usesSorry"],
        ),
        cheat(
            "#check redefined while Goal is weakened",
            edited(
                "def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6",
                "macro_rules | `(#check $_) => `(#eval 0)\n\ndef Goal : Prop := True",
            )
            .replace(MAIN, "theorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        // Axioms are compared by full name.
        cheat(
            "an axiom in the file",
            with_main(
                "axiom magic : False\n\n",
                "theorem main : Goal := magic.elim\n",
            ),
            &["forbiddenDeclaration"],
        ),
        imported(
            "an axiom of False in an imported module",
            "axiom Cert.magic : False\n",
            "theorem main : Goal := magic.elim\n",
            &["axiomsNotAllowed"],
        ),
        imported(
            "Foo.propext : False imported, used inside namespace Foo",
            "axiom Foo.propext : False\n",
            "namespace Foo\ntheorem inner : Cert.Goal := propext.elim\nend Foo\ntheorem main : Goal := Foo.inner\n",
            &["axiomsNotAllowed"],
        ),
        imported(
            "an axiom named «does not depend on any axioms»",
            "axiom «does not depend on any axioms» : False\n",
            "theorem main : Goal := «does not depend on any axioms».elim\n",
            &["axiomsNotAllowed"],
        ),
        cheat(
            "an axiom added by run_cmd (addDecl)",
            with_main(
                "run_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .axiomDecl\n  { name := `Cert.magic, levelParams := [], type := .const ``False [], isUnsafe := false }\n\n",
                "theorem main : Goal := magic.elim\n",
            ),
            &["axiomsNotAllowed"],
        ),
        // What the kernel never checked.
        cheat(
            "set_option debug.skipKernelTC",
            with_main("set_option debug.skipKernelTC true\n\n", MAIN),
            &["forbiddenOption"],
        ),
        cheat(
            "a theorem added by addDecl under debug.«skipKernelTC»",
            with_main(
                "set_option debug.«skipKernelTC» true in\nrun_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .thmDecl\n  { name := `Cert.main, levelParams := [], type := .const `Cert.Goal [], value := .const ``True.intro [] }\n",
                "",
            ),
            &["replayFailed"],
        ),
        imported(
            "an imported helper added by addDecl under debug.«skipKernelTC»",
            "def Cert.Five : Prop := ∀ n : Nat, n < 5 → n < 6\nset_option debug.«skipKernelTC» true in\nrun_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .thmDecl\n  { name := `Cert.libHelper, levelParams := [], type := .const `Cert.Five [], value := .const ``True.intro [] }\n",
            "theorem main : Goal := fun n h => libHelper n h\n",
            &["replayFailed"],
        ),
        cheat(
            "set_option debug.byAsSorry",
            with_main("set_option debug.byAsSorry true\n\n", MAIN),
            &["forbiddenOption"],
        ),
        cheat(
            "implemented_by",
            with_main(
                "def fast (n : Nat) : Nat := n\n\n@[implemented_by fast]\ndef slow (n : Nat) : Nat := n\n\n",
                MAIN,
            ),
            &["forbiddenDeclaration"],
        ),
        cheat(
            "extern",
            with_main(
                "@[extern \"lean_cert_bound\"]\ndef cBound (n : Nat) : Nat := n\n\n",
                MAIN,
            ),
            &["forbiddenDeclaration"],
        ),
        cheat(
            "unsafe",
            with_main("unsafe def peek (n : Nat) : Nat := n\n\n", MAIN),
            &["forbiddenDeclaration"],
        ),
        // The statement's meaning: its closure (definitions, instances, inductives it names).
        cheat(
            "def Goal's body changed",
            edited(
                "def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6",
                "def Goal : Prop := True",
            )
            .replace(MAIN, "theorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        cheat(
            "Goal made an abbrev of another body",
            edited(
                "def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6",
                "abbrev Goal : Prop := True",
            )
            .replace(MAIN, "theorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        cheat(
            "a named instance's body changed",
            edited(
                "instance bound5 : Bound := ⟨5⟩",
                "instance bound5 : Bound := ⟨0⟩",
            ),
            &["statementChanged", "statementChanged"],
        ),
        cheat(
            "a local instance before the theorem",
            cert("", "local instance bound0 : Bound := ⟨0⟩\n\n", MAIN),
            &["statementChanged"],
        ),
        cheat(
            "a higher-priority instance before the theorem",
            cert(
                "",
                "instance (priority := high) bound0 : Bound := ⟨0⟩\n\n",
                MAIN,
            ),
            &["statementChanged"],
        ),
        cheat(
            "notation that changes what < means",
            cert(
                "",
                "local notation:50 a \" < \" b:50 => a = a ∧ b = b\n\n",
                MAIN,
            ),
            &["statementChanged"],
        ),
        cheat(
            "notation that makes Goal another term",
            cert(
                "",
                "local notation \"Goal\" => True\n\n",
                "theorem main : Goal := trivial\n",
            ),
            &["statementChanged"],
        ),
        cheat(
            "open brings a scoped notation into force",
            cert(
                "",
                "namespace Evil\ndef weird (_ _ : Nat) : Prop := True\nscoped infix:50 \" < \" => weird\nend Evil\n\nopen Evil\n\n",
                MAIN,
            ),
            &["statementChanged"],
        ),
        cheat(
            "the hypothesis moved into a variable",
            edited(
                BOUNDED,
                "variable (n : Nat) (h : n < Bound.bound)\ntheorem bounded : n < 6 := by omega\n",
            ),
            &["statementChanged"],
        ),
        cheat(
            "a weakened hypothesis",
            edited(
                "(h : n < Bound.bound) : n < 6 :=\n  helper n h",
                "(h : n < 3) : n < 6 :=\n  by omega",
            ),
            &["statementChanged"],
        ),
        cheat(
            "a changed conclusion",
            edited(
                "(h : n < Bound.bound) : n < 6 :=\n  helper n h",
                "(h : n < Bound.bound) : n < 7 :=\n  by omega",
            ),
            &["statementChanged"],
        ),
        // Which theorem: full names, this module's own.
        cheat(
            "the theorem renamed",
            with_main(
                "",
                "theorem main' : Goal := by\n  intro n h\n  exact helper n h\n",
            ),
            &["theoremMissing"],
        ),
        cheat(
            "the theorem wrapped in a namespace",
            with_main("namespace Inner\n", &format!("{MAIN}end Inner\n")),
            &["theoremMissing"],
        ),
        imported(
            "the theorem moved to an imported module",
            "namespace Cert\ndef Goal' : Prop := True\nend Cert\ntheorem Cert.main : True := trivial\n",
            "",
            &["theoremMissing"],
        ),
        cheat(
            "a def in place of the theorem",
            with_main(
                "",
                "def main : Goal := by\n  intro n h\n  exact helper n h\n",
            ),
            &["notATheorem"],
        ),
        cheat(
            "an opaque constant in place of the theorem",
            with_main(
                "instance : Nonempty Goal := ⟨fun n h => helper n h⟩\n",
                "opaque main : Goal\n",
            ),
            &["notATheorem"],
        ),
        cheat(
            "the theorem after #exit",
            with_main("#exit\n\n", MAIN),
            &["theoremMissing"],
        ),
        Cheat {
            why: "a namespace left open holds an honest shadow",
            text: format!(
                "namespace Cert\n\n{DEFS}\n{BOUNDED}\n{SORRY_MAIN}\nnamespace Cert\n\n{MAIN}"
            ),
            ..cheat("", String::new(), &["usesSorry"])
        },
        Cheat {
            why: "the theorem re-declared honestly after end",
            text: format!(
                "{}\ntheorem main : Cert.Goal := by\n  intro n h\n  exact Cert.helper n h\n",
                cert("", "", SORRY_MAIN)
            ),
            ..cheat("", String::new(), &["usesSorry"])
        },
        cheat(
            "an error elsewhere in the file",
            with_main(
                "def broken : Nat := \"x\" -- fake: error \"type mismatch\"\n\n",
                MAIN,
            ),
            &["fileErrors"],
        ),
        // The lock and the file it names.
        Cheat {
            path: Some("Fixture/CertCopy.lean"),
            expect: Expect::Error("lockPathMismatch"),
            ..cheat("the file renamed", honest(), &[])
        },
        Cheat {
            path: Some("Fixture/Moved/Cert.lean"),
            expect: Expect::Error("lockPathMismatch"),
            ..cheat("the file moved", honest(), &[])
        },
        Cheat {
            lock: Some(|lock| lock["theorems"][1]["closure_hash"] = json!("0".repeat(64))),
            ..cheat(
                "an edited lock's closure hash (no key)",
                honest(),
                &["statementChanged"],
            )
        },
        Cheat {
            lock: Some(|lock| lock["toolchain"] = json!("leanprover/lean4:v4.9.0")),
            ..cheat(
                "an edited lock's toolchain (no key)",
                honest(),
                &["toolchainChanged"],
            )
        },
    ]
}

/// An honest control: its text, the names to lock.
struct Control {
    why: &'static str,
    text: String,
    names: &'static [&'static str],
}

fn controls() -> Vec<Control> {
    let with_main = |before: &str, main: &str| cert("", before, main);
    let control = |why, text, names| Control { why, text, names };
    vec![
        control("the honest file", honest(), &LOCKED),
        control(
            "an honest classical proof under open Classical",
            with_main(
                "open Classical in\n",
                "theorem main : Goal := by\n  intro n h\n  rcases em (n < 6) with k | k\n  · exact k\n  · exact absurd (helper n h) k\n",
            ),
            &["Cert.main"],
        ),
        control(
            "set_option maxHeartbeats 400000 in theorem main",
            with_main("set_option maxHeartbeats 400000 in\n", MAIN),
            &["Cert.main"],
        ),
        control(
            "theorem «main»",
            with_main("", &MAIN.replace("theorem main", "theorem «main»")),
            &["main", "Cert.«main»"],
        ),
        control(
            "a theorem after mutual … end in a namespace",
            with_main(
                "mutual\n  def isEven : Nat → Bool\n    | 0 => true\n    | n + 1 => isOdd n\n  def isOdd : Nat → Bool\n    | 0 => false\n    | n + 1 => isEven n\nend\n\n",
                MAIN,
            ),
            &["main"],
        ),
        control(
            "a theorem in nested namespaces, locked by its short name",
            with_main(
                "namespace Deep.Er\n",
                &format!("{}end Deep.Er\n", MAIN.replace("Goal", "Cert.Goal")),
            ),
            &["main"],
        ),
        control(
            "an honest where helper",
            with_main(
                "",
                "theorem main : Goal := fun n h => aux n h\nwhere\n  aux (n : Nat) (h : n < Bound.bound) : n < 6 := helper n h\n",
            ),
            &["Cert.main"],
        ),
        control(
            "a macro redefining #print axioms beside an honest proof",
            with_main(
                "macro_rules | `(command| #print axioms $_) => `(command| #eval 0)\n\n",
                MAIN,
            ),
            &["Cert.main", "Cert.bounded"],
        ),
        control(
            "an honest decreasing_by",
            with_main(
                "def down : Nat → Nat\n  | 0 => 0\n  | n + 1 => down n\ndecreasing_by omega\n\n",
                MAIN,
            ),
            &["Cert.main"],
        ),
    ]
}

fn lock(lean: &mut Lean, project: &Project, names: &[&str]) -> Value {
    let theorems = json!({"theorems": names});
    lean.ok("lean_lock", args(project, CERT, theorems))["lock"].clone()
}

#[test]
fn each_cheat_is_refused_with_its_own_reason() {
    if fake_only("the cheat suite's fake checker and directives") {
        return;
    }
    let cheats = cheats();
    assert!(cheats.len() >= 40, "the suite has {} cheats", cheats.len());
    let project = Project::fixture();
    project.write(CERT, &honest());
    let mut lean = Lean::start(&[&project], &[], &[]);
    let locked = lock(&mut lean, &project, &LOCKED);
    let mut wrong = Vec::new();
    for (n, cheat) in cheats.into_iter().enumerate() {
        let mut text = cheat.text.clone();
        if let Some(lib) = cheat.lib {
            let module = format!("CheatLib{n}");
            project.write(&format!("Fixture/{module}.lean"), lib);
            text = format!("import Fixture.{module}\n{text}");
        }
        let path = cheat.path.unwrap_or(CERT);
        project.write(path, &text);
        let mut lock = locked.clone();
        if let Some(edit) = cheat.lock {
            edit(&mut lock);
        }
        let response = lean.call("lean_certify", args(&project, path, json!({"lock": lock})));
        let result = &response["result"]["structuredContent"];
        let got = match (&cheat.expect, response["result"]["isError"] == true) {
            (Expect::Refused(expected), false) => {
                let got = reasons(result);
                (result["certified"] == false && got == *expected)
                    .then_some(())
                    .ok_or(format!("{got:?}, certified {}", result["certified"]))
            }
            (Expect::Error(reason), true) => (result["data"]["reason"] == *reason)
                .then_some(())
                .ok_or(format!("error {}", result["data"]["reason"])),
            (_, _) => Err(format!("{result}")),
        };
        if let Err(got) = got {
            wrong.push(format!("{}: got {got}", cheat.why));
        }
    }
    assert!(
        wrong.is_empty(),
        "cheats not refused as expected:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_honest_control_locks_and_certifies() {
    let controls = controls();
    assert!(
        controls.len() >= 8,
        "the suite has {} controls",
        controls.len()
    );
    let project = Project::fixture();
    let mut lean = Lean::start(&[&project], &[], &[]);
    let mut wrong = Vec::new();
    for control in controls {
        project.write(CERT, &control.text);
        let response = lean.call(
            "lean_lock",
            args(&project, CERT, json!({"theorems": control.names})),
        );
        if response["result"]["isError"] == true {
            wrong.push(format!(
                "{}: lock refused: {}",
                control.why, response["result"]["structuredContent"]
            ));
            continue;
        }
        let locked = response["result"]["structuredContent"]["lock"].clone();
        let result = lean.ok(
            "lean_certify",
            args(&project, CERT, json!({"lock": locked})),
        );
        if result["certified"] != true {
            wrong.push(format!("{}: {:?}", control.why, reasons(&result)));
        }
    }
    assert!(
        wrong.is_empty(),
        "controls that did not certify:\n{}",
        wrong.join("\n")
    );
}
