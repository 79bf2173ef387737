//! The real certification checker (`src/lean/certify/checker/Checker.lean`) on real Lean: wherever
//! a `lake` exists (`LEAN_BEAM_TEST_LAKE`, else `lake` on `PATH`), it is compiled and run with
//! `lake env lean --run` on the fixture's honest theorem and on three cheats, and its answer is
//! read by the contract (`CONTRACT.md`). Without a `lake` the test says so by name and passes:
//! the fake's own suite (`tests/fake-lean-server/tests/checker.rs`) pins the contract there.
//! (`LEAN_BEAM_TEST_LAKE=<fake-lake>` runs it over the fake, whose `add-decl` directive stands for
//! the `run_cmd` it cannot run.)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::Project;

const CHECKER: &str = include_str!("../../src/lean/certify/checker/Checker.lean");
const SOURCE: &str = ".lake/beam/certify/Checker.lean";

/// The real `lake`: the lane's, else the first `lake` on `PATH`.
fn real_lake() -> Option<PathBuf> {
    crate::harness::real_lake().or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join("lake"))
            .find(|p| p.is_file())
    })
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
    std::fs::write(path, text).expect("write");
}

/// `lake build +module`, then the checker's answer about `names` of it.
fn answer(lake: &Path, root: &Path, module: &str, names: &[&[&str]]) -> Value {
    let built = Command::new(lake)
        .args(["build", &format!("+{module}")])
        .current_dir(root)
        .output()
        .expect("run lake build");
    assert!(
        built.status.success(),
        "lake build +{module}: {}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    let request = format!(".lake/beam/certify/requests/{module}.json");
    write(
        root,
        &request,
        &json!({"checker": 1, "module": module, "names": names, "list_theorems": true,
                "replay_modules": [module, "Fixture.Basic"]})
        .to_string(),
    );
    let run = Command::new(lake)
        .args(["env", "lean", "--run", SOURCE, &request])
        .current_dir(root)
        .output()
        .expect("run lake env lean --run");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the checker failed on {module}: {out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let last = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let answer: Value = serde_json::from_str(last).expect("the answer is one JSON line");
    assert_eq!(answer["checker"], 1, "{answer}");
    assert_eq!(answer["module"], module);
    answer
}

#[test]
fn the_real_checker_answers_for_the_honest_theorem_and_refuses_three_cheats() {
    let Some(lake) = real_lake() else {
        println!(
            "skipped: no lake (the_real_checker_answers_for_the_honest_theorem_and_refuses_three_cheats)"
        );
        return;
    };
    let project = Project::fixture();
    let root = project.root();
    write(root, SOURCE, CHECKER);
    write(
        root,
        "Fixture/CheatSorry.lean",
        "namespace Cheat\ntheorem main : 1 = 2 := sorry\nend Cheat\n",
    );
    write(
        root,
        "Fixture/CheatAxiom.lean",
        "namespace Cheat\naxiom propext : False\ntheorem main : 1 = 2 := propext.elim\nend Cheat\n",
    );
    write(
        root,
        "Fixture/CheatKernel.lean",
        "import Lean\nopen Lean in\nset_option debug.skipKernelTC true in\n\
         run_cmd Lean.Elab.Command.liftCoreM <| Lean.addDecl <| .thmDecl -- fake: add-decl \"Cheat.bad\"\n  \
         { name := `Cheat.bad, levelParams := [], type := mkConst ``False,\n    \
         value := mkConst ``True.intro }\n\
         theorem Cheat.main : False := Cheat.bad\n",
    );

    let honest = answer(&lake, root, "Fixture.Basic", &[&["Fixture", "double_eq"]]);
    let t = &honest["theorems"][0];
    assert_eq!(t["found"], true, "{t}");
    assert_eq!(t["kind"], "theorem");
    assert_eq!(t["module"], "Fixture.Basic");
    let axioms: Vec<&str> = t["axioms"]
        .as_array()
        .expect("axioms")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        axioms
            .iter()
            .all(|a| ["propext", "Classical.choice", "Quot.sound"].contains(a)),
        "{axioms:?}"
    );
    assert_eq!(t["replay"]["ok"], true, "{t}");
    assert!(
        t["closure"]["own"]
            .as_array()
            .is_some_and(|own| own.contains(&json!("Fixture.double")))
    );
    assert!(
        honest["declared"]
            .as_array()
            .is_some_and(|d| d.contains(&json!(["Fixture", "double_eq"])))
    );

    let sorry = answer(&lake, root, "Fixture.CheatSorry", &[&["Cheat", "main"]]);
    assert_eq!(sorry["theorems"][0]["axioms"], json!(["sorryAx"]));

    let axiom = answer(&lake, root, "Fixture.CheatAxiom", &[&["Cheat", "main"]]);
    assert_eq!(axiom["theorems"][0]["axioms"], json!(["Cheat.propext"]));

    let kernel = answer(&lake, root, "Fixture.CheatKernel", &[&["Cheat", "main"]]);
    let replay = &kernel["theorems"][0]["replay"];
    assert_eq!(replay["ok"], false, "{replay}");
    assert_eq!(replay["constant"], "Cheat.bad");
}
