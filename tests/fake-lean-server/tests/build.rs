//! `fake-lake build` and `fake-lake setup-file` (reference §C, §A1), and the server's
//! modification-time staleness mode that ties them together.

mod support;

use serde_json::{Value, json};
use std::process::{Command, Output};
use support::{Client, Opts, Project};

fn lake(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(support::bin());
    cmd.args(args).current_dir(&p.root);
    for (k, _) in std::env::vars() {
        if k.starts_with("FAKE_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied()).output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn builds_the_default_targets_in_import_order() {
    let p = Project::new();
    let o = lake(&p, &["build"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        err(&o),
        "✔ [1/3] Built Fixture.Basic\n✔ [2/3] Built Fixture.Uses\n✔ [3/3] Built Fixture\nBuild completed successfully (3 jobs).\n"
    );
    for ext in ["olean", "ilean", "trace"] {
        assert!(
            p.root
                .join(format!(".lake/build/lib/lean/Fixture/Basic.{ext}"))
                .exists(),
            "{ext}"
        );
    }
    assert!(p.root.join(".lake/build/ir/Fixture/Basic.c").exists());
    let ilean: Value =
        serde_json::from_str(&p.read(".lake/build/lib/lean/Fixture/Basic.ilean")).unwrap();
    assert_eq!(
        ilean["references"]["c:Fixture.double"]["definition"],
        json!([7, 4, 7, 10])
    );
    // Up to date: no job lines.
    let again = lake(&p, &["build"], &[]);
    assert_eq!(err(&again), "Build completed successfully (3 jobs).\n");
    // An edit rebuilds the module and its dependents.
    p.write("Fixture/Basic.lean", &(p.read("Fixture/Basic.lean") + "\n"));
    let third = lake(&p, &["build", "+Fixture.Uses"], &[]);
    assert_eq!(
        err(&third),
        "✔ [1/2] Built Fixture.Basic\n✔ [2/2] Built Fixture.Uses\nBuild completed successfully (2 jobs).\n"
    );
}

#[test]
fn failures_and_warnings() {
    let p = Project::new();
    let o = lake(&p, &["build", "+Fixture.TypeError"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o);
    assert!(e.starts_with("✖ [1/1] Building Fixture.TypeError\nerror: Fixture/TypeError.lean:10:17: Type mismatch\n"), "{e}");
    assert!(
        e.ends_with("Some required targets logged failures:\n- Fixture.TypeError\n"),
        "{e}"
    );
    assert!(
        !p.root
            .join(".lake/build/lib/lean/Fixture/TypeError.olean")
            .exists()
    );

    p.write("Fixture/Warn.lean", "def w : Nat := sorry\n");
    let o = lake(&p, &["build", "+Fixture.Warn:olean"], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        err(&o),
        "⚠ [1/1] Built Fixture.Warn\nwarning: Fixture/Warn.lean:1:4: declaration uses `sorry`\nBuild completed successfully (1 jobs).\n"
    );
    // Replayed from the trace when up to date.
    let o = lake(
        &p,
        &["build", "+Fixture.Warn"],
        &[("FAKE_LAKE_BUILD_OUT", "stdout")],
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "⚠ [1/1] Replayed Fixture.Warn\nwarning: Fixture/Warn.lean:1:4: declaration uses `sorry`\nBuild completed successfully (1 jobs).\n"
    );
}

#[test]
fn a_failed_import_skips_its_dependents() {
    let p = Project::new();
    p.write("Fixture/Bad.lean", "-- fake: error \"no\"\ndef b := 1\n");
    p.write("Fixture/Top.lean", "import Fixture.Bad\ndef t := 1\n");
    let o = lake(&p, &["build", "+Fixture.Top"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        err(&o),
        "✖ [1/2] Building Fixture.Bad\nerror: Fixture/Bad.lean:2:0: no\nSome required targets logged failures:\n- Fixture.Bad\n"
    );
    assert!(
        !p.root
            .join(".lake/build/lib/lean/Fixture/Top.olean")
            .exists()
    );
}

#[test]
fn setup_file_for_modules_twins_a_configuration_that_did_not_load_and_no_lakefile() {
    let p = Project::new();
    let o = lake(&p, &["setup-file", "Fixture/Basic.lean", "--"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "Fixture.Basic");
    let o = lake(&p, &["setup-file", "Fixture/Twin.lean"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "_unknown");
    let o = lake(
        &p,
        &["setup-file", "Fixture/Twin.lean"],
        &[("FAKE_LEAN_TWIN", "fail")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("no such file or directory"));
    let o = lake(
        &p,
        &["setup-file", "Fixture/Basic.lean"],
        &[("LAKE_INVALID_CONFIG", "error: ./lakefile.toml:1:1: bad")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), "error: ./lakefile.toml:1:1: bad\n");
    std::fs::remove_file(p.root.join("lakefile.toml")).unwrap();
    assert_eq!(
        lake(&p, &["setup-file", "Fixture/Basic.lean"], &[])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn modification_time_staleness_in_the_server() {
    let mut c = Client::start(
        Project::new(),
        Opts::default().env("FAKE_LEAN_STALE", "mtime"),
    );
    c.handshake(json!({}));
    let uses = c.project.uri("Fixture/Uses.lean");
    let text = c.project.read("Fixture/Uses.lean");
    // Nothing built yet: `never` cannot open it.
    c.open_text(&uses, &text, 1, Some("never"));
    let d = Client::last_diagnostics(&c.sync(&uses, 1));
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("must be rebuilt")
    );
    c.close(&uses);
    // `once` builds the import (writing its artifacts) and reports it as a setup line.
    c.open_text(&uses, &text, 1, Some("once"));
    let msgs = c.sync(&uses, 1);
    assert!(
        msgs.iter()
            .any(|m| m["params"]["diagnostics"][0]["message"] == "✔ [1/1] Built Fixture.Basic")
    );
    assert!(Client::last_diagnostics(&msgs).is_empty());
    assert!(
        c.project
            .root
            .join(".lake/build/lib/lean/Fixture/Basic.olean")
            .exists()
    );
    c.close(&uses);
    c.open_text(&uses, &text, 1, Some("never"));
    assert!(Client::last_diagnostics(&c.sync(&uses, 1)).is_empty());
}

#[test]
fn a_module_no_library_builds_is_unknown_to_build_and_external_to_setup_file() {
    let p = Project::new();
    p.write("Scratch.lean", "def s := 1\n");
    let o = lake(&p, &["build", "+Scratch"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err(&o), "error: unknown module `Scratch`\n");
    assert!(!p.root.join(".lake/build/lib/lean/Scratch.olean").exists());
    let o = lake(&p, &["setup-file", "Scratch.lean"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "_unknown");
    // A module under the library's root is buildable even though no glob names it.
    p.write("Fixture/Extra.lean", "def e := 1\n");
    let o = lake(&p, &["build", "+Fixture.Extra"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn env_prints_the_workspace_paths_and_runs_commands_in_them() {
    let p = Project::new();
    let o = lake(&p, &["env"], &[]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.lines().any(|l| l == "LEAN_PATH=./.lake/build/lib/lean"),
        "{out}"
    );
    assert!(out.lines().any(|l| l == "LEAN_SRC_PATH=./."), "{out}");
    let o = lake(&p, &["env", "printenv", "LEAN_SRC_PATH"], &[]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "./.\n");
    std::fs::remove_file(p.root.join("lakefile.toml")).unwrap();
    let o = lake(&p, &["env"], &[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!out.contains("LEAN_SRC_PATH"), "{out}");
}

#[test]
fn a_library_source_directory_names_its_modules() {
    let p = Project::new();
    p.write(
        "lakefile.toml",
        "name = \"fixture\"\n\n[[lean_lib]]\nname = \"Fixture\"\n\n[[lean_lib]]\nname = \"Src\"\nsrcDir = \"src\"\n",
    );
    p.write("src/Src/Part.lean", "import Fixture.Basic\ndef part := 1\n");
    let o = lake(&p, &["env"], &[]);
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l == "LEAN_SRC_PATH=./.:./src"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = lake(&p, &["build", "+Src.Part"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        err(&o),
        "✔ [1/2] Built Fixture.Basic\n✔ [2/2] Built Src.Part\nBuild completed successfully (2 jobs).\n"
    );
    assert!(p.root.join(".lake/build/lib/lean/Src/Part.olean").exists());
    assert!(p.root.join(".lake/build/ir/Src/Part.c").exists());
    let o = lake(&p, &["setup-file", "src/Src/Part.lean"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "Src.Part");
}

#[test]
fn a_build_gate_holds_the_compilation_after_the_text_was_read() {
    let p = Project::new();
    p.write(
        "Fixture/Gated.lean",
        "-- fake: build-gate g\ndef gated : Nat := 1\n",
    );
    let child = Command::new(support::bin())
        .args(["build", "+Fixture.Gated"])
        .current_dir(&p.root)
        .env("FAKE_LEAN_GATE_DIR", &p.gates)
        .env("FAKE_LEAN_TRACE", &p.trace)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    p.await_gate("g");
    assert!(
        !p.root
            .join(".lake/build/lib/lean/Fixture/Gated.olean")
            .exists(),
        "nothing is written before the gate opens"
    );
    // The text was read before the gate: an edit now does not change what is built.
    p.write(
        "Fixture/Gated.lean",
        "def gated : Nat := 2 -- fake: error \"late\"\n",
    );
    std::fs::write(p.gates.join("g"), b"open").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        p.root
            .join(".lake/build/lib/lean/Fixture/Gated.olean")
            .exists()
    );
    let builds: Vec<Value> = std::fs::read_to_string(&p.trace)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|t| t["event"] == "lake-build")
        .collect();
    assert_eq!(builds.len(), 1);
    assert_eq!(builds[0]["args"], json!(["+Fixture.Gated"]));
}
