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

/// The certified file: `header`, then the namespace `Cert` with the definitions, `before`,
/// `bounded`, `main` (the theorem `main` and what a cheat puts just before it) and `after`.
#[derive(Clone)]
struct File {
    header: String,
    before: &'static str,
    bounded: &'static str,
    main: &'static str,
    after: &'static str,
}

impl File {
    fn text(&self) -> String {
        let File {
            header,
            before,
            bounded,
            main,
            after,
        } = self;
        format!("{header}namespace Cert\n\n{DEFS}\n{before}{bounded}\n{main}\n{after}end Cert\n")
    }
}

const FILE: File = File {
    header: String::new(),
    before: "",
    bounded: BOUNDED,
    main: MAIN,
    after: "",
};

fn honest() -> String {
    FILE.text()
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

/// A cheat: why it is one, the certified file's text, and what it gets.
struct Cheat {
    why: &'static str,
    text: String,
    expect: Expect,
    /// A module the file imports (`Fixture/CheatLib<n>.lean`, `import Fixture.CheatLib<n>`).
    lib: Option<&'static str>,
    /// Another path to certify than `CERT`.
    path: Option<&'static str>,
    /// The lock edited before it is passed.
    lock: Option<fn(&mut Value)>,
    /// Only this locked theorem is certified (the lock without the other).
    only: Option<&'static str>,
    /// The text to lock first (with `lib` imported too), instead of the honest file.
    base: Option<String>,
    /// What the fake cannot model of this cheat: skipped under the fake, named in its output.
    gap: Option<&'static str>,
}

fn cheat(why: &'static str, text: String, expect: &'static [&'static str]) -> Cheat {
    Cheat {
        why,
        text,
        expect: Expect::Refused(expect),
        lib: None,
        path: None,
        lock: None,
        only: None,
        base: None,
        gap: None,
    }
}

/// `main` in place of the honest theorem `main` (with what goes just before it).
fn main_is(main: &'static str) -> String {
    File { main, ..FILE }.text()
}

/// `after` before the end of the namespace, `main` as the theorem.
fn after_main(main: &'static str, after: &'static str) -> String {
    File {
        main,
        after,
        ..FILE
    }
    .text()
}

const SORRY_MAIN: &str = "theorem main : Goal := by\n  sorry\n";
const REDEFINE_PRINT_AXIOMS: &str =
    "macro_rules | `(command| #print axioms $_) => `(command| #eval 0)\n\n";

fn cheats() -> Vec<Cheat> {
    vec![
        // The proof, or something it uses, is `sorry`: Lean.collectAxioms finds sorryAx.
        cheat("the proof is sorry", main_is(SORRY_MAIN), &["usesSorry"]),
        cheat("admit", main_is("theorem main : Goal := by\n  admit\n"), &["usesSorry"]),
        cheat(
            "sorry in a helper lemma both theorems use",
            edited("n < 6 := by omega", "n < 6 := by sorry"),
            &["usesSorry", "usesSorry"],
        ),
        cheat(
            "sorry in a where helper",
            main_is("theorem main : Goal := fun n h => aux n h\nwhere\n  aux (n : Nat) (h : n < Bound.bound) : n < 6 := sorry\n"),
            &["usesSorry"],
        ),
        Cheat {
            lib: Some("theorem Cert.libHelper (n : Nat) (h : n < 5) : n < 6 := sorry\n"),
            ..cheat(
                "sorry in an imported helper",
                main_is("theorem main : Goal := fun n h => libHelper n h\n"),
                &["usesSorry"],
            )
        },
        cheat(
            "decreasing_by sorry in a definition the proof unfolds",
            main_is(
                "def down (n : Nat) : Nat :=\n  if h : n = 0 then 0 else down (n + 1)\n  decreasing_by sorry\n\n\
                 theorem main : Goal := by\n  intro n h\n  have : down 0 = 0 := by simp [down]\n  exact helper n h\n",
            ),
            &["usesSorry"],
        ),
        cheat(
            "sorry with its warning switched off",
            main_is("set_option warn.sorry false in\ntheorem main : Goal := by\n  sorry\n"),
            &["usesSorry"],
        ),
        cheat(
            "sorry under #guard_msgs",
            main_is("#guard_msgs (drop warning) in\ntheorem main : Goal := by\n  sorry\n"),
            &["usesSorry"],
        ),
        Cheat {
            gap: Some("the fake's axioms do not follow a term macro to the sorry it expands to"),
            ..cheat(
                "a term macro that expands to sorry",
                main_is("macro \"trust_me\" : term => `(sorry)\n\ntheorem main : Goal := trust_me\n"),
                &["usesSorry"],
            )
        },
        Cheat {
            gap: Some("the fake does not model debug.byAsSorry"),
            ..cheat(
                "by blocks elaborated as sorry through a quoted option name",
                main_is("set_option debug.«byAsSorry» true in\ntheorem main : Goal := by\n  intro n h\n  exact helper n h\n"),
                &["usesSorry"],
            )
        },
        cheat(
            "native_decide",
            main_is("theorem main : Goal := by\n  intro n h\n  have : (5 : Nat) < 6 := by native_decide\n  exact helper n h\n"),
            &["nativeDecide"],
        ),
        // Redefining the commands an older certifier appended to the file changes nothing now.
        cheat(
            "macro_rules redefining #print axioms",
            after_main(SORRY_MAIN, REDEFINE_PRINT_AXIOMS),
            &["usesSorry"],
        ),
        cheat(
            "elab_rules redefining #print axioms",
            after_main(SORRY_MAIN, "open Lean Elab Command in\nelab_rules : command | `(#print axioms $_) => pure ()\n\n"),
            &["usesSorry"],
        ),
        cheat(
            "@[macro printAxioms]",
            after_main(SORRY_MAIN, "@[macro Lean.Parser.Command.printAxioms] def quiet : Lean.Macro := fun _ => `(#eval 0)\n\n"),
            &["usesSorry"],
        ),
        Cheat {
            lib: Some(REDEFINE_PRINT_AXIOMS),
            base: Some(honest()),
            ..cheat("#print axioms redefined in an imported module", main_is(SORRY_MAIN), &["usesSorry"])
        },
        cheat(
            "@[macro «in»] answering set_option pp.all in #check",
            after_main(SORRY_MAIN, "@[macro Lean.Parser.Command.«in»] def answer : Lean.Macro := fun _ => `(#eval 0)\n\n"),
            &["usesSorry"],
        ),
        cheat(
            "#check redefined while Goal is weakened",
            edited("def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6", "def Goal : Prop := True")
                .replace(MAIN, "theorem main : Goal := trivial\n\nmacro_rules | `(#check $_) => `(#eval 0)\n"),
            &["statementChanged"],
        ),
        // Axioms are compared by full name.
        cheat(
            "an axiom in the file",
            main_is("axiom magic : False\n\ntheorem main : Goal := magic.elim\n"),
            &["forbiddenDeclaration"],
        ),
        Cheat {
            lib: Some("axiom Cert.magic : False\n"),
            ..cheat("an axiom of False in an imported module", main_is("theorem main : Goal := magic.elim\n"), &["axiomsNotAllowed"])
        },
        Cheat {
            lib: Some("axiom Foo.propext : False\n"),
            ..cheat(
                "Foo.propext : False imported, used inside namespace Foo",
                main_is("end Cert\n\nnamespace Foo\ntheorem inner : Cert.Goal := propext.elim\nend Foo\n\nnamespace Cert\n\ntheorem main : Goal := Foo.inner\n"),
                &["axiomsNotAllowed"],
            )
        },
        Cheat {
            lib: Some("axiom «does not depend on any axioms» : False\n"),
            ..cheat(
                "an axiom named «does not depend on any axioms»",
                main_is("theorem main : Goal := «does not depend on any axioms».elim\n"),
                &["axiomsNotAllowed"],
            )
        },
        cheat(
            "an axiom added by run_cmd (addDecl)",
            main_is(
                "run_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .axiomDecl -- fake: add-decl \"Cert.magic\" axiom\n  { name := `Cert.magic, levelParams := [], type := .const ``False [], isUnsafe := false }\n\n\
                 theorem main : Goal := magic.elim\n",
            ),
            &["axiomsNotAllowed"],
        ),
        // What the kernel never checked.
        cheat(
            "set_option debug.skipKernelTC",
            File { before: "set_option debug.skipKernelTC true\n\n", ..FILE }.text(),
            &["forbiddenOption"],
        ),
        Cheat {
            gap: Some("the fake's add-decl constant has no type, so its closure differs too"),
            ..cheat(
            "a theorem added by addDecl under debug.«skipKernelTC»",
            main_is(
                "set_option debug.«skipKernelTC» true in\nrun_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .thmDecl -- fake: add-decl \"Cert.main\" theorem \"Cert.Goal\"\n  { name := `Cert.main, levelParams := [], type := .const `Cert.Goal [], value := .const ``True.intro [] }\n",
            ),
            &["replayFailed"],
        )},
        Cheat {
            lib: Some(
                "def Cert.Five : Prop := ∀ n : Nat, n < 5 → n < 6\n\nset_option debug.«skipKernelTC» true in\nrun_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .thmDecl -- fake: add-decl \"Cert.libHelper\" theorem \"Cert.Five\"\n  { name := `Cert.libHelper, levelParams := [], type := .const `Cert.Five [], value := .const ``True.intro [] }\n",
            ),
            ..cheat(
                "an imported helper added by addDecl under debug.«skipKernelTC»",
                main_is("theorem main : Goal := fun n h => libHelper n h\n"),
                &["replayFailed"],
            )
        },
        cheat(
            "set_option debug.byAsSorry",
            File { before: "set_option debug.byAsSorry true\n\n", ..FILE }.text(),
            &["forbiddenOption"],
        ),
        cheat(
            "implemented_by",
            File { after: "def fast (n : Nat) : Nat := n\n\n@[implemented_by fast]\ndef slow (n : Nat) : Nat := n\n\n", ..FILE }.text(),
            &["forbiddenDeclaration"],
        ),
        cheat(
            "extern",
            File { after: "@[extern \"lean_cert_bound\"]\ndef cBound (n : Nat) : Nat := n\n\n", ..FILE }.text(),
            &["forbiddenDeclaration"],
        ),
        cheat(
            "unsafe",
            File { after: "unsafe def peek (n : Nat) : Nat := n\n\n", ..FILE }.text(),
            &["forbiddenDeclaration"],
        ),
        // The statement's meaning: its closure (definitions, instances, inductives it names).
        cheat(
            "def Goal's body changed",
            edited("def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6", "def Goal : Prop := True")
                .replace(MAIN, "theorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        cheat(
            "Goal made an abbrev of another body",
            edited("def Goal : Prop := ∀ n : Nat, n < Bound.bound → n < 6", "abbrev Goal : Prop := True")
                .replace(MAIN, "theorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        cheat(
            "a named instance's body changed",
            edited("instance bound5 : Bound := ⟨5⟩", "instance bound5 : Bound := ⟨0⟩"),
            &["statementChanged", "statementChanged"],
        ),
        Cheat {
            only: Some("Cert.bounded"),
            gap: Some("the fake's closure does not count `local` commands"),
            ..cheat(
                "a local instance before the theorem",
                File { before: "local instance bound0 : Bound := ⟨0⟩\n\n", ..FILE }.text(),
                &["statementChanged"],
            )
        },
        Cheat {
            only: Some("Cert.bounded"),
            ..cheat(
                "a higher-priority instance before the theorem",
                File { before: "instance (priority := high) bound0 : Bound := ⟨0⟩\n\n", ..FILE }.text(),
                &["statementChanged"],
            )
        },
        Cheat {
            only: Some("Cert.bounded"),
            ..cheat(
                "notation that changes what < means",
                File { before: "notation a \" < \" b => a = a ∧ b = b\n\n", ..FILE }.text(),
                &["statementChanged"],
            )
        },
        cheat(
            "notation that makes Goal another term",
            main_is("notation \"Goal\" => True\n\ntheorem main : Goal := trivial\n"),
            &["statementChanged"],
        ),
        Cheat {
            only: Some("Cert.bounded"),
            gap: Some("the fake's closure does not count `scoped` commands"),
            ..cheat(
                "open brings a scoped notation into force",
                File {
                    before: "namespace Evil\ndef weird (_ _ : Nat) : Prop := True\nscoped infix:50 \" < \" => weird\nend Evil\n\nopen Evil\n\n",
                    ..FILE
                }
                .text(),
                &["statementChanged"],
            )
        },
        cheat(
            "the hypothesis moved into a variable",
            File {
                bounded: "variable (n : Nat) (h : n < Bound.bound)\ntheorem bounded : n < 6 := by omega\n",
                ..FILE
            }
            .text(),
            &["statementChanged"],
        ),
        cheat(
            "a weakened hypothesis",
            File { bounded: "theorem bounded (n : Nat) (h : n < 3) : n < 6 := by omega\n", ..FILE }.text(),
            &["statementChanged"],
        ),
        cheat(
            "a changed conclusion",
            File { bounded: "theorem bounded (n : Nat) (h : n < Bound.bound) : n < 7 := by omega\n", ..FILE }.text(),
            &["statementChanged"],
        ),
        // Which theorem: full names, this module's own.
        cheat(
            "the theorem renamed",
            main_is("theorem main' : Goal := by\n  intro n h\n  exact helper n h\n"),
            &["theoremMissing"],
        ),
        cheat(
            "the theorem wrapped in a namespace",
            main_is("namespace Inner\ntheorem main : Goal := by\n  intro n h\n  exact helper n h\nend Inner\n"),
            &["theoremMissing"],
        ),
        Cheat {
            lib: Some("theorem Cert.main : True := trivial\n"),
            ..cheat("the theorem moved to an imported module", main_is(""), &["theoremMissing"])
        },
        cheat(
            "a def in place of the theorem",
            main_is("def main : Goal := by\n  intro n h\n  exact helper n h\n"),
            &["notATheorem"],
        ),
        cheat(
            "an opaque constant in place of the theorem",
            main_is("instance : Nonempty Goal := ⟨fun n h => helper n h⟩\n\nopaque main : Goal\n"),
            &["notATheorem"],
        ),
        cheat(
            "the theorem after #exit",
            main_is("#exit\n\ntheorem main : Goal := by\n  intro n h\n  exact helper n h\n"),
            &["theoremMissing"],
        ),
        cheat(
            "a namespace left open holds an honest shadow",
            format!("namespace Cert\n\n{DEFS}\n{BOUNDED}\n{SORRY_MAIN}\nnamespace Cert\n\n{MAIN}"),
            &["usesSorry"],
        ),
        cheat(
            "the theorem re-declared honestly after end",
            format!(
                "{}\ntheorem main : Cert.Goal := by\n  intro n h\n  exact Cert.helper n h\n",
                main_is(SORRY_MAIN)
            ),
            &["usesSorry"],
        ),
        cheat(
            "an error elsewhere in the file",
            File { after: "def broken : Nat := \"x\" -- fake: error \"type mismatch\"\n\n", ..FILE }.text(),
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
            ..cheat("an edited lock's closure hash (no key)", honest(), &["statementChanged"])
        },
        Cheat {
            lock: Some(|lock| lock["theorems"][1]["components"] = json!(["Cert", "helper"])),
            expect: Expect::Error("lockMalformed"),
            ..cheat("an edited lock naming another theorem under the same name", honest(), &[])
        },
        Cheat {
            lock: Some(|lock| lock["toolchain"] = json!("leanprover/lean4:v4.9.0")),
            ..cheat("an edited lock's toolchain (no key)", honest(), &["toolchainChanged"])
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
    let control = |why, text, names| Control { why, text, names };
    vec![
        control("the honest file", honest(), &LOCKED),
        control(
            "an honest classical proof under open Classical",
            main_is(
                "open Classical in\ntheorem main : Goal := fun n h =>\n  Classical.byContradiction fun k => k (helper n h)\n",
            ),
            &["Cert.main"],
        ),
        control(
            "set_option maxHeartbeats 400000 in theorem main",
            main_is(
                "set_option maxHeartbeats 400000 in\ntheorem main : Goal := by\n  intro n h\n  exact helper n h\n",
            ),
            &["Cert.main"],
        ),
        control(
            "theorem «main»",
            main_is("theorem «main» : Goal := by\n  intro n h\n  exact helper n h\n"),
            &["main", "Cert.«main»"],
        ),
        control(
            "a theorem after mutual … end in a namespace",
            main_is(
                "mutual\n  def isEven : Nat → Bool\n    | 0 => true\n    | n + 1 => isOdd n\n  def isOdd : Nat → Bool\n    | 0 => false\n    | n + 1 => isEven n\nend\n\n\
                 theorem main : Goal := by\n  intro n h\n  exact helper n h\n",
            ),
            &["main"],
        ),
        control(
            "a theorem in nested namespaces, locked by its short name",
            main_is(
                "namespace Deep.Er\ntheorem main : Cert.Goal := by\n  intro n h\n  exact helper n h\nend Deep.Er\n",
            ),
            &["main"],
        ),
        control(
            "an honest where helper",
            main_is(
                "theorem main : Goal := fun n h => aux n h\nwhere\n  aux (n : Nat) (h : n < Bound.bound) : n < 6 := helper n h\n",
            ),
            &["Cert.main"],
        ),
        control(
            "a macro redefining #print axioms beside an honest proof",
            after_main(MAIN, REDEFINE_PRINT_AXIOMS),
            &["Cert.main", "Cert.bounded"],
        ),
        control(
            "an honest decreasing_by",
            main_is(
                "def down (n : Nat) : Nat :=\n  if h : n = 0 then 0 else down (n - 1)\n  decreasing_by omega\n\n\
                 theorem main : Goal := by\n  intro n h\n  exact helper n h\n",
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
    let modelled = cheats.iter().filter(|c| c.gap.is_none()).count();
    assert!(
        modelled >= 40,
        "the suite has {modelled} cheats the fake plays"
    );
    let project = Project::fixture();
    project.write(CERT, &honest());
    let mut lean = Lean::start(&[&project], &[], &[]);
    let shared = lock(&mut lean, &project, &LOCKED);
    let mut wrong = Vec::new();
    for (n, cheat) in cheats.into_iter().enumerate() {
        if let Some(gap) = cheat.gap {
            println!("not played by the fake: {} ({gap})", cheat.why);
            continue;
        }
        let mut header = String::new();
        if let Some(lib) = cheat.lib {
            let module = format!("CheatLib{n}");
            project.write(&format!("Fixture/{module}.lean"), lib);
            header = format!("import Fixture.{module}\n");
        }
        let mut lock_of = shared.clone();
        if let Some(base) = &cheat.base {
            project.write(CERT, &format!("{header}{base}"));
            lock_of = lock(&mut lean, &project, &LOCKED);
        }
        if let Some(only) = cheat.only {
            let theorems = lock_of["theorems"].as_array().cloned().unwrap_or_default();
            lock_of["theorems"] = theorems.into_iter().filter(|t| t["name"] == only).collect();
        }
        if let Some(edit) = cheat.lock {
            edit(&mut lock_of);
        }
        let path = cheat.path.unwrap_or(CERT);
        project.write(path, &format!("{header}{}", cheat.text));
        let call = args(&project, path, json!({"lock": lock_of}));
        let response = lean.call("lean_certify", call);
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
        // Axioms by full name: under `open Classical`, Lean prints `choice`; it is
        // `Classical.choice`, which the allowlist holds.
        let axioms = &result["theorems"][0]["axioms"];
        if control.why.contains("open Classical")
            && !axioms.to_string().contains("\"Classical.choice\"")
        {
            wrong.push(format!("{}: axioms {axioms}", control.why));
        }
    }
    assert!(
        wrong.is_empty(),
        "controls that did not certify:\n{}",
        wrong.join("\n")
    );
}
